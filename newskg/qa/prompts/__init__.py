"""QA prompts, one module each with its response model and version."""
