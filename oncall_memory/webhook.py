"""The port a pager's webhook fills, for integrations installed as their own packages: the service mounts
each at `POST /webhooks/<name>` and does the rest the built-in pagers get (the body's size bound, the route
off until its secret is set when facing the network, the whole body redacted before the webhook reads it,
the outbox, 202 with what was accepted).

A webhook says three things: which secret turns it on (`variable`, read from the environment), whether a
request carries it (`carries`, from the headers alone, asked before the body is read; or `authentic`, given
the headers and the raw body, for an HMAC over it), and which jobs a body makes (`jobs`). Its jobs' keys
start with `<name>:`, so one pager's alert never takes another's key (a key makes posting exactly once).
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import BaseModel

from .jobs import Job
from .settings import Settings


class Webhook(ABC):
    name: ClassVar[str]  # the route: /webhooks/<name>; a built-in's name is not taken over
    variable: ClassVar[str]  # the environment variable holding its secret, named when the route is off
    body: ClassVar[type[BaseModel] | None] = None  # documents the request body in /docs when given
    # What the credential is, in words: a refusal says "missing or wrong <credential>", and the service's
    # startup line for the route names it. None: "credential for /webhooks/<name>", "its own check".
    credential: ClassVar[str | None] = None

    def secret(self, settings: Settings) -> str | None:
        """The secret a request must carry; None: not set (open on loopback, off facing the network)."""
        return os.environ.get(self.variable) or None

    def carries(self, secret: str, headers: Mapping[str, str]) -> bool | None:
        """Asked before the body is read, as the built-in pagers check theirs: True, the headers carry the
        secret (a bearer token, a token header); False, they cannot (refused with a 401, the body unread);
        None, the default, the credential signs the body and `authentic` decides once it is read."""
        return None

    def authentic(self, secret: str, headers: Mapping[str, str], raw: bytes) -> bool:
        """Does this request carry the secret? Compare in constant time (`signatures.same_secret`). Asked
        only when `carries` said None; a webhook that gives neither refuses every request."""
        return False

    @abstractmethod
    def jobs(self, body: Any, settings: Settings, known: Mapping[str, Any]) -> tuple[list[Job], int | str]:
        """The jobs a (redacted, parsed JSON) body makes, and what was ignored: a count of alerts, or the
        name of an event it does not act on. `known` is the memory's known services, envs and flavors, for
        reading facts from text. Raise `InvalidInput` (or pydantic's `ValidationError`) on a body it cannot
        read: the sender gets a 422 saying why."""
