"""The store: the data dir and its files, the engines behind one contract (`engines`), the locks around
them, and what keeps them whole (backup, verify, maintenance, migration to a cluster)."""
