"""The service never blocks itself: health checks and word lookups go on while a slow lookup and an
in-process ingest run. A real uvicorn server on loopback, driven from other threads."""

import threading
import time

import httpx
import pytest
import uvicorn
from conftest import FIXTURES

from oncall_memory.domain.alert import Alert
from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.errors import EmbeddingFailed
from oncall_memory.memory import Memory
from oncall_memory.orchestration.schedule import free_port
from oncall_memory.service import create_app
from oncall_memory.settings import Settings
from oncall_memory.sources.jsonl_files import read_jsonl

EMBED_SECONDS = 2.0  # long, so a blocked event loop shows as seconds against a bound of 100 ms


class SlowEmbedder(FakeEmbedder):
    """An embedding API that takes a second per call, and can go down."""

    down = False

    def embed(self, texts):
        time.sleep(EMBED_SECONDS)
        if self.down:
            raise EmbeddingFailed("connection refused")
        return super().embed(texts)


@pytest.fixture
def served(tmp_path):
    """A service on a free port over an Edge memory holding the first 16 fixtures, embedding slowly."""
    settings = Settings(data_dir=tmp_path / "data", embedder="fake", embed_batch_size=16)
    embedder = SlowEmbedder()
    memory = Memory.open(settings, embedder=embedder)
    memory.ingest(list(read_jsonl(FIXTURES / "incidents.jsonl"))[:16])
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(create_app(settings, memory=memory), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}", memory, embedder
    server.should_exit = True
    thread.join(10)
    memory.close()


def test_health_answers_at_once_while_a_slow_lookup_and_an_ingest_run(served):
    url, memory, _ = served
    rest = list(read_jsonl(FIXTURES / "incidents.jsonl"))[16:]  # three batches of 16: three slow embedding calls

    def lookups():  # back to back, so a route blocking the event loop would block it the whole time
        for _ in range(3):
            httpx.post(f"{url}/similar", json={"alert": {"text": "IPsec tunnel down"}}, timeout=30)

    busy = [threading.Thread(target=lookups), threading.Thread(target=memory.ingest, args=(rest,))]
    for t in busy:
        t.start()
    time.sleep(0.2)  # both are inside their embedding calls now
    latencies = []
    with httpx.Client(base_url=url, timeout=10) as client:
        while any(t.is_alive() for t in busy) and len(latencies) < 200:
            started = time.perf_counter()
            assert client.get("/healthz").status_code == 200
            latencies.append(time.perf_counter() - started)
            time.sleep(0.05)
    for t in busy:
        t.join(30)
    # A lookup route blocking the event loop holds each health check for the rest of an embedding call: a
    # median of about a second. On a busy CI machine a single check can take a few hundred ms for reasons of
    # its own, so the median carries the 10x margin, not the slowest.
    latencies.sort()
    median = latencies[len(latencies) // 2]
    assert median < 0.1, f"median /healthz {median * 1000:.0f} ms (slowest {latencies[-1] * 1000:.0f} ms)"
    assert len(latencies) >= 10  # health was asked while the slow work ran (about 6 s of it)
    assert memory.stats()["count"] == 64


def test_a_words_only_lookup_does_not_wait_for_an_ingest_to_embed(served):
    _, memory, _ = served
    rest = list(read_jsonl(FIXTURES / "incidents.jsonl"))[16:]
    ingest = threading.Thread(target=memory.ingest, args=(rest,))
    ingest.start()
    time.sleep(0.2)
    started = time.perf_counter()
    lookup = memory.similar(Alert(text="IPsec tunnel down"), mode="lexical")
    waited = time.perf_counter() - started
    assert ingest.is_alive()  # the ingest was still embedding when the lookup finished
    ingest.join(30)
    assert lookup.neighbours and waited < EMBED_SECONDS / 2


def test_readiness_reports_a_down_embedder_as_degraded_not_unready(served):
    url, _, embedder = served
    embedder.down = True
    ready = httpx.get(f"{url}/readyz", timeout=10)
    assert ready.status_code == 200
    body = ready.json()
    assert body["ready"] is True and "words only" in body["degraded"]
    lookup = httpx.get(f"{url}/similar", params={"text": "IPsec tunnel down"}, timeout=10)
    assert lookup.status_code == 200 and lookup.json()  # words-only lookups still answer
