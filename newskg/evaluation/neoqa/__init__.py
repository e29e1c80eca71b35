"""NeoQA (Glockner et al., "NeoQA: Evidence-based Question Answering with Generated News Events") off our graph:
fictional timelines as a news stream, questions, instances with controlled evidence, and the multiple-choice
benchmark with ADTScore."""
