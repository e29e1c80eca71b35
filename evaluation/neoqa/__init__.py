"""NeoQA (../shared/papers/neoqa.md) off our graph: fictional timelines as a news stream, questions, instances
with controlled evidence, and the multiple-choice benchmark with ADTScore."""
