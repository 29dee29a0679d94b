"""Ingest: the backlog read, each incident distilled to its signal lines, embedded and written (the CLI, the
Prefect flow and the service's timer all run the same job)."""
