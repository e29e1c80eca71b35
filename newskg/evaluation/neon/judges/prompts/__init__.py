"""One prompt per judged attribute (NEON §3: one call per attribute, so grading one cannot colour another)."""
