"""``benchmarks/paired.py``: the steps that count, and the median paired ratio's interval; and
``bench_profile.py``'s figures of made-up groups (``--report``)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

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


def test_stepwise_ratio_is_the_median_step_ratio_on_the_given_steps() -> None:
    # Lockstep runs share the machine's phases (6 or 9 ms here), the profiled one 1% slower,
    # but one step of it (k=2) fell in the slow phase: the medians then sit in different
    # phases (9.09 / 6 = 1.515x), step k against step k does not (1.01x).
    bare = [6.0, 6.0, 6.0, 9.0, 9.0]
    prof = [6.06, 6.06, 9.09, 9.09, 9.09]
    assert np.median(prof) / np.median(bare) == pytest.approx(1.515)
    assert paired.stepwise_ratio(bare, prof, range(5)) == pytest.approx(1.01)
    assert paired.stepwise_ratio(bare, prof, [2, 3, 4]) == pytest.approx(1.01)
    assert paired.stepwise_ratio(bare, prof, [2]) == pytest.approx(1.515)  # only those steps
    assert paired.stepwise_ratio([0.0, 2.0], [1.0, 3.0], [0, 1, 7]) == 1.5  # bad base, no step 7
    assert np.isnan(paired.stepwise_ratio(bare, prof, []))
    assert np.isnan(paired.stepwise_ratio(bare, prof[:2], [3, 4]))  # steps one run lacks


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


def test_pairs_needed_grows_with_the_spread_and_the_precision() -> None:
    rng = np.random.default_rng(1)
    wide = np.exp(rng.normal(0.0, 0.16, 400))  # processes that differ by ~16%
    narrow = np.exp(rng.normal(0.0, 0.016, 400))
    n3 = paired.pairs_needed(wide, 0.03)
    # (1.96 * 1.2533 * 0.16 / ln 1.03)^2 ~ 180: what the H200 runs of 2026-11-28 showed
    assert 140 < n3 < 230
    assert paired.pairs_needed(narrow, 0.03) < n3 / 50
    assert paired.pairs_needed(wide, 0.01) > 8 * n3
    assert np.isnan(paired.pairs_needed([1.0, 1.1], 0.03))


def bench_module(name: str) -> Any:
    """``benchmarks/NAME.py`` as a module (benchmarks/ is no package)."""
    spec = importlib.util.spec_from_file_location(
        name, Path(__file__).resolve().parents[1] / "benchmarks" / f"{name}.py"
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def bench_profile_module() -> object:
    """``benchmarks/bench_profile.py`` as a module."""
    return bench_module("bench_profile")


def _bench_doc(ratios: list[float], gpu: str, steps: int = 300, lockstep: bool = False) -> dict:
    """A ``--json`` file of made-up groups (from before lockstep unless ``lockstep``); in a
    lockstep group the profiled run is ``r`` times slower but its first steps are 9 ms, not 5."""
    groups = []
    sched = {"steps": 20, "settle": 0, "skip": 4, "warmup": 2, "active": 5, "post": 1}
    for r in ratios:
        run = lambda ms: {  # noqa: E731
            span: {"median": ms, "mean": ms, "n": 10}
            for span in ("outside", "before", "after", "recorded")
        }
        group = {
            "kind": "main",
            "workload": "launch",
            "runs": {"bare": run(5.0), "profiled": run(5.0 * r)},
        }
        if lockstep:
            group.update(lockstep=True, sched=sched)
            group["runs"]["bare"]["times_ms"] = [5.0] * 20
            group["runs"]["profiled"]["times_ms"] = [9.0] * 3 + [5.0 * r] * 17
        groups.append(group)
    settings = {
        "device": "cuda", "steps": steps, "settle": None, "skip": None, "warmup": 2, "active": 5,
        "post": 1, "script_arg": {}, "workloads": ["launch"], "stack_workloads": [],
        "stack_cost": False, "seed": 0,
    }  # fmt: skip
    if lockstep:
        settings["lockstep"] = True
    machine = {"node": "n", "cpus": 16, "gpu_before": [f"{gpu}, 580, 345 MHz"]}
    return {"settings": settings, "machine": machine, "groups": groups}


def test_report_pools_the_pairs_of_like_runs_and_refuses_unlike_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bp = bench_profile_module()
    a, b, c, d, e = (tmp_path / f"{x}.json" for x in "abcde")
    a.write_text(json.dumps(_bench_doc([1.0, 1.02, 0.98], "NVIDIA H200")))
    b.write_text(json.dumps(_bench_doc([1.01, 0.99], "NVIDIA H200")))
    c.write_text(json.dumps(_bench_doc([1.0, 1.0, 1.0], "NVIDIA H100 80GB HBM3")))
    d.write_text(json.dumps(_bench_doc([1.0, 1.0, 1.0], "NVIDIA H200", steps=100)))
    e.write_text(json.dumps(_bench_doc([1.0, 1.0, 1.0], "NVIDIA H200", lockstep=True)))
    assert bp.main(["--report", str(a), str(b)]) == 0  # type: ignore[attr-defined]
    out = capsys.readouterr().out
    assert "profiled/bare 1.000x [0.980, 1.020] (n=5)" in out  # 3 + 2 pairs
    assert "launch: 5 pairs" in out
    assert "stepwise" not in out  # sequential runs: no step k against step k
    for other, why in ((c, "different GPUs"), (d, "differ in steps;"), (e, "differ in lockstep;")):
        with pytest.raises(SystemExit) as e:
            bp.main(["--report", str(a), str(other)])  # type: ignore[attr-defined]
        assert e.value.code == 2
        assert why in capsys.readouterr().err


def test_report_of_lockstep_files_gives_the_stepwise_figure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bp = bench_profile_module()
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(_bench_doc([1.02, 1.02], "NVIDIA H200", lockstep=True)))
    only_variants = _bench_doc([1.02], "NVIDIA H200", lockstep=True)
    only_variants["groups"][0]["kind"] = "variants"  # its pair counts, in every figure
    b.write_text(json.dumps(only_variants))
    assert bp.main(["--report", str(a), str(b)]) == 0  # type: ignore[attr-defined]
    out = capsys.readouterr().out
    assert "stepwise (lockstep, step k against step k) 1.020x [1.020, 1.020] (n=3)" in out
    assert "launch: 3 lockstep pairs" in out
    # Outside the window (steps 0-3 and 13-19) the step ratios are 1.8 three times and 1.02
    # eight times: their median, not their mean (1.23).


def test_run_watch_reads_the_main_threads_cpu_and_paces_group_by_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import os

    bp = bench_profile_module()
    cpu = bp.main_thread_cpu(os.getpid())  # type: ignore[attr-defined]
    assert isinstance(cpu, int) and 0 <= cpu < (os.cpu_count() or 1) * 64
    assert bp.main_thread_cpu(2**22 + 12345) is None  # type: ignore[attr-defined]
    runs = [
        {"outside": {"median": ms}, "main_cpus": {c: 9}, "sm_clock_mhz": mhz}
        for ms, c, mhz in ((6.3, "2", 1980), (6.4, "2", 1980), (9.0, "4", 1700), (9.2, "4", 1710))
    ]
    sys.modules["paired"].print_paces("launch", runs)  # bench_profile imported it
    out = capsys.readouterr().out
    assert "CPU 2 6.35 ms (n=2), CPU 4 9.10 ms (n=2)" in out
    assert "SM clock 1700-1980 MHz" in out and "pace -1.00" in out
