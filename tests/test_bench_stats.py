"""``benchmarks/paired.py``: the steps that count, and the median paired ratio's interval."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

_spec = importlib.util.spec_from_file_location(
    "bench_paired", Path(__file__).resolve().parents[1] / "benchmarks" / "paired.py"
)
assert _spec is not None and _spec.loader is not None
paired = importlib.util.module_from_spec(_spec)
sys.modules["bench_paired"] = paired  # dataclasses look their module up there
_spec.loader.exec_module(paired)


def test_step_sets_leave_out_settle_window_and_the_step_after() -> None:
    s = paired.step_sets(steps=30, settle=3, skip=6, warmup=2, active=5, post=1)
    assert list(s.before) == [3, 4, 5]
    assert list(s.window) == list(range(6, 13))
    assert list(s.recorded) == [8, 9, 10, 11]  # step 12 holds the export
    assert list(s.after) == list(range(14, 30))  # 13, right after the window, left out
    assert s.outside == [3, 4, 5, *range(14, 30)]


def test_span_figures_median_and_mean_over_the_given_steps() -> None:
    times = [100.0, 1.0, 2.0, 3.0, 10.0]
    f = paired.span_figures(times, [1, 2, 3, 4])
    assert f == {"median": 2.5, "mean": 4.0, "n": 4}
    assert paired.span_figures(times, [])["n"] == 0


def test_paired_ratios_are_per_pair_and_drop_bad_bases() -> None:
    r = paired.paired_ratios([2.0, 4.0, 0.0, float("nan")], [3.0, 4.0, 1.0, 1.0])
    assert r.tolist() == [1.5, 1.0]
    with pytest.raises(ValueError):
        paired.paired_ratios([1.0], [1.0, 2.0])


def test_median_interval_holds_the_median_and_narrows_with_more_pairs() -> None:
    rng = np.random.default_rng(1)
    few = 1.05 + 0.1 * rng.standard_normal(8)
    many = 1.05 + 0.1 * rng.standard_normal(200)
    a, b = paired.median_interval(few), paired.median_interval(many)
    for fig, v in ((a, few), (b, many)):
        assert fig["median"] == pytest.approx(float(np.median(v)))
        assert fig["lo"] <= fig["median"] <= fig["hi"]
        assert fig["n"] == len(v)
    assert b["hi"] - b["lo"] < (a["hi"] - a["lo"]) / 2
    assert b["lo"] < 1.05 < b["hi"]
    assert a["lo"] < a["hi"]  # spread values: an interval, not a point
    assert paired.median_interval(few) == a  # a fixed seed: the same interval again


def test_median_interval_of_identical_and_of_no_values() -> None:
    fig = paired.median_interval([1.2, 1.2, 1.2])
    assert (fig["median"], fig["lo"], fig["hi"]) == (1.2, 1.2, 1.2)
    assert np.isnan(paired.median_interval([])["median"])
    assert paired.format_ratio(paired.median_interval([])) == "n/a (no pairs)"
    assert paired.format_ratio(fig) == "1.200x [1.200, 1.200] (n=3)"
