"""Generated multi-rank trace folders for the rank tests (``benchmarks/gen_trace.py --world``)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).parent.parent.parent

STRAGGLER = 5
"""The planted straggler of :func:`write_ranks64`."""
LATE = {10: 1, 20: 1, 30: 2}
"""Ranks whose files begin that many collectives late (misaligned profiler windows)."""
KERNELS, EVERY, SEED = 100, 25, 3
"""Kernels per rank, kernels per collective (so 4 steps), the generator's seed."""


def gen_trace() -> ModuleType:
    """``benchmarks/gen_trace.py`` as a module."""
    got = sys.modules.get("gen_trace")
    if got is not None:
        return got
    spec = importlib.util.spec_from_file_location("gen_trace", ROOT / "benchmarks" / "gen_trace.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_trace"] = module
    spec.loader.exec_module(module)
    return module


def write_ranks64(folder: Path, world: int = 64) -> Path:
    """A ``world``-rank job: rank :data:`STRAGGLER` 1.3× slower, the :data:`LATE` ranks' files
    starting late; ``folder/rank-N.json`` each."""
    gen = gen_trace()
    folder.mkdir(parents=True, exist_ok=True)
    for r in range(world):
        with open(folder / f"rank-{r}.json", "w", encoding="utf-8") as f:
            gen.write_trace(
                f,
                KERNELS,
                1,
                SEED,
                rank=r,
                world=world,
                collective_every=EVERY,
                straggler=STRAGGLER,
                skip_collectives=LATE.get(r, 0),
            )
    return folder
