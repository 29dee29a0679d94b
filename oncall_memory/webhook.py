"""The port a pager's webhook fills, for integrations installed as their own packages: the service mounts
each at `POST /webhooks/<name>` and does the rest the built-in pagers get (the body's size bound, the route
off until its secret is set when facing the network, the whole body redacted before the webhook reads it,
the outbox, 202 with what was accepted).

A webhook says three things: which secret turns it on (`variable`, read from the environment, or `secret`
from its settings group), whether a request carries it (`carries`, from the headers alone, asked before the
body is read; or `authentic`, given the headers and the raw body, for an HMAC over it), and which jobs a body
makes (`jobs`, or `jobs_from` when it needs a header too, a delivery id). Its jobs' keys start with
`<name>:` (or `<name>-learn:`, a learner's), so one pager's alert never takes another's key (a key makes
posting exactly once). A route that needs more than its secret to be of use (a learner reads the incident
back through its API) says why it is `off`, on every address.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import BaseModel

from .jobs import Job, keyed_by
from .settings import Settings


class Webhook(ABC):
    name: ClassVar[str]  # the route: /webhooks/<name>; a built-in's name is not taken over
    variable: ClassVar[str]  # the environment variable holding its secret, named when the route is off
    body: ClassVar[type[BaseModel] | None] = None  # documents the request body in /docs when given
    # What the credential is, in words: a refusal says "missing or wrong <credential>", and the service's
    # startup line for the route names it. None: "credential for /webhooks/<name>", "its own check".
    credential: ClassVar[str | None] = None
    # The scheme a 401 asks for (WWW-Authenticate); None for a credential that signs the body.
    challenge: ClassVar[str | None] = "Bearer"
    # How the startup line says the route is guarded once its secret is set; None: the credential.
    guard: ClassVar[str | None] = None
    # Where its secret is in the settings, "<group>.<field>" (its integration's settings group, whose variable
    # is `variable`); None: read from the environment by `variable` at each request.
    setting: ClassVar[str | None] = None

    def off(self, settings: Settings) -> str | None:
        """Why the route is off on every address (a 404 in these words, naming what to set), or None: on,
        as far as its secret goes. A learner is off until it can read the incident back."""
        return None

    def owns(self, key: str) -> bool:
        """May a job of this webhook carry this key? Its own name's, so no pager takes another's."""
        return keyed_by(key, self.name)

    def secret(self, settings: Settings) -> str | None:
        """The secret a request must carry; None: not set (open on loopback, off facing the network)."""
        if self.setting is None:
            return os.environ.get(self.variable) or None
        group, _, field = self.setting.partition(".")
        try:
            value = getattr(getattr(settings, group), field)
        except AttributeError:
            raise AttributeError(f"{type(self).__name__}.setting {self.setting!r} names no setting") from None
        return value.get_secret_value() or None if value is not None else None

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

    def read(self, job: Job, settings: Settings, known: Mapping[str, Any]) -> Job:
        """A job this webhook made with alerts left unread (`Job.unread`: a large group, claimed by its alerts'
        keys so that the sender is answered at once), those alerts read into its items. Called on the
        worker's thread before the job's lookup, inside `already_redacted()` (the body was redacted where it
        entered). The default has nothing to read."""
        return job

    def jobs_from(
        self, body: Any, settings: Settings, known: Mapping[str, Any], headers: Mapping[str, str]
    ) -> tuple[list[Job], int | str]:
        """`jobs`, given the request's headers too (a delivery id that keys each delivery once). The service
        calls this one; the default asks `jobs`."""
        return self.jobs(body, settings, known)
