"""The figures of a one-process run's result: each strategy's entry, and the memory peaks.

:class:`~gpuviz.engine.inprocess.InProcessRun` keeps a :class:`StrategyState` per strategy while
it runs, and builds its ``Finished.result`` with :func:`strategy_entries` (medians, speed-ups
over the baseline, throughput) and :func:`memory_peaks` (the sampler's peaks, raised to torch's
own ``max_memory_*`` counters).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from gpuviz.workloads.base import Strategy


@dataclass
class StrategyState:
    """One strategy's state and step times over a run."""

    strategy: Strategy
    status: str = "ok"  # ok | skipped | failed
    reason: str | None = None
    error: str | None = None
    set_up: bool = False
    wall_ms: list[float] = field(default_factory=list)
    gpu_ms: list[float] = field(default_factory=list)
    profiled_wall_ms: list[float] = field(default_factory=list)
    profiled_gpu_ms: list[float] = field(default_factory=list)
    reports: dict[str, Any] = field(default_factory=dict)
    warmup_s: float = float("inf")  # the last warm-up step's wall time, synchronized


def strategy_entries(
    states: list[StrategyState],
    baseline: str | None,
    figures: dict[str, Any],
    reports: dict[str, dict[str, Any]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Each strategy's entry of the result, and the skipped ones' ``{name, reason}``."""
    base = next((st for st in states if st.strategy.name == baseline), None)
    base_wall = statistics.median(base.wall_ms) if base and base.wall_ms else None
    base_gpu = statistics.median(base.gpu_ms) if base and base.gpu_ms else None
    strategies = []
    skipped = []
    for st in states:
        s = st.strategy
        entry: dict[str, Any] = {
            "name": s.name,
            "title": s.title or s.name,
            "status": st.status,
        }
        if st.reason:
            entry["reason"] = st.reason
        if st.error:
            entry["error"] = st.error
        if st.status == "skipped":
            skipped.append({"name": s.name, "reason": st.reason})
        if st.wall_ms:
            med = statistics.median(st.wall_ms)
            entry.update(
                timed_steps=len(st.wall_ms),
                median_wall_ms=med,
                min_wall_ms=min(st.wall_ms),
                max_wall_ms=max(st.wall_ms),
            )
            if st.gpu_ms:
                entry["median_gpu_ms"] = statistics.median(st.gpu_ms)
                entry["min_gpu_ms"] = min(st.gpu_ms)
            if st.profiled_wall_ms:
                entry["profiled_wall_ms"] = statistics.median(st.profiled_wall_ms)
            if base_wall is not None and med > 0:
                entry["speedup"] = base_wall / med
            if base_gpu is not None and st.gpu_ms and entry["median_gpu_ms"] > 0:
                entry["speedup_gpu"] = base_gpu / entry["median_gpu_ms"]
            if s.work is not None and med > 0:
                secs = (entry.get("median_gpu_ms") or med) / 1e3
                if s.work_unit == "bytes":
                    entry["gb_per_s"] = s.work / secs / 1e9
                elif s.work_unit == "flop":
                    entry["tflop_per_s"] = s.work / secs / 1e12
                else:
                    entry["items_per_s"] = s.work / secs
        if s.name in figures:
            entry.update(figures[s.name])
        entry.update(s.figures)
        entry.update(reports.get(s.name, {}))
        strategies.append(entry)
    return strategies, skipped


def memory_peaks(
    devices: Sequence[Any], peaks: dict[str, dict[str, int]]
) -> tuple[int, dict[str, dict[str, int]]]:
    """The peak RSS, and per CUDA device its peak allocated and reserved bytes."""
    import torch

    rss = max((p.get("peak_rss_bytes", 0) for p in peaks.values()), default=0)
    mem_devices: dict[str, dict[str, int]] = {}
    for d in devices:
        if d.type != "cuda":
            continue
        i = d.index if d.index is not None else 0
        p = dict(peaks.get(f"cuda:{i}", {}))
        p.pop("peak_rss_bytes", None)
        p["peak_allocated_bytes"] = max(
            p.get("peak_allocated_bytes", 0), int(torch.cuda.max_memory_allocated(i))
        )
        p["peak_reserved_bytes"] = max(
            p.get("peak_reserved_bytes", 0), int(torch.cuda.max_memory_reserved(i))
        )
        mem_devices[f"cuda:{i}"] = p
    return rss, mem_devices


__all__ = ["StrategyState", "memory_peaks", "strategy_entries"]
