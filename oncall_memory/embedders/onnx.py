"""The local model on ONNX Runtime: sentence-transformers' vectors without torch, in int8 by default.

sentence-transformers takes about 5 s to import on this machine class (torch, transformers, sklearn) and
holds ~1.5 GB; ONNX Runtime and the `tokenizers` library take about 0.3 s. The model is exported to ONNX
once, from the files already on disk, into a cache beside the data, by a child process (torch and
transformers do the export, offline, and their memory goes with the child); later runs load the export.

`int8` (the default) quantises the weights of the matrix products per output channel (ONNX Runtime's
dynamic quantisation): the arithmetic that dominates a 2-core machine runs on int8, about twice the fused
float32 throughput (`python -m bench.perf.ingest`, docs/operations.md), at a cosine of 0.99 to the float32 vectors
and the same rankings on the eval sets (figures in docs/evaluation.md). `float32` keeps sentence-transformers' own vectors (to 1e-5), through ONNX
Runtime's fused transformer kernels (`_fuse`).

Only models whose sentence-transformers pipeline is a transformer, mean pooling and normalisation are
exported (all-MiniLM-L6-v2 is); any other keeps sentence-transformers.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import shutil
import stat
import subprocess
import sys
import warnings
from collections import Counter
from pathlib import Path
from typing import Any, Literal

import numpy as np

log = logging.getLogger(__name__)

_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
Precision = Literal["int8", "float32"]
INT8_EXPORT = "weights 7-bit (reduce_range), no NaN guards"  # part of an int8 export's key: a change re-exports
FUSED_EXPORT = "eager attention, fused"  # part of a float32 export's key: those made before fusion are made again
EXPORT_TIMEOUT = 900  # seconds: an export takes ~10 s here; a stuck one must not hang ingest for ever
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


def export_dir(cache: Path, model_path: Path, precision: Precision = "float32") -> Path:
    """Where this model's export lives: keyed by the weights it was made from (a new model is exported
    anew) and the precision."""
    weights = next(
        (model_path / n for n in ("model.safetensors", "pytorch_model.bin") if (model_path / n).exists()), model_path
    )
    stat = weights.stat()
    made = f"{model_path.resolve()}:{stat.st_size}:{stat.st_mtime_ns}" + (
        f":{INT8_EXPORT}" if precision == "int8" else f":{FUSED_EXPORT}"
    )
    key = hashlib.sha256(made.encode()).hexdigest()[:16]
    return (
        cache / f"{model_path.name}-{key}" if precision == "float32" else cache / f"{model_path.name}-{key}-{precision}"
    )


def _fuse(traced: Path, target: Path, config: Any) -> None:
    """ONNX Runtime's transformer fusions on a BERT: each layer's attention, its residual layer norms and its
    GELU become one kernel each (about 200 ops become 50): 1.17x the float32 throughput on real texts, the
    same vectors (cosine 1.0000 to the traced graph's). Another architecture is kept as traced: the fuser
    only knows the patterns it names."""
    if getattr(config, "model_type", None) != "bert":
        shutil.copyfile(traced, target)
        return
    from onnxruntime.transformers.optimizer import optimize_model

    fused = optimize_model(
        str(traced),
        model_type="bert",
        num_heads=config.num_attention_heads,
        hidden_size=config.hidden_size,
        opt_level=1,
    )
    fused.save_model_to_file(str(target))


def _drop_nan_guards(traced: Path, target: Path) -> int:
    """Copy the traced graph without the guard PyTorch's attention puts after each softmax,
    `Where(IsNaN(p), 0, p)`. Returns how many guards were dropped.

    The guard zeroes a row whose every key is masked (all -inf, so softmax gives NaN). No row here is: a
    row's keys are its own text's word pieces, and every text holds at least the tokenizer's [CLS] and
    [SEP]. So the guard never changes a value (tests/test_onnx_graph.py; an export with the guards against one
    without: the same vectors, bit for bit, on 1,408 real texts), but it read and wrote every attention score
    twice in each layer: a fifth of the int8 model's time on real texts (ONNX Runtime's profiler: `Where` 19%,
    `IsNaN` 3%), 1.3x the encode throughput without it (docs/operations.md)."""
    import onnx
    from onnx import numpy_helper

    graph_model = onnx.load(str(traced))
    graph = graph_model.graph
    made_by = {out: node for node in graph.node for out in node.output}
    constants = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    constants.update(
        {
            n.output[0]: numpy_helper.to_array(n.attribute[0].t)
            for n in graph.node
            if n.op_type == "Constant" and n.attribute[0].name == "value"
        }
    )

    def zero(name: str) -> bool:
        value = constants.get(name)
        return value is not None and value.size == 1 and float(value.reshape(-1)[0]) == 0.0

    readers = Counter(name for node in graph.node for name in node.input)
    readers.update(o.name for o in graph.output)

    def guard(node: Any) -> Any:
        """The IsNaN node feeding `node` when `node` is a guard, else None."""
        test = made_by.get(node.input[0]) if node.op_type == "Where" else None
        if test is None or test.op_type != "IsNaN" or readers[test.output[0]] != 1:
            return None
        scores = test.input[0]
        softmax = getattr(made_by.get(scores), "op_type", "") == "Softmax"
        return test if softmax and node.input[2] == scores and zero(node.input[1]) else None

    dropped: set[int] = set()
    read_instead: dict[str, str] = {}
    outputs = {o.name for o in graph.output}
    for node in graph.node:
        if (test := guard(node)) is not None and node.output[0] not in outputs:
            dropped |= {id(node), id(test)}
            read_instead[node.output[0]] = test.input[0]
    kept = [n for n in graph.node if id(n) not in dropped]
    for node in kept:
        for k, name in enumerate(node.input):
            if name in read_instead:
                node.input[k] = read_instead[name]
    del graph.node[:]
    graph.node.extend(kept)
    onnx.save(graph_model, str(target))
    return len(read_instead)


def drop_older_exports(folder: Path) -> int:
    """Remove the other exports of `folder`'s model at its precision from the cache beside it: those made
    from other weights (a package reinstalled) or by an export this code no longer makes (its key changed).
    Nothing reads them once `folder` is made, and each is about 46 MB of a data dir. Returns the bytes freed.
    An export is known by its `config.json` (the model it came from, its precision); anything else, and an
    export still being written (`.partial`), is left alone. A process still running on an older one keeps
    its open files; one that loads it later makes it again."""
    made = json.loads((folder / "config.json").read_text())
    freed = 0
    for other in folder.parent.iterdir():
        if other == folder or other.name.endswith(".partial") or not other.is_dir():
            continue
        try:
            theirs = json.loads((other / "config.json").read_text())
        except (OSError, ValueError):
            continue
        if not isinstance(theirs, dict) or (theirs.get("source"), theirs.get("precision")) != (
            made.get("source"),
            made.get("precision"),
        ):
            continue
        size = sum(f.stat().st_size for f in other.rglob("*") if f.is_file())
        shutil.rmtree(other, ignore_errors=True)
        freed += 0 if other.exists() else size
    return freed


def export_in_child(model_path: Path, target: Path, precision: Precision) -> None:
    """`export` in a child process: torch and transformers load there, and their ~1.5 GB leave with it."""
    done = subprocess.run(
        [sys.executable, "-m", __name__, str(model_path), str(target), precision],
        capture_output=True,
        text=True,
        timeout=EXPORT_TIMEOUT,
    )
    if done.returncode != 0:
        raise RuntimeError((done.stderr or done.stdout).strip()[-800:] or f"exit {done.returncode}")


def export(model_path: Path, target: Path, precision: Precision = "float32") -> None:
    """Export the transformer to `target/model.onnx` (with its tokenizer beside it), quantised for `int8`.
    Needs torch, transformers and onnx; written beside and renamed, so a half-done export is never loaded."""
    import torch
    from transformers import AutoModel
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    # float32 is fused (`_fuse`), and traced with eager attention, which spells attention as ONNX Runtime's
    # fuser knows it (PyTorch's own kernel, SDPA, is exported as ops it does not recognise). int8 stays as
    # traced: fused, its attention ran in int8 too (1.24x the throughput), and the protocol read the other
    # vectors as a worse ranking (left-out mean 0.836 -> 0.830; alert rules' right answers read low 15% ->
    # 21%); with attention left in float32, 1.04x and a mean of 0.833 (docs/operations.md).
    fused = precision == "float32"
    model = AutoModel.from_pretrained(str(model_path), **({"attn_implementation": "eager"} if fused else {})).eval()

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
            str(partial / "model.traced.onnx"),
            input_names=list(_INPUTS),
            output_names=["last_hidden_state"],
            dynamic_axes={name: {0: "batch", 1: "sequence"} for name in (*_INPUTS, "last_hidden_state")},
            opset_version=17,
            dynamo=False,
        )
    if fused:
        _fuse(partial / "model.traced.onnx", partial / "model.onnx", model.config)
        (partial / "model.traced.onnx").unlink()
    else:
        _drop_nan_guards(partial / "model.traced.onnx", partial / "model.onnx")
        (partial / "model.traced.onnx").unlink()
    if precision == "int8":
        from onnxruntime.quantization import QuantType, quantize_dynamic

        # Per output channel: one scale per column keeps the cosine to float32 at 0.99 where a single
        # scale per tensor gives 0.93 (measured on the real-text corpus, see docs/evaluation.md). Weights in
        # 7 bits (`reduce_range`): on a CPU without VNNI (AVX2) an 8-bit product of two int8 pairs can overflow
        # and saturate, so the same export gave other vectors, and other answers, than on one with VNNI; in 7
        # bits it cannot, and the integer products are the same on every CPU (cosine to sentence-transformers:
        # 0.9888 min, 0.9926 mean on the sample incidents, against 0.9885 and 0.9930 in 8 bits). The float steps
        # around them still follow the CPU's kernels: on an AVX-512 machine two rows of the fixture figures
        # read otherwise (docs/evaluation.md).
        exported = partial / "model.float32.onnx"
        (partial / "model.onnx").rename(exported)
        quantize_dynamic(
            str(exported), str(partial / "model.onnx"), weight_type=QuantType.QInt8, per_channel=True, reduce_range=True
        )
        exported.unlink()
    # The content only: copying the package's mode bits made the file readable by others, under a data dir
    # that is its owner's (the next command then warned about a file it had written itself).
    shutil.copyfile(model_path / "tokenizer.json", partial / "tokenizer.json")
    config = model_path / "sentence_bert_config.json"
    max_length = json.loads(config.read_text()).get("max_seq_length", 512) if config.exists() else 512
    (partial / "config.json").write_text(
        json.dumps({"max_seq_length": max_length, "source": str(model_path), "precision": precision})
    )
    shutil.rmtree(target, ignore_errors=True)
    partial.rename(target)


class OnnxModel:
    """Mean-pooled, normalised sentence embeddings from an exported transformer."""

    RUN_TOKENS = 2048  # padded word pieces per inference run (see `encode`)

    def __init__(self, folder: Path, *, threads: int | None = None):
        """`threads`: ONNX Runtime's for each run (None: one per core this process may use)."""
        from tokenizers import Tokenizer

        self.max_seq_length = json.loads((folder / "config.json").read_text())["max_seq_length"]
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tokenizer.enable_truncation(self.max_seq_length)
        self._tokenizer.no_padding()  # each batch is padded to its own longest text (see `encode`)
        self._folder = folder
        self._session = _session(folder, threads)

    def encode(self, texts: list[str], max_texts: int = 256) -> np.ndarray:
        """Unit vectors for `texts`, in their order. Texts run sorted by length, in runs of at most
        `RUN_TOKENS` padded tokens: a run of short titles does not pay for one long post-mortem's padding,
        and a run of long texts stays small, which bounds the activations (attention grows with the square
        of the length; 64 texts of 256 pieces took the process to 2 GB, runs of 2,048 tokens keep it
        under 400 MB at the same speed)."""
        encoded = [e.ids for e in self._tokenizer.encode_batch(texts)]
        out = np.zeros((len(texts), 0), dtype=np.float32)
        for run in _runs(encoded, max_texts, self.RUN_TOKENS):
            width = max(len(encoded[i]) for i in run)
            ids = np.zeros((len(run), width), dtype=np.int64)
            mask = np.zeros((len(run), width), dtype=np.int64)
            for row, i in enumerate(run):
                ids[row, : len(encoded[i])] = encoded[i]
                mask[row, : len(encoded[i])] = 1
            hidden = self._session.run(
                None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            )[0]
            weights = mask[..., None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            if out.shape[1] == 0:
                out = np.zeros((len(texts), pooled.shape[1]), dtype=np.float32)
            out[run] = pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        return out

    def pieces(self, text: str) -> int:
        """Word pieces in `text` before truncation."""
        return len(self._counter.encode(text).ids)

    @functools.cached_property
    def _counter(self) -> Any:
        """An untruncated tokenizer, for `pieces`: only ingest asks, so a lookup does not pay for a second
        parse of tokenizer.json (about 30 ms of a CLI start)."""
        from tokenizers import Tokenizer

        counter = Tokenizer.from_file(str(self._folder / "tokenizer.json"))
        counter.no_truncation()  # tokenizer.json may carry truncation settings of its own
        counter.no_padding()
        return counter


def _options(threads: int | None) -> Any:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3  # warnings about unused initialisers are noise
    # By default one thread per core this process may use (a container's CPU set, not the host's count).
    options.intra_op_num_threads = threads or available_cores()
    options.inter_op_num_threads = 1
    # ONNX Runtime's own spinning stays: with the threads asleep between a run's steps (allow_spinning 0),
    # waking them for each step took a lookup 7.5 -> 9.6-10.4 ms here (docs/integrations.md).
    return options


def _session(folder: Path, threads: int | None = None) -> Any:
    """The export's inference session, from its optimised graph when one is cached beside it.

    ONNX Runtime rewrites the graph every time a session is made (constant folding, the int8 products'
    fusions): about 0.07 s of a 0.1 s load, paid by every CLI lookup. The first load saves the rewritten
    graph (`optimised_file`) and later ones load it with the rewriting off: the same vectors, bit for bit,
    and the same speed (docs/integrations.md). Saved at the extended level, whose rewrites do not depend on the
    CPU (ONNX Runtime's layout rewrites do, and change nothing in this model); named by ONNX Runtime's
    version, since another version may rewrite differently. A cache that cannot be read is made again; one
    that cannot be written (a read-only or full disk) is simply not kept."""
    import onnxruntime

    providers = ["CPUExecutionProvider"]
    optimised = optimised_file(folder)
    if optimised.exists():
        options = _options(threads)
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
        try:
            return onnxruntime.InferenceSession(str(optimised), options, providers=providers)
        except Exception as exc:  # noqa: BLE001 - a damaged cache is made again from the export
            log.warning("the model's optimised graph %s could not be read (%s): making it again", optimised, exc)
            optimised.unlink(missing_ok=True)
    partial = optimised.with_name(f"{optimised.name}.{os.getpid()}.partial")
    options = _options(threads)
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.optimized_model_filepath = str(partial)
    try:
        session = onnxruntime.InferenceSession(str(folder / "model.onnx"), options, providers=providers)
    except Exception as exc:  # noqa: BLE001 - the cache is an optimisation; the export itself still loads
        log.debug("the model's optimised graph could not be saved (%s)", exc)
        partial.unlink(missing_ok=True)
        return onnxruntime.InferenceSession(str(folder / "model.onnx"), _options(threads), providers=providers)
    try:
        # Readable by whom the export is, whatever the umask; whole or not at all: another process may be loading it.
        os.chmod(partial, stat.S_IMODE((folder / "model.onnx").stat().st_mode))
        os.replace(partial, optimised)
        for stale in folder.glob("model.optimised-*.onnx"):
            if stale != optimised:
                stale.unlink(missing_ok=True)
    except OSError as exc:
        log.debug("the model's optimised graph was not kept (%s)", exc)
        partial.unlink(missing_ok=True)
    return session


def optimised_file(folder: Path) -> Path:
    """Where the export's optimised graph is cached (see `_session`)."""
    import onnxruntime

    return folder / f"model.optimised-{onnxruntime.__version__}.onnx"


def _runs(encoded: list[list[int]], max_texts: int, max_tokens: int) -> list[list[int]]:
    """Indexes of `encoded`, sorted by length, cut into runs of at most `max_texts` texts and `max_tokens`
    padded pieces (a text longer than the budget runs alone)."""
    runs: list[list[int]] = []
    run: list[int] = []
    for i in sorted(range(len(encoded)), key=lambda i: len(encoded[i])):
        width = len(encoded[i])  # sorted: the newest text is the run's longest
        if run and (len(run) >= max_texts or width * (len(run) + 1) > max_tokens):
            runs.append(run)
            run = []
        run.append(i)
    if run:
        runs.append(run)
    return runs


def available_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


if __name__ == "__main__":  # the child `export_in_child` starts
    export(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3])  # type: ignore[arg-type]
