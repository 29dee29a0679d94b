"""What the service tells its log when it starts: what it holds, where answers go, and how each route is
authenticated, one line each, so an operator reading the log (or `kubectl logs`) sees what the service
will do with a webhook before the first one arrives."""

from __future__ import annotations

from collections.abc import Sequence

from ..chat import ChatApp
from ..memory import Memory
from ..settings import Settings
from ..targets import Target
from ..webhook import Webhook
from .auth import faces_the_network


def summary(
    settings: Settings,
    targets: list[Target],
    memory: Memory,
    hooks: Sequence[Webhook] = (),
    hint: str = "no target is configured",
    chats: Sequence[type[ChatApp]] = (),
) -> list[str]:
    """`hooks`: the webhooks mounted through the integrations' hook (Grafana's, an installed package's); `hint`:
    what to set when answers would go nowhere (`integrations.targets_hint`); `chats`: the chat apps mounted."""
    lines = [f"memory: {_holds(memory)}"]
    posting = [t for t in targets if t.learns is None and t.name != "memory"]
    lines += [f"answers go to: {t.describe()}" for t in posting]
    if not posting:
        lines.append(f"answers go nowhere: webhooks are acknowledged and nothing is posted ({hint})")
    sources = [t.learns for t in targets if t.learns]
    learning = f"on ({'; '.join(sources)})" if sources else "off"
    lines.append(f"learning as incidents close: {learning}")
    lines += [f"route {route}: {how}" for route, how in routes(settings, hooks, chats)]
    return lines


def routes(
    settings: Settings, hooks: Sequence[Webhook] = (), chats: Sequence[type[ChatApp]] = ()
) -> list[tuple[str, str]]:
    """How each route is guarded: each webhook an integration mounts (`hooks`), the service's own, and each
    chat app's (`chats`)."""
    api = "bearer token" if settings.service.api_token is not None else "OPEN (set ONCALL_MEMORY_API_TOKEN)"
    return [
        *((f"POST /webhooks/{hook.name}", _hook(hook, settings)) for hook in hooks),
        ("/similar, /feedback, /stats, /metrics, /docs", api),
        ("/mcp, /mcp/sse (MCP for agents)", api),
        ("/ (search page)", api if settings.service.api_token is None else "bearer token or a login session"),
        *(
            (
                f"/{chat.name}/commands, /{chat.name}/interactions",
                chat.guard if chat.on(settings) else f"off (set {chat.variable})",
            )
            for chat in chats
        ),
        ("/healthz, /readyz", "open (probes; they say nothing about the incidents)"),
    ]


def _hook(hook: Webhook, settings: Settings) -> str:
    """How a hook's route is guarded: off while it cannot be of use; by its own check once its secret is
    set; else off facing the network, open on one machine."""
    if (why := hook.off(settings)) is not None:
        return f"off ({why})"
    if hook.secret(settings) is not None:
        return hook.guard or hook.credential or f"its own check ({hook.variable} is set)"
    return f"off (set {hook.variable} to turn it on)" if faces_the_network(settings) else f"OPEN (set {hook.variable})"


def _holds(memory: Memory) -> str:
    try:
        stats = memory.stats()
    except Exception as exc:  # noqa: BLE001 - a summary line, not a check: the reason is enough
        return f"not ready ({str(exc)[:200]})"
    return (
        f"{stats['count']} incidents in {stats['collection']!r} at {stats['location']}, "
        f"embedded with {stats.get('embed_model') or memory.embedder.model}"
    )
