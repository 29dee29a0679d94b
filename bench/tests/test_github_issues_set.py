"""The real-text set of bench.quality.github_issues: its labels hold together, texts come from GitHub's REST API in
the shape GitHub documents, and the BM25 baseline ranks by rare shared words."""

import json

from bench.quality.github_issues import fetch_texts, issue_id, read_labels, relevant_sets
from oncall_memory.answer.bm25 import BM25


def test_the_labels_hold_together():
    labels = read_labels()
    urls = [label["url"] for label in labels]
    assert len(urls) == len(set(urls)) >= 80
    for label in labels:
        assert label["url"].startswith("https://github.com/") and "/issues/" in label["url"]
        assert all(link in urls for link in label["links"]), f"{label['url']} names an issue outside the set"
    families = {label["family"] for label in labels}
    assert len(families) >= 9


def test_strict_is_the_named_issues_and_lenient_adds_the_same_problem():
    issues = [
        {"url": "https://github.com/a/b/issues/1", "family": "x", "links": []},
        {"url": "https://github.com/a/b/issues/2", "family": "x", "links": ["https://github.com/a/b/issues/1"]},
        {"url": "https://github.com/c/d/issues/3", "family": "x", "links": []},
        {"url": "https://github.com/c/d/issues/4", "family": "y", "links": []},
    ]
    strict, lenient = relevant_sets(issues)
    assert strict == [[], ["a/b#1"], [], []]
    assert lenient == [["a/b#2", "c/d#3"], ["a/b#1", "c/d#3"], ["a/b#1", "a/b#2"], []]


def test_texts_are_fetched_from_the_rest_api(httpserver):
    # The fields GitHub's "Get an issue" returns that the set reads (docs.github.com/rest/issues/issues).
    httpserver.expect_request(
        "/repos/etcd-io/etcd/issues/10299", headers={"Accept": "application/vnd.github+json"}
    ).respond_with_json({"number": 10299, "title": "benchmark failed", "body": "x" * 900, "state": "closed"})
    httpserver.expect_request("/repos/a/b/issues/7").respond_with_json({"number": 7, "title": "t", "body": None})
    texts = fetch_texts(
        ["https://github.com/etcd-io/etcd/issues/10299", "https://github.com/a/b/issues/7"],
        api=httpserver.url_for(""),
        token="ghp_test",
    )
    assert [t["title"] for t in texts] == ["benchmark failed", "t"]
    assert len(texts[0]["body"]) == 600 and texts[1]["body"] == ""
    assert json.dumps(texts)  # what --fetch writes
    assert httpserver.log[0][0].headers["Authorization"] == "Bearer ghp_test"


def test_bm25_prefers_the_rare_shared_word():
    bm25 = BM25(
        {
            "k1": "etcd database space exceeded quota-backend-bytes ignored",
            "k2": "etcd database space exceeded after benchmark",
            "k3": "etcd database space exceeded on startup",
            "q": "quota-backend-bytes set but database space exceeded",
        }
    )
    assert bm25.ranked("quota-backend-bytes set but database space exceeded", limit=3, without=["q"])[0] == "k1"
    assert issue_id("https://github.com/etcd-io/etcd/issues/10299") == "etcd-io/etcd#10299"
