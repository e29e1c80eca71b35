"""IRB (the IRB paper, our own wording): factuality benchmarks generated from the graph's
dated facts as of a day, and their evaluation (retrieval nDCG@5, closed-book vs RAG answer grades)."""
