"""Build the Edge engine's vector index of a copied collection, in a process of its own.

    python -m oncall_memory.store.engines.edge_index PATH DIMENSION [disk|memory] [QUANTIZATION]

`EdgeShard.optimize()` holds Python's GIL until it is done (tens of seconds at 100,000 incidents), so in
the service's process it would stop every lookup, webhook and health check. `EdgeStore.build_index`
runs this on a copy instead and swaps the result in (`EdgeStore.finish_index`).
"""

from __future__ import annotations

import json
import sys
import time

import qdrant_edge as E

from .edge_layout import edge_config


def main(path: str, dimension: int, payload: str = "memory", quantization: str = "int8") -> dict:
    """`payload` and `quantization`: the collection's (its contract says; the copy has no contract)."""
    started = time.perf_counter()
    shard = E.EdgeShard.load(path, edge_config(dimension, payload_on_disk=payload == "disk", quantization=quantization))
    try:
        shard.optimize()
        shard.flush()
        info = shard.info()
        return {
            "points": info.points_count,
            "indexed": info.indexed_vectors_count,
            "seconds": round(time.perf_counter() - started, 2),
        }
    finally:
        shard.close()


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], int(sys.argv[2]), *sys.argv[3:5])))
