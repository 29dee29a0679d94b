"""The port a chat's app fills: a slash command answered in the chat, and buttons under each suggestion whose
presses are responders' verdicts. The service mounts each app an integration offers (its `chat_app` hook) at
`POST /<name>/commands` and `POST /<name>/interactions`, both off (a 404 naming what to set) until its
settings turn it on. Every request is verified (`verify`, given the raw body and its headers) before anything
in it is read; the forms are parsed by the service.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from .memory import Memory
    from .settings import Settings
    from .targets import Target


class ChatApp(ABC):
    """A chat's app, built when the service starts (`ChatApp(settings, memory)`) if `on(settings)`."""

    name: ClassVar[str]  # its routes' prefix: /<name>/commands, /<name>/interactions
    title: ClassVar[str]  # the chat, in words ("Slack"): "the Slack app is off"
    variable: ClassVar[str]  # the setting that turns it on, named while it is off
    guard: ClassVar[str]  # how its requests are checked, in words (the startup line)

    @abstractmethod
    def __init__(self, settings: Settings, memory: Memory): ...

    @classmethod
    @abstractmethod
    def on(cls, settings: Settings) -> bool:
        """Do these settings turn the app on?"""

    @abstractmethod
    def verify(self, body: bytes, headers: Mapping[str, str]) -> None:
        """Raise `fastapi.HTTPException(401, why)` unless the chat sent this request."""

    @abstractmethod
    def command(self, form: dict[str, str]) -> dict[str, Any]:
        """The answer to a slash command (its form's fields), as the chat's JSON response."""

    @abstractmethod
    def interaction(self, payload: dict[str, Any]) -> None:
        """A button pressed (the form's `payload`, a JSON object): acknowledged at once, the rest later."""

    def targets(self, settings: Settings) -> list[Target] | None:
        """The targets that post answers with this app's buttons; None: its integration's `targets` as usual."""
        return None

    def close(self) -> None:  # noqa: B027 - a default, not a missing abstract method
        """Release what it holds (threads, connections)."""
