"""The scheduled ingest as a Prefect flow: the same `Memory.ingest` as the CLI, plus schedule,
retries and history.

    load the window from a source -> Memory.ingest, whose embed step is the retried `embed-batch` task

Memory is never changed wrongly: the whole window is read before anything is written (a source that
fails writes nothing), a batch is written only after its embedding call succeeded, and nothing is ever
deleted because a source returned fewer items.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from functools import partial
from pathlib import PurePath
from typing import Any

from prefect import flow, task
from prefect.cache_policies import NO_CACHE
from prefect.logging import get_run_logger
from prefect.runtime import flow_run, task_run

from ..embedders import Embedder
from ..ingest.ingest import embed_texts
from ..ingest.job import IngestJob, Items
from ..memory import Memory
from ..settings import Settings
from ..sources import default_window_days, scheduled_window


# Objects (source, embedder) are never hashed or persisted as task inputs: no caching.
def _load_name() -> str:
    return f"load {task_run.parameters['job'].describe()}"


@task(name="load-backlog", task_run_name=_load_name, cache_policy=NO_CACHE)
def load_backlog(job: IngestJob) -> Items:
    return job.read()


def _retry_unless_refused(task: Any, task_run: Any, state: Any) -> bool:
    # A refusal (the model rejected an input) is answered by isolating the incident, not by retrying.
    return not getattr(state.result(raise_on_failure=False), "refused", False)


@task(name="embed-batch", cache_policy=NO_CACHE, retry_condition_fn=_retry_unless_refused)
def embed_batch(embedder: Embedder, texts: Sequence[str]) -> list[list[float]]:
    return embed_texts(embedder, texts)


def _run_name() -> str:
    """What a run read, told apart from its neighbours in the Prefect UI: "ingest pagerduty
    2026-11-24..2026-12-01 (22:50Z)", "ingest incidents.jsonl, all of it (22:50Z)"."""
    return run_name(flow_run.parameters, datetime.now(timezone.utc))


def run_name(params: dict[str, Any], now: datetime) -> str:
    source = str(params.get("source") or "jsonl")
    what = source
    if source == "jsonl":
        what = PurePath(str(params.get("path") or "")).name or "files"
    days = params.get("window_days")
    if days is None:
        days = default_window_days(source)
    window = f"{now - timedelta(days=float(days)):%Y-%m-%d}..{now:%Y-%m-%d}" if days else "all of it"
    return f"ingest {what}, {window} ({now:%H:%MZ})"


@flow(name="ingest-incidents", flow_run_name=_run_name, validate_parameters=False)
def ingest_flow(
    source: str = "jsonl",
    path: str | None = None,
    window_days: float | None = None,
    *,
    settings: Any = None,
    embedder: Any = None,
) -> dict[str, int]:
    """One ingest run over the last `window_days` (None: the whole backlog). Returns and logs the counts.

    `settings` and `embedder` are for tests and in-process callers; a deployment builds both from the
    environment.
    """
    logger = get_run_logger()
    settings = settings or Settings()
    job = IngestJob(settings, source, path, scheduled_window(source, window_days, settings))
    items = load_backlog(job)  # read whole before the store is opened
    with Memory.open(settings, embedder=embedder) as memory:
        embed = embed_batch.with_options(
            retries=settings.embed_retries, retry_delay_seconds=settings.embed_retry_delays
        )
        outcome = job.into(memory, items, embed=partial(embed, memory.embedder))
    report, index = outcome.report, outcome.index
    if index:
        logger.info(
            "vector index rebuilt: %d of %d incidents indexed in %.1fs", index.indexed, index.count, index.build_seconds
        )
    for rejection in report.rejections:
        logger.warning("rejected %s", rejection)
    counts = report.counts()
    logger.info("ingest %s: %s", job.describe(), counts)
    return counts
