"""Ingest throughput and peak memory, embedder by embedder, side by side in one run.

    python -m bench.perf.ingest [--n 2000] [--openai-latency 0.25]

The backlog: the real public incident texts of `bench.redaction.real_text` (when its cache is there; post-mortem
summaries, failure stories, log excerpts), topped up with `synth`'s varied backlog to `--n`
incidents. Each configuration ingests it into a fresh data dir in its own child process, timed from
opening the memory to the end of the ingest (the model's load included), with the process's peak RSS as
the kernel counts it (getrusage's ru_maxrss: the whole process, model included):

  - local model, sentence-transformers (torch, float32): the runtime before ONNX;
  - local model, ONNX Runtime float32 as it ran before this work (batches of 64 in arrival order, each
    padded to its longest, ONNX Runtime's own thread count: `encode_before` below), then float32 and int8
    (the default) as they run now; the export is made before timing, as a deployment's first ingest leaves
    it in the data dir's models/;
  - OpenAI, against a local server playing the embeddings endpoint with a realistic latency (fixed per
    request plus per input; 1536 dims), one request at a time (as before) and four in flight (the default).

Then the quality side of int8 on the same real texts: the cosine of each int8 vector to its float32 one,
and how often the nearest neighbours among the texts stay the same.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from synth import varied_rows

from bench.redaction.real_text import DEFAULT_OUT as REAL_TEXT

CONFIGS = {
    "local torch float32": {"ONCALL_MEMORY_EMBEDDER": "local", "BENCH_RUNTIME": "torch"},
    "local onnx float32 (before)": {
        "ONCALL_MEMORY_EMBEDDER": "local",
        "ONCALL_MEMORY_LOCAL_PRECISION": "float32",
        "BENCH_RUNTIME": "before",
    },
    "local onnx float32": {"ONCALL_MEMORY_EMBEDDER": "local", "ONCALL_MEMORY_LOCAL_PRECISION": "float32"},
    "local onnx int8": {"ONCALL_MEMORY_EMBEDDER": "local", "ONCALL_MEMORY_LOCAL_PRECISION": "int8"},
    "openai, 1 in flight": {"ONCALL_MEMORY_EMBEDDER": "openai", "ONCALL_MEMORY_OPENAI_CONCURRENCY": "1"},
    "openai, 4 in flight": {"ONCALL_MEMORY_EMBEDDER": "openai", "ONCALL_MEMORY_OPENAI_CONCURRENCY": "4"},
}


def backlog_rows(n: int) -> list[dict]:
    rows = []
    if REAL_TEXT.exists():
        for i, line in enumerate(REAL_TEXT.read_text().splitlines()):
            text = json.loads(line)["text"]
            title, _, rest = text.partition(". ")
            rows.append({"id": f"REAL-{i}", "title": title[:200], "root_cause": rest[:4000] or None})
    rng = random.Random(5)
    for row in varied_rows(max(0, n - len(rows))):
        row = dict(row, id=f"SYN-{len(rows)}", oncall_note=f"{row.get('oncall_note') or ''} #{rng.random():.6f}")
        rows.append(row)
    return rows[:n]


# -- the child: one ingest, as the CLI runs it --------------------------------------------------------


def child(config: str, backlog: str) -> None:
    from oncall_memory.embedders.local import LocalEmbedder
    from oncall_memory.memory import Memory
    from oncall_memory.settings import Settings
    from oncall_memory.sources.jsonl_files import read_jsonl

    settings = Settings()
    embedder = LocalEmbedder() if os.environ.get("BENCH_RUNTIME") == "torch" else None  # no cache: torch
    if os.environ.get("BENCH_RUNTIME") == "before":
        from oncall_memory.embedders import onnx

        onnx.OnnxModel.encode = encode_before  # type: ignore[method-assign]
        onnx.available_cores = lambda: 0  # ONNX Runtime's own choice of threads, as before
    started = time.perf_counter()
    with Memory.open(settings, embedder=embedder) as memory:
        report = memory.ingest(read_jsonl(Path(backlog)))
        if embedder is not None:
            embedder.close()
    seconds = time.perf_counter() - started
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"seconds": seconds, "new": report.new, "calls": report.embedding_calls, "peak_kb": peak_kb}))


def encode_before(self: Any, texts: list[str], max_texts: int = 64) -> Any:
    """`OnnxModel.encode` as it was at 759fe77: batches of 64 in the order given, padded to each batch's
    longest text (the tokenizer's own padding)."""
    import numpy as np

    self._tokenizer.enable_padding()
    out = []
    for start in range(0, len(texts), 64):
        encoded = self._tokenizer.encode_batch(texts[start : start + 64])
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        hidden = self._session.run(
            None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        )[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        out.append(pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None))
    return np.concatenate(out) if out else np.zeros((0, 0))


def run_child(config: str, backlog: Path, env: dict[str, str]) -> dict:
    done = subprocess.run(
        [sys.executable, "-m", "bench.perf.ingest", "--child", config, str(backlog)],
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode:
        raise SystemExit(f"{config} failed:\n{done.stderr[-3000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["peak_mb"] = result.pop("peak_kb") / 1024
    return result


# -- a local server playing OpenAI's embeddings endpoint ----------------------------------------------


class FakeOpenAI(ThreadingHTTPServer):
    """POST /v1/embeddings: `latency` seconds per request plus `per_input` per input (text-embedding-3-small
    answers a 256-input request in a few hundred ms), 1536-dim vectors, OpenAI's rate-limit headers."""

    daemon_threads = True

    def __init__(self, latency: float, per_input: float):
        self.latency, self.per_input = latency, per_input
        self.requests = 0
        super().__init__(("127.0.0.1", 0), _Handler)


class _Handler(BaseHTTPRequestHandler):
    server: FakeOpenAI

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        inputs = body["input"]
        self.server.requests += 1
        time.sleep(self.server.latency + self.server.per_input * len(inputs))
        data = []
        for i, text in enumerate(inputs):
            rng = random.Random(text)
            data.append({"object": "embedding", "index": i, "embedding": [rng.uniform(-1, 1) for _ in range(1536)]})
        payload = json.dumps({"object": "list", "data": data, "model": body["model"], "usage": {}}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.send_header("x-ratelimit-remaining-requests", "4999")
        self.send_header("x-ratelimit-reset-requests", "12ms")
        self.send_header("x-ratelimit-remaining-tokens", "4990000")
        self.send_header("x-ratelimit-reset-tokens", "1ms")
        self.end_headers()
        self.wfile.write(payload)


# -- int8 against float32 on the real texts -----------------------------------------------------------


def int8_quality(models: Path, texts: list[str]) -> dict:
    import numpy as np

    from oncall_memory.embedders.local import LocalEmbedder

    vectors = {p: np.array(LocalEmbedder(cache=models, precision=p).embed(texts)) for p in ("float32", "int8")}
    cosines = (vectors["float32"] * vectors["int8"]).sum(axis=1)

    def nearest(v: np.ndarray, k: int = 10) -> np.ndarray:
        scores = v @ v.T
        np.fill_diagonal(scores, -2)
        return np.argsort(-scores, axis=1)[:, :k]

    a, b = nearest(vectors["float32"]), nearest(vectors["int8"])
    return {
        "n": len(texts),
        "cos_mean": float(cosines.mean()),
        "cos_min": float(cosines.min()),
        "top1_same": float(np.mean(a[:, 0] == b[:, 0])),
        "top10_overlap": float(np.mean([len(set(x) & set(y)) / 10 for x, y in zip(a, b)])),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--openai-latency", type=float, default=0.25, help="seconds per request of the fake OpenAI")
    ap.add_argument("--openai-per-input", type=float, default=0.001, help="seconds per input of the fake OpenAI")
    ap.add_argument("--only", nargs="*", choices=list(CONFIGS), help="run only these configurations")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return
    work = Path(tempfile.mkdtemp(prefix="bench-ingest-"))
    rows = backlog_rows(args.n)
    backlog = work / "backlog.jsonl"
    backlog.write_text("".join(json.dumps(r) + "\n" for r in rows))
    real = sum(r["id"].startswith("REAL-") for r in rows)
    models = work / "models-cache"
    print(
        f"machine: {os.cpu_count()} cores; backlog: {len(rows)} incidents ({real} real public texts, "
        f"{len(rows) - real} synthetic); fake OpenAI: {args.openai_latency * 1000:.0f} ms per request + "
        f"{args.openai_per_input * 1000:.1f} ms per input",
        flush=True,
    )
    fake = FakeOpenAI(args.openai_latency, args.openai_per_input)
    threading.Thread(target=fake.serve_forever, daemon=True).start()
    results: dict[str, dict[str, Any]] = {}
    for config, extra in CONFIGS.items():
        if args.only and config not in args.only:
            continue
        data = work / config.replace(" ", "-").replace(",", "")
        env = {
            **os.environ,
            **extra,
            "ONCALL_MEMORY_DATA_DIR": str(data),
            "OPENAI_API_KEY": "sk-bench",
            "OPENAI_BASE_URL": f"http://127.0.0.1:{fake.server_address[1]}/v1",
        }
        if "onnx" in config:  # the export, made once before timing (a deployment's first ingest makes it)
            (data / "models").parent.mkdir(parents=True, exist_ok=True)
            if not models.exists():
                models.mkdir()
            os.symlink(models, data / "models")
            from oncall_memory.embedders.local import LocalEmbedder

            LocalEmbedder(cache=models, precision=extra["ONCALL_MEMORY_LOCAL_PRECISION"]).embed(["warm"])  # type: ignore[arg-type]
        before = fake.requests
        r = run_child(config, backlog, env)
        r["requests"] = fake.requests - before
        results[config] = r
        print(
            f"  {config:28s} {r['new'] / r['seconds']:7.1f} incidents/s ({r['seconds']:6.1f} s, "
            f"{r['calls']} embedding calls{', %d requests' % r['requests'] if 'openai' in config else ''}), "
            f"peak RSS {r['peak_mb']:6.0f} MB",
            flush=True,
        )

    def rate(c: str) -> float:
        return results[c]["new"] / results[c]["seconds"]

    if {"local onnx float32 (before)", "local onnx int8"} <= results.keys():
        was = results["local onnx float32 (before)"]
        print(
            f"\nlocal int8 now / onnx float32 before: {rate('local onnx int8') / rate('local onnx float32 (before)'):.2f}x "
            f"incidents/s, peak RSS {results['local onnx int8']['peak_mb']:.0f} vs {was['peak_mb']:.0f} MB"
        )
    if {"local torch float32", "local onnx int8"} <= results.keys():
        print(
            f"local int8 / torch float32: {rate('local onnx int8') / rate('local torch float32'):.2f}x incidents/s, "
            f"peak RSS {results['local onnx int8']['peak_mb']:.0f} vs {results['local torch float32']['peak_mb']:.0f} MB"
        )
    if {"local onnx float32", "local onnx int8"} <= results.keys():
        print(f"local int8 / onnx float32: {rate('local onnx int8') / rate('local onnx float32'):.2f}x incidents/s")
    if {"openai, 1 in flight", "openai, 4 in flight"} <= results.keys():
        print(f"openai 4 in flight / 1: {rate('openai, 4 in flight') / rate('openai, 1 in flight'):.2f}x incidents/s")
    if real and (not args.only or any("onnx" in c for c in args.only)):
        texts = [json.loads(line)["text"] for line in REAL_TEXT.read_text().splitlines()]
        q = int8_quality(models, texts)
        print(
            f"\nint8 vs float32 on {q['n']} real texts: cosine mean {q['cos_mean']:.4f}, min {q['cos_min']:.4f}; "
            f"nearest neighbour the same for {q['top1_same']:.1%}, top-10 overlap {q['top10_overlap']:.1%}"
        )


if __name__ == "__main__":
    main()
