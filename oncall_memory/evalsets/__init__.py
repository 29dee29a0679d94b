"""The labelled evaluation sets (`oncall-memory eval`): queries over the sample backlog, fixtures/incidents.jsonl."""
