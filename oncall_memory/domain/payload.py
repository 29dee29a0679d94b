"""What rides along with each point. Payload field names are defined here, once."""

from __future__ import annotations

import json
from typing import Any

from ..redact import already_redacted
from .distill import content_hash
from .incident import Incident
from .lexical import Sparse, sparse_vector
from .signature import canonical_signature
from .vocabulary import symptoms, terms

# Field names the store indexes and the retriever filters on.
SOURCE = "source"
INCIDENT_ID = "id"
SERVICE = "service"
ENV = "env"
FLAVOR = "flavor"
TAGS = "component_tags"
STATUS = "status"
SEVERITY = "severity"
SIGNATURE = "signature"
SIGNATURE_KEY = "signature_key"
OPENED_AT = "opened_at"
HAS_WORKING_FIX = "has_working_fix"
TEXT = "text"
TEXT_HASH = "text_hash"
RECORD_HASH = "record_hash"
SYMPTOMS = "symptoms"  # canonical symptom keys from the ops vocabulary (vocabulary.py)
TERMS = "terms"  # the indices of the sparse vector, so ranking reads a candidate's words with its payload
EMBEDDED_CUT = "embedded_cut"  # set when the text was longer than the model takes; only the start was embedded

KEYWORD_FIELDS = (SOURCE, INCIDENT_ID, SERVICE, ENV, FLAVOR, TAGS, STATUS, SEVERITY, SIGNATURE_KEY)
# What ranking reads from every candidate; the full payload is fetched only for the neighbours shown.
RANKING_FIELDS = (
    INCIDENT_ID,
    "title",
    TEXT,  # the distilled text: the words and rare tokens an alert shares with it
    SERVICE,
    ENV,
    FLAVOR,
    TAGS,
    "fixes_attempted",
    OPENED_AT,
    "resolved_at",
    SIGNATURE_KEY,
    SYMPTOMS,
    TERMS,
)
# Bookkeeping, not facts: never shown to a person or an agent.
INTERNAL = frozenset({TEXT_HASH, RECORD_HASH, TERMS})


def build_point(incident: Incident, text: str) -> tuple[dict[str, Any], Sparse]:
    """The whole payload of one point (the incident's facts, its distilled text, two hashes, its terms) and
    the sparse vector whose terms it carries.

    `text_hash` says whether the vector must be recomputed; `record_hash` whether anything at all changed.
    """
    payload = incident.model_dump(mode="json")
    payload[HAS_WORKING_FIX] = bool(incident.fixes_worked)
    payload[SIGNATURE_KEY] = canonical_signature(incident.signature, [incident.env])
    payload[SYMPTOMS] = symptoms(text)
    payload[TEXT] = text
    payload[TEXT_HASH] = content_hash(text)
    payload[RECORD_HASH] = content_hash(json.dumps(payload, sort_keys=True, ensure_ascii=False))
    # Derived from the text and symptoms, so outside the record hash: a store written before this field
    # existed is not rewritten for it (ranking reads those points' sparse vectors instead).
    sparse = sparse_of(payload)
    payload[TERMS] = sparse.indices
    return payload, sparse


def incident_from_payload(payload: dict[str, Any]) -> Incident:
    """Rebuild the incident from a stored payload (for reindex and migrate: no source needed)."""
    fields = set(Incident.model_fields)
    with already_redacted():  # it was redacted when it was ingested
        return Incident.model_validate({k: v for k, v in payload.items() if k in fields})


def sparse_of(payload: dict[str, Any]) -> Sparse:
    """The sparse vector of a stored incident: the words of its text and its canonical symptoms."""
    return sparse_vector(payload[TEXT], terms(payload.get(SYMPTOMS) or []))
