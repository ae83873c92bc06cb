"""Paired-ratio statistics for the benchmarks: which steps count, per-run figures, a bootstrap.

Processes of one script differ from one another by more than the cost being measured (±15% on
a launch-bound step on an H100), so a cost is measured over pairs of processes run one after the
other, as a ratio within each pair; the figure is the median of those ratios, with a bootstrap
interval. Used by ``benchmarks/bench_profile.py``; numpy only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np


@dataclass(frozen=True)
class StepSets:
    """Step indices (from 0) of a run of ``steps`` steps profiled over one window.

    ``before``: from ``settle`` to the window's start; ``window``: the warm-up and recorded
    steps; ``recorded``: the recorded ones but the last, whose end holds the trace's export
    (all of them when there is one); ``after``: from ``post`` steps after the window's last
    step (the step right after it may pay for CUPTI's teardown) to the end.
    """

    before: range
    window: range
    recorded: range
    after: range

    @property
    def outside(self) -> list[int]:
        """The steps outside the window that count: ``before`` and ``after``."""
        return [*self.before, *self.after]


def step_sets(steps: int, settle: int, skip: int, warmup: int, active: int, post: int) -> StepSets:
    """The :class:`StepSets` of a run (``post`` >= 1 leaves out the step after the window)."""
    if min(steps, settle, skip, warmup, post) < 0 or active < 1:
        raise ValueError("step counts must be >= 0 (active >= 1)")
    start, stop = skip, skip + warmup + active
    return StepSets(
        before=range(min(settle, start), start),
        window=range(start, min(stop, steps)),
        recorded=range(start + warmup, min(stop - 1 if active > 1 else stop, steps)),
        after=range(min(stop + post, steps), steps),
    )


def span_figures(times: Sequence[float], steps: Sequence[int]) -> dict[str, float]:
    """Median and mean of ``times`` (one per step) over ``steps``; NaN when there are none.

    The median is robust to rare slow steps; the mean counts them (a thread that takes the GIL
    now and then, a sync every N steps), so it is what a run's length pays.
    """
    vals = np.asarray([times[k] for k in steps if k < len(times)], dtype=float)
    if vals.size == 0:
        return {"median": float("nan"), "mean": float("nan"), "n": 0}
    return {"median": float(np.median(vals)), "mean": float(vals.mean()), "n": int(vals.size)}


def paired_ratios(base: Sequence[float], other: Sequence[float]) -> np.ndarray:
    """``other[i] / base[i]`` for each pair; pairs with a missing or non-positive base dropped."""
    if len(base) != len(other):
        raise ValueError(f"{len(base)} base values for {len(other)} others")
    b = np.asarray(base, dtype=float)
    o = np.asarray(other, dtype=float)
    ok = np.isfinite(b) & np.isfinite(o) & (b > 0)
    return o[ok] / b[ok]


def stepwise_ratio(base: Sequence[float], other: Sequence[float], steps: Sequence[int]) -> float:
    """The median over ``steps`` of ``other[k] / base[k]``: of two runs that took turns step by
    step, so that step k of each ran at the same time of the machine's phases (a pace that
    changes within a process). NaN when no step has both times (and a positive base)."""
    n = min(len(base), len(other))
    idx = [k for k in steps if k < n]
    r = paired_ratios([base[k] for k in idx], [other[k] for k in idx])
    return float(np.median(r)) if r.size else float("nan")


def median_interval(
    values: Sequence[float], level: float = 0.95, n_boot: int = 10_000, seed: int = 0
) -> dict[str, float]:
    """The median of ``values`` with a percentile-bootstrap ``level`` interval (fixed seed).

    Returns ``median``, ``lo``, ``hi`` and ``n``; NaN figures when there are no values. With
    one value the interval is that value.
    """
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        nan = float("nan")
        return {"median": nan, "lo": nan, "hi": nan, "n": 0}
    rng = np.random.default_rng(seed)
    resamples = rng.choice(v, size=(n_boot, v.size), replace=True)
    meds = np.median(resamples, axis=1)
    tail = (1.0 - level) / 2.0
    lo, hi = np.quantile(meds, [tail, 1.0 - tail])
    return {"median": float(np.median(v)), "lo": float(lo), "hi": float(hi), "n": int(v.size)}


def pairs_needed(ratios: Sequence[float], half_width: float = 0.03, level: float = 0.95) -> float:
    """Pairs for a ``level`` interval of the median ratio ``half_width`` wide on each side.

    From the spread of the pairs' log ratios (the median's standard error is about 1.2533
    times the mean's for a normal spread): what a run must plan when processes differ by more
    than the cost sought. NaN with fewer than 3 ratios.
    """
    v = np.asarray(ratios, dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    if v.size < 3:
        return float("nan")
    z = NormalDist().inv_cdf(0.5 + level / 2.0)
    sd = float(np.std(np.log(v), ddof=1))
    return float((z * 1.2533 * sd / np.log1p(half_width)) ** 2)


def format_ratio(fig: dict[str, float]) -> str:
    """``1.023x [0.998, 1.051] (n=20)`` of a :func:`median_interval` figure."""
    if not fig["n"]:
        return "n/a (no pairs)"
    return f"{fig['median']:.3f}x [{fig['lo']:.3f}, {fig['hi']:.3f}] (n={fig['n']})"


__all__ = [
    "StepSets",
    "format_ratio",
    "median_interval",
    "paired_ratios",
    "pairs_needed",
    "span_figures",
    "step_sets",
    "stepwise_ratio",
]
