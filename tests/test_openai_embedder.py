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
    assert [len(b["input"]) for b in seen] == [2, 2, 1]
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
