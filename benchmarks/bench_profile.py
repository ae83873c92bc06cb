"""``gpuviz profile``'s cost: on the steps outside its window, per component, and with stacks.

    python benchmarks/bench_profile.py --json OUT.json      # fitted to --budget-s (8 min)
    python benchmarks/bench_profile.py --workloads '' --stack-cost --budget-s 200  # stacks only
    python benchmarks/bench_profile.py --device cpu --pairs 3 --steps 30 --variant-pairs 2 \\
        --stack-cost --stack-pairs 2 --stack-steps 20 --json /tmp/b.json  # a smoke test

Each run is a fresh process: a workload bare (``python SCRIPT``) or under ``gpuviz profile``.
The scripts time their own steps (``--times FILE``: ``perf_counter`` at each step's end), so
bare and profiled runs are timed alike. Processes of one script differ by more than the cost
sought (±15% on a launch-bound step on an H100), so every figure is a median of paired ratios,
each pair run back to back, with a percentile-bootstrap 95% interval (numpy, fixed seed;
:mod:`paired`).

**Outside the window** (``--pairs``, at least 20 for the 1% the issue asks). Each run has
``--steps`` steps; one window of ``--warmup`` + ``--active`` steps starts at ``--skip``. The
steps that count: from ``--settle`` to the window, and from ``--post`` steps after it (the
step right after the window may pay for CUPTI's teardown) to the end. Per pair: profiled over
bare of the median step time of those steps (the headline), of their mean (which also counts a
rare slow step: a thread that takes the GIL now and then), and each side of the window apart.
Pairs alternate their order: bare first, then bare last.

Workloads (``--workloads``): ``launch``, a launch-bound step (``benchmarks/profile_workload.py
--kind launch``: ~700 tiny kernels, ~5 ms on an H100), and ``gpt``, ``examples/gpt_train.py``.

**Components** (``--variants`` on ``--variant-workloads``; ``--variant-pairs`` groups). A group
runs bare, profiled, and profiled with one component switched off per run, in a rotating order;
each variant is reported against bare (what is left without it) and as profiled over it (what
the component costs). The switches, environment variables that ``gpuviz profile`` honours
(experiments only, not user options):

- ``sampler``: ``GPUVIZ_PROFILE_SAMPLER=0``, no memory sampler thread (20 Hz: RSS, allocator,
  NVML);
- ``events``: ``GPUVIZ_PROFILE_EVENTS=0``, no CUDA event recorded at each step boundary (no
  GPU time per step);
- ``hook``: ``GPUVIZ_PROFILE_STEP_HOOK=0``, once the last window is written, step boundaries are
  ignored (the optimizer hook returns at once): no timing, events or progress per step after
  the window; the steps before the window keep it (the schedule needs it);
- ``all``: the three above at once (what is left is gpuviz's plain presence);
- ``teardown``: ``TEARDOWN_CUPTI=0``, CUPTI left attached after the window (what the teardown
  saves); ``provisional``: ``GPUVIZ_PROFILE_PROVISIONAL=0``, no recording before the first step.

**with_stack's cost** (``--stack-cost``; ``--stack-pairs``). Pairs of ``gpuviz profile`` runs
without and with Python stacks (``--no-stack`` where gpuviz has it, else no flag, against
``--stack``), on the launch-bound step and a compute-bound one (``--kind gemm``: bf16 GEMMs,
the loss read every step); per pair the ratio of the median recorded step (the window's last
step, which holds the export, left out).

**Budget** (``--budget-s``, 480 by default). A process costs its start-up (torch, CUDA: 3-5 s on
an H100) and its steps. Groups are scheduled so that every target (``--pairs``,
``--variant-pairs``, ``--stack-pairs``) progresses in proportion; a group starts only if its
runs, timed from the runs so far, fit in what is left. The figures say how many pairs each got.
Progress goes to stderr; ``--json`` is rewritten after every group (a run cut short keeps what
it had), with the machine, the GPU, the versions, every run's step times and every figure.
Runs are pinned to the same CPU cores (``--cpus``; ``auto`` takes 4 cores from the third on
machines of 8 or more), meant to make processes differ less (not measured yet). A run is
stopped past ``--run-timeout`` or 45 s past the budget, whichever comes first.

**What picks a process's pace.** Each run records the CPUs its main thread was seen on (every
0.25 s, ``main_cpus``) and the GPU's median SM clock (``sm_clock_mhz``, with NVML); ``--report``
prints the runs' paces by CPU and the clock's correlation with them. On two H200 leases
(2026-11-28) a launch-bound process ran at about 6.3 or about 9 ms a step, for no known reason,
which is what keeps 20 pairs from resolving 1%.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, NoReturn

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(HERE), str(ROOT)]  # paired.py, and gpuviz without PYTHONPATH

from paired import (  # noqa: E402  (benchmarks/ is no package)
    format_ratio,
    median_interval,
    paired_ratios,
    pairs_needed,
    span_figures,
    step_sets,
)

SWITCHES = {
    "sampler": {"GPUVIZ_PROFILE_SAMPLER": "0"},
    "events": {"GPUVIZ_PROFILE_EVENTS": "0"},
    "hook": {"GPUVIZ_PROFILE_STEP_HOOK": "0"},
    "teardown": {"TEARDOWN_CUPTI": "0"},
    "provisional": {"GPUVIZ_PROFILE_PROVISIONAL": "0"},
}
SWITCHES["all"] = {k: v for n in ("sampler", "events", "hook") for k, v in SWITCHES[n].items()}
WORKLOAD_SCRIPT = HERE / "profile_workload.py"
WORKLOADS = {
    "launch": (WORKLOAD_SCRIPT, ("--kind", "launch"), 300),
    # A loss read each step: the host's step time is then the GPU's, not the time to queue.
    "gemm": (WORKLOAD_SCRIPT, ("--kind", "gemm", "--sync-every", "1"), 40),
    "gpt": (ROOT / "examples" / "gpt_train.py", (), 200),
}
"""name -> (script, its arguments, default steps a run)."""
GUESS_S = {"bare": 8.0, "profiled": 10.0}
"""A run's duration before one of its kind was timed (start-up counted)."""


@dataclass(frozen=True)
class Schedule:
    """One run's steps and window."""

    steps: int
    settle: int
    skip: int
    warmup: int
    active: int
    post: int

    def sets(self) -> Any:
        return step_sets(self.steps, self.settle, self.skip, self.warmup, self.active, self.post)


@dataclass(frozen=True)
class Run:
    """One process: ``label`` is ``bare``, ``profiled``, ``off:<switch>``, ``nostack``, ``stack``."""

    workload: str
    label: str
    sched: Schedule

    @property
    def profiled(self) -> bool:
        return self.label != "bare"

    @property
    def key(self) -> tuple[str, str, str]:
        """Runs of one key take about as long (for the budget)."""
        kind = (
            "stack"
            if self.label in ("stack", "nostack")
            else ("bare" if self.label == "bare" else "profiled")
        )
        return (self.workload, kind, self.label if kind == "stack" else "")


@dataclass
class Bench:
    """The run's settings and everything measured so far."""

    args: argparse.Namespace
    out: Path
    env: dict[str, str]
    cpus: list[int] | None
    no_stack_flag: str | None
    started: float = field(default_factory=time.perf_counter)
    durations: dict[tuple[str, str, str], list[float]] = field(default_factory=dict)
    groups: list[dict[str, Any]] = field(default_factory=list)
    failed: dict[str, int] = field(default_factory=dict)
    n_runs: int = 0

    @property
    def broken(self) -> str | None:
        """A run kind that failed 3 times (the benchmark stops), or None."""
        return next(
            (k for k, n in self.failed.items() if n >= 3 and not k.startswith("off:")), None
        )

    def elapsed(self) -> float:
        return time.perf_counter() - self.started

    def predict(self, run: Run) -> float:
        got = self.durations.get(run.key)
        if got:
            return sum(got) / len(got)
        return GUESS_S["bare" if run.label == "bare" else "profiled"]


# ------------------------------------------------------------------------------- one run
def command(
    bench: Bench, run: Run, times_file: Path, trace: Path
) -> tuple[list[str], dict[str, str]]:
    """The command line and environment of one run."""
    script, script_args, _ = WORKLOADS[run.workload]
    s = run.sched
    own = [str(script), "--steps", str(s.steps), "--times", str(times_file)]
    own += [
        "--device",
        bench.args.device,
        *script_args,
        *bench.args.script_arg.get(run.workload, []),
    ]
    if not run.profiled:
        return [sys.executable, *own], bench.env
    cmd = [sys.executable, "-m", "gpuviz", "profile", "--json", "--out", str(trace)]
    cmd += ["--skip", str(s.skip), "--warmup", str(s.warmup), "--active", str(s.active)]
    if run.label == "stack":
        cmd.append("--stack")
    elif bench.no_stack_flag:  # stacks may become the default: ask for none explicitly
        cmd.append(bench.no_stack_flag)
    env = dict(bench.env)
    if run.label.startswith("off:"):
        env.update(SWITCHES[run.label[4:]])
    return [*cmd, *own], env


WATCH_PERIOD_S = 0.25
"""How often :class:`RunWatch` looks at a running process."""


def main_thread_cpu(pid: int) -> int | None:
    """The CPU that process ``pid``'s main thread last ran on (Linux ``/proc``), or None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()  # the name may hold spaces and parentheses
    return int(fields[36]) if len(fields) > 36 else None  # field 39, "processor"


class RunWatch(threading.Thread):
    """Samples, while a run goes, its main thread's CPU and the GPU's SM clock (NVML if
    importable): processes of one script run at two paces (6.3 or 9 ms a launch-bound step on
    an H200), and these are the first suspects for what picks one."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.done = threading.Event()
        self.cpus: Counter[int] = Counter()
        self.sm_mhz: list[int] = []

    def run(self) -> None:
        clock = _sm_clock_reader()
        while not self.done.wait(WATCH_PERIOD_S):
            cpu = main_thread_cpu(self.pid)
            if cpu is not None:
                self.cpus[cpu] += 1
            if clock is not None:
                self.sm_mhz.append(clock())

    def figures(self) -> dict[str, Any]:
        self.done.set()
        self.join(5)
        return {
            "main_cpus": {str(c): n for c, n in self.cpus.most_common()},
            "sm_clock_mhz": statistics.median_low(self.sm_mhz) if self.sm_mhz else None,
        }


@functools.cache
def _sm_clock_reader() -> Any:
    """A function that reads GPU 0's SM clock in MHz, or None without NVML (made once)."""
    try:
        import pynvml

        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(0)
        return lambda: int(pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM))
    except Exception:  # no package, no driver, no GPU: the CPU is still watched
        return None


def execute(bench: Bench, run: Run, tag: str) -> dict[str, Any]:
    """Run one process; its step figures, or ``error``."""
    times_file = bench.out / f"{tag}.times.json"
    trace = bench.out / f"{tag}.json.gz"
    cmd, env = command(bench, run, times_file, trace)
    cpus = bench.cpus
    timeout = min(bench.args.run_timeout, max(30.0, bench.args.budget_s - bench.elapsed() + 45))
    t0 = time.perf_counter()
    res: dict[str, Any] = {"workload": run.workload, "label": run.label}
    proc = subprocess.Popen(
        cmd,
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None,
    )
    watch = RunWatch(proc.pid)
    watch.start()
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        res["error"] = f"timed out after {timeout:.0f} s"
        return res
    finally:
        res["wall_s"] = round(time.perf_counter() - t0, 3)
        res.update(watch.figures())
        if not bench.args.keep:
            for f in bench.out.glob(f"{tag}.json.gz*"):
                f.unlink()
    if proc.returncode != 0 or not times_file.exists():
        res["error"] = f"exit {proc.returncode}: {(stdout[-800:] + stderr[-1500:]).strip()}"
        return res
    times = json.loads(times_file.read_text())
    if not bench.args.keep:
        times_file.unlink()
    sets = run.sched.sets()
    res["times_ms"] = [round(t, 4) for t in times]
    res["before"] = span_figures(times, sets.before)
    res["after"] = span_figures(times, sets.after)
    res["outside"] = span_figures(times, sets.outside)
    res["recorded"] = span_figures(times, sets.recorded)
    if run.profiled:
        try:
            result = json.loads(stdout.strip().splitlines()[-1])
            res["exports"] = result.get("exports", [])
            res["torch_version"] = result.get("torch_version")
            res["device"] = result.get("device")
        except (ValueError, IndexError):
            res["exports"] = []
    bench.durations.setdefault(run.key, []).append(res["wall_s"])
    return res


# --------------------------------------------------------------------------------- groups
def group_runs(bench: Bench, unit: tuple[str, str], index: int) -> list[Run]:
    """The runs of one group, in the order they run (``index``: the unit's count so far)."""
    kind, workload = unit
    a = bench.args
    if kind == "stack":
        steps = a.stack_steps
        skip = steps // 2
        sched = Schedule(steps, 0, skip, 2, max(2, min(10, steps - skip - 4)), 1)
        pair = [Run(workload, "nostack", sched), Run(workload, "stack", sched)]
        return pair if index % 2 == 0 else pair[::-1]
    steps = a.steps or WORKLOADS[workload][2]
    sched = Schedule(
        steps,
        a.settle if a.settle is not None else steps // 10,
        a.skip if a.skip is not None else steps // 5,
        a.warmup,
        a.active,
        a.post,
    )
    others = [Run(workload, "profiled", sched)]
    if kind == "variants":
        others += [Run(workload, f"off:{v}", sched) for v in a.variants]
        k = index % len(others)
        others = others[k:] + others[:k]
    bare = Run(workload, "bare", sched)
    main_done = sum(1 for g in bench.groups if g["workload"] == workload and g["kind"] != "stack")
    return [bare, *others] if main_done % 2 == 0 else [*others, bare]


def targets(a: argparse.Namespace) -> dict[tuple[str, str], int]:
    """How many groups each unit is to run (units with none left out)."""
    t: dict[tuple[str, str], int] = {}
    for w in a.workloads:
        if w in a.variant_workloads and a.variants:
            t[("variants", w)] = a.variant_pairs
        t[("main", w)] = a.pairs
    if a.stack_cost:
        for w in a.stack_workloads:
            t[("stack", w)] = a.stack_pairs
    return {u: n for u, n in t.items() if n > 0}


def done_count(bench: Bench, unit: tuple[str, str]) -> int:
    kind, w = unit
    return sum(
        1
        for g in bench.groups
        if g["workload"] == w
        and (g["kind"] == kind or (kind == "main" and g["kind"] == "variants"))
    )


def next_group(
    bench: Bench, goal: dict[tuple[str, str], int]
) -> tuple[tuple[str, str], list[Run]] | None:
    """The next group: the unit furthest behind its target that fits in the budget."""
    order = list(goal)
    behind = [u for u in order if done_count(bench, u) < goal[u]]
    behind.sort(key=lambda u: (done_count(bench, u) / goal[u], order.index(u)))
    left = bench.args.budget_s - bench.elapsed()
    for unit in behind:
        runs = group_runs(bench, unit, done_count(bench, unit))
        if not bench.groups or sum(bench.predict(r) for r in runs) <= left:
            return unit, runs
    return None


def needed_s(bench: Bench, goal: dict[tuple[str, str], int]) -> float:
    """Seconds the groups left to reach every target would take, by the runs timed so far."""
    total = 0.0
    for unit, n in goal.items():
        kind, w = unit
        if kind == "main":  # variant groups are main pairs too: the rest are plain pairs
            n -= goal.get(("variants", w), 0)
            done = sum(1 for g in bench.groups if g["workload"] == w and g["kind"] == "main")
        else:
            done = done_count(bench, unit)
        total += max(0, n - done) * sum(bench.predict(r) for r in group_runs(bench, unit, 0))
    return total


def run_group(bench: Bench, unit: tuple[str, str], runs: list[Run]) -> None:
    """Run a group's runs in order; a variant that fails twice is dropped from later groups."""
    gi = len(bench.groups)
    group: dict[str, Any] = {"kind": unit[0], "workload": unit[1], "order": [r.label for r in runs]}
    group["runs"] = {}
    for r in runs:
        bench.n_runs += 1
        tag = f"g{gi:03d}-{r.workload}-{r.label.replace(':', '-')}"
        res = execute(bench, r, tag)
        group["runs"][r.label] = res
        fig = res.get("recorded" if unit[0] == "stack" else "outside", {})
        status = res.get("error", f"{fig.get('median', float('nan')):.3f} ms median")
        print(
            f"[{bench.elapsed():6.0f} s] group {gi} {unit[0]} {r.workload} {r.label}: "
            f"{res['wall_s']:.1f} s, {status.splitlines()[0][:200]}",
            file=sys.stderr,
            flush=True,
        )
        if "error" in res:
            sys.stderr.write(res["error"][-2000:] + "\n")
            n = bench.failed[r.label] = bench.failed.get(r.label, 0) + 1
            if r.label.startswith("off:") and n >= 2 and r.label[4:] in bench.args.variants:
                bench.args.variants.remove(r.label[4:])
                print(f"bench_profile: {r.label} failed twice; dropped", file=sys.stderr)
    bench.groups.append(group)


# -------------------------------------------------------------------------------- figures
def _ratio(
    groups: list[dict[str, Any]], num: str, den: str, span: str, stat: str, seed: int
) -> dict[str, float]:
    base, other = [], []
    for g in groups:
        a, b = g["runs"].get(den, {}), g["runs"].get(num, {})
        if span in a and span in b:
            base.append(a[span][stat])
            other.append(b[span][stat])
    return median_interval(paired_ratios(base, other), seed=seed)


def figures(bench: Bench) -> dict[str, Any]:
    a = bench.args
    out: dict[str, Any] = {"outside": {}, "stack": {}}
    for w in a.workloads:
        gs = [g for g in bench.groups if g["workload"] == w and g["kind"] != "stack"]
        if not gs:
            continue
        bare = [
            g["runs"]["bare"]["outside"]["median"]
            for g in gs
            if "outside" in g["runs"].get("bare", {})
        ]
        f: dict[str, Any] = {
            "bare_median_ms": median_interval(bare, seed=a.seed)["median"],
            "profiled": {
                f"{span}_{stat}": _ratio(gs, "profiled", "bare", span, stat, a.seed)
                for span in ("outside", "before", "after")
                for stat in ("median", "mean")
            },
        }
        f["profiled"]["window_median"] = _ratio(
            gs, "profiled", "bare", "recorded", "median", a.seed
        )
        stalls = [
            e.get("stall_s") for g in gs for e in g["runs"].get("profiled", {}).get("exports", [])
        ]
        f["export_stall_s"] = median_interval([s for s in stalls if s is not None], seed=a.seed)
        f["variants"] = {}
        for v in SWITCHES:  # a variant dropped after failing keeps its groups' figures
            label = f"off:{v}"
            if not any(label in g["runs"] for g in gs):
                continue
            f["variants"][v] = {
                "env": SWITCHES[v],
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
            }
        out["outside"][w] = f
    for w in a.stack_workloads if a.stack_cost else ():
        gs = [g for g in bench.groups if g["workload"] == w and g["kind"] == "stack"]
        if not gs:
            continue
        base = [
            g["runs"]["nostack"]["recorded"]["median"]
            for g in gs
            if "recorded" in g["runs"].get("nostack", {})
        ]
        out["stack"][w] = {
            "nostack_window_median_ms": median_interval(base, seed=a.seed)["median"],
            "stack_over_nostack": _ratio(gs, "stack", "nostack", "recorded", "median", a.seed),
        }
    return out


def print_figures(fig: dict[str, Any]) -> None:
    for w, f in fig["outside"].items():
        p = f["profiled"]
        print(
            f"{w}: bare {f['bare_median_ms']:.3f} ms/step outside the window; profiled/bare "
            f"{format_ratio(p['outside_median'])} (median step), {format_ratio(p['outside_mean'])} (mean)"
        )
        print(
            f"  before the window {format_ratio(p['before_median'])}, after {format_ratio(p['after_median'])}; "
            f"in the window {format_ratio(p['window_median'])}; export stall "
            f"{f['export_stall_s']['median']:.2f} s"
        )
        for v, fv in f["variants"].items():
            print(
                f"  {v} off: vs bare {format_ratio(fv['vs_bare_median'])}; profiled over it "
                f"{format_ratio(fv['profiled_over_it_median'])} (mean {fv['profiled_over_it_mean']['median']:.3f}x)"
            )
    for w, f in fig["stack"].items():
        print(
            f"with_stack, {w}: window {f['nostack_window_median_ms']:.3f} ms/step without stacks; "
            f"with/without {format_ratio(f['stack_over_nostack'])}"
        )


RUN_SHAPE = ("device", "steps", "settle", "skip", "warmup", "active", "post", "script_arg")
"""Settings that shape each run: files pooled by ``--report`` must agree on them."""


def report(paths: list[str], seed: int) -> int:
    """Figures of the groups of several ``--json`` files pooled (``--report``).

    Each pair stays within its own file's machine; pooling pairs of like machines (the same
    GPU model, the same run shape) narrows the interval when one lease cannot run enough of
    them. Also prints, from the pairs' spread, how many pairs a 3% interval would need.
    """
    docs = []
    for path in paths:
        try:
            docs.append(json.loads(Path(path).read_text()))
        except (OSError, ValueError) as e:
            _bad(f"--report {path}: {e}")
    shapes = {json.dumps([d["settings"].get(k) for k in RUN_SHAPE]) for d in docs}
    if len(shapes) > 1:
        _bad(f"--report: the files' runs differ in {', '.join(RUN_SHAPE)}; pool like runs only")
    gpus = {(d["machine"].get("gpu_before") or ["no GPU"])[0].split(",")[0] for d in docs}
    if len(gpus) > 1:
        _bad(f"--report: the files ran on different GPUs ({', '.join(sorted(gpus))})")
    settings = dict(docs[0]["settings"])
    for key in ("workloads", "stack_workloads"):
        settings[key] = sorted({w for d in docs for w in d["settings"][key]})
    settings["stack_cost"] = any(d["settings"]["stack_cost"] for d in docs)
    settings["seed"] = seed
    groups = [g for d in docs for g in d["groups"]]
    pooled = Bench(argparse.Namespace(**settings), Path("."), {}, None, None, groups=groups)
    for path, d in zip(paths, docs):
        m = d["machine"]
        print(f"{path}: {m['node']}, {m['cpus']} CPUs, {(m.get('gpu_before') or ['no GPU'])[0]}")
    print_figures(figures(pooled))
    for w in settings["workloads"]:
        gs = [g for g in groups if g["workload"] == w and g["kind"] == "main"]
        ratios = [
            g["runs"]["profiled"]["outside"]["median"] / g["runs"]["bare"]["outside"]["median"]
            for g in gs
            if "outside" in g["runs"].get("profiled", {}) and "outside" in g["runs"].get("bare", {})
        ]
        print(
            f"{w}: {len(ratios)} pairs; a 95% interval of +-3% needs about "
            f"{pairs_needed(ratios, 0.03):.0f} pairs at this spread, +-1% about "
            f"{pairs_needed(ratios, 0.01):.0f}"
        )
        print_paces(w, [r for g in gs for r in g["runs"].values() if "outside" in r])
    return 0


def print_paces(workload: str, runs: list[dict[str, Any]]) -> None:
    """Each run's pace (median step outside the window) by its main thread's usual CPU and
    against the GPU's SM clock: what may pick a process's pace (:class:`RunWatch`)."""
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


# ---------------------------------------------------------------------------------- setup
def _nan_to_none(x: Any) -> Any:
    if isinstance(x, float) and x != x:
        return None
    if isinstance(x, dict):
        return {k: _nan_to_none(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_nan_to_none(v) for v in x]
    return x


def _gpu_state() -> list[str] | None:
    smi = shutil.which("nvidia-smi")
    if not smi:
        return None
    q = "name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,utilization.gpu"
    try:
        r = subprocess.run(
            [smi, f"--query-gpu={q}", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return r.stdout.strip().splitlines()


def _bad(message: str) -> NoReturn:
    """Bad input: one line, exit 2."""
    sys.stderr.write(f"bench_profile: {message}\n")
    raise SystemExit(2)


def _cpus(spec: str) -> list[int] | None:
    if spec == "none" or not hasattr(os, "sched_setaffinity"):
        return None
    have = sorted(os.sched_getaffinity(0))
    if spec == "auto":
        if len(have) < 8:
            return None
        want = have[2:6]
    else:
        try:
            want = [int(c) for c in spec.split(",")]
        except ValueError:
            _bad(f"--cpus {spec!r}: give auto, none or a list such as 2,3,4,5")
        if not set(want) <= set(have):
            _bad(f"--cpus {spec}: this process may run on {have} only")
    try:
        os.sched_setaffinity(0, os.sched_getaffinity(0))  # can this system pin at all?
    except OSError:
        return None
    return want


def _no_stack_flag() -> str | None:
    """``--no-stack`` where ``gpuviz profile`` has it (stacks may become the default)."""
    from gpuviz.cli import build_parser

    p = build_parser()
    sub = next(x for x in p._actions if isinstance(x, argparse._SubParsersAction))
    flags = {o for x in sub.choices["profile"]._actions for o in x.option_strings}
    return "--no-stack" if "--no-stack" in flags else None


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__,
    )
    p.add_argument("--device", default="cuda", help="the scripts' --device (cuda)")
    p.add_argument(
        "--workloads", default="launch,gpt", help="outside-the-window workloads (launch,gpt)"
    )
    p.add_argument("--pairs", type=int, default=20, help="bare/profiled pairs a workload (20)")
    p.add_argument("--steps", type=int, default=None, help="steps a run (launch 300, gpt 200)")
    p.add_argument("--settle", type=int, default=None, help="start-up steps left out (steps/10)")
    p.add_argument("--skip", type=int, default=None, help="the window's first step (steps/5)")
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--active", type=int, default=5)
    p.add_argument("--post", type=int, default=1, help="steps left out after the window (1)")
    p.add_argument(
        "--variants",
        default="sampler,events,hook,teardown",
        help=f"of {','.join(SWITCHES)}; '' for none",
    )
    p.add_argument("--variant-workloads", default="launch", help="where variants run (launch)")
    p.add_argument("--variant-pairs", type=int, default=8, help="groups with every variant (8)")
    p.add_argument("--stack-cost", action="store_true", help="also measure with_stack's cost")
    p.add_argument("--stack-workloads", default="launch,gemm")
    p.add_argument("--stack-pairs", type=int, default=8)
    p.add_argument("--stack-steps", type=int, default=40, help="steps of a stack run (40)")
    p.add_argument(
        "--script-arg",
        action="append",
        default=[],
        metavar="WORKLOAD=ARG",
        help="an extra script argument, e.g. gemm=--dim=4096 (repeatable)",
    )
    p.add_argument("--budget-s", type=float, default=480.0, help="start no group past this (480)")
    p.add_argument("--run-timeout", type=float, default=180.0, help="a run's limit in seconds")
    p.add_argument("--cpus", default="auto", help="auto, none, or cores such as 2,3,4,5")
    p.add_argument("--seed", type=int, default=0, help="the bootstrap's seed")
    p.add_argument("--out", default=None, help="folder for step times and traces (a temporary one)")
    p.add_argument("--keep", action="store_true", help="keep the traces and step files")
    p.add_argument("--json", default=None, metavar="FILE", help="write every run and figure")
    p.add_argument(
        "--report",
        nargs="+",
        metavar="JSON",
        help="run nothing: pool the pairs of these --json files (like machines) and report",
    )
    a = p.parse_args(argv)
    split = lambda s: [x for x in s.split(",") if x]  # noqa: E731
    a.workloads, a.variants = split(a.workloads), split(a.variants)
    a.variant_workloads, a.stack_workloads = split(a.variant_workloads), split(a.stack_workloads)
    for flag, names, known in (
        ("--workloads", a.workloads, ("launch", "gpt", "gemm")),
        ("--variant-workloads", a.variant_workloads, tuple(WORKLOADS)),
        ("--stack-workloads", a.stack_workloads, tuple(WORKLOADS)),
        ("--variants", a.variants, tuple(SWITCHES)),
    ):
        bad = [n for n in names if n not in known]
        if bad:
            p.error(f"{flag}: unknown {', '.join(bad)} (known: {', '.join(known)})")
    extra: dict[str, list[str]] = {}
    for item in a.script_arg:
        w, _, arg = item.partition("=")
        if w not in WORKLOADS or not arg:
            p.error(
                f"--script-arg {item!r}: give WORKLOAD=ARG with WORKLOAD one of {', '.join(WORKLOADS)}"
            )
        extra.setdefault(w, []).append(arg)
    a.script_arg = extra
    for flag in ("pairs", "variant_pairs", "stack_pairs"):
        if getattr(a, flag) < 0:
            p.error(f"--{flag.replace('_', '-')} {getattr(a, flag)}: must be 0 or more")
    if a.stack_steps < 12:
        p.error(f"--stack-steps {a.stack_steps}: must be 12 or more")
    for w in a.workloads:
        steps = a.steps or WORKLOADS[w][2]
        skip = a.skip if a.skip is not None else steps // 5
        if skip + a.warmup + a.active + a.post + 5 > steps:
            p.error(f"--steps {steps}: too few for a window at {skip} and steps after it ({w})")
    return a


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    if a.report:
        return report(a.report, a.seed)
    out = Path(a.out) if a.out else Path(tempfile.mkdtemp(prefix="bench-profile-"))
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(x for x in (str(ROOT), env.get("PYTHONPATH")) if x)
    bench = Bench(a, out, env, _cpus(a.cpus), _no_stack_flag())
    try:
        torch_version = metadata.version("torch")
    except metadata.PackageNotFoundError:
        torch_version = None
    doc: dict[str, Any] = {
        "machine": {
            "node": platform.node(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "pinned_to": bench.cpus,
            "python": platform.python_version(),
            "torch": torch_version,
            "gpu_before": _gpu_state(),
        },
        "settings": {k: v for k, v in vars(a).items()},
        "env": {
            k: v for k, v in os.environ.items() if k.startswith(("GPUVIZ_", "TEARDOWN_", "CUDA_"))
        },
        "no_stack_flag": bench.no_stack_flag,
    }
    goal = targets(a)
    print(
        f"bench_profile: targets {', '.join(f'{k}/{w} {n}' for (k, w), n in goal.items())}; budget "
        f"{a.budget_s:.0f} s; pinned to {bench.cpus or 'no cores'}; files in {out}",
        file=sys.stderr,
        flush=True,
    )

    def save() -> dict[str, Any]:
        doc["elapsed_s"] = round(bench.elapsed(), 1)
        doc["groups"] = bench.groups
        doc["failed_runs"] = bench.failed
        doc["figures"] = figures(bench)
        doc["done"] = {f"{k}/{w}": done_count(bench, (k, w)) for k, w in goal}
        if a.json:  # NaN (no pairs yet) as null: standard JSON
            Path(a.json).write_text(json.dumps(_nan_to_none(doc), indent=1, allow_nan=False))
        return doc

    while bench.broken is None:
        nxt = next_group(bench, goal)
        if nxt is None:
            break
        run_group(bench, *nxt)
        save()
        if len(bench.groups) == 1:
            print(
                f"bench_profile: every target would take ~{needed_s(bench, goal):.0f} s more at "
                "this pace; groups are fitted to the budget in proportion",
                file=sys.stderr,
                flush=True,
            )
    doc["machine"]["gpu_after"] = _gpu_state()
    fig = save()["figures"]
    print(
        f"{bench.n_runs} runs in {bench.elapsed():.0f} s; groups done: "
        + ", ".join(f"{k} {n}" for k, n in doc["done"].items())
        + (f"; stopped: {bench.broken} runs failed 3 times" if bench.broken else ""),
        flush=True,
    )
    print_figures(fig)
    if not a.out and not a.keep:
        shutil.rmtree(out, ignore_errors=True)
    return 1 if bench.broken else 0


if __name__ == "__main__":
    sys.exit(main())
