"""The local model on ONNX Runtime: the same vectors as sentence-transformers, without importing torch.

sentence-transformers takes about 5 s to import on this machine class (torch, transformers, sklearn);
ONNX Runtime and the `tokenizers` library take about 0.3 s. The model is exported to ONNX once, from the
files already on disk (torch and transformers do the export, offline), into a cache beside the data;
later runs load the export. Only models whose sentence-transformers pipeline is a transformer, mean
pooling and normalisation are exported (all-MiniLM-L6-v2 is); any other keeps sentence-transformers.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import warnings
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_EXPORTABLE = [
    "sentence_transformers.models.Transformer",
    "sentence_transformers.models.Pooling",
    "sentence_transformers.models.Normalize",
]


def exportable(model_path: Path) -> bool:
    """Is this a transformer + mean pooling + normalise pipeline with a fast tokenizer?"""
    try:
        modules = json.loads((model_path / "modules.json").read_text())
        pooling = json.loads(
            (model_path / next(m["path"] for m in modules if m["type"].endswith("Pooling")) / "config.json").read_text()
        )
    except (OSError, ValueError, StopIteration, KeyError):
        return False
    mean_only = pooling.get("pooling_mode_mean_tokens") and not any(
        v for k, v in pooling.items() if k.startswith("pooling_mode_") and k != "pooling_mode_mean_tokens"
    )
    return (
        [m.get("type") for m in modules] == _EXPORTABLE and bool(mean_only) and (model_path / "tokenizer.json").exists()
    )


def export_dir(cache: Path, model_path: Path) -> Path:
    """Where this model's export lives: keyed by the weights it was made from, so a new model is exported anew."""
    weights = next(
        (model_path / n for n in ("model.safetensors", "pytorch_model.bin") if (model_path / n).exists()), model_path
    )
    stat = weights.stat()
    key = hashlib.sha256(f"{model_path.resolve()}:{stat.st_size}:{stat.st_mtime_ns}".encode()).hexdigest()[:16]
    return cache / f"{model_path.name}-{key}"


def export(model_path: Path, target: Path) -> None:
    """Export the transformer to `target/model.onnx` (with its tokenizer beside it). Needs torch,
    transformers and onnx; written beside and renamed, so a half-done export is never loaded."""
    import torch
    from transformers import AutoModel
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    model = AutoModel.from_pretrained(str(model_path)).eval()

    class LastHiddenState(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids):  # noqa: ANN001 - traced by torch
            return self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    sample = torch.ones(2, 8, dtype=torch.long)
    # The exporter warns about its own deprecation and about traced Python conditions; the export is checked
    # against sentence-transformers' vectors in tests/test_local_model.py, padded batches included.
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            LastHiddenState(),
            (sample, sample, torch.zeros_like(sample)),
            str(partial / "model.onnx"),
            input_names=list(_INPUTS),
            output_names=["last_hidden_state"],
            dynamic_axes={name: {0: "batch", 1: "sequence"} for name in (*_INPUTS, "last_hidden_state")},
            opset_version=17,
            dynamo=False,
        )
    shutil.copy(model_path / "tokenizer.json", partial / "tokenizer.json")
    config = model_path / "sentence_bert_config.json"
    max_length = json.loads(config.read_text()).get("max_seq_length", 512) if config.exists() else 512
    (partial / "config.json").write_text(json.dumps({"max_seq_length": max_length, "source": str(model_path)}))
    shutil.rmtree(target, ignore_errors=True)
    partial.rename(target)


class OnnxModel:
    """Mean-pooled, normalised sentence embeddings from an exported transformer."""

    def __init__(self, folder: Path):
        import onnxruntime
        from tokenizers import Tokenizer

        self.max_seq_length = json.loads((folder / "config.json").read_text())["max_seq_length"]
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tokenizer.enable_truncation(self.max_seq_length)
        self._tokenizer.enable_padding()
        self._counter = Tokenizer.from_file(str(folder / "tokenizer.json"))  # untruncated, for `pieces`
        self._counter.no_truncation()  # tokenizer.json may carry truncation settings of its own
        self._counter.no_padding()
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3  # warnings about unused initialisers are noise
        self._session = onnxruntime.InferenceSession(
            str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"]
        )

    def encode(self, texts: list[str]) -> np.ndarray:
        encoded = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        hidden = self._session.run(
            None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        )[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)

    def pieces(self, text: str) -> int:
        """Word pieces in `text` before truncation."""
        return len(self._counter.encode(text).ids)
