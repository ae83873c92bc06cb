"""The figures of a ``gpuviz profile`` run (``Finished.result``) and the lines printed at its end.

Step times are reported from unprofiled steps, step 0 aside (it holds the script's start-up:
imports, model building, the first batch). The profiled window's GPU utilization is read back
from the trace that was written: the union of kernel, copy and set time of each GPU between
the first ``ProfilerStep#`` range's start and the last one's end (the whole recording for a
no-step range), over that span (:func:`gpuviz.analysis.ranges.range_stats`). The advisor's top
3 findings of that trace (:func:`gpuviz.analysis.advisor.advise`) close the report.

:func:`report_lines` is the one place that makes the end-of-run text.
"""

from __future__ import annotations

import contextlib
import statistics
import sys
from typing import Any

from gpuviz.display import terminal_safe

RUN_AHEAD = 1.5
"""A mean step this many times the median one is reported too: the CPU runs ahead of the GPU."""


def say(text: str) -> None:
    """One gpuviz line on stderr (``gpuviz: …``); the script's own output is never touched.

    The line may quote paths and names from the user's files: control characters are escaped.
    """
    with contextlib.suppress(Exception):
        sys.stderr.write(f"gpuviz: {terminal_safe(text)}\n")
        sys.stderr.flush()


def quantiles(values: list[float]) -> dict[str, float] | None:
    """``{"median": …, "p90": …, "min": …, "max": …, "mean": …}`` of ``values`` (None when
    empty).

    p90 interpolates linearly between order statistics (numpy's default percentile). The
    mean is the pace: where a script's CPU runs ahead of the GPU (a DDP rank waiting on a
    slower one), its steps alternate between short launches and long waits, and the median
    step says little of how fast it goes.
    """
    if not values:
        return None
    if len(values) == 1:
        p90 = values[0]
    else:
        p90 = statistics.quantiles(values, n=10, method="inclusive")[-1]
    return {
        "median": float(statistics.median(values)),
        "p90": float(p90),
        "min": float(min(values)),
        "max": float(max(values)),
        "mean": float(statistics.fmean(values)),
    }


def step_figures(steps: list[Any]) -> dict[str, Any]:
    """Figures of the timed steps (``TimedStep``-like: ``step, wall_ms, gpu_ms, profiled``)."""
    plain = [s for s in steps if not s.profiled and s.step > 0]
    profiled = [s for s in steps if s.profiled]
    out: dict[str, Any] = {
        "steps": len(steps),
        "unprofiled_steps": len(plain),
        "profiled_steps": len(profiled),
        "wall_ms": quantiles([s.wall_ms for s in plain]),
        "gpu_ms": quantiles([s.gpu_ms for s in plain if s.gpu_ms is not None]),
        "profiled_wall_ms": quantiles([s.wall_ms for s in profiled]),
        "profiled_gpu_ms": quantiles([s.gpu_ms for s in profiled if s.gpu_ms is not None]),
    }
    return out


def window_figures(path: str) -> dict[str, Any]:
    """GPU utilization of the profiled window of one trace file (see the module docstring)."""
    try:
        import numpy as np

        from gpuviz.analysis.ranges import range_stats
        from gpuviz.trace.kineto import load_trace
    except ImportError as exc:  # a GPU box without gpuviz's readers: figures are a bonus
        return {"path": path, "error": f"cannot read the trace back here ({exc})"}
    try:
        trace = load_trace(path)
    except Exception as exc:
        return {"path": path, "error": f"cannot read the trace back: {exc}"}
    names = trace.symbols.strings
    step_ids = [i for i, n in enumerate(names) if n.startswith("ProfilerStep#")]
    s = trace.slices
    rows = np.isin(s.name, np.asarray(step_ids, dtype=s.name.dtype))
    window = "steps"
    if not rows.any():
        window = "whole recording"
        rows = np.ones(len(s), dtype=bool)
    if not rows.any():
        return {"path": path, "error": "the trace holds no events"}
    t0 = int(s.start_ns[rows].min())
    t1 = int((s.start_ns[rows] + s.dur_ns[rows]).max())
    stats = range_stats(trace, t0, t1)
    return {
        "findings": advisor_findings(trace),
        "path": path,
        "window": window,
        "profiler_steps": len(step_ids),
        "span_ms": (t1 - t0) / 1e6,
        "kernels": stats.kernels,
        "devices": [
            {
                "rank": d.rank,
                "device": d.device,
                "busy_ms": d.busy_ns / 1e6,
                "utilization": d.utilization,
            }
            for d in stats.devices
        ],
    }


def advisor_findings(trace: Any, top: int = 3) -> list[dict[str, Any]]:
    """The advisor's ``top`` findings of a trace, largest saving first (``gpuviz advise``)."""
    try:
        from gpuviz.analysis.advisor import advise

        findings = advise(trace).findings[:top]
    except Exception as exc:  # the report must not fail for a rule
        return [{"kind": "error", "severity": "info", "title": f"advisor: {exc}", "saving_us": 0}]
    return [
        {
            "kind": f.kind,
            "severity": f.severity,
            "title": f.title,
            "saving_us": f.saving_per_step_ns / 1e3,  # per step, as the advisor's JSON
            "saving_total_us": f.saving_ns / 1e3,
            "share": f.share,
            "step_us": f.step_ns / 1e3,
            "saving_per_step_us": f.saving_per_step_ns / 1e3,
        }
        for f in findings
    ]


def build_result(session: Any) -> dict[str, Any]:
    """``Finished.result`` of a session (also what ``--json`` prints)."""
    import torch

    sources = session._sources
    result: dict[str, Any] = {
        "workload": f"profile:{session.target.label}",
        "script": session.target.name,
        "kind": session.target.kind,
        "args": list(session.target.args),
        "torch_version": str(torch.__version__),
        "device": session.device or "cpu",
        "rank": session.rank.rank if session.rank is not None else None,
        "world_size": session.rank.world_size if session.rank is not None else None,
        "exit_code": session.exit_code,
        "stopped": session.stopped,
        "step_source": sources.source if sources is not None else None,
        "schedule": {
            "skip": session.schedule.skip,
            "warmup": session.schedule.warmup,
            "active": session.schedule.active,
            "repeat": session.schedule.repeat,
        },
        "no_step_range": session.no_step_range,
        "partial_window": session.partial_window,
        **step_figures(session.steps),
        "trace": str(session.plan.trace) if session.traces else None,
        "traces": list(session.traces),
        "exports": [dict(e) for e in session.exports],
        "write_errors": list(session.write_errors),
        "memory_snapshot": session.snapshot,
        "warnings": list(session.warnings),
    }
    peaks = session.memory.peaks
    result["memory"] = {dev: dict(p) for dev, p in peaks.items()}
    result["windows"] = [window_figures(p) for p in session.traces]
    return result


def _ms(v: float) -> str:
    return f"{v:.3g} ms" if v < 1000 else f"{v / 1e3:.3g} s"


def report_lines(result: dict[str, Any]) -> list[str]:
    """The end-of-run text, one ``gpuviz:`` line each (without the prefix).

    Under a launcher, ranks other than 0 get one line (their trace), so that N ranks do not
    print N reports.
    """
    name = terminal_safe(str(result["workload"]).removeprefix("profile:"), one_line=True)
    trace = terminal_safe(str(result.get("trace") or ""), one_line=True)
    rank = result.get("rank")
    if rank not in (None, 0):
        own = terminal_safe(str((result.get("traces") or ["(none)"])[0]), one_line=True)
        return [f"rank {rank}: {result['steps']} steps; trace {own}"]
    lines = []
    src = result.get("step_source") or "no step marked"
    head = f"{name}: {result['steps']} steps ({src})"
    if result["exit_code"] == 130:
        head += ", interrupted (Ctrl-C)"
    elif result["exit_code"]:
        head += f", exit status {result['exit_code']}"
    if result.get("stopped"):
        head += ", stopped by --stop after the last window"
    lines.append(head)
    wall, gpu = result.get("wall_ms"), result.get("gpu_ms")
    if wall:
        text = (
            f"step time of {result['unprofiled_steps']} unprofiled steps: median "
            f"{_ms(wall['median'])}, p90 {_ms(wall['p90'])}"
        )
        mean = wall["mean"]
        if gpu and gpu["median"] > RUN_AHEAD * wall["median"]:
            text += (
                f", mean {_ms(mean)} (the CPU runs ahead of the GPU, whose step time is the pace)"
            )
        elif mean > RUN_AHEAD * wall["median"]:
            text += f", mean {_ms(mean)} (the CPU runs ahead and then waits: the mean is the pace)"
        if gpu:
            text += f"; GPU median {_ms(gpu['median'])}, p90 {_ms(gpu['p90'])}"
        lines.append(text)
    elif result["steps"]:
        lines.append("no unprofiled step after step 0 to time (step 0 holds the start-up)")
    prof = result.get("profiled_wall_ms")
    for w in result.get("windows", []):
        if "error" in w:
            lines.append(f"profiled window: {w['error']}")
            continue
        parts = [
            f"profiled window ({w['profiler_steps']} steps)"
            if w["window"] == "steps"
            else "no-step range"
        ]
        if w["window"] == "steps" and prof:
            text = f"median step {_ms(prof['median'])}"
            # Pace against pace: where the CPU runs ahead of the GPU, median against median
            # made a DDP rank's profiled steps look 7.8x slower (12.8 ms against 1.64 ms)
            # when both took about 12.5 ms of GPU time.
            before = pace_ms(wall, gpu)
            after = pace_ms(prof, result.get("profiled_gpu_ms"))
            if before and after:
                text += f" ({after / before:.2f}x the unprofiled pace)"
            parts.append(text)
        if w["devices"]:
            parts.append(
                "GPU utilization "
                + ", ".join(
                    f"{100 * d['utilization']:.1f}% on cuda:{d['device']}" for d in w["devices"]
                )
                + f" over {_ms(w['span_ms'])}"
            )
        else:
            parts.append("no GPU activity recorded")
        lines.append("; ".join(parts))
    stalls = [e["stall_s"] for e in result.get("exports", []) if "stall_s" in e]
    if stalls:
        lines.append(
            f"writing the trace held the script {max(stalls):.2f} s"
            + (" per window (at most)" if len(stalls) > 1 else "")
        )
    if result.get("memory_snapshot"):
        snap = terminal_safe(str(result["memory_snapshot"]), one_line=True)
        lines.append(f"allocator snapshot: {snap}  (gpuviz memory {snap})")
    # Under a launcher this is rank 0's own trace: what it waited for in collectives may be
    # another rank's lateness, which the launcher's line over every rank names (job_advice).
    scope = "" if rank is None else f" (rank {rank}'s trace)"
    # Savings per step at the unprofiled pace: the profiler slows the steps it records (a
    # launch-bound H100 script: 35 ms profiled, 24.7 ms not), and 5 of them summed "could
    # save 173 ms", more than the run's steps took.
    pace = pace_ms(wall, gpu)
    for w in result.get("windows", []):
        lines += [finding_line(f, scope, pace) for f in w.get("findings", [])]
    if trace:
        lines.append(f"trace: {trace}  (gpuviz open {trace})")
    else:
        lines.append(no_trace_line(result))
    return lines


def no_trace_line(result: dict[str, Any]) -> str:
    """Why no trace was written: a failed write names its cause; "no profiled step" is said
    only where no step was profiled."""
    errors = result.get("write_errors") or []
    if errors:
        return "no trace was written: " + terminal_safe(str(errors[-1]), one_line=True)
    if result.get("profiled_steps") or result.get("no_step_range"):
        return "no trace was written"
    return "no trace was written (no profiled step)"


def pace_ms(wall: dict[str, float] | None, gpu: dict[str, float] | None) -> float | None:
    """How long a step takes in a run of steps: the CPU's mean step (it may run ahead, then
    wait), or the GPU's median step where that is longer (the CPU ran ahead through every
    step timed, its launches queued: a DDP rank waiting on a slower one in NCCL)."""
    paces = [wall["mean"]] if wall else []
    if gpu:
        paces.append(gpu["median"])
    return max(paces) if paces and max(paces) > 0 else None


def finding_line(f: dict[str, Any], scope: str = "", pace_ms: float | None = None) -> str:
    """One advisor finding (as :func:`advisor_findings` gives it) as a report line.

    The saving is per step: at the unprofiled pace ``pace_ms`` where known, else as measured
    under the profiler (:func:`~gpuviz.analysis.advisor.findings.saving_phrase`).
    """
    from gpuviz.analysis.advisor.findings import saving_phrase

    saving = ""
    if f["saving_us"] > 0:
        phrase = saving_phrase(
            f["saving_us"] * 1e3,
            float(f.get("share", 0.0)),
            float(f.get("step_us", 0.0)) * 1e3,
            pace_ms * 1e6 if pace_ms else None,
        )
        saving = f"; could save {phrase}"
    return f"advisor{scope}, {f['severity']}: {f['title']}{saving}"


def job_advice(folder: str) -> list[str]:
    """The advisor's top findings over every rank's trace in ``folder``, as report lines.

    A straggler shows only there: in the other ranks' own traces its lateness is time spent
    in collectives.
    """
    try:
        from gpuviz.trace.kineto import load_trace
    except ImportError as exc:  # a GPU box without gpuviz's readers: advice is a bonus
        return [f"advisor: cannot read the rank traces here ({exc})"]
    try:
        trace = load_trace(folder)  # also fills the import cache for `gpuviz open`
    except Exception as exc:
        return [f"advisor: cannot read the rank traces back: {exc}"]
    ranks = len(trace.ranks)
    return [finding_line(f, f" (all {ranks} ranks)") for f in advisor_findings(trace)]


def print_report(result: dict[str, Any], session: Any = None) -> None:
    """Print :func:`report_lines` on stderr."""
    del session
    for line in report_lines(result):
        say(line)


__all__ = [
    "build_result",
    "print_report",
    "quantiles",
    "report_lines",
    "step_figures",
    "window_figures",
]
