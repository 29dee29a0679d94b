"""How fast, and how much memory: each benchmark prints figures and ratios, the pipeline beside raw
qdrant-client (or the engine alone) on the same data in one run."""
