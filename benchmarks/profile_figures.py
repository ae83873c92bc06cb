"""The figures of ``bench_profile.py``'s groups, printed, and ``--report``'s pooling of files.

Groups are the dicts that ``bench_profile.py --json`` writes (``groups``): each with its
``workload``, ``kind`` (``main``, ``variants``, ``stack``) and ``runs`` by label (``bare``,
``profiled``, ``off:<switch>``, ``nostack``, ``stack``), each run with its step times and span
figures; lockstep groups also hold their runs' schedule (``sched``). Every figure is a median of
paired ratios within groups with a bootstrap interval (:mod:`paired`).
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

from paired import (
    format_ratio,
    median_interval,
    paired_ratios,
    pairs_needed,
    step_sets,
    stepwise_ratio,
)


class PoolError(ValueError):
    """``--report``'s files cannot be read or pooled (bad input)."""


def _pair_ratios(
    groups: list[dict[str, Any]], num: str, den: str, span: str = "outside", stat: str = "median"
) -> Any:
    """Per group holding both runs: ``num``'s ``span`` ``stat`` over ``den``'s."""
    base, other = [], []
    for g in groups:
        a, b = g["runs"].get(den, {}), g["runs"].get(num, {})
        if span in a and span in b:
            base.append(a[span][stat])
            other.append(b[span][stat])
    return paired_ratios(base, other)


def _ratio(
    groups: list[dict[str, Any]], num: str, den: str, span: str, stat: str, seed: int
) -> dict[str, float]:
    """Over the groups: ``num``'s ``span`` ``stat`` over ``den``'s (a ratio of medians)."""
    return median_interval(_pair_ratios(groups, num, den, span, stat), seed=seed)


def stepwise_ratios(groups: list[dict[str, Any]], num: str, den: str) -> list[float]:
    """Each lockstep group's median step ratio ``num[k] / den[k]`` over the steps outside the
    window (:func:`paired.stepwise_ratio`)."""
    return [
        stepwise_ratio(
            g["runs"][den]["times_ms"], g["runs"][num]["times_ms"], step_sets(**g["sched"]).outside
        )
        for g in groups
        if g.get("lockstep") and all("times_ms" in g["runs"].get(x, {}) for x in (num, den))
    ]


def _median_of_runs(groups: list[dict[str, Any]], label: str, span: str, seed: int) -> float:
    """The median over ``groups`` of their ``label`` runs' median step in ``span`` (ms)."""
    runs = [g["runs"].get(label, {}) for g in groups]
    return median_interval([r[span]["median"] for r in runs if span in r], seed=seed)["median"]


def figures(
    a: argparse.Namespace, groups: list[dict[str, Any]], switches: dict[str, dict[str, str]]
) -> dict[str, Any]:
    """Every figure of ``groups`` (run with settings ``a``; ``switches``: the variants' names
    and environments)."""
    out: dict[str, Any] = {"outside": {}, "stack": {}}
    for w in a.workloads:
        gs = [g for g in groups if g["workload"] == w and g["kind"] != "stack"]
        if not gs:
            continue
        f: dict[str, Any] = {
            "bare_median_ms": _median_of_runs(gs, "bare", "outside", a.seed),
            "profiled": {
                f"{span}_{stat}": _ratio(gs, "profiled", "bare", span, stat, a.seed)
                for span in ("outside", "before", "after")
                for stat in ("median", "mean")
            },
        }
        f["profiled"]["window_median"] = _ratio(
            gs, "profiled", "bare", "recorded", "median", a.seed
        )
        stepwise = median_interval(stepwise_ratios(gs, "profiled", "bare"), seed=a.seed)
        f["profiled"]["outside_stepwise"] = stepwise
        stalls = [
            e.get("stall_s") for g in gs for e in g["runs"].get("profiled", {}).get("exports", [])
        ]
        f["export_stall_s"] = median_interval([s for s in stalls if s is not None], seed=a.seed)
        f["variants"] = {}
        for v in switches:  # a variant dropped after failing keeps its groups' figures
            label = f"off:{v}"
            if not any(label in g["runs"] for g in gs):
                continue
            f["variants"][v] = {
                "env": switches[v],
                **{
                    f"vs_bare_{stat}": _ratio(gs, label, "bare", "outside", stat, a.seed)
                    for stat in ("median", "mean")
                },
                **{
                    f"profiled_over_it_{stat}": _ratio(
                        gs, "profiled", label, "outside", stat, a.seed
                    )
                    for stat in ("median", "mean")
                },
                "after_vs_bare_median": _ratio(gs, label, "bare", "after", "median", a.seed),
                "vs_bare_stepwise": median_interval(
                    stepwise_ratios(gs, label, "bare"), seed=a.seed
                ),
                "profiled_over_it_stepwise": median_interval(
                    stepwise_ratios(gs, "profiled", label), seed=a.seed
                ),
            }
        out["outside"][w] = f
    for w in a.stack_workloads if a.stack_cost else ():
        gs = [g for g in groups if g["workload"] == w and g["kind"] == "stack"]
        if not gs:
            continue
        out["stack"][w] = {
            "nostack_window_median_ms": _median_of_runs(gs, "nostack", "recorded", a.seed),
            "stack_over_nostack": _ratio(gs, "stack", "nostack", "recorded", "median", a.seed),
        }
    return out


def print_figures(fig: dict[str, Any]) -> None:
    """The figures of :func:`figures`, a few lines a workload."""
    for w, f in fig["outside"].items():
        p = f["profiled"]
        print(
            f"{w}: bare {f['bare_median_ms']:.3f} ms/step outside the window; profiled/bare "
            f"{format_ratio(p['outside_median'])} (median step), {format_ratio(p['outside_mean'])} (mean)"
        )
        if p.get("outside_stepwise", {}).get("n"):
            print(
                f"  stepwise (lockstep, step k against step k) {format_ratio(p['outside_stepwise'])}"
            )
        print(
            f"  before the window {format_ratio(p['before_median'])}, after {format_ratio(p['after_median'])}; "
            f"in the window {format_ratio(p['window_median'])}; export stall "
            f"{f['export_stall_s']['median']:.2f} s"
        )
        for v, fv in f["variants"].items():
            print(
                f"  {v}{'' if 'window' in fv['env'] else ' off'}: vs bare "
                f"{format_ratio(fv['vs_bare_median'])}; profiled over it "
                f"{format_ratio(fv['profiled_over_it_median'])} (mean {fv['profiled_over_it_mean']['median']:.3f}x)"
            )
            if fv.get("vs_bare_stepwise", {}).get("n"):
                print(
                    f"    stepwise: vs bare {format_ratio(fv['vs_bare_stepwise'])}; profiled "
                    f"over it {format_ratio(fv['profiled_over_it_stepwise'])}"
                )
    for w, f in fig["stack"].items():
        print(
            f"with_stack, {w}: window {f['nostack_window_median_ms']:.3f} ms/step without stacks; "
            f"with/without {format_ratio(f['stack_over_nostack'])}"
        )


RUN_SHAPE = (
    *("device", "steps", "settle", "skip", "warmup", "active", "post", "script_arg"),
    "lockstep",
)
"""Settings that shape each run: files pooled by ``--report`` must agree on them (files from
before lockstep ran sequentially)."""


def report(paths: list[str], seed: int, switches: dict[str, dict[str, str]]) -> int:
    """Figures of the groups of several ``--json`` files pooled (``--report``).

    Each pair stays within its own file's machine; pooling pairs of like machines (the same
    GPU model, the same run shape, the same mode) narrows the interval when one lease cannot
    run enough of them. Also prints, from the pairs' spread, how many pairs a 3% interval would
    need. Raises :class:`PoolError` for files that cannot be read or pooled.
    """
    docs = []
    for path in paths:
        try:
            docs.append(json.loads(Path(path).read_text()))
        except (OSError, ValueError) as e:
            raise PoolError(f"--report {path}: {e}") from None
    for d in docs:
        d["settings"].setdefault("lockstep", False)
    differ = [k for k in RUN_SHAPE if len({json.dumps(d["settings"].get(k)) for d in docs}) > 1]
    if differ:
        raise PoolError(
            f"--report: the files' runs differ in {', '.join(differ)}; pool like runs only"
        )
    gpus = {(d["machine"].get("gpu_before") or ["no GPU"])[0].split(",")[0] for d in docs}
    if len(gpus) > 1:
        raise PoolError(f"--report: the files ran on different GPUs ({', '.join(sorted(gpus))})")
    settings = dict(docs[0]["settings"])
    for key in ("workloads", "stack_workloads"):
        settings[key] = sorted({w for d in docs for w in d["settings"][key]})
    settings["stack_cost"] = any(d["settings"]["stack_cost"] for d in docs)
    settings["seed"] = seed
    groups = [g for d in docs for g in d["groups"]]
    for path, d in zip(paths, docs):
        m = d["machine"]
        print(f"{path}: {m['node']}, {m['cpus']} CPUs, {(m.get('gpu_before') or ['no GPU'])[0]}")
    print_figures(figures(argparse.Namespace(**settings), groups, switches))
    for w in settings["workloads"]:
        # The pairs figures() counts: a variant group holds one too.
        gs = [g for g in groups if g["workload"] == w and g["kind"] != "stack"]
        ratios = _pair_ratios(gs, "profiled", "bare")
        print(
            f"{w}: {len(ratios)} pairs; a 95% interval of +-3% needs about "
            f"{pairs_needed(ratios, 0.03):.0f} pairs at this spread, +-1% about "
            f"{pairs_needed(ratios, 0.01):.0f}"
        )
        stepwise = stepwise_ratios(gs, "profiled", "bare")
        if stepwise:
            print(
                f"{w}: {len(stepwise)} lockstep pairs; stepwise, +-3% needs about "
                f"{pairs_needed(stepwise, 0.03):.0f} pairs, +-1% about "
                f"{pairs_needed(stepwise, 0.01):.0f}"
            )
        print_paces(w, [r for g in gs for r in g["runs"].values() if "outside" in r])
    return 0


def print_paces(workload: str, runs: list[dict[str, Any]]) -> None:
    """Each run's pace (median step outside the window) by its main thread's usual CPU and
    against the GPU's SM clock: what may pick a process's pace (``bench_profile.RunWatch``)."""
    by_cpu: dict[str, list[float]] = {}
    for r in runs:
        if r.get("main_cpus"):
            by_cpu.setdefault(next(iter(r["main_cpus"])), []).append(r["outside"]["median"])
    if by_cpu:
        paces = ", ".join(
            f"CPU {c} {statistics.median(v):.2f} ms (n={len(v)})" for c, v in sorted(by_cpu.items())
        )
        print(f"  {workload}: pace by the main thread's usual CPU: {paces}")
    clocked = [(r["sm_clock_mhz"], r["outside"]["median"]) for r in runs if r.get("sm_clock_mhz")]
    if len(clocked) >= 3 and len({c for c, _ in clocked}) > 1:
        mhz, ms = zip(*clocked)
        print(
            f"  {workload}: SM clock {min(mhz)}-{max(mhz)} MHz over the runs; its correlation "
            f"with the pace {statistics.correlation(mhz, ms):+.2f}"
        )


__all__ = ["PoolError", "figures", "print_figures", "print_paces", "report", "stepwise_ratios"]
