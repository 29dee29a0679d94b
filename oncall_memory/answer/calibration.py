"""A team's own calibration: how sure answers are, refitted on that team's verdicts.

Each suggestion shown with feedback buttons (Slack, the page) or given a verdict (the CLI, the API, MCP,
PagerDuty notes) keeps the evidence it was offered on; each verdict then labels it. Once enough have arrived
(`confidence.MIN_VERDICTS`), the shipped model is refitted on them, starting from itself, and kept in the data
dir (`calibration.json`), so every process answers with it; `oncall-memory eval` says how it reads them.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from ..datadir import write_atomic
from ..settings import Settings
from .confidence import FEATURES, Calibration, Evidence, Recalibration, calibration_for, recalibrate
from .feedback import FeedbackStore
from .ranking import Neighbour
from .scale import ScaleSource

log = logging.getLogger(__name__)


class TeamCalibration:
    """The shipped calibration, or the team's refit of it where one is on record for this model."""

    def __init__(
        self,
        shipped: Calibration,
        feedback: FeedbackStore,
        path: Path | None,
        model: str,
        scale: ScaleSource | None = None,
    ):
        self.shipped = shipped
        self._feedback = feedback
        self._path = path
        self._model = model
        self._scale = scale  # this memory's scale: the standing of evidence kept before it was read
        self.refit: Recalibration | None = self._read()
        self._seen = len(self._feedback.labelled()) if self.refit else 0

    @classmethod
    def of(
        cls, model: str, settings: Settings, feedback: FeedbackStore, scale: ScaleSource | None = None
    ) -> TeamCalibration:
        """The model's shipped calibration (with the settings' thresholds), or this team's refit of it."""
        shipped = calibration_for(model, settings.confidence_low_below, settings.confidence_high_from)
        return cls(shipped, feedback, settings.dir.file("calibration.json"), model, scale)

    @property
    def current(self) -> Calibration:
        if self.refit is None:
            return self.shipped
        refit = self.refit.calibration
        if refit.family is None:
            # Refitted before "low" had a model of its own: the shipped `low_below` is on the shipped family's
            # probability, so that model reads it until the next refit fits both.
            refit = replace(refit, family=self.shipped.family)
        # The settings' thresholds, if any, were applied to the shipped one: they hold for the refit too.
        return refit.with_thresholds(self.shipped.low_below, self.shipped.high_from)

    def _read(self) -> Recalibration | None:
        if self._path is None or not self._path.exists():
            return None
        try:
            data = json.loads(self._path.read_text(encoding="utf-8"))
            if data.get("model") != self._model:
                return None  # fitted on another model's cosines
            return Recalibration.loads(json.dumps(data["refit"]))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("the team calibration %s cannot be read (%s): the shipped one is used", self._path, exc)
            return None

    def _complete(self, evidence: list[float]) -> list[float] | None:
        """Evidence as the model reads it now. Kept before the standing was read, it is completed from its
        meaning on this memory's scale, as a lookup reads it (0 when meaning was not compared); kept before
        the rare words were read, from its plain share of the alert's words, as a memory whose words were not
        counted reads them (the words kept with a verdict are not). Older evidence, without the background
        either, cannot be, and is left out of the refit."""
        fields = len(Evidence._fields)
        if len(evidence) == fields:
            return evidence
        if len(evidence) not in (fields - 1, fields - 2) or self._scale is None:
            return None
        scale = self._scale.current
        if len(evidence) == fields - 2:
            meaning = evidence[0]
            evidence = [*evidence, scale.standing(meaning) if meaning else 0.0]
        return [*evidence, evidence[FEATURES.index("words")] * scale.neighbours]

    def offered(self, alert_key: str, shown: Sequence[Neighbour], suggested: str) -> None:
        """Keep what `suggested` was offered on for this alert, when it is among `shown`."""
        found = next((n for n in shown if n.id == suggested), None)
        if found is not None and found.evidence is not None:
            self._feedback.keep_evidence(alert_key, suggested, found.evidence)

    def verdict(self, alert_key: str, suggested: str, shown: Callable[[], Sequence[Neighbour]]) -> None:
        """A verdict was given on `suggested`: keep what it was offered on if no button kept it (`shown` looks
        the alert up again), then refit when enough have arrived."""
        if not self._feedback.has_evidence(alert_key, suggested):
            self.offered(alert_key, shown(), suggested)
        self.update()

    def update(self) -> Calibration:
        """Refit on every labelled verdict when more have arrived since the last fit; the calibration to use."""
        labelled = self._feedback.labelled()
        if len(labelled) == self._seen:
            return self.current
        self._seen = len(labelled)
        rows = [(self._complete(e), ok) for e, ok in labelled]
        refit = recalibrate(self.shipped, [(Evidence(*e), ok) for e, ok in rows if e is not None])
        if refit is not None:
            self.refit = refit
            if self._path is not None:
                body = {"model": self._model, "refit": json.loads(refit.dumps())}
                try:
                    write_atomic(self._path, json.dumps(body, indent=2))
                except OSError as exc:  # a full or read-only disk: the refit holds in this process
                    log.warning("the team calibration could not be written to %s: %s", self._path, exc)
        return self.current
