"""``gpuviz profile``'s cost: on the steps outside its window, per component, and with stacks.

    python benchmarks/bench_profile.py --json OUT.json      # fitted to --budget-s (8 min)
    python benchmarks/bench_profile.py --workloads '' --stack-cost --budget-s 200  # stacks only
    python benchmarks/bench_profile.py --device cpu --pairs 3 --steps 30 --variant-pairs 2 \\
        --stack-cost --stack-pairs 2 --stack-steps 20 --json /tmp/b.json  # a smoke test

Each run is a fresh process: a workload bare (``python SCRIPT``) or under ``gpuviz profile``.
The scripts time their own steps (``--times FILE``), so bare and profiled runs are timed alike.
Processes of one script differ by more than the cost sought (±15% on a launch-bound step on an
H100), so every figure is a median of paired ratios, with a percentile-bootstrap 95% interval
(numpy, fixed seed; :mod:`paired`), over groups of runs (a bare run, a profiled one, variants).

**Lockstep** (``--lockstep``, the default). A group's processes start at once and take turns,
one step each (:mod:`paired`; the scripts' ``--turns R,W``): for step k each process in turn,
in an order that rotates with k, runs its step, synchronizes the device and hands the turn on.
A step is timed from its turn's start to its end. Within one process an H200 VM's pace switches
between two modes (a launch-bound step at about 6.3 or 9 ms, in phases of 0.3-1.5 s), so runs
made 12 s apart met different mixes of them (the pairs' log ratios spread by about 0.16, 200
pairs for ±3%); taking turns, the runs of a group meet the same phases. Besides the ratio of
medians, lockstep groups give a stepwise figure (``*_stepwise``): per pair, the median over
the counted steps of ``other[k] / bare[k]``, step k of each having run in adjacent turns.
What a profiled process does between its turns (the sampler thread) may land in another's turn
or in none. ``--sequential``: the runs of a group one after the other, each step timed from the
previous one's end (``perf_counter`` at each step's end, no synchronization but the scripts'
own), as before lockstep. ``--report`` pools files of one mode only.

**Batches** (``--batch K``, lockstep only). K groups start at once and take turns
together (their runs' turns rotate over all of them); each is then recorded as a group of its
own, with ``batch`` (which ran together) and ``batch_turns``. One start-up serves K groups,
and the pairs spread far less: on an H200 (2026-11-29) a +-1% interval on ``gpt_train.py``
needed about 18 pairs at the spread of batches of 3-4, against about 120 at that of groups of
one pair on the lease before (``--report`` says how many).

**Outside the window** (``--pairs``, at least 20 for the 1% the issue asks). Each run has
``--steps`` steps; one window of ``--warmup`` + ``--active`` steps starts at ``--skip``. The
steps that count: from ``--settle`` to the window, and from ``--post`` steps after it (the
step right after the window may pay for CUPTI's teardown) to the end. Per pair: profiled over
bare of the median step time of those steps (the headline), of their mean (which also counts a
rare slow step: a thread that takes the GIL now and then), and each side of the window apart.
Groups alternate their order: bare first, then bare last (in lockstep: who goes first).

Workloads (``--workloads``): ``launch``, a launch-bound step (``benchmarks/profile_workload.py
--kind launch``: ~700 tiny kernels, ~5 ms on an H100), ``gpt``, ``examples/gpt_train.py``, and
``gpt-step``, the same model and step in ``profile_workload.py --kind gpt``, where the
own-window variants (``torch-*``) can run.

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
  saves); ``provisional``: ``GPUVIZ_PROFILE_PROVISIONAL=0``, no recording before the first step;
  ``provisional-cuda``: ``GPUVIZ_PROFILE_PROVISIONAL=cpu``, that recording without CUDA activity
  (CUPTI not attached before the first step);
- ``torch-cuda``, ``torch-cpu``, ``torch-save``, ``torch-sched``, ``torch-early``
  (``profile_workload.py`` only): no gpuviz at all; the bare script opens its own
  ``torch.profiler`` window over the steps of gpuviz's, with ``TEARDOWN_CUPTI=1`` (see
  :data:`TORCH_WINDOWS`): "vs bare" is what a profiler window leaves behind whoever opens it,
  "profiled over it" what gpuviz adds to that;
- ``bare-again``: the bare script once more (A/A): what two identical processes measure, the
  floor under every other figure.

**with_stack's cost** (``--stack-cost``; ``--stack-pairs``). Pairs of ``gpuviz profile`` runs
without and with Python stacks (``--no-stack`` where gpuviz has it, else no flag, against
``--stack``), on the launch-bound step and a compute-bound one (``--kind gemm``: bf16 GEMMs,
the loss read every step); per pair the ratio of the median recorded step (the window's last
step, which holds the export, left out).

**Budget** (``--budget-s``, 480 by default). A process costs its start-up (torch, CUDA: 3-5 s on
an H100) and its steps; a lockstep group, its runs' steps and one start-up (the groups so far
tell both). Groups are scheduled so that every target (``--pairs``, ``--variant-pairs``,
``--stack-pairs``) progresses in proportion; a group starts only if it fits in what is left,
as timed from the groups so far. The figures say how many pairs each got.
Progress goes to stderr; ``--json`` is rewritten after every group (a run cut short keeps what
it had), with the machine, the GPU, the versions, every run's step times and every figure.
Runs are pinned to the same CPU cores (``--cpus``; ``auto`` takes 4 cores from the third on
machines of 8 or more), meant to make processes differ less (not measured yet). A run is
stopped past ``--run-timeout`` or 45 s past the budget, whichever comes first; in lockstep, a
turn past ``--run-timeout``, the group past that times its runs or 45 s past the budget, and a
process that fails stops its group.

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
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, NoReturn

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(HERE), str(ROOT)]  # paired.py, and gpuviz without PYTHONPATH

import paired  # noqa: E402  (benchmarks/ is no package)
from paired import PoolError, figures, print_figures, report, span_figures, step_sets  # noqa: E402

SWITCHES = {
    "sampler": {"GPUVIZ_PROFILE_SAMPLER": "0"},
    "events": {"GPUVIZ_PROFILE_EVENTS": "0"},
    "hook": {"GPUVIZ_PROFILE_STEP_HOOK": "0"},
    "teardown": {"TEARDOWN_CUPTI": "0"},
    "provisional": {"GPUVIZ_PROFILE_PROVISIONAL": "0"},
    "provisional-cuda": {"GPUVIZ_PROFILE_PROVISIONAL": "cpu"},
}
SWITCHES["all"] = {k: v for n in ("sampler", "events", "hook") for k, v in SWITCHES[n].items()}


@dataclass(frozen=True)
class OwnWindow:
    """How an own-window variant's bare script opens its window (``profile_workload.py``)."""

    kind: str
    """Its ``--window-kind``."""
    flags: tuple[str, ...] = ()
    """Its further flags."""
    scheduled: bool = False
    """Driven by a ``torch.profiler.schedule`` (``--window-warmup``) and saved as it ends."""
    saved: bool = False
    """Saved as it ends without a schedule (``--window-save``)."""


TORCH_WINDOWS = {
    "torch-cuda": OwnWindow("cuda"),
    "torch-cpu": OwnWindow("cpu"),
    "torch-save": OwnWindow("cuda", saved=True),
    "torch-sched": OwnWindow("cuda", scheduled=True),
    "torch-early": OwnWindow("cuda", ("--window-early",), scheduled=True),
}
"""Variants with no gpuviz: the bare script runs its own ``torch.profiler`` window where
gpuviz's would be (``--window-kind``; ``TEARDOWN_CUPTI=1`` as gpuviz sets it), so what a
profiler window leaves behind (CUPTI's, torch's) is told apart from what gpuviz adds.
``torch-save`` also saves its trace when the window ends (``export_chrome_trace``, Kineto's own
JSON writer), as gpuviz does at that step; ``torch-sched`` drives the same window by a
``torch.profiler.schedule`` (warm-up, then recording, ``prof.step()`` at each of its steps and
``ProfilerStep#N`` ranges) and saves it from ``on_trace_ready``, as gpuviz's window runs.
``torch-early`` is ``torch-sched`` after a CPU and CUDA recording of the script's set-up whose
results are dropped (``--window-early``), as ``gpuviz profile`` records before the first step:
a process with no gpuviz and both of gpuviz's windows, so that profiled over ``torch-early`` is
what gpuviz itself adds (docs/profiling-overhead.md). The variants that placed the cost inside
torch's window (CUPTI alone, the legacy profiler, a CUDA-only window...) were removed once they
had answered; git keeps them (``benchmarks/cupti_window.py`` before issue 48)."""
BARE_AGAIN = "bare-again"
"""The A/A variant: the bare script once more, under its own label. Its figures against bare
are what identical processes give in this benchmark (on an H200, 13 lockstep groups: the
steps before step 60 of the torch-window variants, still bare there, gave 1.005x and 1.026x)."""
NO_WINDOW = "no-window"
"""``gpuviz profile`` whose window never comes (``--skip`` past the last step): gpuviz's presence
(its imports, hooks, sampler, step boundary) without a profiler window or a trace to write."""
VARIANTS = {
    **SWITCHES,
    NO_WINDOW: {"skip": "past the last step"},
    **{v: {"TEARDOWN_CUPTI": "1", "window": w.kind} for v, w in TORCH_WINDOWS.items()},
    BARE_AGAIN: {"window": "none"},
}
"""Every variant, with what it changes (the figures' ``env``)."""
WORKLOAD_SCRIPT = HERE / "profile_workload.py"
WORKLOADS = {
    "launch": (WORKLOAD_SCRIPT, ("--kind", "launch"), 300),
    # A loss read each step: the host's step time is then the GPU's, not the time to queue.
    "gemm": (WORKLOAD_SCRIPT, ("--kind", "gemm", "--sync-every", "1"), 40),
    "gpt": (ROOT / "examples" / "gpt_train.py", (), 200),
    # gpt_train.py's step in profile_workload.py, which has the own-window variants' flags
    "gpt-step": (WORKLOAD_SCRIPT, ("--kind", "gpt"), 200),
}
"""name -> (script, its arguments, default steps a run)."""
GUESS_S = {"bare": 8.0, "profiled": 10.0}
"""A run's duration before one of its kind was timed (start-up counted)."""
GUESS_STARTUP_S = 5.0
"""A process's start-up before a lockstep group was timed."""


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
        """Run under ``gpuviz profile`` (the bare script and its own-window variants are not)."""
        return self.label != "bare" and self.label[4:] not in (
            *TORCH_WINDOWS,
            BARE_AGAIN,
        )

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
    steps_s: dict[tuple[str, str, str], list[float]] = field(default_factory=dict)
    """Lockstep: the time of a run's steps, by :attr:`Run.key`."""
    startup_s: dict[str, list[float]] = field(default_factory=dict)
    """Lockstep: a group's time besides its runs' steps (start-up, exit), by workload."""
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

    def predict_group(self, runs: list[Run]) -> float:
        """Seconds a group takes: its runs' durations, or in lockstep their steps plus one
        start-up (from the groups timed so far, else guesses)."""
        if not self.args.lockstep:
            return sum(self.predict(r) for r in runs)
        start = self.startup_s.get(runs[0].workload) or [GUESS_STARTUP_S]
        total = sum(start) / len(start)
        for r in runs:
            steps = self.steps_s.get(r.key) or [self.predict(r) - GUESS_STARTUP_S]
            total += sum(steps) / len(steps)
        return total


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
    if run.label[4:] in TORCH_WINDOWS:
        w = TORCH_WINDOWS[run.label[4:]]
        own += ["--window-kind", w.kind, "--window-at", str(s.skip)]
        own += ["--window-len", str(s.warmup + s.active)]
        if w.saved or w.scheduled:
            own += ["--window-save", str(trace.with_name(trace.name.removesuffix(".gz")))]
        if w.scheduled:
            own += ["--window-warmup", str(s.warmup)]
        own += w.flags
        return [sys.executable, *own], {**bench.env, "TEARDOWN_CUPTI": "1"}
    if not run.profiled:  # bare, and bare-again
        return [sys.executable, *own], bench.env
    cmd = [sys.executable, "-m", "gpuviz", "profile", "--json", "--out", str(trace)]
    cmd += ["--skip", str(s.skip), "--warmup", str(s.warmup), "--active", str(s.active)]
    if run.label == "stack":
        cmd.append("--stack")
    elif bench.no_stack_flag:  # stacks may become the default: ask for none explicitly
        cmd.append(bench.no_stack_flag)
    if run.label[4:] == NO_WINDOW:
        cmd += ["--skip", str(s.steps + 1_000_000)]  # the later --skip wins
    env = dict(bench.env)
    if run.label[4:] in SWITCHES:
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


def _pin(bench: Bench) -> Any:
    """The ``preexec_fn`` that pins a run to ``--cpus``, or None."""
    cpus = bench.cpus
    return (lambda: os.sched_setaffinity(0, cpus)) if cpus else None


def _budget_timeout(bench: Bench, runs: int = 1) -> float:
    """Seconds ``runs`` runs may take: ``--run-timeout`` each, and up to 45 s past the budget."""
    return min(bench.args.run_timeout * runs, max(30.0, bench.args.budget_s - bench.elapsed() + 45))


def execute(bench: Bench, run: Run, tag: str) -> dict[str, Any]:
    """Run one process alone (``--sequential``); its step figures, or ``error``."""
    times_file = bench.out / f"{tag}.times.json"
    cmd, env = command(bench, run, times_file, bench.out / f"{tag}.json.gz")
    timeout = _budget_timeout(bench)
    t0 = time.perf_counter()
    res: dict[str, Any] = {"workload": run.workload, "label": run.label}
    proc = subprocess.Popen(
        cmd,
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_pin(bench),
    )
    watch = RunWatch(proc.pid)
    watch.start()
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        res["error"] = f"timed out after {timeout:.0f} s"
    res["wall_s"] = round(time.perf_counter() - t0, 3)
    res.update(watch.figures())
    if "error" not in res:
        _step_figures(run, res, times_file, proc.returncode, stdout, stderr)
    if "error" not in res:
        bench.durations.setdefault(run.key, []).append(res["wall_s"])
    _drop_files(bench, tag)
    return res


def _drop_files(bench: Bench, tag: str) -> None:
    """A run's trace, step times and output files, unless ``--keep``."""
    if not bench.args.keep:
        for f in bench.out.glob(f"{tag}.*"):
            f.unlink()


def _tail(stdout: str, stderr: str) -> str:
    return (stdout[-800:] + stderr[-1500:]).strip()


def _step_figures(
    run: Run, res: dict[str, Any], times_file: Path, returncode: int, stdout: str, stderr: str
) -> None:
    """Add to ``res`` a finished run's step times and figures (and exports), or ``error``."""
    if returncode != 0 or not times_file.exists():
        res["error"] = f"exit {returncode}: {_tail(stdout, stderr)}"
        return
    times = json.loads(times_file.read_text())
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


def execute_group(
    bench: Bench, runs: list[Run], tags: list[str]
) -> tuple[list[dict[str, Any]], list[list[int]], float]:
    """Run a group's processes at once, taking turns (``--lockstep``): each run's figures or
    ``error`` (one failing fails all), each step's turn order (indices into ``runs``), and the
    group's seconds."""
    times = [bench.out / f"{t}.times.json" for t in tags]
    cmds = [command(bench, r, f, bench.out / f"{t}.json.gz") for r, f, t in zip(runs, times, tags)]
    logs = [(bench.out / f"{t}.stdout", bench.out / f"{t}.stderr") for t in tags]
    timeout = _budget_timeout(bench, len(runs))
    t0 = time.perf_counter()
    players = paired.start(cmds, logs, ROOT, _pin(bench))
    watches = [RunWatch(p.proc.pid) for p in players]
    for w in watches:
        w.start()
    rounds: list[list[int]] = []
    failed: paired.TurnError | None = None
    try:
        rounds = paired.play(players, runs[0].sched.steps, bench.args.run_timeout, t0 + timeout)
        paired.finish(players, max(30.0, t0 + timeout - time.perf_counter()))
    except paired.TurnError as e:
        failed = e
    finally:
        paired.stop(players)
    results = []
    for i, (run, p, watch, tag) in enumerate(zip(runs, players, watches, tags)):
        res: dict[str, Any] = {"workload": run.workload, "label": run.label}
        res["wall_s"] = round((p.ended or t0) - t0, 3)
        res.update(watch.figures())
        out, err = (f.read_text(errors="replace") for f in (p.stdout, p.stderr))
        if failed is not None and i == failed.index:
            res["error"] = f"{failed}: {_tail(out, err)}"
        elif failed is not None:
            res["error"] = f"stopped: {runs[failed.index].label} failed"
            res["stopped_by"] = runs[failed.index].label
        elif p.hung:
            res["error"] = f"did not exit after its last step: {_tail(out, err)}"
        else:
            _step_figures(run, res, times[i], p.proc.returncode, out, err)
        _drop_files(bench, tag)
        results.append(res)
    return results, rounds, time.perf_counter() - t0


# --------------------------------------------------------------------------------- groups
def group_runs(bench: Bench, unit: tuple[str, str], index: int, left: int = 1) -> list[Run]:
    """The runs of one group, in the order they run (``index``: the unit's count so far).

    In lockstep, up to ``--batch`` groups (a batch, no more than the ``left`` that the
    unit's target still wants) start at once and take turns: one start-up for all of them.
    Each is then recorded as a group of its own (:func:`run_group`).
    """
    kind, workload = unit
    a = bench.args
    if kind == "stack":
        steps = a.stack_steps
        skip = steps // 2
        sched = Schedule(steps, 0, skip, 2, max(2, min(10, steps - skip - 4)), 1)
        pair = [Run(workload, "nostack", sched), Run(workload, "stack", sched)]
        return pair if index % 2 == 0 else pair[::-1]
    sched = main_schedule(a, workload)
    bare = Run(workload, "bare", sched)
    main_done = sum(1 for g in bench.groups if g["workload"] == workload and g["kind"] != "stack")
    size = max(1, min(a.batch, left)) if a.lockstep else 1
    runs: list[Run] = []
    for i in range(size):  # a batch: its groups' orders go on as separate groups' would
        others = [Run(workload, "profiled", sched)]
        if kind == "variants":
            others += [Run(workload, f"off:{v}", sched) for v in a.variants]
            k = (index + i) % len(others)
            others = others[k:] + others[:k]
        runs += [bare, *others] if (main_done + i) % 2 == 0 else [*others, bare]
    return runs


def main_schedule(a: argparse.Namespace, workload: str) -> Schedule:
    """The runs' schedule of a workload's main and variant groups."""
    steps = a.steps or WORKLOADS[workload][2]
    settle = a.settle if a.settle is not None else steps // 10
    skip = a.skip if a.skip is not None else steps // 5
    return Schedule(steps, settle, skip, a.warmup, a.active, a.post)


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
        done = done_count(bench, unit)
        runs = group_runs(bench, unit, done, goal[unit] - done)
        if not bench.groups or bench.predict_group(runs) <= left:
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
        batch = group_runs(bench, unit, 0, n)
        size = max(1, sum(r.label == "bare" for r in batch))
        total += max(0, n - done) / size * bench.predict_group(batch)
    return total


def run_group(bench: Bench, unit: tuple[str, str], runs: list[Run]) -> None:
    """Run a group's runs, in lockstep or in order; a variant that fails twice is dropped from
    later groups (a run stopped by another's failure counts as none)."""
    gi = len(bench.groups)
    group: dict[str, Any] = {"kind": unit[0], "workload": unit[1], "order": [r.label for r in runs]}
    group["runs"] = {}
    per = len({r.label for r in runs})  # a group's runs; a batch holds several groups
    batch = len(runs) > per
    tags = [
        f"g{gi:03d}-{r.workload}-{r.label.replace(':', '-')}" + (f"-{i // per}" if batch else "")
        for i, r in enumerate(runs)
    ]
    bench.n_runs += len(runs)
    results: Iterable[dict[str, Any]]
    if bench.args.lockstep:
        results, group["turns"], wall_s = execute_group(bench, runs, tags)
        group["lockstep"] = True
        group["sched"] = asdict(runs[0].sched)
        group["wall_s"] = round(wall_s, 3)
        if not any("error" in res for res in results):
            steps_s = [sum(res["times_ms"]) / 1e3 for res in results]
            for r, s in zip(runs, steps_s):
                bench.steps_s.setdefault(r.key, []).append(s)
            bench.startup_s.setdefault(unit[1], []).append(wall_s - sum(steps_s))
    else:  # lazily: each run's line as it ends
        results = (execute(bench, r, tag) for r, tag in zip(runs, tags))
    got: list[dict[str, Any]] = []
    for i, (r, res) in enumerate(zip(runs, results)):
        got.append(res)
        group["runs"][r.label] = res
        fig = res.get("recorded" if unit[0] == "stack" else "outside", {})
        status = res.get("error", f"{fig.get('median', float('nan')):.3f} ms median")
        print(
            f"[{bench.elapsed():6.0f} s] group {gi + i // per} {unit[0]} "
            f"{r.workload} {r.label}: {res['wall_s']:.1f} s, {status.splitlines()[0][:200]}",
            file=sys.stderr,
            flush=True,
        )
        if "error" in res and "stopped_by" not in res:
            sys.stderr.write(res["error"][-2000:] + "\n")
            n = bench.failed[r.label] = bench.failed.get(r.label, 0) + 1
            if r.label.startswith("off:") and n >= 2 and r.label[4:] in bench.args.variants:
                bench.args.variants.remove(r.label[4:])
                print(f"bench_profile: {r.label} failed twice; dropped", file=sys.stderr)
    if not batch:
        bench.groups.append(group)
        return
    # A batch's groups are groups of their own, so that figures and --report see plain ones;
    # "batch" says which processes ran together, "batch_turns" each step's turn order over
    # all of them (indices into the batch, "at" being this group's).
    for k in range(0, len(runs), per):
        at = list(range(k, k + per))
        bench.groups.append(
            {
                **{key: v for key, v in group.items() if key not in ("runs", "order", "turns")},
                "order": [runs[i].label for i in at],
                "runs": {runs[i].label: got[i] for i in at},
                "batch": {"first_group": gi, "groups": len(runs) // per, "at": at},
                "batch_turns": group.get("turns"),
            }
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
        help=f"of {','.join(VARIANTS)}; '' for none",
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
    mode = p.add_mutually_exclusive_group()
    mode.add_argument(
        "--lockstep",
        action="store_true",
        default=True,
        help="a group's runs at once, taking turns step by step (the default)",
    )
    mode.add_argument(
        "--sequential",
        dest="lockstep",
        action="store_false",
        help="a group's runs one after the other",
    )
    p.add_argument(
        "--batch",
        type=int,
        default=1,
        help="lockstep: groups (bare, profiled, variants) started at once, taking turns (1)",
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
        ("--workloads", a.workloads, ("launch", "gpt", "gpt-step", "gemm")),
        ("--variant-workloads", a.variant_workloads, tuple(WORKLOADS)),
        ("--stack-workloads", a.stack_workloads, tuple(WORKLOADS)),
        ("--variants", a.variants, tuple(VARIANTS)),
    ):
        bad = [n for n in names if n not in known]
        if bad:
            p.error(f"{flag}: unknown {', '.join(bad)} (known: {', '.join(known)})")
    own_window = [v for v in a.variants if v in TORCH_WINDOWS]
    if own_window:  # the bare script opens the window: only profile_workload.py has the flags
        other = [w for w in a.variant_workloads if WORKLOADS[w][0] != WORKLOAD_SCRIPT]
        if other:
            p.error(
                f"--variants {','.join(own_window)}: {', '.join(other)} cannot open its own "
                "window (use gpt-step for gpt_train.py's step)"
            )
    extra: dict[str, list[str]] = {}
    for item in a.script_arg:
        w, _, arg = item.partition("=")
        if w not in WORKLOADS or not arg:
            p.error(
                f"--script-arg {item!r}: give WORKLOAD=ARG with WORKLOAD one of {', '.join(WORKLOADS)}"
            )
        extra.setdefault(w, []).append(arg)
    a.script_arg = extra
    if a.batch < 1:
        p.error(f"--batch {a.batch}: must be 1 or more")
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
        try:
            return report(a.report, a.seed, VARIANTS)
        except PoolError as e:
            _bad(str(e))
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
        doc["figures"] = figures(a, bench.groups, VARIANTS)
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
