"""What ``gpuviz profile`` adds to each step outside its window, measured inside one process.

    python benchmarks/step_cost.py                         # CPU, ~30 s
    python benchmarks/step_cost.py --device cuda --json step_cost.json   # under 2 min

Processes of one script differ by more than 1% (bench_profile.py's pairs), so this measures
gpuviz's own work on the script's thread in one process, where A and B blocks interleave:

**The step hook** (what runs from ``optimizer.step()``'s wrapper to its return, per step). A
real :class:`~gpuviz.engine.script.session.ScriptSession` runs a generated script (its sink
writes an ``--events`` file, as the app's pipe gets every event); the script steps a no-op
optimizer once (the window: ``--skip 0 --warmup 0 --active 1``, so the trace is written and
the profiler dropped), then times blocks of ``opt.step()`` calls (``--reps`` runs of
``--calls`` calls; a block counts its least mean, as ``timeit`` does: a run that the OS
interrupted only looks slower) of:

- ``bare``: a no-op optimizer class made while gpuviz's hooks are removed (torch's wrapper
  alone);
- ``hook``: one made while they are installed (gpuviz's wrapper, post hook and boundary: the
  step timer, the ``StepTimed`` and ``Progress`` events), without the events file (a terminal
  run: no ``--events``, no app);
- ``hook+file``: the same with the events file;
- ``hook+file+cuda events`` (``--device cuda``): the same with the CUDA event recorded at each
  boundary (``GPUVIZ_PROFILE_EVENTS``'s switch; on the CPU no event is recorded, so the row is
  left out).

The same again **before the window** (``--skip`` past the run: the profiler is made and
waits; the session counts its steps without torch's ``prof.step()`` until the step before the
window), ``bare`` against ``hook+file`` (and the events).

The hooks are removed and put back between blocks (``StepSources.uninstall``/``install``), in a
rotating order, ``--blocks`` times; each block's cost is its time per call less the ``bare``
block's beside it, and the figure is the median of those with a percentile-bootstrap 95%
interval (:mod:`paired`). The parameter lives on ``--device``, so the optimizer's device is
the step's. ``--cprofile`` prints where the ``hook+file`` path spends its time.

**The memory sampler's share of the GIL.** The sampler thread's tick (RSS, and on CUDA the
allocator's counters and NVML) runs beside the script. Measured two ways, with a
:class:`~gpuviz.engine.sampler.MemorySampler` of the session's kind (its devices, its rate
outside the window, its sink):

- ``tick``: the wall and thread CPU time of one tick called in a loop, times the ticks per
  second;
- ``busy loops``: the iterations of a loop on the main thread (pure Python, which never lets
  go of the GIL; and a tiny in-place add on ``--device``, one op or CUDA launch an iteration,
  which lets go of it in each op) in ``--gil-block-s`` blocks without the sampler thread, with it at the session's rate and with it at 20 Hz (the
  rate before, for comparison) and with its ticks moved to the loop's step boundaries (a
  call every 5 ms; the thread ticks only when a step outlasts a period: a candidate, the
  Runner's ``stepping()``/``between_steps()``), in a rotating order, ``--gil-rounds`` times; the main
  thread's loss is ``1 - on/off`` per round (median, bootstrap interval). It counts what the
  thread costs the script's thread: its ticks, the GIL hand-offs (one at each wake and after
  each system call of a tick), the wait for a core. The totals use the pure-Python loop's
  loss, the worst case. On a loaded machine other processes swamp that rate, so each block
  also gives the share of its time the main thread was blocked (``blocked``: the wall time
  less its CPU time, ``thread_time``, and its wait for a CPU, schedstat's ``run_delay``):
  for a loop that never sleeps, the GIL waits. It is robust to the load but leaves out the
  main thread's wait for a core after a hand-off, so it is a lower bound where cores are busy
  (on an idle machine the two agree); for the boundary arm it adds the ticks' CPU time.

Each figure is given in µs per step and as a share of a 5 ms and a 10 ms step (the sampler's
share is a share of the thread's time, so the same for both). ``--json FILE`` writes every
figure and the raw blocks, with the machine and the versions.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import json
import os
import platform
import pstats
import sys
import tempfile
import threading
import time
import types
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(HERE), str(ROOT)]  # paired.py, and gpuviz without PYTHONPATH

from paired import median_interval  # noqa: E402  (benchmarks/ is no package)

STEP_MS = (5.0, 10.0)
BOUNDARY_S = 0.005
"""The busy loops' step: a boundary call every 5 ms."""
_BODY_MODULE = "_gpuviz_step_cost_body"


def _parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    p.add_argument("--blocks", type=int, default=60, help="A/B rounds of the hook path")
    p.add_argument("--calls", type=int, default=50, help="opt.step() calls per run")
    p.add_argument("--reps", type=int, default=5, help="runs per block (the least counts)")
    p.add_argument("--gil-rounds", type=int, default=50, help="busy-loop rounds (off, on)")
    p.add_argument("--gil-block-s", type=float, default=0.1, help="seconds per busy block")
    p.add_argument("--ticks", type=int, default=300, help="sampler ticks timed in a loop")
    p.add_argument("--cprofile", action="store_true", help="profile the hook+file path")
    p.add_argument("--json", metavar="FILE", help="write every figure here")
    args = p.parse_args(argv)
    for name in ("blocks", "calls", "reps", "gil_rounds", "ticks"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} {getattr(args, name)}: must be 1 or more")
    if args.gil_block_s <= 0:
        p.error(f"--gil-block-s {args.gil_block_s}: must be more than 0")
    return args


# ------------------------------------------------------------------------------ the hook path


def _noop_optimizer_class(torch: Any, name: str) -> type:
    """A fresh optimizer class whose step does nothing: torch wraps each class's ``step`` when
    its first instance is made, with the ``profile_hook_step`` in place at that moment."""

    def __init__(self: Any, params: Any) -> None:
        torch.optim.Optimizer.__init__(self, params, {})

    def step(self: Any, closure: Any = None) -> None:
        return None

    return type(name, (torch.optim.Optimizer,), {"__init__": __init__, "step": step})


def _time_calls(fn: Any, calls: int, reps: int) -> float:
    """µs of one ``fn()``: the least mean of ``reps`` runs of ``calls`` calls (as ``timeit``
    advises: a run that the OS interrupted is slower, never faster)."""
    best = float("inf")
    clock = time.perf_counter
    for _ in range(reps):
        t = clock()
        for _ in range(calls):
            fn()
        best = min(best, clock() - t)
    return best / calls * 1e6


def _hook_body(session: Any, args: argparse.Namespace, out: dict[str, Any], before: bool) -> None:
    """Runs as the profiled script: the window (not with ``before``), then the A/B blocks."""
    import torch

    device = torch.device(args.device)
    sources = session._sources
    param = torch.zeros(4, device=device, requires_grad=True)
    hooked = _noop_optimizer_class(torch, "GpuvizNoop")([param])
    hooked.step()  # step 0: the window (written, then the profiler dropped), or no window
    if before and (session._prof is None or session._profiling_now()):
        raise RuntimeError("the profiler is not waiting for its window")
    if not before and (session._prof is not None or not session.traces):
        raise RuntimeError("the window was not written: the session is not past it")
    session.memory.stop_sampler()  # measured apart; here it would only add noise
    timer, sink = session._timer, session.sink
    writer = sink._writer
    sources.uninstall()
    bare = _noop_optimizer_class(torch, "BareNoop")([param])
    sources.install()
    for _ in range(50):  # warm both paths (first calls, the events' pool)
        hooked.step()
    sources.uninstall()
    for _ in range(50):
        bare.step()
    if args.device == "cuda":
        torch.cuda.synchronize()

    def setup(variant: str) -> Any:
        if variant == "bare":
            sources.uninstall()
            return bare.step
        sources.install()
        sink._writer = writer if "file" in variant else None
        timer._events = "cuda events" in variant
        return hooked.step

    variants = ["bare", "hook+file"] if before else ["bare", "hook", "hook+file"]
    if args.device == "cuda":
        variants.append("hook+file+cuda events")
    blocks: dict[str, list[float]] = {v: [] for v in variants}
    for b in range(args.blocks):
        k = b % len(variants)
        for v in variants[k:] + variants[:k]:
            step = setup(v)
            blocks[v].append(_time_calls(step, args.calls, args.reps))
        if args.device == "cuda":
            torch.cuda.synchronize()  # the events of these blocks complete: none piles up
    if args.cprofile and not before:
        step = setup("hook+file")
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(args.calls * args.reps * 10):
            step()
        prof.disable()
        text = io.StringIO()
        pstats.Stats(prof, stream=text).sort_stats("cumulative").print_stats(30)
        out["cprofile"] = text.getvalue()
    setup("hook+file+cuda events")  # as the session had it
    out["blocks_us"] = blocks
    out["steps_timed"] = session.step


def _measure_hooks(args: argparse.Namespace, tmp: Path, before: bool = False) -> dict[str, Any]:
    """The step hook's blocks and figures past the window or, with ``before``, before it
    (the profiler made and waiting)."""
    from gpuviz.engine.script.options import OutPlan, ProfileOptions
    from gpuviz.engine.script.session import ScriptSession
    from gpuviz.engine.script.target import resolve_target

    tmp.mkdir(exist_ok=True)
    script = tmp / "step_cost_body.py"
    script.write_text(f"import sys\nsys.modules[{_BODY_MODULE!r}].run()\n")
    options = ProfileOptions(
        script=str(script),
        skip=10**9 if before else 0,
        warmup=0,
        active=1,
        stack=False,
        out=str(tmp / "window.json.gz"),
        events=str(tmp / "events.jsonl"),
    )
    session = ScriptSession(
        options, resolve_target(str(script), None, []), OutPlan(tmp / "window.json.gz")
    )
    out: dict[str, Any] = {}
    errors: list[BaseException] = []

    def run() -> None:
        try:
            _hook_body(session, args, out, before)
        except BaseException as exc:
            errors.append(exc)
            raise

    if args.device == "cuda":
        import torch

        # CUDA in use before the session starts: its window records CUDA activity (CUPTI
        # attached, then released), as a script's later windows do.
        torch.zeros(1, device="cuda")
    body = types.ModuleType(_BODY_MODULE)
    body.run = run  # type: ignore[attr-defined]
    sys.modules[_BODY_MODULE] = body
    stderr = sys.stderr
    sys.stderr = io.StringIO()  # the session's report: not this benchmark's output
    try:
        status = session.run()
    finally:
        report, sys.stderr = sys.stderr.getvalue(), stderr
        del sys.modules[_BODY_MODULE]
    if errors:
        raise errors[0]
    if status != 0 or "blocks_us" not in out:
        raise RuntimeError(f"the profiled body failed (status {status}):\n{report}")
    base = out["blocks_us"]["bare"]
    figures: dict[str, Any] = {"bare_call_us": median_interval(base)}
    for v, vals in out["blocks_us"].items():
        if v != "bare":
            figures[v] = median_interval([x - y for x, y in zip(vals, base, strict=True)])
    out["figures"] = figures
    return out


# ------------------------------------------------------------------------------- the sampler


def _noop() -> None:
    return None


def _schedstat() -> tuple[int, int] | None:
    """This thread's (ns on a CPU, ns waiting for one); None without Linux's schedstat.

    The CPU time is ``thread_time``'s: schedstat's own lags by up to a scheduler tick for a
    running thread. Its wait is complete whenever the thread runs (it is added at each switch).
    """
    try:
        with open("/proc/thread-self/schedstat", "rb") as f:
            waiting = f.read().split()[1]
        return time.thread_time_ns(), int(waiting)
    except (OSError, ValueError, IndexError):
        return None


def _busy(seconds: float, op: Any = None, boundary: Any = _noop) -> tuple[float, float]:
    """A loop run for ``seconds``: pure Python, which never lets go of the GIL, or ``op()`` (a
    torch op, which lets go of it while it runs); ``boundary()`` every :data:`BOUNDARY_S` (a
    step's end), in every arm alike.

    Returns its iterations per second, and the share of the time this thread was blocked
    (neither on a CPU nor waiting for one: waiting for the GIL, as the loop never sleeps;
    NaN without schedstat). Unlike the rate, the blocked share leaves out the time other
    processes took the CPU, which on a loaded machine swamps the rate.
    """
    n = 0
    clock = time.perf_counter
    stat0 = _schedstat()
    t0 = clock()
    end = t0 + seconds
    step_end = t0 + BOUNDARY_S
    while True:
        if op is None:
            for _ in range(200):
                n += 1
        else:
            for _ in range(20):
                op()
            n += 20
        now = clock()
        if now >= step_end:
            boundary()
            step_end = now + BOUNDARY_S
        if now >= end:
            break
    wall = clock() - t0
    stat1 = _schedstat()
    if stat0 is None or stat1 is None:
        return n / wall, float("nan")
    ran = (stat1[0] - stat0[0] + stat1[1] - stat0[1]) / 1e9
    return n / wall, (wall - ran) / wall  # unclipped: its errors (a wait that straddles t0) cancel


def _counting(sampler: Any, ticks: list[int]) -> Any:
    """``sampler.between_steps``, counting the ticks it takes into ``ticks[0]``."""

    def boundary() -> None:
        last = sampler._last
        sampler.between_steps()
        if sampler._last != last:
            ticks[0] += 1

    return boundary


def _loops(device: str) -> dict[str, Any]:
    """The busy loops: pure Python, and a tiny in-place add on the device (on CUDA a launch
    each, launch-bound as the steps the issue is about)."""
    import torch

    x = torch.zeros(8, device=device)
    add = x.add_

    def op() -> None:
        add(1.0)

    return {"python": None, f"torch op ({device})": op}


def _make_sampler(args: argparse.Namespace, sink: Any, interval_s: float) -> Any:
    import torch

    from gpuviz.engine.sampler import MemorySampler

    return MemorySampler(
        [torch.device(args.device, 0) if args.device == "cuda" else torch.device("cpu")],
        time.perf_counter(),
        emit=sink.emit,
        interval_s=interval_s,
    )


def _measure_sampler(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    import torch

    from gpuviz.engine import sampler as sampler_mod
    from gpuviz.engine.script.writing import EventSink

    if args.device == "cuda":
        torch.zeros(1, device="cuda")  # a context, as the script's: the allocator has stats
    # The session's rate (an older gpuviz: the default one).
    interval_s = getattr(sampler_mod, "PROFILE_INTERVAL_S", sampler_mod.DEFAULT_INTERVAL_S)
    rate_hz = 1.0 / interval_s
    sink = EventSink(str(tmp / "sampler.jsonl"))
    # The tick in a loop: wall time (NVML's calls release the GIL) and this thread's CPU time.
    s = _make_sampler(args, sink, interval_s)
    s._nvml = sampler_mod._Nvml(s._cuda)
    nvml = bool(s._nvml.handles)
    for _ in range(10):
        s.sample()
    walls, cpus = [], []
    for _ in range(args.ticks):
        w, c = time.perf_counter(), time.thread_time()
        s.sample()
        cpus.append((time.thread_time() - c) * 1e6)
        walls.append((time.perf_counter() - w) * 1e6)
    s.stop()
    tick = {"wall_us": median_interval(walls), "thread_cpu_us": median_interval(cpus)}
    # The busy loop without the thread and with it (at the session's rate and, for
    # comparison, at 20 Hz), in a rotating order; each loss is against the round's "off".
    arms: dict[str, float | None] = {"off": None, f"{rate_hz:g} Hz": interval_s}
    arms.setdefault(f"{1 / sampler_mod.DEFAULT_INTERVAL_S:g} Hz", sampler_mod.DEFAULT_INTERVAL_S)
    # A candidate: the ticks taken on the script's thread at its step boundaries (the Runner's
    # stepping()/between_steps()), the thread only covering steps longer than a period.
    boundary_arm = f"{rate_hz:g} Hz, ticks at boundaries"
    arms[boundary_arm] = interval_s
    names = list(arms)
    loops = _loops(args.device)
    for op in loops.values():
        _busy(0.2, op)
    rounds: dict[str, list[dict[str, float]]] = {loop: [] for loop in loops}
    blocked: dict[str, list[dict[str, float]]] = {loop: [] for loop in loops}
    for i in range(args.gil_rounds):
        k = i % len(names)
        for loop, op in loops.items():
            rates, blocks = {}, {}
            for name in names[k:] + names[:k]:
                iv = arms[name]
                sampler = _make_sampler(args, sink, iv) if iv is not None else None
                boundary: Any = _noop
                main_ticks = [0]
                with contextlib.ExitStack() as stack:
                    if sampler is not None:
                        sampler.start()
                        stack.callback(sampler.stop)
                        if name == boundary_arm:
                            stack.enter_context(sampler.stepping())
                            boundary = _counting(sampler, main_ticks)
                        time.sleep(0.01)  # its first tick (start() takes one) is not steady
                    rates[name], share = _busy(args.gil_block_s, op, boundary)
                    # The ticks taken on this thread cost it their CPU time, not a block.
                    cpu_us = tick["thread_cpu_us"]["median"]
                    blocks[name] = share + main_ticks[0] * cpu_us * 1e-6 / args.gil_block_s
                    if args.device == "cuda":
                        torch.cuda.synchronize()  # no launches left over for the next block
            rounds[loop].append(rates)
            blocked[loop].append(blocks)
    sink.close()
    losses = {
        loop: {
            name: median_interval([1.0 - r[name] / r["off"] for r in rs])
            for name in names
            if name != "off"
        }
        for loop, rs in rounds.items()
    }
    blocked_losses = {
        loop: {
            name: median_interval([r[name] - r["off"] for r in rs])
            for name in names
            if name != "off"
        }
        for loop, rs in blocked.items()
    }
    return {
        "interval_s": interval_s,
        "rate_hz": rate_hz,
        "nvml": nvml,
        "tick": tick,
        "busy_rounds_per_s": rounds,
        "busy_loss": losses["python"][f"{rate_hz:g} Hz"],
        "busy_loss_by_loop": losses,
        "busy_blocked_rounds": blocked,
        "busy_blocked_by_loop": blocked_losses,
        "threads": threading.active_count(),
    }


def _has_nvml() -> bool:
    try:
        import pynvml

        pynvml.nvmlInit()
        pynvml.nvmlShutdown()
        return True
    except Exception:
        return False


# ------------------------------------------------------------------------------- the figures


def _scaled(fig: dict[str, float], factor: float) -> dict[str, float]:
    return {k: (v * factor if k != "n" else v) for k, v in fig.items()}


def _pct_text(us: dict[str, float]) -> str:
    parts = []
    for ms in STEP_MS:
        f = 100.0 * 1e-3 / ms
        parts.append(
            f"{us['median'] * f:.3f}% [{us['lo'] * f:.3f}, {us['hi'] * f:.3f}] of {ms:g} ms"
        )
    return "; ".join(parts)


def _us_text(us: dict[str, float]) -> str:
    return f"{us['median']:8.2f} µs [{us['lo']:.2f}, {us['hi']:.2f}] (n={us['n']})"


def summarize(hooks: dict[str, Any], sampler: dict[str, Any]) -> dict[str, Any]:
    """Per step, in µs and as % of each step length in :data:`STEP_MS`, with intervals."""
    out: dict[str, Any] = {"hook_us": {}, "sampler": {}, "total": {}}
    for v, fig in hooks["figures"].items():
        if v != "bare_call_us":
            out["hook_us"][v] = fig
    loss = sampler["busy_loss"]
    tick = sampler["tick"]
    for ms in STEP_MS:
        out["sampler"][f"{ms:g}ms_us_busy_loop"] = _scaled(loss, ms * 1e3)
        # The tick's own GIL time (its thread CPU time) per second, as a share of the step.
        out["sampler"][f"{ms:g}ms_us_tick"] = _scaled(
            tick["thread_cpu_us"], sampler["rate_hz"] * ms * 1e-3
        )
    worst = list(out["hook_us"])[-1]
    for ms in STEP_MS:
        h, s = out["hook_us"][worst], out["sampler"][f"{ms:g}ms_us_busy_loop"]
        out["total"][f"{ms:g}ms"] = {
            "variant": worst,
            "median_us": h["median"] + s["median"],
            "lo_us": h["lo"] + s["lo"],
            "hi_us": h["hi"] + s["hi"],
            "median_pct": 100.0 * (h["median"] + s["median"]) / (ms * 1e3),
            "hi_pct": 100.0 * (h["hi"] + s["hi"]) / (ms * 1e3),
        }
    return out


def _print(args: argparse.Namespace, hooks: dict[str, Any], sampler: dict[str, Any]) -> None:
    s = summarize(hooks, sampler)
    print(f"gpuviz profile's cost per step outside the window ({args.device}), one process")
    print(
        f"bare opt.step() (torch's wrapper, no-op step): {_us_text(hooks['figures']['bare_call_us'])}"
    )
    print(
        f"step hook, added per step ({args.blocks} blocks, each the least of {args.reps} runs "
        f"of {args.calls} calls):"
    )
    for v, fig in s["hook_us"].items():
        print(f"  {v:<22} {_us_text(fig)}  = {_pct_text(fig)}")
    print("  before the window (--skip: the profiler made and waiting):")
    for v, fig in hooks["before_window"]["figures"].items():
        if v != "bare_call_us":
            print(f"  {v:<22} {_us_text(fig)}  = {_pct_text(fig)}")
    t = sampler["tick"]
    print(
        f"memory sampler, {sampler['rate_hz']:.0f} Hz outside the window"
        f"{' (NVML)' if sampler['nvml'] else ''}:"
    )
    print(f"  one tick: wall {_us_text(t['wall_us'])}, thread CPU {_us_text(t['thread_cpu_us'])}")
    print(
        f"  tick CPU x rate: {t['thread_cpu_us']['median'] * sampler['rate_hz'] / 1e4:.3f}% "
        "of the time"
    )
    print(
        f"  busy loops' loss with the thread running ({args.gil_rounds} rounds of "
        f"{args.gil_block_s:g} s blocks), of the script thread's time:"
    )
    for loop, by_rate in sampler["busy_loss_by_loop"].items():
        for name, loss in by_rate.items():
            b = sampler["busy_blocked_by_loop"][loop][name]
            print(
                f"    {loop:<18} at {name:<28} rate {100 * loss['median']:6.3f}% "
                f"[{100 * loss['lo']:.3f}, {100 * loss['hi']:.3f}]; blocked "
                f"{100 * b['median']:6.3f}% [{100 * b['lo']:.3f}, {100 * b['hi']:.3f}]"
            )
    for ms in STEP_MS:
        tot = s["total"][f"{ms:g}ms"]
        print(
            f"total per {ms:g} ms step ({tot['variant']} + sampler, python loop): "
            f"{tot['median_us']:.1f} µs "
            f"[{tot['lo_us']:.1f}, {tot['hi_us']:.1f}] = {tot['median_pct']:.3f}% "
            f"(top {tot['hi_pct']:.3f}%)"
        )
    if hooks.get("cprofile"):
        print(hooks["cprofile"])


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    import torch

    if args.device == "cuda" and not torch.cuda.is_available():
        print("step_cost: --device cuda: no CUDA device here", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="gpuviz-step-cost-") as tmp:
        hooks = _measure_hooks(args, Path(tmp))
        hooks["before_window"] = _measure_hooks(args, Path(tmp) / "before", before=True)
        sampler = _measure_sampler(args, Path(tmp))
    _print(args, hooks, sampler)
    elapsed = time.perf_counter() - t0
    print(f"({elapsed:.0f} s)")
    if args.json:
        doc = {
            "args": vars(args),
            "machine": platform.platform(),
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "torch": str(torch.__version__),
            "gpu": torch.cuda.get_device_name(0) if args.device == "cuda" else None,
            "elapsed_s": elapsed,
            "hooks": hooks,
            "sampler": sampler,
            "summary": summarize(hooks, sampler),
        }
        Path(args.json).write_text(json.dumps(doc, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
