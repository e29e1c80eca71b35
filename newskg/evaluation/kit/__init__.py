"""What every evaluation shares: the report folder (JSON, PNG figures, one HTML page), the LLM grader's prompt and
verdict, and the sources a graph question may read."""
