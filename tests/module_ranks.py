"""A rank folder with Python stacks and ``nn.Module`` frames on both ranks (test helper).

No rank folder of ``tests/data`` was recorded with stacks and modules, so one is made from two
real single-GPU traces of ``tests/data`` recorded on H100s with ``with_stack``,
``with_modules`` and ``record_shapes``: ``attribution/tinylm_train`` (rank 0) and
``graphs/gpu/gpt_eager`` (rank 1), both training a ``TinyLM`` (so module paths such as
``TinyLM_0.Block_0.Attn_0.Linear_0`` are on both ranks, with different calls, shapes and
times), each given ``distributedInfo`` and rank 1's timestamps moved to start where rank 0's
do (they were recorded days apart; a folder is one job only when its files overlap in time).
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data"
SOURCES = (
    DATA / "attribution" / "tinylm_train.json.gz",
    DATA / "graphs" / "gpu" / "gpt_eager.json.gz",
)


def write_module_job(
    out: Path,
    sources: tuple[Path, ...] = SOURCES,
    edit: Callable[[int, dict[str, Any]], None] | None = None,
) -> Path:
    """Write ``out/rank-N.json.gz`` from ``sources`` (rank N from the Nth), their clocks
    aligned; ``edit(rank, doc)`` may change a document first. Returns ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    first: float | None = None
    for rank, source in enumerate(sources):
        doc = json.loads(gzip.decompress(source.read_bytes()))
        timed = [e for e in doc["traceEvents"] if isinstance(e.get("ts"), int | float)]
        t0 = min(e["ts"] for e in timed)
        first = t0 if first is None else first
        for e in timed:
            e["ts"] = e["ts"] - t0 + first
        doc["distributedInfo"] = {"rank": rank, "world_size": len(sources)}
        if edit is not None:
            edit(rank, doc)
        (out / f"rank-{rank}.json.gz").write_bytes(gzip.compress(json.dumps(doc).encode()))
    return out


def module_calls(folder: Path, name: str) -> int:
    """How many ``nn.Module: name`` frames the files of ``folder`` hold, counted from their
    JSON (an independent count of a top-level module row's calls)."""
    n = 0
    for f in sorted(folder.glob("*.json.gz")):
        events = json.loads(gzip.decompress(f.read_bytes()))["traceEvents"]
        n += sum(1 for e in events if e.get("name") == f"nn.Module: {name}" and e.get("ph") == "X")
    return n


BIG_FLOPS = 2**52 + 1
"""About 4.5 PFLOP: two such counts sum past 2**53, where a float64 sum rounds."""


def big_mm_flops(rank: int, doc: dict[str, Any]) -> None:
    """An ``edit`` for :func:`write_module_job`: every ``aten::mm`` of a rank gets Kineto's
    ``flops`` of :data:`BIG_FLOPS` plus an even number of its own (each count odd, so that the
    sums past 2**53 are numbers float64 cannot hold)."""
    k = 0
    for e in doc["traceEvents"]:
        if e.get("name") == "aten::mm" and e.get("ph") == "X":
            e["args"]["flops"] = BIG_FLOPS + 2 * (1000 * rank + k)
            k += 1
