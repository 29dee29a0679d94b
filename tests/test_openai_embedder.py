"""The OpenAI embedder against a real HTTP server playing the embeddings API (never a patched client)."""

import base64
import json
import struct

import pytest
from werkzeug import Request, Response

from oncall_memory.embedders.openai import OpenAIEmbedder
from oncall_memory.errors import EmbeddingFailed

DIM = 8


def vector_for(text: str, dim: int = DIM) -> list[float]:
    seed = sum(map(ord, text))
    return [float((seed * (i + 1)) % 97) / 97.0 for i in range(dim)]


def embeddings_api(dim: int = DIM, drop_one: bool = False):
    """A handler answering like the embeddings endpoint, in base64 or floats as the request asks."""
    seen: list[dict] = []

    def handler(request: Request) -> Response:
        body = json.loads(request.get_data())
        seen.append(body)
        inputs = body["input"]
        if drop_one:
            inputs = inputs[:-1]
        data = []
        # Answer out of order: the client must put vectors back by index.
        for index, text in reversed(list(enumerate(inputs))):
            vec = vector_for(text, dim)
            if body.get("encoding_format") == "base64":
                emb = base64.b64encode(struct.pack(f"<{len(vec)}f", *vec)).decode()
            else:
                emb = vec
            data.append({"object": "embedding", "index": index, "embedding": emb})
        payload = {
            "object": "list",
            "data": data,
            "model": body["model"],
            "usage": {"prompt_tokens": 1, "total_tokens": 1},
        }
        return Response(json.dumps(payload), content_type="application/json")

    return handler, seen


def make(httpserver, **kw) -> OpenAIEmbedder:
    return OpenAIEmbedder(
        api_key="sk-test", base_url=httpserver.url_for("/v1"), model="text-embedding-3-small", dimension=DIM, **kw
    )


def test_batches_inputs_and_returns_vectors_in_order(httpserver):
    handler, seen = embeddings_api()
    httpserver.expect_request("/v1/embeddings", method="POST").respond_with_handler(handler)
    texts = [f"incident {i}" for i in range(5)]
    vectors = make(httpserver, batch_size=2).embed(texts)
    assert sorted(len(b["input"]) for b in seen) == [1, 2, 2]  # sent side by side: in any order
    assert seen[0]["model"] == "text-embedding-3-small"
    assert vectors == [pytest.approx(vector_for(t)) for t in texts]


def test_sends_the_api_key_as_bearer(httpserver):
    handler, _ = embeddings_api()
    httpserver.expect_request(
        "/v1/embeddings", method="POST", headers={"Authorization": "Bearer sk-test"}
    ).respond_with_handler(handler)
    assert len(make(httpserver).embed(["x"])) == 1


def test_retries_a_429_then_succeeds(httpserver):
    handler, seen = embeddings_api()
    httpserver.expect_oneshot_request("/v1/embeddings", method="POST").respond_with_json(
        {"error": {"message": "slow down", "type": "rate_limit"}}, status=429, headers={"retry-after-ms": "10"}
    )
    httpserver.expect_request("/v1/embeddings", method="POST").respond_with_handler(handler)
    vectors = make(httpserver).embed(["dns timeout"])
    assert vectors == [pytest.approx(vector_for("dns timeout"))]
    assert len(httpserver.log) == 2 and httpserver.log[0][1].status_code == 429


def test_gives_up_after_retries_on_5xx_with_a_clear_error(httpserver):
    httpserver.expect_request("/v1/embeddings", method="POST").respond_with_json(
        {"error": {"message": "boom"}}, status=503, headers={"retry-after-ms": "5"}
    )
    with pytest.raises(EmbeddingFailed, match="failed after retries"):
        make(httpserver, max_retries=2).embed(["x"])
    assert len(httpserver.log) == 3  # the first try and two retries


def test_rejects_a_wrong_dimension(httpserver):
    handler, _ = embeddings_api(dim=DIM + 1)
    httpserver.expect_request("/v1/embeddings", method="POST").respond_with_handler(handler)
    with pytest.raises(EmbeddingFailed, match="9-dim vector, expected 8"):
        make(httpserver).embed(["x"])


def test_rejects_a_wrong_vector_count(httpserver):
    handler, _ = embeddings_api(drop_one=True)
    httpserver.expect_request("/v1/embeddings", method="POST").respond_with_handler(handler)
    with pytest.raises(EmbeddingFailed, match="asked .* for 2 vectors, got 1"):
        make(httpserver).embed(["a", "b"])


def test_known_model_dimension_is_the_default_and_not_sent(httpserver):
    handler, seen = embeddings_api(dim=1536)
    httpserver.expect_request("/v1/embeddings", method="POST").respond_with_handler(handler)
    embedder = OpenAIEmbedder(api_key="sk-test", base_url=httpserver.url_for("/v1"))
    assert (embedder.model, embedder.dimension) == ("text-embedding-3-small", 1536)
    assert len(embedder.embed(["x"])[0]) == 1536
    assert "dimensions" not in seen[0]


# -- requests planned under the endpoint's limits, side by side, paced by the account's headers --------


@pytest.fixture
def threaded_server():
    from pytest_httpserver import HTTPServer

    server = HTTPServer(threaded=True)
    server.start()
    yield server
    server.clear()
    server.stop()


def test_no_request_passes_the_endpoints_token_limit(httpserver):
    embedder = make(httpserver, batch_size=2048)
    handler, seen = embeddings_api()

    def limited(request: Request) -> Response:
        body = json.loads(request.get_data())
        total = sum(embedder.tokens(t) for t in body["input"])
        if total > OpenAIEmbedder.MAX_REQUEST_TOKENS or len(body["input"]) > OpenAIEmbedder.MAX_INPUTS_PER_REQUEST:
            error = {"error": {"message": f"{total} tokens in one request", "code": "max_tokens_per_request"}}
            return Response(json.dumps(error), status=400, content_type="application/json")
        return handler(request)

    httpserver.expect_request("/v1/embeddings", method="POST").respond_with_handler(limited)
    texts = [f"post-mortem {i}: " + "the primary database failed over " * 240 for i in range(120)]  # ~8 KB each
    vectors = embedder.embed(texts)
    assert vectors == [pytest.approx(vector_for(t)) for t in texts]  # in order across requests
    assert len(seen) >= 2 and sorted(t for body in seen for t in body["input"]) == sorted(texts)
    assert all(sum(embedder.tokens(t) for t in body["input"]) <= OpenAIEmbedder.MAX_REQUEST_TOKENS for body in seen)


def test_requests_go_side_by_side_up_to_the_concurrency(threaded_server):
    import threading
    import time

    handler, _ = embeddings_api()
    lock, state = threading.Lock(), {"now": 0, "most": 0}

    def slow(request: Request) -> Response:
        with lock:
            state["now"] += 1
            state["most"] = max(state["most"], state["now"])
        time.sleep(0.3)
        with lock:
            state["now"] -= 1
        return handler(request)

    threaded_server.expect_request("/v1/embeddings", method="POST").respond_with_handler(slow)
    texts = [f"alert {i}" for i in range(16)]
    vectors = make(threaded_server, batch_size=2, concurrency=4).embed(texts)
    assert vectors == [pytest.approx(vector_for(t)) for t in texts]
    assert 2 <= state["most"] <= 4, state  # 8 requests, at most 4 in flight
    state["most"] = 0
    vectors = make(threaded_server, batch_size=2, concurrency=1).embed(texts[:4])
    assert vectors == [pytest.approx(vector_for(t)) for t in texts[:4]]
    assert state["most"] == 1


def answering_with(httpserver, headers: dict[str, str]) -> list[float]:
    """The embeddings API answering every request with these rate-limit headers; returns the list each
    request's arrival time (monotonic) is appended to."""
    import time

    handler, _ = embeddings_api()
    arrived: list[float] = []

    def respond(request: Request) -> Response:
        arrived.append(time.monotonic())
        response = handler(request)
        response.headers.update(headers)
        return response

    httpserver.expect_request("/v1/embeddings", method="POST").respond_with_handler(respond)
    return arrived


def test_the_accounts_rate_limit_headers_hold_the_next_request_back(httpserver):
    import time

    # The window is spent: no request left until it resets in 400 ms (OpenAI's header shapes).
    spent = {
        "x-ratelimit-limit-requests": "3000",
        "x-ratelimit-remaining-requests": "0",
        "x-ratelimit-reset-requests": "400ms",
        "x-ratelimit-remaining-tokens": "999000",
        "x-ratelimit-reset-tokens": "0s",
    }
    arrived = answering_with(httpserver, spent)
    embedder = make(httpserver, batch_size=1, concurrency=1)
    assert embedder.embed(["a", "b", "c"]) == [pytest.approx(vector_for(t)) for t in "abc"]
    gaps = [b - a for a, b in zip(arrived, arrived[1:])]
    assert len(arrived) == 3 and min(gaps) >= 0.35, gaps
    # Requests sent side by side wait too, once an answer has said the window is spent.
    arrived.clear()
    started = time.monotonic()
    make_again = make(httpserver, batch_size=1, concurrency=4)
    make_again.embed(["x"])
    make_again.embed(["y", "z"])
    assert len(arrived) == 3 and min(arrived[1:]) - started >= 0.35  # both held until the window reset


def test_a_spent_token_window_holds_a_request_that_would_not_fit(httpserver):
    arrived = answering_with(httpserver, {"x-ratelimit-remaining-tokens": "5", "x-ratelimit-reset-tokens": "0.3s"})
    embedder = make(httpserver)
    embedder.embed(["a first alert text"])
    embedder.embed(["a second alert text, longer than five tokens"])
    assert arrived[1] - arrived[0] >= 0.25


def test_one_refused_request_among_several_fails_the_call_as_refused(httpserver):
    handler, _ = embeddings_api()

    def refuse_bad(request: Request) -> Response:
        if "BAD" in json.loads(request.get_data())["input"]:
            error = {"error": {"message": "input is invalid", "code": "invalid_input"}}
            return Response(json.dumps(error), status=400, content_type="application/json")
        return handler(request)

    httpserver.expect_request("/v1/embeddings", method="POST").respond_with_handler(refuse_bad)
    with pytest.raises(EmbeddingFailed, match="refused the input") as caught:
        make(httpserver, batch_size=2).embed(["a", "b", "c", "BAD", "e", "f"])
    assert caught.value.refused


def test_reset_durations_as_openai_writes_them():
    from oncall_memory.embedders.openai import _duration

    assert _duration("20ms") == pytest.approx(0.02)
    assert _duration("1.5s") == pytest.approx(1.5)
    assert _duration("1m2s") == pytest.approx(60)  # capped: never held longer than a minute on a header
    assert _duration("0s") == 0 and _duration(None) == 0 and _duration("soon") == 0
