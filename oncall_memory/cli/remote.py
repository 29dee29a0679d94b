"""Asking a running service instead of opening the memory: its model is loaded and its store is not
contended (an embedded store has one owner, and while a service holds it the CLI could not open it).

The service writes `<data dir>/service.json` while it runs; `ONCALL_MEMORY_URL` names one explicitly.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import httpx

from ..settings import Settings


def service_file(settings: Settings) -> Path | None:
    return None if str(settings.data_dir) == ":memory:" else Path(settings.data_dir) / "service.json"


def service_url(settings: Settings) -> str | None:
    """The URL of a service to ask: ONCALL_MEMORY_URL, else the one running on this data dir."""
    if settings.url:
        return settings.url.rstrip("/")
    path = service_file(settings)
    try:
        info = json.loads(path.read_text()) if path else None
    except (OSError, ValueError):
        return None
    if not info or not _alive(int(info.get("pid", 0))):
        return None
    return str(info["url"]).rstrip("/")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except (OSError, ValueError):
        return False
    return pid > 0


def client(settings: Settings, url: str) -> httpx.Client:
    headers = {"Authorization": f"Bearer {settings.api_token.get_secret_value()}"} if settings.api_token else {}
    return httpx.Client(base_url=url, headers=headers, timeout=30)


def post(settings: Settings, url: str, path: str, body: dict[str, Any]) -> httpx.Response:
    with client(settings, url) as http:
        return http.post(path, json=body)


def get(settings: Settings, url: str, path: str) -> httpx.Response:
    with client(settings, url) as http:
        return http.get(path)
