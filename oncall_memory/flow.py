"""The scheduled ingest as a Prefect flow: the same `Memory.ingest` as the CLI, plus schedule,
retries and history.

    load the window from a source -> Memory.ingest, whose embed step is the retried `embed-batch` task

Memory is never changed wrongly: the whole window is read before anything is written (a source that
fails writes nothing), a batch is written only after its embedding call succeeded, and nothing is ever
deleted because a source returned fewer items.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

from prefect import flow, task
from prefect.cache_policies import NO_CACHE
from prefect.logging import get_run_logger
from prefect.runtime import flow_run, task_run

from .backlog import Rejected
from .embedders import Embedder
from .incident import Incident
from .ingest import embed_texts
from .memory import Memory
from .settings import Settings
from .sources import Source, Window, scheduled_window
from .sources.factory import make_source


# Objects (source, embedder) are never hashed or persisted as task inputs: no caching.
def _load_name() -> str:
    params = task_run.parameters
    return f"load {params['source'].name} {params['window'] or 'all time'}"


@task(name="load-backlog", task_run_name=_load_name, cache_policy=NO_CACHE)
def load_backlog(source: Source, window: Window | None) -> list[Incident | Rejected]:
    return list(source.incidents(window))


def _retry_unless_refused(task: Any, task_run: Any, state: Any) -> bool:
    # A refusal (the model rejected an input) is answered by isolating the incident, not by retrying.
    return not getattr(state.result(raise_on_failure=False), "refused", False)


@task(name="embed-batch", cache_policy=NO_CACHE, retry_condition_fn=_retry_unless_refused)
def embed_batch(embedder: Embedder, texts: Sequence[str]) -> list[list[float]]:
    return embed_texts(embedder, texts)


def _run_name() -> str:
    params = flow_run.parameters
    window = f"last {params.get('window_days')} days" if params.get("window_days") else "all time"
    return f"ingest {params.get('source')} {window}"


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
    window = scheduled_window(source, window_days, settings.pagerduty_refresh_days)
    with make_source(settings, source, path) as src:
        items = load_backlog(src, window)
    with Memory.open(settings, embedder=embedder) as memory:
        embed = embed_batch.with_options(retries=settings.embed_retries, retry_delay_seconds=settings.embed_retry_delays)
        report = memory.ingest(items, embed=partial(embed, memory.embedder))
        index = memory.build_index()  # only when due: past the threshold, a tenth unindexed
    if index:
        logger.info("vector index rebuilt: %d of %d incidents indexed in %.1fs", index.indexed, index.count,
                    index.build_seconds)
    for rejection in report.rejections:
        logger.warning("rejected %s", rejection)
    counts = report.counts()
    logger.info("ingest %s %s: %s", source, window or "all time", counts)
    return counts
