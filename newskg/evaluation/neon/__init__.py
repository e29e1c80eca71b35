"""NEON §3–4 over our own graph: query logs, spike days, as-of replay of methods × strategies × k, scores, reports."""
