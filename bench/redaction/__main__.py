"""`python -m bench.redaction`, as it ran before the lab had folders: the coverage bench."""

from .coverage import main

main()
