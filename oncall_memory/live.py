"""The port a pager's live incidents fill, for the agents' door: an AI on-call agent asks for the past
incidents most like the incident it is working (`similar_to_incident` with the pager's id) and posts what it
found on that incident (`post_note_to_incident`). An integration offers it through its `live_incidents`
hook (`integrations.live_incidents`); without one, the MCP server serves the memory alone.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from functools import cached_property

from .domain.alert import Alert


class LiveIncidents(ABC):
    """A pager's live incidents: one read as an alert, a note posted on one."""

    name: str  # the pager, in words ("PagerDuty"): what the tools' descriptions and refusals name
    id_pattern: str  # its incident ids, a regular expression anchored at both ends (^...$)

    @cached_property
    def ids(self) -> re.Pattern[str]:
        return re.compile(self.id_pattern)

    @abstractmethod
    def alert(self, incident_id: str, known: Mapping[str, Iterable[str]] | None = None) -> Alert:
        """The live incident read as an alert, as the pager's webhook reads it (`known`: the services and
        envs the memory holds, to read its facts by). Raises `errors.OncallMemoryError` when the pager
        cannot give it, with the reason."""

    @abstractmethod
    def post_note(self, incident_id: str, note: str) -> int:
        """Post `note` (already redacted) on the incident, once: the pager's HTTP status. Raises
        `httpx.TransportError` when it could not be reached."""

    def close(self) -> None:  # noqa: B027 - a default, not a missing abstract method
        """Release what it holds (connections)."""
