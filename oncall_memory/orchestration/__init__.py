"""The Prefect entry points: the ingest flow (`flow`) and the deployment that runs it on a schedule
(`schedule`). They sit above the memory and the integrations, as the commands and the service do."""
