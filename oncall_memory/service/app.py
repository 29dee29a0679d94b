"""The enrichment service: `create_app(settings)` builds it; nothing happens at import time.

Routes: /webhooks/pagerduty, /webhooks/alertmanager, /webhooks/opsgenie, /similar, /healthz, /readyz.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import threading
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, HTTPException, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, ValidationError

from ..alert import Alert, Filters
from ..backlog import explain
from ..errors import InvalidInput, OncallMemoryError
from ..memory import Memory
from ..retrieve import Lookup
from ..settings import Settings
from ..sources import Window, default_window_days
from ..sources.factory import make_source
from .ledger import Ledger
from .notify import PagerDutyNotes, Poster, RedactSecrets, SlackWebhook
from .payloads import (
    AlertmanagerWebhook,
    Job,
    OpsgenieWebhook,
    PagerDutyWebhook,
    PDIncident,
    alertmanager_jobs,
    opsgenie_job,
    pagerduty_job,
)
from .worker import Enricher

log = logging.getLogger(__name__)


class SimilarRequest(BaseModel):
    """POST /similar: an alert (facts are soft preferences) plus optional hard filters."""

    model_config = ConfigDict(extra="forbid")

    alert: Alert
    filters: Filters | None = None
    limit: int = 5


def verify_pagerduty_signature(secret: str, body: bytes, header: str | None) -> bool:
    """PagerDuty v3: `v1=<hex HMAC-SHA256 of the raw body>`, comma-separated during secret rotation."""
    if not header:
        return False
    expected = "v1=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return any(hmac.compare_digest(expected, candidate.strip()) for candidate in header.split(","))


async def read_json(request: Request, limit: int) -> Any:
    """The request's JSON body, or a 4xx that says what is wrong (type, size, syntax)."""
    ctype = request.headers.get("content-type", "")
    if ctype.split(";")[0].strip().lower() != "application/json":
        raise HTTPException(415, f"send Content-Type: application/json (got {ctype or 'none'})")
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise HTTPException(413, f"body of {declared} bytes is over the {limit}-byte limit")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise HTTPException(413, f"body is over the {limit}-byte limit")
    request.state.raw_body = bytes(body)
    try:
        return json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise HTTPException(400, f"body is not valid JSON: {exc}") from exc


def parse(model: type[BaseModel], data: Any) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise HTTPException(422, f"{model.__name__}: {explain(exc)}") from exc


def neighbours_json(lookup: Lookup) -> list[dict]:
    return [n.model_dump(mode="json") for n in lookup.neighbours]


def create_app(
    settings: Settings,
    *,
    memory: Memory | None = None,
    ledger: Ledger | None = None,
) -> FastAPI:
    """Build the service. `memory` and `ledger` default to the configured store and `<data dir>/enrich.sqlite3`."""
    state: dict[str, Any] = {}

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        mem = memory or Memory.open(settings)
        led = ledger or Ledger(
            ":memory:" if str(settings.data_dir) == ":memory:" else settings.data_dir / "enrich.sqlite3"
        )
        poster = Poster(max_retries=settings.post_max_retries, backoff=settings.post_backoff)
        scrub = RedactSecrets([
            s.get_secret_value()
            for s in (settings.slack_webhook_url, settings.pagerduty_token, settings.pagerduty_webhook_secret,
                      settings.alertmanager_token)
            if s is not None
        ])
        logging.getLogger("httpx").addFilter(scrub)
        notes = None
        if settings.pagerduty_token and settings.pagerduty_from_email:
            notes = PagerDutyNotes(poster, base_url=settings.pagerduty_url, token=settings.pagerduty_token,
                                   from_email=settings.pagerduty_from_email)
        slack = SlackWebhook(poster, url=settings.slack_webhook_url) if settings.slack_webhook_url else None
        enricher = Enricher(lambda job: mem.similar(job.alert, limit=settings.notify_limit), led, notes=notes, slack=slack)
        enricher.start()
        stop = threading.Event()
        ingester = _start_ingest_schedule(settings, mem, stop) if settings.ingest_interval > 0 else None
        state.update(memory=mem, enricher=enricher)
        app.state.enricher = enricher
        try:
            yield
        finally:
            stop.set()
            if ingester:
                ingester.join(30)
            enricher.stop()
            poster.close()
            logging.getLogger("httpx").removeFilter(scrub)
            if ledger is None:
                led.close()
            if memory is None:
                mem.close()

    app = FastAPI(title="oncall-memory", lifespan=lifespan)

    @app.exception_handler(OncallMemoryError)
    async def _domain_error(request: Request, exc: OncallMemoryError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=400 if isinstance(exc, InvalidInput) else 503)

    def accept(jobs: list[Job]) -> dict[str, Any]:
        queued = [j.key for j in jobs if state["enricher"].submit(j)]
        return {"accepted": len(queued), "duplicates": len(jobs) - len(queued)}

    @app.post("/webhooks/pagerduty", status_code=202)
    async def pagerduty(request: Request) -> dict:
        data = await read_json(request, settings.max_body_bytes)
        if settings.pagerduty_webhook_secret is not None:
            secret = settings.pagerduty_webhook_secret.get_secret_value()
            if not verify_pagerduty_signature(secret, request.state.raw_body, request.headers.get("x-pagerduty-signature")):
                raise HTTPException(401, "missing or wrong X-PagerDuty-Signature")
        hook = parse(PagerDutyWebhook, data)
        if hook.event.event_type != "incident.triggered":
            return {"accepted": 0, "duplicates": 0, "ignored": hook.event.event_type}
        return accept([pagerduty_job(parse(PDIncident, hook.event.data))])

    @app.post("/webhooks/alertmanager", status_code=202)
    async def alertmanager(request: Request) -> dict:
        if settings.alertmanager_token is not None:
            expected = f"Bearer {settings.alertmanager_token.get_secret_value()}"
            if not hmac.compare_digest(request.headers.get("authorization", ""), expected):
                raise HTTPException(401, "missing or wrong bearer token")
        hook = parse(AlertmanagerWebhook, await read_json(request, settings.max_body_bytes))
        return accept(alertmanager_jobs(hook, settings.label_facts))

    @app.post("/webhooks/opsgenie", status_code=202)
    async def opsgenie(request: Request) -> dict:
        hook = parse(OpsgenieWebhook, await read_json(request, settings.max_body_bytes))
        if hook.action != "Create":
            return {"accepted": 0, "duplicates": 0, "ignored": hook.action}
        return accept([opsgenie_job(hook)])

    @app.get("/similar")
    def similar_get(
        text: str,
        service: str | None = None,
        env: str | None = None,
        flavor: str | None = None,
        tag: list[str] = Query(default=[]),
        status: str | None = None,
        limit: int = 5,
    ) -> list[dict]:
        alert = parse(Alert, {"text": text})
        filters = parse(Filters, {"service": service, "env": env, "flavor": flavor, "component_tags": tag, "status": status})
        return neighbours_json(state["memory"].similar(alert, filters=filters, limit=limit))

    @app.post("/similar")
    async def similar_post(request: Request) -> list[dict]:
        req = parse(SimilarRequest, await read_json(request, settings.max_body_bytes))
        return neighbours_json(state["memory"].similar(req.alert, filters=req.filters, limit=req.limit))

    @app.get("/healthz")
    def healthz() -> dict:
        return {"status": "ok"}

    @app.get("/readyz")
    def readyz() -> JSONResponse:
        ok, detail = state["memory"].ready()
        return JSONResponse({"ready": ok, "detail": detail}, status_code=200 if ok else 503)

    return app


def _start_ingest_schedule(settings: Settings, memory: Memory, stop: threading.Event) -> threading.Thread:
    """Ingest on a timer inside the service: the one owner of the embedded store does both jobs."""

    def loop() -> None:
        while True:
            try:
                source = make_source(settings, settings.ingest_source, settings.ingest_path)
                days = settings.ingest_window_days
                if days is None:
                    days = default_window_days(settings.ingest_source)
                # Read the source outside the memory's lock: lookups go on while PagerDuty pages.
                items = list(source.incidents(Window.last(days) if days else None))
                report = memory.ingest(items)
                log.info("scheduled ingest of %s: %s", settings.ingest_source, report.counts())
            except Exception:  # a failed run changes nothing; the next one tries again
                log.exception("scheduled ingest of %s failed", settings.ingest_source)
            if stop.wait(settings.ingest_interval):
                return

    thread = threading.Thread(target=loop, name="ingest-schedule", daemon=True)
    thread.start()
    return thread
