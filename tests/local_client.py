"""The service's test client, reaching it as this machine does: the service answers only to the host names
it serves (`service/cross_site.py`), and Starlette's client names `testserver` by default."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient as StarletteClient


class TestClient(StarletteClient):
    __test__ = False  # not a test class, whatever its name

    def __init__(self, app: Any, base_url: str = "http://127.0.0.1", **kwargs: Any) -> None:
        super().__init__(app, base_url=base_url, **kwargs)

    @property
    def writer(self) -> dict[str, str]:
        """The headers of a caller that may write (the CLI on this machine): the service's local token."""
        return {"Authorization": f"Bearer {self.app.state.local_token}"}
