"""The scheduled ingest as a Prefect flow: the same pipeline as the CLI, plus schedule, retries, history.

    load the window from a source -> validate and distill -> per batch: diff, embed (retried), write

Memory is never changed wrongly: the whole window is read before anything is written (a source that
fails writes nothing), a batch is written only after its embedding call succeeded, and nothing is ever
deleted because a source returned fewer items.
"""

from __future__ import annotations

from typing import Any

from prefect import flow, task
from prefect.cache_policies import NO_CACHE
from prefect.logging import get_run_logger
from prefect.runtime import flow_run, task_run

from .backlog import Rejected
from .embedders import Embedder, make_embedder
from .incident import Incident
from .ingest import BatchPlan, IngestReport, Prepared, collect, embed_texts, ingest_batch, write_batch
from .settings import Settings
from .sources import Source, Window
from .sources.factory import make_source
from .storage import open_store
from .store import IncidentStore


# Objects (store, embedder, source) are never hashed or persisted as task inputs: no caching.
def _load_name() -> str:
    params = task_run.parameters
    return f"load {params['source'].name} {params['window'] or 'all time'}"


@task(name="load-backlog", task_run_name=_load_name, cache_policy=NO_CACHE)
def load_backlog(source: Source, window: Window | None) -> list[Incident | Rejected]:
    return list(source.incidents(window))


@task(name="distill", cache_policy=NO_CACHE)
def distill_backlog(items: list[Incident | Rejected]) -> tuple[list[Prepared], IngestReport]:
    report = IngestReport()
    return collect(items, report), report


@task(name="embed-batch", task_run_name="embed batch {number}", cache_policy=NO_CACHE)
def embed_batch(embedder: Embedder, texts: list[str], number: int) -> list[list[float]]:
    return embed_texts(embedder, texts)


@task(name="write-batch", task_run_name="write batch {number}", cache_policy=NO_CACHE)
def write(store: IncidentStore, plan: BatchPlan, vectors: list[list[float]], number: int) -> None:
    write_batch(store, plan, vectors)


def _run_name() -> str:
    params = flow_run.parameters
    window = f"last {params.get('window_days')} days" if params.get("window_days") else "all time"
    return f"ingest {params.get('source')} {window}"


@flow(name="ingest-incidents", flow_run_name=_run_name, validate_parameters=False)
def ingest_flow(
    source: str = "jsonl",
    path: str | None = None,
    window_days: float | None = 7.0,
    *,
    settings: Any = None,
    embedder: Any = None,
) -> dict[str, int]:
    """One ingest run over the last `window_days` (None: everything). Returns and logs the counts.

    `settings` and `embedder` are for tests and in-process callers; a deployment builds both from the
    environment.
    """
    logger = get_run_logger()
    settings = settings or Settings()
    src = make_source(settings, source, path)
    window = Window.last(window_days) if window_days else None
    items = load_backlog(src, window)
    prepared, report = distill_backlog(items)
    for rejection in report.rejections:
        logger.warning("rejected %s", rejection)

    embedder = embedder or make_embedder(settings)
    embed = embed_batch.with_options(
        retries=settings.embed_retries, retry_delay_seconds=settings.embed_retry_delays
    )
    store = open_store(settings)
    try:
        store.ensure_collection(embedder.model, embedder.dimension)
        size = settings.embed_batch_size
        for number, start in enumerate(range(0, len(prepared), size), start=1):
            report.add(ingest_batch(
                prepared[start : start + size], store,
                embed=lambda texts, n=number: embed(embedder, texts, n),
                write=lambda plan, vectors, n=number: write(store, plan, vectors, n),
            ))
    finally:
        store.close()
    counts = report.counts()
    logger.info("ingest %s %s: %s", source, window or "all time", counts)
    return counts
