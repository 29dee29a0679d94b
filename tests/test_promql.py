"""The metrics an alert's rule watches, read from the link to its expression a Prometheus-style ruler sends
(`generatorURL`), and searched as the alert's words (issue 50)."""

from __future__ import annotations

import time
from pathlib import Path
from urllib.parse import quote_plus

import pytest
import yaml

from oncall_memory.domain.alert import Alert
from oncall_memory.domain.promql import MAX_METRICS, metric_names, watched_metrics
from oncall_memory.integrations.alertmanager.webhook import AlertmanagerWebhook, alertmanager_jobs
from oncall_memory.settings import Settings

MIXINS = Path(__file__).parent / "mixins"


def generator_url(expr: str, prometheus: str = "http://prometheus-k8s.monitoring:9090") -> str:
    """As Prometheus links an alert to its rule: `strutil.TableLinkForExpression`, the expression escaped by
    Go's `url.QueryEscape` (spaces as `+`, as `quote_plus` does)."""
    return f"{prometheus}/graph?g0.expr={quote_plus(expr)}&g0.tab=1"


def read(name: str, annotations: dict[str, str], link: str | None) -> Alert:
    """The alert Alertmanager's webhook delivers for rule `name`, with `link` as its generatorURL, as read."""
    alert = {
        "status": "firing",
        "labels": {"alertname": name},
        "annotations": annotations,
        "startsAt": "2026-12-01T03:10:00Z",
        "fingerprint": "0f3c",
        **({"generatorURL": link} if link is not None else {}),
    }
    hook = AlertmanagerWebhook.model_validate({"version": "4", "groupKey": name, "alerts": [alert]})
    (job,), _ = alertmanager_jobs(hook, Settings().service.label_facts)
    return job.items[0].alert


def delivered(rule: dict, link: str | None) -> list[str]:
    """The metrics of the alert delivered for `rule` with `link` as its generatorURL."""
    return read(rule["alert"], {"summary": "something broke"}, link).metrics


def rules() -> dict[str, dict]:
    out = {}
    for path in sorted(MIXINS.glob("*.yaml")):
        for group in yaml.safe_load(path.read_text())["groups"]:
            out.update({r["alert"]: r for r in group["rules"] if "alert" in r})
    return out


@pytest.mark.parametrize(
    ("alert", "metrics"),
    [
        # A ratio of two selectors of one metric, an `ignoring(...)` clause: the metric once.
        ("KubeQuotaExceeded", ["kube_resourcequota"]),
        # Two metrics, label matchers with regexes, `sum by (job)`.
        (
            "ThanosQueryHighDNSFailures",
            ["thanos_querier_store_apis_dns_failures_total", "thanos_querier_store_apis_dns_lookups_total"],
        ),
        # A recording rule's name, colons and all.
        ("LokiRequestLatency", ["cluster_namespace_job_route:loki_request_duration_seconds:99quantile"]),
        # count(), floor(), arithmetic: only the two metrics.
        ("CephMonDown", ["ceph_mon_quorum_status", "ceph_mon_metadata"]),
        # A comment in the expression says nothing about what it watches.
        ("MimirBadRuntimeConfig", ["cortex_runtime_config_last_reload_successful"]),
    ],
)
def test_the_metrics_a_rule_watches_are_read_from_its_link_as_alertmanager_delivers_it(alert, metrics):
    assert delivered(rules()[alert], generator_url(rules()[alert]["expr"])) == metrics


def test_every_rule_of_the_five_mixins_names_a_metric_its_expression_holds_and_no_function():
    every = rules()
    assert len(every) >= 20
    for name, rule in every.items():
        found = delivered(rule, generator_url(rule["expr"]))
        assert found, f"{name}: no metric read from {rule['expr']!r}"
        for metric in found:
            assert metric in rule["expr"], f"{name}: {metric} is not in its expression"
            assert not metric.startswith(("rate", "sum", "histogram_quantile", "label_replace", "count_over_time"))


def test_a_link_without_an_expression_or_no_link_gives_no_metrics():
    rule = rules()["KubeJobFailed"]
    assert delivered(rule, None) == []
    assert delivered(rule, "http://prometheus-k8s.monitoring:9090/graph") == []
    # Grafana-managed rules link to the rule's page, not to a query.
    assert watched_metrics("https://grafana.example.com/alerting/grafana/aeb1c2/view?orgId=1") == []
    assert watched_metrics("http://prometheus/graph?g0.expr=%ZZ&g0.tab=1") == []  # malformed: what can be read
    assert watched_metrics("not a link at all") == []
    # A sender's odd value is no link, and the alert is read as before the link was read at all.
    for odd in (5, {"url": "x"}, ["http://p/graph?g0.expr=a_b"]):
        assert read("KubeJobFailed", {"summary": "Job failed."}, odd).metrics == []  # type: ignore[arg-type]


def test_functions_keywords_labels_strings_numbers_and_durations_are_not_metrics():
    expr = (
        'histogram_quantile(0.99, sum by (le, job_name) (rate(apiserver_request_duration_seconds_bucket{verb!~"LIST|WATCH",'
        ' label_x="a_b_c"}[5m] offset 1h))) > 1.5e3 and on(instance_id) group_left node_uname_info'
        ' unless label_replace(up, "dst_label", "$1", "src_label", "(.*)") @ start()'
    )
    assert metric_names(expr) == ["apiserver_request_duration_seconds_bucket", "node_uname_info"]
    # LogQL (a Loki ruler's rules): selectors, filters and pipeline stages name no metric.
    assert (
        metric_names('sum(count_over_time({app="api"} |= "error_x" | json | line_format "{{.msg}}" [5m])) > 10') == []
    )


def test_a_strangers_link_is_read_in_bounded_time_and_gives_a_bounded_list():
    many = " + ".join(f"metric_number_{i}" for i in range(300))  # longer than MAX_EXPR
    started = time.perf_counter()
    found = watched_metrics(generator_url(many))
    huge = watched_metrics("http://p/graph?g0.expr=" + "a_b%7B" * 200_000)
    elapsed = time.perf_counter() - started
    assert len(found) == MAX_METRICS and found[0] == "metric_number_0"
    assert huge == []
    assert elapsed < 5  # a few milliseconds here; a quadratic read of these would take minutes


def test_the_runbook_that_names_the_rules_metric_comes_first_and_confidence_reads_the_alerts_own_words(store):
    """Two sections of one product's runbook tell of compactions; only one names the metric the firing rule
    watches. The alert's message alone cannot tell them apart; its rule's expression can."""
    from conftest import make_incident

    from oncall_memory.embedders.fake import FakeEmbedder
    from oncall_memory.memory import Memory

    runbook = [
        make_incident(
            id="outstanding",
            title="Compactions are falling behind and the outstanding blocks keep growing",
            root_cause="Compactors cannot keep up: scale them out or raise the compaction window.",
        ),
        make_incident(
            id="failing",
            title="Compactions are failing and blocks are left uncompacted",
            root_cause="The metric for this alert is tempodb_compaction_errors_total. Check the compactor logs.",
        ),
        make_incident(id="ingest", title="Distributors refuse pushes over the rate limit", root_cause="Raise it."),
    ]
    memory = Memory(store, FakeEmbedder(), Settings(data_dir=":memory:"))
    memory.ingest(runbook)
    rule = {"alert": "TempoCompactionsFailing", "expr": "sum(increase(tempodb_compaction_errors_total{}[1h])) > 2"}
    message = "Compactions in trouble: blocks are left behind."

    def first(link: str | None) -> tuple[str, float]:
        lookup = memory.similar(read(rule["alert"], {"message": message}, link))
        return lookup.neighbours[0].id, lookup.neighbours[0].evidence.words

    without, with_link = first(None), first(generator_url(rule["expr"]))
    assert without[0] == "outstanding"  # by its words alone, the other section by a little
    assert with_link[0] == "failing"
    # The alert's own words are what confidence reads: the metric does not dilute their share.
    assert memory.similar(Alert(text=message, metrics=["x_y_z"])).neighbours[0].evidence.words == pytest.approx(
        memory.similar(Alert(text=message)).neighbours[0].evidence.words
    )


def test_a_section_that_names_the_rules_metric_is_not_read_as_nothing_close(store):
    """With a calibration that reads every answer "low", the one section that names the metric the firing
    rule watches reads "medium": its family is on record. A section that names another metric does not."""
    from conftest import make_incident

    from oncall_memory.embedders.fake import FakeEmbedder
    from oncall_memory.memory import Memory

    memory = Memory(store, FakeEmbedder(), Settings(data_dir=":memory:", confidence_low_below=1.0))
    memory.ingest(
        [
            make_incident(
                id="named", title="Polls of the blocklist fail", root_cause="See tempodb_blocklist_poll_errors_total."
            ),
            make_incident(
                id="other", title="Polls of the blocklist are slow", root_cause="See tempodb_blocklist_length."
            ),
        ]
    )
    link = generator_url("sum(increase(tempodb_blocklist_poll_errors_total[1h])) > 2")
    lookup = memory.similar(read("TempoPollsFailing", {"message": "Blocklist polls are failing."}, link))
    assert {n.id: n.confidence for n in lookup.neighbours} == {"named": "medium", "other": "low"}
    named = next(n for n in lookup.neighbours if n.id == "named")
    assert "names the metric the alert's rule watches: tempodb_blocklist_poll_errors_total" in named.reasons
    plain = memory.similar(read("TempoPollsFailing", {"message": "Blocklist polls are failing."}, None))
    assert {n.confidence for n in plain.neighbours} == {"low"}


def test_only_names_spelt_like_metrics_count_as_an_alerts_metrics():
    """An answer that names one is never "nothing close": a caller's generic word must not count as one."""
    alert = Alert(text="disk full", metrics=["node_filesystem_avail_bytes", "error", "up", "a b_c", "job:rate5m"])
    assert alert.metrics == ["node_filesystem_avail_bytes", "job:rate5m"]
