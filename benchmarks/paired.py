"""The statistics, process driver and report of ``bench_profile.py`` (and ``step_cost.py``).

Three parts in one module (benchmarks/ is no package; they are used together):

**Paired ratios.** Processes of one script differ from one another by more than the cost being
measured (±15% on a launch-bound step on an H100), so a cost is measured over pairs of
processes, as a ratio within each pair; the figure is the median of those ratios, with a
bootstrap interval (numpy only).

**Lockstep**: processes that take turns, step by step (``bench_profile.py --lockstep``).
A machine's pace may change within a process, in phases of about a second (a launch-bound step
at 6.3 or 9 ms on an H200), so two processes run one after the other see different phases.
Started at once and taking turns, one step each, the processes of a group meet the same
phases: step k of each runs in adjacent turns.

Each process is a script that takes ``--turns R,W`` (``benchmarks/profile_workload.py``,
``examples/gpt_train.py``): before a step it reads a byte from file descriptor R (nothing to
read: the driver is gone, so it stops), and when the step is done (the device synchronized) it
writes one to W. For step k the driver gives the turn to each process in an order that rotates
with k, and waits for each one's byte before the next goes.

**Figures**: those of ``bench_profile.py``'s groups, printed, and ``--report``'s pooling of files.
Groups are the dicts that ``bench_profile.py --json`` writes (``groups``): each with its
``workload``, ``kind`` (``main``, ``variants``, ``stack``) and ``runs`` by label (``bare``,
``profiled``, ``off:<switch>``, ``nostack``, ``stack``), each run with its step times and span
figures; lockstep groups also hold their runs' schedule (``sched``). Every figure is a median of
paired ratios within groups with a bootstrap interval (above).
"""

from __future__ import annotations

import argparse
import json
import os
import select
import statistics
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist
from typing import Any

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


# Lockstep: processes that take turns.


@dataclass
class Player:
    """One process of a group, with its end of the two pipes and its output files."""

    proc: subprocess.Popen[bytes]
    give: int
    """Write end: a byte gives the process its turn."""
    back: int
    """Read end: the process's byte back ends its turn."""
    stdout: Path
    stderr: Path
    started: float
    ended: float | None = None
    hung: bool = False
    """Killed for not exiting after its last step."""


class TurnError(Exception):
    """Player ``index`` failed its turn (exited, or took longer than allowed)."""

    def __init__(self, index: int, why: str) -> None:
        super().__init__(why)
        self.index = index


def start(
    commands: Sequence[tuple[list[str], dict[str, str]]],
    logs: Sequence[tuple[Path, Path]],
    cwd: Path,
    preexec_fn: Callable[[], None] | None = None,
) -> list[Player]:
    """Start every command at once, ``--turns R,W`` appended, stdout and stderr to ``logs``."""
    players: list[Player] = []
    try:
        for (cmd, env), (out, err) in zip(commands, logs, strict=True):
            child_r, give = os.pipe()
            back, child_w = os.pipe()
            try:
                with out.open("wb") as fo, err.open("wb") as fe:
                    proc = subprocess.Popen(
                        [*cmd, "--turns", f"{child_r},{child_w}"],
                        env=env,
                        cwd=cwd,
                        stdin=subprocess.DEVNULL,
                        stdout=fo,
                        stderr=fe,
                        pass_fds=(child_r, child_w),  # the others' pipes stay closed to it
                        preexec_fn=preexec_fn,
                    )
            except BaseException:
                os.close(give)
                os.close(back)
                raise
            finally:  # the child's ends: ours closed, so its exit reads as EOF
                os.close(child_r)
                os.close(child_w)
            players.append(Player(proc, give, back, out, err, time.perf_counter()))
    except BaseException:
        stop(players)
        raise
    return players


def play(
    players: Sequence[Player], steps: int, turn_timeout_s: float, deadline: float
) -> list[list[int]]:
    """Give ``steps`` rounds of turns; each round's order (player indices), or :class:`TurnError`.

    Round k starts with player ``k % n``, so no player always follows the same one. A turn may
    take ``turn_timeout_s`` (the first includes the process's start-up), and none goes past
    ``deadline`` (``time.perf_counter``).
    """
    n = len(players)
    # poll, not select: select refuses descriptors past 1023, which a long-lived process (a
    # test session) reaches
    waiters = []
    for p in players:
        waiter = select.poll()
        waiter.register(p.back, select.POLLIN | select.POLLHUP | select.POLLERR)
        waiters.append(waiter)
    rounds: list[list[int]] = []
    for k in range(steps):
        order = [(k + i) % n for i in range(n)]
        for i in order:
            p = players[i]
            try:
                os.write(p.give, b"x")
            except BrokenPipeError:
                raise TurnError(i, f"exited before step {k}") from None
            wait = min(turn_timeout_s, deadline - time.perf_counter())
            if not waiters[i].poll(max(0.0, wait) * 1000):
                raise TurnError(i, f"step {k} took more than {wait:.0f} s")
            if not os.read(p.back, 1):
                raise TurnError(i, f"exited during step {k}")
        rounds.append(order)
    return rounds


def finish(players: Sequence[Player], timeout_s: float) -> None:
    """Wait for the processes to exit (each after its last step); kill those that do not."""
    for p in players:
        os.close(p.give)
        p.give = -1
    deadline = time.perf_counter() + timeout_s
    try:
        for p in players:
            try:
                p.proc.wait(max(0.1, deadline - time.perf_counter()))
            except subprocess.TimeoutExpired:
                p.hung = True
            p.ended = time.perf_counter()
    finally:
        stop(players)


def stop(players: Sequence[Player]) -> None:
    """Kill the processes still running, reap them all, close the driver's pipe ends."""
    for p in players:
        if p.proc.poll() is None:
            p.proc.kill()
    for p in players:
        p.proc.wait()
        if p.ended is None:
            p.ended = time.perf_counter()
        for fd in (p.give, p.back):
            if fd >= 0:
                os.close(fd)
        p.give = p.back = -1


__all__ = ["Player", "TurnError", "finish", "play", "start", "stop"]


# Figures: the groups of bench_profile.py --json, and --report.


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
