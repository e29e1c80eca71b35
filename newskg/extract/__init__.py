"""Entity recognition and linking, <e> markup, open-IE (offline, LLM M1/M2), the LLM client."""
