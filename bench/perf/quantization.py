"""Recall@10 and query time of the vector quantizations `ONCALL_MEMORY_QUANTIZATION` offers (and binary, tried
and not offered), straight on Edge shards built the way the store builds them.

    python -m bench.perf.quantization fake 100000 int8,turbo4,turbo2,turbo1
    python -m bench.perf.quantization real 20000 int8,turbo4,turbo2,turbo1,bin1-s8

`fake`: the fake embedder's 1,536-dimension vectors of the varied backlog; `real`: all-MiniLM-L6-v2's (384
dimensions, cached by `bench.perf.real_vectors`). 200 held-out alerts; recall@10 of a top-50 indexed search against
exact, a hit with the exact score of the tenth counted as found. Figures in docs/operations.md, "Quantization".
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import qdrant_edge as E


def main() -> None:
    kind, n, nq = sys.argv[1], int(sys.argv[2]), 200
    configs = sys.argv[3].split(",")
    if kind == "fake":
        from synth import varied_rows

        from oncall_memory.domain.distill import distill, distill_alert
        from oncall_memory.domain.incident import Incident
        from oncall_memory.embedders.fake import FakeEmbedder

        rows = varied_rows(n + nq)
        emb = FakeEmbedder(dimension=1536)
        t0 = time.time()
        X = np.array(emb.embed([distill(Incident.model_validate(r)) for r in rows[:n]]), dtype=np.float32)
        Q = np.array(emb.embed([distill_alert(r["title"]) for r in rows[n:]]), dtype=np.float32)
        print(f"vectors {time.time() - t0:.0f}s", flush=True)
    else:
        from synth import varied_rows

        from bench.perf.real_vectors import CACHE, real_vectors
        from oncall_memory.domain.distill import distill_alert
        from oncall_memory.embedders.local import LocalEmbedder

        _, X = real_vectors(n)
        rows = varied_rows(n + nq)[n:]
        Q = np.array(
            LocalEmbedder(cache=CACHE / "models").embed(
                [distill_alert(r["title"] + ". " + (r.get("error_signature") or "")) for r in rows]
            ),
            dtype=np.float32,
        )
    dim = X.shape[1]
    exact = np.argsort(-(Q @ X.T), axis=1)[:, :10]

    def quant(name):
        if name == "int8":
            return E.ScalarQuantizationConfig(type=E.ScalarType.Int8, quantile=0.99, memory=E.Memory.Pinned)
        if name.startswith("bin"):
            enc = {
                "bin1": E.BinaryQuantizationEncoding.OneBit,
                "bin15": E.BinaryQuantizationEncoding.OneAndHalfBits,
                "bin2": E.BinaryQuantizationEncoding.TwoBits,
            }[name.split("-")[0]]
            q = (
                E.BinaryQuantizationQueryEncoding.Scalar8Bits
                if name.endswith("-s8")
                else E.BinaryQuantizationQueryEncoding.Default
            )
            return E.BinaryQuantizationConfig(encoding=enc, query_encoding=q, memory=E.Memory.Pinned)
        if name.startswith("turbo"):
            bits = {
                "turbo1": E.TurboQuantBitSize.Bits1,
                "turbo15": E.TurboQuantBitSize.Bits1_5,
                "turbo2": E.TurboQuantBitSize.Bits2,
                "turbo4": E.TurboQuantBitSize.Bits4,
            }[name]
            return E.TurboQuantQuantizationConfig(bits=bits, memory=E.Memory.Pinned)
        raise SystemExit(name)

    for name in configs:
        path = Path(tempfile.mkdtemp(prefix=f"quant-{name}-"))
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir()
        cfg = E.EdgeConfig(
            vectors={
                "d": E.EdgeVectorParams(
                    size=dim,
                    distance=E.Distance.Cosine,
                    memory=E.Memory.Cold,
                    quantization_config=quant(name),
                    hnsw_config=E.HnswIndexConfig(
                        m=16, ef_construct=100, full_scan_threshold=10000, memory=E.Memory.Cached
                    ),
                )
            },
            optimizers=E.EdgeOptimizersConfig(indexing_threshold=1),
        )
        shard = E.EdgeShard.create(str(path), cfg)
        t0 = time.time()
        for at in range(0, n, 2000):
            shard.update(
                E.UpdateOperation.upsert_points(
                    [E.Point(i, {"d": X[i].tolist()}, None) for i in range(at, min(n, at + 2000))]
                )
            )
        t1 = time.time()
        shard.optimize()
        t2 = time.time()
        for ov in (2.0, 4.0):
            params = E.SearchParams(hnsw_ef=128, quantization=E.QuantizationSearchParams(rescore=True, oversampling=ov))
            times, rec = [], []
            for qi, q in enumerate(Q):
                s = time.perf_counter()
                hits = shard.query(
                    E.QueryRequest(
                        query=E.Query.Nearest(q.tolist(), using="d"),
                        limit=50,
                        params=params,
                        with_payload=False,
                        with_vector=False,
                    )
                )
                times.append((time.perf_counter() - s) * 1000)
                got = [h.id for h in hits[:10]]
                # ties: count a hit whose exact score equals the 10th exact score as found
                tenth = float(Q[qi] @ X[exact[qi][-1]])
                rec.append(
                    sum(1 for g in got if g in set(exact[qi].tolist()) or float(Q[qi] @ X[int(g)]) >= tenth - 1e-6) / 10
                )
            du = sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6
            print(
                f"{kind} n={n} dim={dim} {name} oversampling {ov}: recall@10 {statistics.mean(rec):.3f}, p50 {statistics.median(times):.2f} ms, p99 {np.percentile(times, 99):.2f}; upsert {t1 - t0:.0f}s optimize {t2 - t1:.0f}s; disk {du:.0f} MB",
                flush=True,
            )
        shard.close()
        shutil.rmtree(path, ignore_errors=True)


if __name__ == "__main__":
    main()
