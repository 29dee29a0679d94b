"""Pager webhooks in: every webhook an integration offers through the `webhook` hook, built in (PagerDuty's,
Alertmanager's, Opsgenie's, Grafana's, and the learners': Jira's, incident.io's, GitLab's) or installed
(`webhook.Webhook`), mounted by `mount`. Each answers 202 as soon as its jobs are claimed; the worker looks
up and posts, or learns.

The body is redacted as a whole as soon as it is parsed (its labels and annotations before any fact is
read from them); the alert and the job built from it are then not scanned again.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from fastapi import Depends, FastAPI, HTTPException, Request
from pydantic import ValidationError

from ..domain.rejected import validation_message
from ..errors import InvalidInput
from ..jobs import Job
from ..redact import already_redacted, redact_all
from ..webhook import Webhook
from .auth import faces_the_network
from .collector import held_off
from .contract import WEBHOOK_ERRORS
from .deps import DispatcherDep, MemoryDep, SettingsDep
from .request_body import documented_body, parse_json, raw_json_body
from .worker import Dispatcher

if TYPE_CHECKING:
    from ..memory import Memory
    from ..settings import Settings

log = logging.getLogger(__name__)


def accept(dispatcher: Dispatcher, jobs: list[Job], ignored: int = 0) -> dict[str, Any]:
    accepted, duplicates = dispatcher.submit(jobs)
    answer: dict[str, Any] = {"accepted": accepted, "duplicates": duplicates}
    if ignored:
        answer["ignored"] = ignored
    return answer


def mount(app: FastAPI, hook: Webhook, where: str) -> None:
    """An installed integration's webhook at `POST /webhooks/<name>`, kept as the built-in pagers are: off
    facing the network until its secret is set, the body bounded and redacted whole before the webhook
    reads it, its jobs through the outbox."""
    route = f"/webhooks/{hook.name}"

    what = hook.credential or f"credential for {route}"

    challenge = {"WWW-Authenticate": hook.challenge} if hook.challenge else None

    def refused() -> HTTPException:  # a new one each time: a raised instance keeps its traceback, and grows it
        return HTTPException(401, f"missing or wrong {what}", headers=challenge)

    def unproved(request: Request, settings: SettingsDep) -> str | None:
        """Before the body (a dependency FastAPI solves ahead of `raw`): off, or refused on the headers alone.
        The secret the body must still prove (a signature over it), or None: none set, or the headers proved it."""
        if (why := hook.off(settings)) is not None:
            raise HTTPException(404, why)
        secret = hook.secret(settings)
        if secret is None and faces_the_network(settings):
            raise HTTPException(404, f"{route} is off: set {hook.variable} to turn it on")
        said = hook.carries(secret, request.headers) if secret is not None else True
        if said is False:
            raise refused()
        return secret if said is None else None

    def receive(
        request: Request,
        settings: SettingsDep,
        memory: MemoryDep,
        dispatcher: DispatcherDep,
        secret: str | None = Depends(unproved),
        raw: bytes = Depends(raw_json_body),
    ) -> dict:
        if secret is not None and not hook.authentic(secret, request.headers, raw):
            raise refused()
        with held_off():  # a storm's post: a few hundred thousand objects, none of them cyclic garbage
            return _accepted(hook, where, parse_json(raw), request, settings, memory, dispatcher)

    extra = documented_body(hook.body) if hook.body is not None else None
    app.add_api_route(
        route,
        receive,
        methods=["POST"],
        status_code=202,
        tags=["webhooks"],
        summary=f"{hook.name} (integration {where})",
        openapi_extra=extra,
        responses=WEBHOOK_ERRORS,
    )


def _accepted(
    hook: Webhook,
    where: str,
    parsed: Any,
    request: Request,
    settings: Settings,
    memory: Memory,
    dispatcher: Dispatcher,
) -> dict:
    """The parsed body redacted whole, read by `hook` into jobs, and the jobs claimed: the answer to the post."""
    body = redact_all(parsed)
    known = memory.known_values()
    try:
        with already_redacted():
            jobs, ignored = hook.jobs_from(body, settings, known, request.headers)
    except ValidationError as exc:
        raise HTTPException(422, f"{hook.name}: {validation_message(exc)}") from None
    except InvalidInput as exc:
        raise HTTPException(422, f"{hook.name}: {exc}") from None
    except Exception as exc:  # the plugin's own fault: said and logged, never a 500 for the sender's body
        log.exception("the %s webhook (%s) failed on a body", hook.name, where)
        raise HTTPException(
            422, f"the {hook.name} integration could not read this body ({type(exc).__name__})"
        ) from None
    foreign = [job.key for job in jobs if not hook.owns(job.key)]
    if foreign:
        log.error(
            "the %s webhook (%s) made jobs keyed %s: keys start with %r",
            hook.name,
            where,
            foreign[:3],
            f"{hook.name}:",
        )
        raise HTTPException(422, f"the {hook.name} integration made jobs it may not (see the service's log)")
    if isinstance(ignored, str):
        return {"accepted": 0, "duplicates": 0, "ignored": ignored} if not jobs else accept(dispatcher, jobs)
    return accept(dispatcher, jobs, ignored)
