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
import sqlite3
from collections.abc import Callable
from contextlib import AsyncExitStack, asynccontextmanager
from functools import partial
from typing import Any

import swagger_ui_bundle
from fastapi import Depends, FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Route
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from .. import local_token
from ..chat import ChatApp
from ..datadir import write_atomic
from ..errors import DiskFull, InvalidInput, NotFound, OncallMemoryError
from ..integrations import BUILT_IN
from ..integrations.offers import Plugin, live_incidents, service_plugins, targets_hint
from ..jobs import Job, Refiner
from ..logs import redacted_logs
from ..memory import Memory
from ..plugins import BUILT_IN_WHERE
from ..redact import already_redacted, redact
from ..redact.engine import load_in_background
from ..settings import Settings
from ..targets import Target
from ..webhook import Webhook
from . import answers_api, api, commands, mcp_http, page, page_answers, webhooks
from . import chats as chat_routes
from .accounts import Accounts
from .allow_header import Methods
from .answer_log import AnswerBook, AnswerLog
from .answers_api import uncovered_gauge
from .auth import RecordPeer, api_token, proxies
from .cross_site import CrossSiteGuard, allowed_hosts
from .free_space import RETRY_AFTER, Room, cannot_write
from .indexer import Indexer
from .ingest_timer import IngestTimer
from .ledger import migrate_ledger
from .mcp_http import McpEndpoint, mcp_app
from .metrics import HttpMetrics, Metrics
from .outbox import Outbox
from .route_list import paths_and_methods
from .sessions import Attempts, Sessions
from .startup import summary
from .worker import Dispatcher, RetryPolicy

log = logging.getLogger(__name__)


def openapi_schema(app: FastAPI) -> dict[str, Any]:
    """FastAPI's schema, with the models of the raw-body routes (see `body.documented_body`) in its components."""
    if app.openapi_schema is None:
        schema = app.openapi()
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        for path in schema.get("paths", {}).values():
            for operation in path.values():
                components.update(operation.pop("x-components", {}))
    return app.openapi_schema or {}


DOCS_ASSETS = "/docs/assets"
DOCS_ASSET_TYPES = {"swagger-ui-bundle.js": "text/javascript", "swagger-ui.css": "text/css"}  # nothing else is served


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


def create_app(
    settings: Settings, *, memory: Memory | None = None, outbox: Outbox | None = None, announce: bool = False
) -> FastAPI:
    """Build the service. `memory` and `outbox` default to the configured store and `<data dir>/outbox.sqlite3`;
    ones passed in are the caller's to close. `announce`: while it serves, `<data dir>/service.json` tells the
    CLI on this data dir where to ask (`oncall-memory serve` sets it; see cli/remote.py)."""

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        # Every alert, lookup and payload is redacted as it enters: the secret catalogue loads (and its
        # detectors compile) beside the start, and is ready when the service is, not in the first alert's wait.
        catalogue = load_in_background(scan_once=True)
        async with AsyncExitStack() as stack:
            mem = memory or stack.enter_context(Memory.open(settings))
            mem.keep_ranking_fields()
            box = outbox or stack.enter_context(Outbox(settings.dir.outbox))
            hooked = [p.webhook.secret(settings) for p in installed if isinstance(p.webhook, Webhook)]
            stack.enter_context(redacted_logs([*secrets_of(settings), *(s for s in hooked if s)]))
            built_chats: dict[str, ChatApp] = {}  # by the integration's name
            for plugin, chat in chats:
                try:
                    if chat.on(settings):
                        built = built_chats[plugin.name] = chat(settings, mem)
                        stack.callback(built.close)
                except Exception as exc:  # a broken plugin does not keep the service down: its routes stay off
                    log.error("the chat app of %s could not start: %s: %s", plugin.where, type(exc).__name__, exc)
            app.state.chats = {built.name: built for built in built_chats.values()}
            built_in = [p for p in installed if p.where == BUILT_IN_WHERE]
            # Every answer is kept, posted or not (issue 84): the answer log is the one target always there.
            app.state.answer_log = book = AnswerLog(settings.dir.answers, keep=settings.service.answers_keep)
            stack.callback(book.close)
            kept = AnswerBook(book)
            targets: list[Target] = [kept, *plugin_targets(settings, built_in, {kept.name}, chats=built_chats)]
            kept.posted_to = lambda job: [
                t.name for t in targets if t.keeps is None and t.learns is None and t.accepts(job)
            ]
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
            app.state.local_token = local_token.read_or_create(settings.dir.local_token)
            mem.observer = metrics
            metrics.known([t.name for t in targets], paths_and_methods(app))
            hint = targets_hint(installed)
            for line in summary(settings, targets, mem, [hook for hook, _ in mounted], hint, [c for _, c in chats]):
                log.info("%s", line)
            refiners = plugin_refiners(settings, installed)  # a pager's incident read further before its lookup
            for refiner in refiners:
                stack.callback(refiner.close)
            stack.callback(metrics.watch(box, lambda: mem.stats()["count"], mem.index_state, app.state.room.free_bytes))
            stack.callback(metrics.watch_families(lambda: uncovered_gauge(book)))
            dispatcher = Dispatcher(
                box,
                lambda alert: mem.similar(alert, limit=settings.deliveries.notify_limit),
                targets,
                retry_policy(settings),
                outcome=metrics.delivery,
                room=app.state.room,
                refine=chained(refiners),
                read=partial(read_by_its_webhook, {hook.name: hook for hook, _ in mounted}, settings, mem),
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
            if settings.schedule.ingest_interval > 0:
                stack.enter_context(IngestTimer(settings, mem))
            if settings.index_threshold > 0:
                stack.enter_context(Indexer(mem))
            app.state.memory, app.state.dispatcher, app.state.outbox = mem, dispatcher, box
            app.state.sessions = sessions = Sessions(settings.dir.sessions)
            stack.callback(sessions.close)
            app.state.accounts = accounts = Accounts(settings.dir.accounts)
            stack.callback(accounts.close)
            live = live_incidents(
                settings, installed
            )  # a pager's, for the agents: they read one and post a finding on it
            if live is not None:
                stack.callback(live.close)
            app.state.mcp = await stack.enter_async_context(mcp_app(mem, live, allowed_hosts(settings)))
            await asyncio.to_thread(catalogue.join, CATALOGUE_WAIT)
            if announce and (info := settings.dir.service) is not None:
                host = "127.0.0.1" if settings.service.host in ("0.0.0.0", "::", "") else settings.service.host
                write_atomic(info, json.dumps({"url": f"http://{host}:{settings.service.port}", "pid": os.getpid()}))
                stack.callback(info.unlink, missing_ok=True)  # at shutdown, even one a signal started
            yield

    # The docs describe the whole API: served behind the same token as the lookups.
    app = FastAPI(title="oncall-memory", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)
    app.state.settings = settings
    app.state.login_attempts = Attempts()
    app.state.page_secret = secrets.token_bytes(32)  # the CSRF secret of the page without a token
    app.state.metrics = metrics = Metrics()
    app.state.room = Room(settings.dir, settings.service.min_free_mb)
    app.add_middleware(HttpMetrics, metrics=metrics)
    # Uvicorn's own FORWARDED_ALLOW_IPS, where a deployment already set it, names the same proxies.
    if trusted := proxies(settings):
        # Only a configured proxy may say who the client is: the login throttle and the Secure cookie read
        # `request.client` and its scheme, and anyone else could rotate X-Forwarded-For to dodge the first.
        app.add_middleware(ProxyHeadersMiddleware, trusted_hosts=trusted)
    app.add_middleware(Methods)  # OPTIONS and a 405 name every method a path takes
    # Before any route: the host a request names, and where a request that changes something comes from.
    app.add_middleware(CrossSiteGuard, allowed=allowed_hosts(settings))
    app.add_middleware(RecordPeer)  # outermost: the connection's own address, before any proxy rewrites it
    installed = service_plugins()
    mounted: list[tuple[Webhook, str]] = []  # each webhook the integrations offer, and where it came from
    for plugin in installed:
        built_in = plugin.where == BUILT_IN_WHERE
        # A plugin may not take a built-in's route, nor a learner's keys (`<name>-learn:`).
        hook = plugin.webhook
        taken = isinstance(hook, Webhook) and (hook.name in BUILT_IN or hook.name.endswith("-learn"))
        if isinstance(hook, Webhook) and (built_in or not taken):
            mounted.append((hook, plugin.where))
        elif plugin.webhook is not None:
            log.error("the integration %s offers a webhook that is not a oncall_memory.webhook.Webhook", plugin.where)
    for hook, where in mounted:
        webhooks.mount(app, hook, where)
    app.state.pagers = tuple(hook.name for hook, _ in mounted)  # whose job keys name an incident (`/feedback`)
    app.include_router(api.router)
    app.include_router(commands.router)
    app.include_router(answers_api.router)
    app.include_router(api.probes)
    app.include_router(page.router)
    app.include_router(page_answers.router)
    chats: list[tuple[Plugin, type[ChatApp]]] = []  # each chat app the integrations offer, after the service's own
    for plugin in installed:
        chat = plugin.chat_app
        if not (isinstance(chat, type) and issubclass(chat, ChatApp)):
            if chat is not None:
                log.error("the integration %s offers a chat app that is not a oncall_memory.chat.ChatApp", plugin.where)
            continue
        # Not a path the service serves (nor one it adds below: the agents' door and the API's docs).
        paths = {p.split("/")[1] for p, _ in paths_and_methods(app)} | {
            "webhooks",
            "mcp",
            "docs",
            "openapi.json",
            "redoc",
        }
        if (
            not chat.name.isidentifier()
            or chat.name in paths
            or (plugin.where != BUILT_IN_WHERE and chat.name in BUILT_IN)
        ):
            log.error("the integration %s offers a chat app at /%s, a path that is taken", plugin.where, chat.name)
            continue
        chats.append((plugin, chat))
        chat_routes.mount(app, chat)
    app.add_exception_handler(page.LoginRequired, page.login_redirect)  # type: ignore[arg-type]  # Starlette types the handler for any Exception
    mcp = McpEndpoint(settings)
    app.router.routes.append(Route(mcp_http.PATH, endpoint=mcp, methods=["GET", "POST", "DELETE"]))
    app.router.routes.append(Route(mcp_http.SSE_PATH, endpoint=mcp, methods=["GET"]))
    app.router.routes.append(Route(mcp_http.MESSAGES_PATH, endpoint=mcp, methods=["POST"]))
    guarded = [Depends(api_token)]

    readers = [Depends(page.bearer_or_session)]

    @app.get("/openapi.json", dependencies=readers, include_in_schema=False)
    def openapi() -> JSONResponse:
        return JSONResponse(openapi_schema(app))

    @app.get("/docs", dependencies=readers, include_in_schema=False)
    def swagger() -> HTMLResponse:
        # Swagger UI from its PyPI package, served here: no CDN (an air-gapped network, a strict CSP).
        return get_swagger_ui_html(
            openapi_url="/openapi.json",
            title="oncall-memory",
            swagger_js_url=f"{DOCS_ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{DOCS_ASSETS}/swagger-ui.css",
            swagger_favicon_url="/favicon.svg",
        )

    @app.get(DOCS_ASSETS + "/{name}", include_in_schema=False)
    def swagger_asset(name: str) -> Response:
        kind = DOCS_ASSET_TYPES.get(name)
        if kind is None:
            return Response(status_code=404)
        body = (swagger_ui_bundle.swagger_ui_path / name).read_bytes()
        return Response(body, media_type=kind, headers={"Cache-Control": "max-age=86400"})

    @app.get("/redoc", dependencies=guarded, include_in_schema=False)
    def redoc() -> HTMLResponse:
        return get_redoc_html(openapi_url="/openapi.json", title="oncall-memory")

    @app.get("/metrics", dependencies=[Depends(api_token)], include_in_schema=False)
    def prometheus() -> Response:
        body, content_type = metrics.exposition()
        return Response(body, media_type=content_type)

    @app.exception_handler(RequestValidationError)
    async def _invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        # FastAPI's own 422, less the value it was given: a query parameter is read before any redaction,
        # and `?limit=<a token>` came back verbatim. Each error keeps its type, location and message, each
        # redacted: a location holds the caller's own names (a token sent as a JSON key).
        errors = [
            {
                "loc": [redact(str(p)) if isinstance(p, str) else p for p in e["loc"]],
                "msg": redact(e["msg"]),
                "type": e["type"],
            }
            for e in exc.errors()
        ]
        said = "; ".join(f"{'.'.join(str(p) for p in e['loc'][1:]) or e['loc'][0]}: {e['msg']}" for e in errors)
        return JSONResponse({"detail": said, "errors": jsonable_encoder(errors)}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _refused(request: Request, exc: StarletteHTTPException) -> Response:
        # Every refusal's words pass redaction: some are built from what was sent (a content type, an id).
        if isinstance(exc.detail, str):
            exc.detail = redact(exc.detail)
        return await http_exception_handler(request, exc)

    @app.exception_handler(OncallMemoryError)
    async def _domain_error(request: Request, exc: OncallMemoryError) -> JSONResponse:
        if isinstance(exc, DiskFull):
            return _refused_write(request, exc)
        status = 404 if isinstance(exc, NotFound) else 400 if isinstance(exc, InvalidInput) else 503
        return JSONResponse({"detail": redact(str(exc))}, status_code=status)

    @app.exception_handler(sqlite3.OperationalError)
    @app.exception_handler(OSError)
    async def _write_error(request: Request, exc: Exception) -> JSONResponse:
        if cannot_write(exc) is None:
            log.error("%s %s failed: %s", request.method, request.url.path, exc, exc_info=exc)
            return JSONResponse({"detail": "internal error; the log says what failed"}, status_code=500)
        return _refused_write(request, exc)

    return app


def _refused_write(request: Request, exc: Exception) -> JSONResponse:
    """The data dir could not take a write: 503 with Retry-After, which pagers honour by posting again."""
    why = cannot_write(exc) or str(exc)
    request.app.state.room.refused(why)
    return JSONResponse(
        {"detail": f"the data dir cannot be written ({why}); nothing was kept: send again later"},
        status_code=503,
        headers={"Retry-After": str(RETRY_AFTER)},
    )
