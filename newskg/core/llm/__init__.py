"""The LLM client shared by every layer: an OpenAI-compatible client with a response cache, a call budget and
usage counts, and the prompt base each prompt module builds on. Imports only `core`."""
