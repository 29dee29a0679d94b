"""What the service tells its log when it starts: what it holds, where answers go, and how each route is
authenticated, one line each, so an operator reading the log (or `kubectl logs`) sees what the service
will do with a webhook before the first one arrives."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..chat import ChatApp
from ..memory import Memory
from ..settings import Settings
from ..targets import Target
from ..webhook import Webhook
from .auth import faces_the_network
from .cross_site import allowed_hosts


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
    posting = [t for t in targets if t.learns is None and t.keeps is None and t.name != "memory"]
    lines += [f"answers go to: {t.describe()}" for t in posting]
    if not posting:
        lines.append(f"answers go nowhere: webhooks are acknowledged and nothing is posted ({hint})")
    lines += [f"answers kept: {t.keeps}" for t in targets if t.keeps]
    sources = [t.learns for t in targets if t.learns]
    learning = f"on ({'; '.join(sources)})" if sources else "off"
    lines.append(f"learning as incidents close: {learning}")
    lines += [f"route {route}: {how}" for route, how in routes(settings, hooks, chats)]
    lines.append(f"browsers: {browsers(settings)}")
    return lines


@dataclass(frozen=True)
class Guarded:
    """Some routes and how they are guarded: `paths` are route templates, `/static/*` for a folder."""

    label: str
    how: str
    paths: tuple[str, ...]

    def covers(self, path: str) -> bool:
        return any(path == p or (p.endswith("*") and path.startswith(p[:-1])) for p in self.paths)


def guards(settings: Settings, hooks: Sequence[Webhook] = (), chats: Sequence[type[ChatApp]] = ()) -> list[Guarded]:
    """How each route the service serves is guarded: each webhook an integration mounts (`hooks`), the
    service's own, and each chat app's (`chats`). `tests/test_startup.py` holds it to the app's real routes."""
    token = settings.service.api_token is not None
    reads = (
        "bearer token (the API token or the local token)" if token else "OPEN (reads only; set ONCALL_MEMORY_API_TOKEN)"
    )
    writes = "the local token or the API token as a bearer token, on every address (loopback included)"
    page = "bearer token or a login session" if token else "OPEN (reads, and feedback with the page's CSRF token)"
    return [
        *(Guarded(f"POST /webhooks/{hook.name}", _hook(hook, settings), (f"/webhooks/{hook.name}",)) for hook in hooks),
        Guarded(
            "/similar, /stats, /metrics, /docs, /answers, /coverage",
            reads,
            ("/similar", "/stats", "/metrics", "/docs", "/redoc", "/openapi.json", "/answers", "/coverage"),
        ),
        Guarded(
            "POST /ingest, /verify, /backup, /feedback, /coverage/written (write, copy, check)",
            writes,
            ("/ingest", "/verify", "/backup", "/feedback", "/coverage/written"),
        ),
        Guarded("/mcp, /mcp/sse (MCP for agents)", writes, ("/mcp", "/mcp/sse", "/mcp/messages/")),
        Guarded("/ (search page), /alerts", page, ("/", "/incidents/*", "/page/feedback", "/alerts")),
        *(
            Guarded(
                f"/{chat.name}/commands, /{chat.name}/interactions",
                chat.guard if chat.on(settings) else f"off (set {chat.variable})",
                (f"/{chat.name}/commands", f"/{chat.name}/interactions"),
            )
            for chat in chats
        ),
        Guarded(
            "/login, /logout, the page's files",
            "open (the login form; styles, script, icon, the API docs' assets)",
            ("/login", "/logout", "/static/*", "/favicon.*", "/docs/assets/*"),
        ),
        Guarded("GET /proof", "open (proves to the CLI that it is its own service; says nothing else)", ("/proof",)),
        Guarded("/healthz, /readyz", "open (probes; they say nothing about the incidents)", ("/healthz", "/readyz")),
    ]


def routes(
    settings: Settings, hooks: Sequence[Webhook] = (), chats: Sequence[type[ChatApp]] = ()
) -> list[tuple[str, str]]:
    """(routes, how they are guarded), a line each."""
    return [(g.label, g.how) for g in guards(settings, hooks, chats)]


def browsers(settings: Settings) -> str:
    """Who may reach any route from a browser: the host names answered, and cross-site writes refused."""
    allowed = allowed_hosts(settings)
    hosts = (
        "any name (set ONCALL_MEMORY_ALLOWED_HOSTS to the names it is reached by)"
        if allowed is None
        else ", ".join(allowed)
    )
    return (
        f"every route answers to the host names {hosts}; a request that changes something from another site's "
        "page is refused"
    )


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
