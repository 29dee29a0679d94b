"""Congruence: every engine answers the same question the same way (the way qdrant-client's own
congruence tests compare local mode with the server). Edge and local mode here; a server too when
QDRANT_URL is set."""

import random
from datetime import datetime, timezone

import pytest
from conftest import BACKENDS, FIXTURES, backend_settings

from oncall_memory.domain.alert import Alert, Filters
from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.memory import Memory
from oncall_memory.sources.jsonl_files import read_jsonl

pytestmark = pytest.mark.skipif(len(BACKENDS) < 2, reason="needs two engines")

ALERTS = [
    "IPsec tunnel down",
    "dns lookups time out",
    "certificate expired",
    "pods OOMKilled exit 137",
    "too many connections to postgres",
    "kafka consumer lag",
]
NOW = datetime(2026, 11, 29, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def memories(tmp_path_factory):
    """One memory per engine, each holding the fixtures."""
    incidents = list(read_jsonl(FIXTURES / "incidents.jsonl"))
    opened = {}
    for backend in BACKENDS:
        memory = Memory.open(backend_settings(backend, tmp_path_factory.mktemp(backend)), embedder=FakeEmbedder())
        memory.ingest(incidents)
        opened[backend] = memory
    yield opened
    for backend, memory in opened.items():
        if backend == "server":
            memory._store.drop()
        memory.close()


def answers(memory, alert, **kwargs):
    """A lookup as comparable data: (score to 4 places, id), best first; ids sorted within an exact tie,
    which each engine may break its own way. When the answer is full, a tie at its last score may be cut
    differently by each engine, so that last tie group is left out of the comparison."""
    lookup = memory.similar(alert, now=NOW, **kwargs)
    pairs = sorted(((round(n.score, 4), n.id) for n in lookup.neighbours), key=lambda pair: (-pair[0], pair[1]))
    if pairs and len(pairs) == kwargs.get("limit", 5):
        pairs = [p for p in pairs if p[0] != pairs[-1][0]]
    return pairs


def assert_congruent(memories, alert, **kwargs):
    """The one comparator: every engine gives the reference engine's answer."""
    reference, *others = memories
    expected = answers(memories[reference], alert, **kwargs)
    for backend in others:
        assert answers(memories[backend], alert, **kwargs) == expected, (backend, alert.text, kwargs)
    return expected


def random_filters(rng: random.Random, incidents) -> Filters:
    """A random combination of hard filters drawn from values the fixtures hold, so most match something."""
    pick = rng.choice(incidents)
    fields = {}
    for name in rng.sample(["env", "flavor", "service", "tags", "since", "until"], k=rng.randint(1, 3)):
        if name == "tags" and pick.component_tags:
            fields["component_tags"] = rng.sample(
                pick.component_tags, k=min(len(pick.component_tags), rng.randint(1, 2))
            )
        elif name in ("since", "until") and pick.opened_at:
            fields[name] = pick.opened_at.isoformat()
        elif name in ("env", "flavor", "service") and getattr(pick, name):
            fields[name] = getattr(pick, name)
    return Filters(**fields)


# Unranked hybrid is left out: a tie inside one prefetch list is broken differently by each engine,
# and reciprocal-rank fusion turns that into different fused scores, even at the top.
MODES = [("dense", False), ("lexical", False), ("hybrid", True)]


@pytest.mark.parametrize("mode,rank", MODES)
def test_every_engine_ranks_the_same(memories, mode, rank):
    for text in ALERTS:
        assert_congruent(memories, Alert(text=text, flavor="eks"), limit=10, mode=mode, rank=rank)


@pytest.mark.parametrize("seed", range(6))
def test_every_engine_filters_the_same_under_random_filters(memories, seed):
    rng = random.Random(seed)
    incidents = list(read_jsonl(FIXTURES / "incidents.jsonl"))
    non_empty = 0
    for _ in range(5):
        filters = random_filters(rng, incidents)
        for mode, rank in MODES:
            got = assert_congruent(
                memories, Alert(text=rng.choice(ALERTS)), filters=filters, limit=20, mode=mode, rank=rank
            )
            non_empty += bool(got)
    assert non_empty  # the random filters matched something, so the comparison compared something
