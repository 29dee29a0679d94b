"""One bad incident never stops the memory from growing: refused inputs are isolated, over-long text is
cut to the model's limit, text that is all noise is rejected without a call. The OpenAI embeddings API is
played over real HTTP by pytest-httpserver, answering as the API does (400 invalid_request_error)."""

import json

import pytest
from conftest import make_incident
from werkzeug import Request, Response

from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.embedders.openai import OpenAIEmbedder
from oncall_memory.errors import EmbeddingFailed
from oncall_memory.ingest.ingest import IngestStopped
from oncall_memory.memory import Memory
from oncall_memory.settings import Settings
from oncall_memory.store.engines import open_store

DIM = 8
LIMIT_BYTES = 8192  # what this fake API accepts per input; the real one counts 8,192 tokens


def embeddings_api(status_for_batch=None):
    """The embeddings endpoint: 400 context_length_exceeded when an input is over the limit or holds
    "POISON"; otherwise `status_for_batch(inputs)` may answer a status (an outage)."""
    calls: list[list[str]] = []

    def handler(request: Request) -> Response:
        inputs = json.loads(request.get_data())["input"]
        calls.append(inputs)
        if status_for_batch and (status := status_for_batch(inputs)):
            return Response(
                json.dumps({"error": {"message": "server error", "type": "server_error"}}),
                status=status,
                content_type="application/json",
            )
        for text in inputs:
            if "POISON" in text or len(text.encode()) > LIMIT_BYTES:
                error = {
                    "message": "This model's maximum context length is 8192 tokens, however you requested "
                    "11042 tokens (11042 in your prompt). Please reduce your prompt.",
                    "type": "invalid_request_error",
                    "param": "input",
                    "code": "context_length_exceeded",
                }
                return Response(json.dumps({"error": error}), status=400, content_type="application/json")
        data = [{"object": "embedding", "index": i, "embedding": [0.1 * (i % 7 + 1)] * DIM} for i in range(len(inputs))]
        body = {
            "object": "list",
            "data": data,
            "model": "text-embedding-3-small",
            "usage": {"prompt_tokens": 1, "total_tokens": 1},
        }
        return Response(json.dumps(body), content_type="application/json")

    return handler, calls


@pytest.fixture
def openai_memory(httpserver):
    handler, calls = embeddings_api()
    httpserver.expect_request("/v1/embeddings", method="POST").respond_with_handler(handler)
    embedder = OpenAIEmbedder(
        api_key="sk-test",
        base_url=httpserver.url_for("/v1"),
        model="text-embedding-3-small",
        dimension=DIM,
        max_retries=0,
    )
    memory = Memory(
        open_store(Settings(data_dir=":memory:")), embedder, Settings(data_dir=":memory:", embed_batch_size=64)
    )
    yield memory, calls
    memory.close()


def incidents(n, poison_at=()):
    return [
        make_incident(id=f"I{i}", title=f"queue consumer lag on partition {i} " + ("POISON" if i in poison_at else ""))
        for i in range(n)
    ]


def test_a_refused_incident_is_rejected_alone_and_the_rest_of_its_batch_is_written(openai_memory):
    memory, calls = openai_memory
    report = memory.ingest(incidents(192, poison_at={5}))
    assert memory._store.count() == 191
    assert (report.new, report.rejected) == (191, 1)
    (rejection,) = report.rejections
    assert rejection.where == "jsonl incident I5" and "context_length_exceeded" in rejection.reason
    # One bad input in a batch of 64 costs about 2·log2(64) more calls, not 64, and the other batches one each.
    assert len(calls) <= 3 + 2 * 6 + 1
    again = memory.ingest(incidents(192, poison_at={5}))
    assert (again.unchanged, again.rejected, again.new) == (191, 1, 0)


def test_an_outage_is_not_mistaken_for_poison(httpserver):
    handler, _ = embeddings_api(status_for_batch=lambda inputs: 503)
    httpserver.expect_request("/v1/embeddings", method="POST").respond_with_handler(handler)
    embedder = OpenAIEmbedder(
        api_key="sk-test",
        base_url=httpserver.url_for("/v1"),
        model="text-embedding-3-small",
        dimension=DIM,
        max_retries=0,
    )
    memory = Memory(open_store(Settings(data_dir=":memory:")), embedder, Settings(data_dir=":memory:"))
    with pytest.raises(IngestStopped) as info:
        memory.ingest(incidents(10))
    assert info.value.report.rejected == 0
    assert not memory._store.exists()  # nothing written: a first ingest that stored nothing leaves no collection


def test_an_over_long_text_is_cut_to_the_model_limit_and_the_cut_is_recorded(openai_memory):
    memory, calls = openai_memory
    trace = "java.lang.IllegalStateException: pool exhausted\n" + "\tat com.acme.Pool.borrow(Pool.java:42)\n" * 1200
    report = memory.ingest(
        [
            make_incident(id="TRACE", title="checkout 500s", oncall_note=trace),
            make_incident(id="SHORT", title="checkout 500s again"),
        ]
    )
    assert (report.new, report.rejected) == (2, 0)
    assert max(len(t.encode()) for t in calls[-1]) <= LIMIT_BYTES
    payloads = {p["id"]: p for _, p, _ in memory._store.points()}
    assert payloads["TRACE"]["embedded_cut"] is True and "embedded_cut" not in payloads["SHORT"]
    assert len(payloads["TRACE"]["text"]) > 40_000  # the whole text is kept; only what is embedded was cut
    assert memory.ingest([make_incident(id="TRACE", title="checkout 500s", oncall_note=trace)]).unchanged == 1


def test_text_that_is_all_noise_is_rejected_without_an_embedding_call():
    embedder = FakeEmbedder()
    memory = Memory(open_store(Settings(data_dir=":memory:")), embedder, Settings(data_dir=":memory:"))
    report = memory.ingest([make_incident(id="IP", title="10.12.0.7"), make_incident(id="OK", title="disk full")])
    assert (report.new, report.rejected) == (1, 1)
    assert "nothing to embed" in report.rejections[0].reason and report.rejections[0].where == "jsonl incident IP"
    assert embedder.calls == [["disk full"]]


def test_a_local_model_that_cannot_load_is_an_outage_not_a_refusal():
    class Broken(FakeEmbedder):
        def embed(self, texts):
            raise EmbeddingFailed("could not load")

    memory = Memory(open_store(Settings(data_dir=":memory:")), Broken(), Settings(data_dir=":memory:"))
    with pytest.raises(IngestStopped):
        memory.ingest(incidents(3))
