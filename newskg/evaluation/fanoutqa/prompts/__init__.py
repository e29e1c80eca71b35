"""FanOutQA's LLM prompts, one a file with its response model."""
