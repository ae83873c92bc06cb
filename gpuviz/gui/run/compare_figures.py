"""The figures two runs are compared on, and one run's per-strategy chart rows. Qt-free.

:func:`figure_rows` reads ``gpuviz summary --json`` objects (``Summary.to_json()``) and, when
the two traces come from runs, their result objects (``Finished.result``): it adds each
strategy's median time. :func:`strategy_rows` turns a ``loops``/``streams`` result into the
rows of the comparison chart: every strategy, skipped and failed ones included.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class FigureRow:
    """One compared figure: its name, unit, and the two values (None where one has none)."""

    name: str
    unit: str
    a: float | None
    b: float | None

    @property
    def delta(self) -> float | None:
        """``b - a``."""
        return None if self.a is None or self.b is None else self.b - self.a

    @property
    def ratio(self) -> float | None:
        """``b / a`` (None when ``a`` is 0 or missing)."""
        if self.a is None or self.a == 0 or self.b is None:
            return None
        return self.b / self.a


def _sum(items: list[dict[str, Any]], key: str) -> float | None:
    vals = [float(i[key]) for i in items if i.get(key) is not None]
    return sum(vals) if vals else None


def _max(items: list[dict[str, Any]], key: str) -> float | None:
    vals = [float(i[key]) for i in items if i.get(key) is not None]
    return max(vals) if vals else None


def summary_figures(summary: dict[str, Any] | None) -> dict[str, tuple[str, float | None]]:
    """Name -> (unit, value) of a summary JSON's whole-trace figures."""
    s = summary or {}
    streams = list(s.get("streams", []))
    devices = list(s.get("devices", []))
    memory = list(s.get("memory", []))
    overlap = s.get("overlap", {}) or {}
    util = [float(d["utilization"]) for d in devices if d.get("utilization") is not None]
    return {
        "span": ("µs", s.get("span_us")),
        "events": ("", s.get("events")),
        "kernels": ("", _sum(streams, "kernels")),
        "kernel time": ("µs", _sum(streams, "kernel_us")),
        "copies": ("", _sum(streams, "memcpy")),
        "bytes copied": ("B", _sum(streams, "memcpy_bytes")),
        "GPU busy (sum of devices)": ("µs", _sum(devices, "busy_us")),
        "utilization (mean of devices)": ("%", 100 * sum(util) / len(util) if util else None),
        "peak allocated": ("B", _max(memory, "peak_allocated_bytes")),
        "peak reserved": ("B", _max(memory, "peak_reserved_bytes")),
        "compute/copy overlap": ("µs", overlap.get("compute_copy_us")),
        "multi-stream overlap": ("µs", overlap.get("multi_stream_us")),
    }


def result_figures(result: dict[str, Any] | None) -> dict[str, tuple[str, float | None]]:
    """Name -> (unit, value) of a run result's per-strategy medians and its peak RSS."""
    out: dict[str, tuple[str, float | None]] = {}
    if not result:
        return out
    for st in result.get("strategies", []):
        if st.get("median_gpu_ms") is not None:
            out[f"{st['name']} median GPU"] = ("ms", float(st["median_gpu_ms"]))
        if st.get("median_wall_ms") is not None:
            out[f"{st['name']} median wall"] = ("ms", float(st["median_wall_ms"]))
    rss = (result.get("memory") or {}).get("peak_rss_bytes")
    if rss:
        out["peak RSS of the run"] = ("B", float(rss))
    return out


def figure_rows(
    summary_a: dict[str, Any] | None,
    summary_b: dict[str, Any] | None,
    result_a: dict[str, Any] | None = None,
    result_b: dict[str, Any] | None = None,
) -> list[FigureRow]:
    """The rows of the delta table: trace figures, then run figures both or either have."""
    rows = []
    fa, fb = summary_figures(summary_a), summary_figures(summary_b)
    for name, (unit, a) in fa.items():
        b = fb[name][1]
        if a is None and b is None:
            continue
        rows.append(FigureRow(name, unit, _f(a), _f(b)))
    ra, rb = result_figures(result_a), result_figures(result_b)
    for name in [*ra, *(n for n in rb if n not in ra)]:
        unit = (ra.get(name) or rb.get(name))[0]  # type: ignore[index]
        rows.append(
            FigureRow(name, unit, _f(ra.get(name, ("", None))[1]), _f(rb.get(name, ("", None))[1]))
        )
    return rows


def _f(v: Any) -> float | None:
    return None if v is None else float(v)


@dataclass(frozen=True)
class StrategyRow:
    """One strategy of a run, as the comparison chart shows it."""

    name: str
    title: str
    status: str
    time_ms: float | None
    time_kind: str  # "GPU" or "wall"
    speedup: float | None
    note: str
    launches: int | None = None


def strategy_rows(result: dict[str, Any]) -> list[StrategyRow]:
    """Every strategy of a result, in run order: its time (GPU median where measured, else
    wall), its speedup over the baseline, and why it did not run when it did not."""
    rows = []
    for st in result.get("strategies", []):
        gpu = st.get("median_gpu_ms")
        t = gpu if gpu is not None else st.get("median_wall_ms")
        speed = st.get("speedup_gpu") if gpu is not None else st.get("speedup")
        note = " ".join(str(x) for x in (st.get("error"), st.get("reason")) if x)
        rows.append(
            StrategyRow(
                name=str(st.get("name")),
                title=str(st.get("title") or st.get("name")),
                status=str(st.get("status", "ok")),
                time_ms=None if t is None else float(t),
                time_kind="GPU" if gpu is not None else "wall",
                speedup=None if speed is None else float(speed),
                note=note,
                launches=st.get("launches"),
            )
        )
    return rows


def step_part_rows(advice_a: Any, advice_b: Any) -> list[FigureRow]:
    """Mean per step of each part of the step breakdown (µs), in A and in B."""
    pa = advice_a.mean_step_parts() if advice_a is not None else {}
    pb = advice_b.mean_step_parts() if advice_b is not None else {}
    names = {
        "step": "step length",
        "compute": "GPU compute",
        "comm": "GPU communication (exposed)",
        "copy": "GPU copies",
        "set": "GPU sets",
        "idle": "GPU idle",
        "cpu ops": "CPU in PyTorch ops",
        "cpu other": "CPU outside ops",
    }
    rows = []
    for key, label in names.items():
        a, b = pa.get(key), pb.get(key)
        if a is None and b is None:
            continue
        rows.append(FigureRow(label, "µs", _us(a), _us(b)))
    return rows


def _us(ns: float | None) -> float | None:
    return None if ns is None else float(ns) / 1000.0


@dataclass(frozen=True)
class FindingPair:
    """One finding kind in A and in B (None where that run has none)."""

    kind: str
    a: Any
    b: Any


def finding_pairs(advice_a: Any, advice_b: Any) -> list[FindingPair]:
    """Every finding kind of either run: A's in A's order, then those only B has."""
    fa = {f.kind: f for f in (advice_a.findings if advice_a is not None else [])}
    fb = {f.kind: f for f in (advice_b.findings if advice_b is not None else [])}
    kinds = [*fa, *(k for k in fb if k not in fa)]
    return [FindingPair(k, fa.get(k), fb.get(k)) for k in kinds]


__all__ = [
    "FigureRow",
    "FindingPair",
    "StrategyRow",
    "figure_rows",
    "finding_pairs",
    "result_figures",
    "step_part_rows",
    "strategy_rows",
    "summary_figures",
]
