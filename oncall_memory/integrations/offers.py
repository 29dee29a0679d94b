"""What the integrations offer the service, read from the registry (`oncall_memory.plugins`): each one's
webhook, targets, learners, refiners, chat app and live incidents, as one typed `Plugin`."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..chat import ChatApp
from ..hookspecs import GIVEN
from ..live import LiveIncidents
from ..plugins import Registry, built_in, registry
from ..webhook import Webhook

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Plugin:
    """What one integration offers the service (its source is `source_factory`'s)."""

    name: str
    where: str  # its entry point, for messages: "zabbix = oncall_memory_zabbix"; BUILT_IN_WHERE for ours
    webhook: Webhook | None = None
    targets: Callable[..., list[Any]] | None = None  # settings -> [targets.Target]
    learners: Callable[..., list[Any]] | None = None  # settings, memory -> [targets.Target]
    targets_need: str | None = None  # what to set for its targets, in words
    refiners: Callable[..., list[Any]] | None = None  # settings -> [jobs.Refiner]
    chat_app: type[ChatApp] | None = None
    live_incidents: Callable[..., LiveIncidents | None] | None = None


# The hooks a `Plugin` holds (its fields after `name` and `where`).
SERVICE_HOOKS = ("webhook", "targets", "learners", "targets_need", "refiners", "chat_app", "live_incidents")


def plugin_of(found: Registry, name: str) -> Plugin | None:
    """The service's view of the integration `name` (None when it offers the service nothing)."""
    hooks: dict[str, Any] = {h: (found.given(name, h) if h in GIVEN else found.hook(name, h)) for h in SERVICE_HOOKS}
    if all(v is None for v in hooks.values()):
        return None
    return Plugin(name, found.where[name], **hooks)


def service_plugins() -> list[Plugin]:
    """The integrations offering the service anything (a webhook, targets, learners...), built in and installed.
    Each installed one that was refused is logged, one line naming it, and left out: a broken plugin does not
    keep the service down."""
    found = registry()
    for line in found.refused.values():
        log.error("%s", line)
    return [p for name in found.names() if (p := plugin_of(found, name)) is not None]


def built_in_webhooks() -> list[Webhook]:
    """The webhooks the built-in integrations offer through the hook: every built-in pager's and learner's."""
    found = registry()
    return [hook for name in built_in() if (hook := found.given(name, "webhook")) is not None]


def targets_hint(offered: list[Plugin]) -> str:
    """What to set so that answers go somewhere: each integration's `targets_need`, for the line said at start
    and when an alert arrives with nowhere to go."""
    needs = [p.targets_need for p in offered if isinstance(p.targets_need, str) and p.targets_need]
    return "set " + "; or ".join(needs) if needs else "no integration here posts answers"


def live_incidents(settings: Any, offered: list[Plugin] | None = None) -> Any | None:
    """The live incidents (`live.LiveIncidents`) of the first integration whose settings turn them on, built
    in first, then installed (`offered`: the service's plugins, else found here): what the MCP server offers
    an agent beside the memory. One that fails to build is logged and passed over."""
    for plugin in service_plugins() if offered is None else offered:
        if plugin.live_incidents is None:
            continue
        try:
            live = plugin.live_incidents(settings)
        except Exception as exc:
            log.error(
                "the integration %s could not offer its live incidents: %s: %s", plugin.where, type(exc).__name__, exc
            )
            continue
        if isinstance(live, LiveIncidents):
            return live
    return None
