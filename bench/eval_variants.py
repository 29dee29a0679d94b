"""What each change of issues 12 and 20 does to retrieval, measured with `eval` on both labelled sets, one run.

    python -m bench.eval_variants

Variants, cumulative: the memory before (labels read as service<-service|app|job, env<-env|environment|
cluster, no vocabulary, no ceremony stripping, PagerDuty and Opsgenie alerts as plain text), then facts
from what the pager sends, then pager ceremony stripped, then the ops vocabulary as sparse terms, then
as a ranking boost too (issue 12 as shipped); then issue 20's: shared words weighed by their rarity among
the candidates, then the same service's weight raised from 0.05 to 0.10 (as shipped), and that weight
without the rarity; last, the shipped memory without reading the alert's headline as a title. BM25 over
the same stored texts is printed beside each variant's configurations. Each variant ingests the fixtures into its own store with the local model
(all-MiniLM-L6-v2) and runs both sets.
"""

from __future__ import annotations

import contextlib
import tempfile
from importlib import import_module
from pathlib import Path
from unittest import mock

from oncall_memory import Alert, Memory, Settings, label_facts
from oncall_memory.answer import retrieve, wording
from oncall_memory.answer.evaluate import BASELINE, CONFIGURATIONS, evaluate, read_labels
from oncall_memory.embedders.local import LocalEmbedder
from oncall_memory.ingest.backlog import read_jsonl
from oncall_memory.ingest.ingest import distill
from oncall_memory.settings import RankingWeights
from oncall_memory.store import payload

# The modules: a package's own `webhook` attribute is the hook it offers the service.
pagerduty = import_module("oncall_memory.integrations.pagerduty.webhook")
opsgenie = import_module("oncall_memory.integrations.opsgenie.webhook")

ROOT = Path(__file__).resolve().parent.parent
OLD_LABELS = {
    "service": ["service", "app", "job"],
    "env": ["env", "environment", "cluster"],
    "flavor": ["flavor", "platform"],
    "component_tags": ["component", "namespace"],
}


def old_facts():
    """The label mapping and pager reading from before: first label present wins, nothing skipped."""

    def pd(incident, known=None):
        service = incident.service.summary if incident.service else None
        return Alert(text=incident.title, service=service)

    def og(a, mapping=None, known=None):
        return Alert(text=" - ".join(p for p in (a.message, a.description) if p), component_tags=a.tags)

    return [
        mock.patch.object(label_facts, "_value_for", lambda fact, label, value: value.strip() or None),
        mock.patch.object(Memory, "known_values", lambda self: {}),
        mock.patch.object(pagerduty, "pagerduty_alert", pd),
        mock.patch.object(opsgenie, "opsgenie_alert", og),
    ]


def no_ceremony():
    return [mock.patch.object(distill, "strip_ceremony", lambda text: text)]


def no_terms():
    return [mock.patch.object(retrieve, "terms", lambda keys: []), mock.patch.object(payload, "terms", lambda keys: [])]


# Issue 12's rows rank as it shipped: every shared word the same, the same service at 0.05.
ISSUE_12 = {"word_rarity": False, "same_service": 0.05}
VARIANTS = [
    ("before issue 12", old_facts() + no_ceremony() + no_terms(), {**ISSUE_12, "same_symptom": 0.0}, OLD_LABELS),
    ("+ facts from labels", no_ceremony() + no_terms(), {**ISSUE_12, "same_symptom": 0.0}, None),
    ("+ ceremony stripped", no_terms(), {**ISSUE_12, "same_symptom": 0.0}, None),
    ("+ vocabulary terms", [], {**ISSUE_12, "same_symptom": 0.0}, None),
    ("+ vocabulary boost", [], ISSUE_12, None),
    ("vocabulary boost, no terms", no_terms(), ISSUE_12, None),
    # Issue 20: rarer shared words weigh more, and the same service is raised to keep its rule.
    ("+ rarer words weigh more", [], {"same_service": 0.05}, None),
    ("+ same service 0.10 (shipped)", [], {}, None),
    ("same service 0.10, plain words", [], {"word_rarity": False}, None),
    # The alert's headline read as a title too (shipped with the headline): the shipped sets without it.
    ("shipped, no headline title", [mock.patch.object(wording, "headline", lambda text: text)], {}, None),
]


def main() -> None:
    embedder = LocalEmbedder()
    embedder.load()
    sets = {name: read_labels(ROOT / "oncall_memory" / "evalsets" / f"{name}.jsonl") for name in ("alerts", "labels")}
    print("MRR / hit@1 per configuration; all-MiniLM-L6-v2, 64 fixture incidents, Edge")
    header = " | ".join(f"{s} {name}" for s in sets for name in (BASELINE, *(c.name for c in CONFIGURATIONS)))
    print(f"{'variant':<30} | {header}")
    for name, patches, weights, labels in VARIANTS:
        with contextlib.ExitStack() as stack:
            for patch in patches:
                stack.enter_context(patch)
            settings = Settings(
                data_dir=Path(tempfile.mkdtemp()),
                weights=RankingWeights(**weights),
                **({"label_facts": labels} if labels else {}),
            )
            with Memory.open(settings, embedder=embedder) as memory:
                memory.ingest(read_jsonl(ROOT / "fixtures" / "incidents.jsonl"))
                cells = []
                for queries in sets.values():
                    results = evaluate(memory, queries)
                    cells += [f"{r.mrr:.3f}/{r.hit_at_1:.3f}" for r in results.values()]
        print(f"{name:<30} | " + " | ".join(cells), flush=True)


if __name__ == "__main__":
    main()
