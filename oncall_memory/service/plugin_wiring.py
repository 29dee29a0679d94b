"""What the integrations bring the service, built as it starts: their webhooks (mounted under /webhooks/),
their chat apps (each at its own path), their targets and learners, their refiners. One that fails to build,
or offers something that is not what the contract says, is logged and left out: the others still work."""

from __future__ import annotations

import logging
from collections.abc import Callable

from fastapi import FastAPI

from ..chat import ChatApp
from ..integrations import BUILT_IN
from ..integrations.offers import Plugin
from ..jobs import Job, Refiner
from ..memory import Memory
from ..plugins import BUILT_IN_WHERE
from ..redact import already_redacted
from ..settings import Settings
from ..targets import Target
from ..webhook import Webhook
from . import chats as chat_routes
from . import webhooks
from .route_list import paths_and_methods

log = logging.getLogger(__name__)


def mount_webhooks(app: FastAPI, installed: list[Plugin]) -> list[tuple[Webhook, str]]:
    """Mount each webhook the integrations offer at `POST /webhooks/<its name>`; each, and where it came from.
    A plugin may not take a built-in's route, nor a learner's keys (`<name>-learn:`)."""
    mounted: list[tuple[Webhook, str]] = []
    for plugin in installed:
        hook = plugin.webhook
        taken = isinstance(hook, Webhook) and (hook.name in BUILT_IN or hook.name.endswith("-learn"))
        if isinstance(hook, Webhook) and (plugin.where == BUILT_IN_WHERE or not taken):
            mounted.append((hook, plugin.where))
        elif hook is not None:
            log.error("the integration %s offers a webhook that is not a oncall_memory.webhook.Webhook", plugin.where)
    for hook, where in mounted:
        webhooks.mount(app, hook, where)
    app.state.pagers = tuple(hook.name for hook, _ in mounted)  # whose job keys name an incident (`/feedback`)
    return mounted


# Paths the service adds after the chats are mounted (the agents' door and the API's docs): no chat takes them.
LATER_PATHS = {"webhooks", "mcp", "docs", "openapi.json", "redoc"}


def mount_chats(app: FastAPI, installed: list[Plugin]) -> list[tuple[Plugin, type[ChatApp]]]:
    """Mount each chat app the integrations offer at `/<its name>/commands` and `/interactions`, after the
    service's own routes (a chat may not take a path the service serves)."""
    chats: list[tuple[Plugin, type[ChatApp]]] = []
    for plugin in installed:
        chat = plugin.chat_app
        if not (isinstance(chat, type) and issubclass(chat, ChatApp)):
            if chat is not None:
                log.error("the integration %s offers a chat app that is not a oncall_memory.chat.ChatApp", plugin.where)
            continue
        paths = {p.split("/")[1] for p, _ in paths_and_methods(app)} | LATER_PATHS
        if (
            not chat.name.isidentifier()
            or chat.name in paths
            or (plugin.where != BUILT_IN_WHERE and chat.name in BUILT_IN)
        ):
            log.error("the integration %s offers a chat app at /%s, a path that is taken", plugin.where, chat.name)
            continue
        chats.append((plugin, chat))
        chat_routes.mount(app, chat)
    return chats


def plugin_targets(
    settings: Settings,
    installed: list[Plugin],
    taken: set[str],
    memory: Memory | None = None,
    chats: dict[str, ChatApp] | None = None,
) -> list[Target]:
    """The targets the integrations add, built in and installed (with `memory`, their learners instead; an
    integration whose chat app is on, in `chats` by its name, posts through the app's own). One that fails to
    build, or is not a `Target`, or takes a name already taken, is logged and left out: the others still
    deliver."""
    found: list[Target] = []
    for plugin in installed:
        hook = plugin.targets if memory is None else plugin.learners
        chat = (chats or {}).get(plugin.name) if memory is None else None
        if hook is None and chat is None:
            continue
        try:
            own = chat.targets(settings) if chat is not None else None
            if own is not None:
                made = list(own)
            elif hook is None:
                continue
            else:
                made = list(hook(settings) if memory is None else hook(settings, memory))
        except Exception as exc:
            log.error("the integration %s could not build its targets: %s: %s", plugin.where, type(exc).__name__, exc)
            continue
        for target in made:
            if not isinstance(target, Target) or target.name in taken:
                log.error(
                    "the integration %s offers a target that is not a Target or whose name is taken", plugin.where
                )
                continue
            taken.add(target.name)
            found.append(target)
    return found


def plugin_refiners(settings: Settings, installed: list[Plugin]) -> list[Refiner]:
    """The refiners the integrations offer (`refiners` hook). One that fails to build is logged and left
    out: its pager's alerts are looked up as they came."""
    found: list[Refiner] = []
    for plugin in installed:
        if plugin.refiners is None:
            continue
        try:
            found += plugin.refiners(settings)
        except Exception as exc:
            log.error("the integration %s could not build its refiners: %s: %s", plugin.where, type(exc).__name__, exc)
    return found


def read_by_its_webhook(hooks: dict[str, Webhook], settings: Settings, memory: Memory, job: Job) -> Job:
    """A job's unread alerts (`Job.unread`) read by the webhook whose key it bears, as that webhook reads a
    post (the body was redacted where it entered, so nothing is scanned again)."""
    hook = hooks.get(job.key.split(":", 1)[0])
    if hook is None:  # its integration is no longer installed: looked up as far as it was read
        log.error("%s: no webhook reads its %d unread alerts", job.key, len(job.unread))
        return job
    with already_redacted():
        return hook.read(job, settings, memory.known_values())


def chained(refiners: list[Refiner]) -> Callable[[Job], Job] | None:
    """One refiner that runs each in turn (None for none: the dispatcher then skips the step)."""
    if not refiners:
        return None

    def refine(job: Job) -> Job:
        for refiner in refiners:
            try:
                job = refiner(job)
            except Exception:  # an integration's fault: its alerts are looked up as they came, not lost
                log.exception("a refiner (%s) failed on %s; looked up as it came", type(refiner).__name__, job.key)
        return job

    return refine
