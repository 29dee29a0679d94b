"""The AI agents' door: the memory's tools over MCP (`server.py`), or relayed to a running service that
holds it (`proxy.py`)."""
