"""The enrichment service: `create_app(settings)` assembles it; nothing happens at import time.

Routes: /webhooks/<pager> for each webhook an integration offers through the hook, the pagers' and the
learners' (`webhooks.mount`), /similar, /feedback, /stats, /healthz, /readyz (`api.py`), /mcp
(`mcp_http.py`), /metrics (`metrics.py`), the search page at / (`page.py`). Every route is a plain `def`: FastAPI runs it on its threadpool, so a
slow lookup never stalls the event loop, and the memory's lock covers store calls only.
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import os
import secrets
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager, closing
from dataclasses import dataclass, field
from functools import partial

from fastapi import FastAPI
from starlette.routing import Route
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from .. import local_token
from ..chat import ChatApp
from ..datadir import write_atomic
from ..integrations.offers import Plugin, live_incidents, service_plugins, targets_hint
from ..logs import redacted_logs
from ..memory import Memory
from ..plugins import BUILT_IN_WHERE
from ..redact.engine import load_in_background
from ..settings import Settings
from ..targets import Target
from ..webhook import Webhook
from . import answers_api, api, commands, mcp_http, page, page_answers
from .accounts import Accounts
from .allow_header import Methods
from .answer_log import AnswerBook, AnswerLog
from .answers_api import uncovered_gauge
from .api_docs import add_api_docs
from .auth import RecordPeer, proxies
from .cross_site import CrossSiteGuard, allowed_hosts
from .error_answers import answer_errors
from .free_space import Room
from .indexer import Indexer
from .ingest_timer import IngestTimer
from .ledger import migrate_ledger
from .mcp_http import McpEndpoint, mcp_app
from .metrics import HttpMetrics, Metrics
from .outbox import Outbox
from .plugin_wiring import chained, mount_chats, mount_webhooks, plugin_refiners, plugin_targets, read_by_its_webhook
from .route_list import paths_and_methods
from .sessions import Attempts, Sessions
from .startup import summary
from .worker import Dispatcher, RetryPolicy

log = logging.getLogger(__name__)


def retry_policy(settings: Settings) -> RetryPolicy:
    return RetryPolicy(
        backoff=settings.deliveries.post_backoff,
        backoff_cap=settings.deliveries.post_backoff_cap,
        deadline=settings.deliveries.delivery_deadline,
        max_retries=settings.deliveries.post_max_retries,
    )


def secrets_of(settings: Settings) -> list[str]:
    return settings.secrets()


YOUNG_COLLECTION = 10_000  # allocations between young collections once served (Python's default: 700)
CATALOGUE_WAIT = 60.0  # seconds a start waits for the secret catalogue (0.4 s cached, ~3 s the first time)


def long_lived() -> None:
    """Once a served process has started: what start-up built (modules, schemas, the store, the models)
    lives as long as the process, so it is moved out of the cyclic collector's way. Every full collection
    walked all of it: an alert storm's post allocates a few hundred thousand objects, and its collections
    took a quarter of the time to its 202. (Garbage is collected first; not called per app, as tests
    build hundreds of apps in one process.)"""
    gc.collect()
    gc.freeze()
    # A lookup holds about a thousand containers at once (50 candidates' payloads and boosts), all freed by
    # reference counting when it answers; at the default threshold of 700 nearly every lookup set off a
    # young collection (0.13 ms each: 0.18-0.21 ms a lookup at 100,000, in process). At 10,000 none does,
    # and cyclic garbage, where some thread makes it, waits at most that many allocations.
    gc.set_threshold(YOUNG_COLLECTION, *gc.get_threshold()[1:])


@dataclass
class Parts:
    """What a service is built from: the settings, a memory and an outbox given by the caller (else opened as
    it starts, and closed as it stops), the integrations, and what of theirs was mounted."""

    settings: Settings
    memory: Memory | None
    outbox: Outbox | None
    announce: bool
    installed: list[Plugin]
    mounted: list[tuple[Webhook, str]] = field(default_factory=list)
    chats: list[tuple[Plugin, type[ChatApp]]] = field(default_factory=list)


def create_app(
    settings: Settings, *, memory: Memory | None = None, outbox: Outbox | None = None, announce: bool = False
) -> FastAPI:
    """Build the service. `memory` and `outbox` default to the configured store and `<data dir>/outbox.sqlite3`;
    ones passed in are the caller's to close. `announce`: while it serves, `<data dir>/service.json` tells the
    CLI on this data dir where to ask (`oncall-memory serve` sets it; see cli/remote.py). Nothing starts until
    the app does (`serve`, below)."""
    parts = Parts(settings, memory, outbox, announce, service_plugins())
    app = FastAPI(
        title="oncall-memory", lifespan=partial(serve, parts), docs_url=None, redoc_url=None, openapi_url=None
    )
    app.state.settings = settings
    app.state.login_attempts = Attempts()
    app.state.page_secret = secrets.token_bytes(32)  # the CSRF secret of the page without a token
    app.state.metrics = Metrics()
    app.state.room = Room(settings.dir, settings.service.min_free_mb)
    add_middleware(app, settings)
    parts.mounted = mount_webhooks(app, parts.installed)
    for router in (api.router, commands.router, answers_api.router, api.probes, page.router, page_answers.router):
        app.include_router(router)
    parts.chats = mount_chats(app, parts.installed)  # after the routes: a chat may not take their paths
    mount_mcp(app, settings)
    add_api_docs(app, app.state.metrics)
    answer_errors(app)
    return app


def add_middleware(app: FastAPI, settings: Settings) -> None:
    """The middleware, innermost first: metrics, the proxies' headers, truthful methods, the cross-site
    guard, and outermost the connection's own address."""
    app.add_middleware(HttpMetrics, metrics=app.state.metrics)
    # Uvicorn's own FORWARDED_ALLOW_IPS, where a deployment already set it, names the same proxies.
    if trusted := proxies(settings):
        # Only a configured proxy may say who the client is: the login throttle and the Secure cookie read
        # `request.client` and its scheme, and anyone else could rotate X-Forwarded-For to dodge the first.
        app.add_middleware(ProxyHeadersMiddleware, trusted_hosts=trusted)
    app.add_middleware(Methods)  # OPTIONS and a 405 name every method a path takes
    # Before any route: the host a request names, and where a request that changes something comes from.
    app.add_middleware(CrossSiteGuard, allowed=allowed_hosts(settings))
    app.add_middleware(RecordPeer)  # outermost: the connection's own address, before any proxy rewrites it


def mount_mcp(app: FastAPI, settings: Settings) -> None:
    """The agents' door over HTTP: streamable HTTP at /mcp, and the older SSE transport beside it."""
    mcp = McpEndpoint(settings)
    app.router.routes.append(Route(mcp_http.PATH, endpoint=mcp, methods=["GET", "POST", "DELETE"]))
    app.router.routes.append(Route(mcp_http.SSE_PATH, endpoint=mcp, methods=["GET"]))
    app.router.routes.append(Route(mcp_http.MESSAGES_PATH, endpoint=mcp, methods=["POST"]))


@asynccontextmanager
async def serve(parts: Parts, app: FastAPI) -> AsyncIterator[None]:
    """The service while it runs: each part opened in turn, each closed in reverse as it stops."""
    settings = parts.settings
    # Every alert, lookup and payload is redacted as it enters: the secret catalogue loads (and its
    # detectors compile) beside the start, and is ready when the service is, not in the first alert's wait.
    catalogue = load_in_background(scan_once=True)
    async with AsyncExitStack() as stack:
        mem = parts.memory or stack.enter_context(Memory.open(settings))
        mem.keep_ranking_fields()
        box = parts.outbox or stack.enter_context(Outbox(settings.dir.outbox))
        hooked = [p.webhook.secret(settings) for p in parts.installed if isinstance(p.webhook, Webhook)]
        stack.enter_context(redacted_logs([*secrets_of(settings), *(s for s in hooked if s)]))
        built_chats = start_chats(stack, parts, mem)
        app.state.chats = {built.name: built for built in built_chats.values()}
        targets = build_targets(stack, parts, mem, built_chats, app)
        app.state.local_token = local_token.read_or_create(settings.dir.local_token)
        metrics: Metrics = app.state.metrics
        mem.observer = metrics
        metrics.known([t.name for t in targets], paths_and_methods(app))
        hint = targets_hint(parts.installed)
        for line in summary(
            settings, targets, mem, [hook for hook, _ in parts.mounted], hint, [c for _, c in parts.chats]
        ):
            log.info("%s", line)
        dispatcher = start_dispatcher(stack, parts, app, mem, box, targets, hint)
        if settings.schedule.ingest_interval > 0:
            stack.enter_context(IngestTimer(settings, mem))
        if settings.index_threshold > 0:
            stack.enter_context(Indexer(mem))
        app.state.memory, app.state.dispatcher, app.state.outbox = mem, dispatcher, box
        app.state.sessions = stack.enter_context(closing(Sessions(settings.dir.sessions)))
        app.state.accounts = stack.enter_context(closing(Accounts(settings.dir.accounts)))
        live = live_incidents(settings, parts.installed)  # a pager's, for the agents: they read one, post on it
        if live is not None:
            stack.callback(live.close)
        app.state.mcp = await stack.enter_async_context(mcp_app(mem, live, allowed_hosts(settings)))
        await asyncio.to_thread(catalogue.join, CATALOGUE_WAIT)
        if parts.announce:
            announce(stack, settings)
        yield


def start_chats(stack: AsyncExitStack, parts: Parts, mem: Memory) -> dict[str, ChatApp]:
    """Each chat app whose setting turns it on, built with the memory, by its integration's name. A broken
    one does not keep the service down: its routes stay off."""
    built_chats: dict[str, ChatApp] = {}
    for plugin, chat in parts.chats:
        try:
            if chat.on(parts.settings):
                built = built_chats[plugin.name] = chat(parts.settings, mem)
                stack.callback(built.close)
        except Exception as exc:
            log.error("the chat app of %s could not start: %s: %s", plugin.where, type(exc).__name__, exc)
    return built_chats


def build_targets(
    stack: AsyncExitStack, parts: Parts, mem: Memory, built_chats: dict[str, ChatApp], app: FastAPI
) -> list[Target]:
    """Where answers go: the answer log first (every answer is kept, posted or not: issue 84), the built-in
    integrations' targets, each integration's learners, then the installed integrations' targets."""
    settings, installed = parts.settings, parts.installed
    app.state.answer_log = book = stack.enter_context(
        closing(AnswerLog(settings.dir.answers, keep=settings.service.answers_keep))
    )
    built_in = [p for p in installed if p.where == BUILT_IN_WHERE]
    kept = AnswerBook(book)
    targets: list[Target] = [kept, *plugin_targets(settings, built_in, {kept.name}, chats=built_chats)]
    kept.posted_to = lambda job: [t.name for t in targets if t.keeps is None and t.learns is None and t.accepts(job)]
    learning = set()
    for plugin in installed:  # each integration's learners, through its `learners` hook
        learners = plugin_targets(settings, [plugin], {t.name for t in targets}, mem)
        learning.update([plugin.name] if learners else [])
        targets += learners
    others = [p for p in installed if p.where != BUILT_IN_WHERE]
    targets += plugin_targets(settings, others, {t.name for t in targets}, chats=built_chats)
    app.state.learning = frozenset(learning)
    for target in targets:
        stack.callback(target.close)
    metrics: Metrics = app.state.metrics
    stack.callback(metrics.watch_families(lambda: uncovered_gauge(book)))
    return targets


def start_dispatcher(
    stack: AsyncExitStack, parts: Parts, app: FastAPI, mem: Memory, box: Outbox, targets: list[Target], hint: str
) -> Dispatcher:
    """The worker that looks each claimed alert up and delivers it to every target that accepts it, with a
    pager's incident read further first (its refiners) and a storm's unread alerts read by their webhook."""
    settings, metrics = parts.settings, app.state.metrics
    refiners = plugin_refiners(settings, parts.installed)
    for refiner in refiners:
        stack.callback(refiner.close)
    stack.callback(metrics.watch(box, lambda: mem.stats()["count"], mem.index_state, app.state.room.free_bytes))
    dispatcher = Dispatcher(
        box,
        lambda alert: mem.similar(alert, limit=settings.deliveries.notify_limit),
        targets,
        retry_policy(settings),
        outcome=metrics.delivery,
        room=app.state.room,
        refine=chained(refiners),
        read=partial(read_by_its_webhook, {hook.name: hook for hook, _ in parts.mounted}, settings, mem),
        nowhere_hint=hint,
    )
    migrate_ledger(
        settings.dir.file("enrich.sqlite3"),
        box,
        lambda job: [t.name for t in targets if t.accepts(job)],
        deadline=settings.deliveries.delivery_deadline,
    )
    dispatcher.start()
    stack.callback(dispatcher.stop)
    return dispatcher


def announce(stack: AsyncExitStack, settings: Settings) -> None:
    """`<data dir>/service.json`: where the CLI on this data dir finds the service, removed as it stops (even
    when a signal stops it)."""
    if (info := settings.dir.service) is None:
        return
    host = "127.0.0.1" if settings.service.host in ("0.0.0.0", "::", "") else settings.service.host
    write_atomic(info, json.dumps({"url": f"http://{host}:{settings.service.port}", "pid": os.getpid()}))
    stack.callback(info.unlink, missing_ok=True)
