"""``gpuviz summary TRACE [--json]``: the figures of one trace (all its ranks)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuviz.display import counted, echo, json_text, terminal_safe, warning_lines
from gpuviz.report.shares import pct
from gpuviz.report.tables import text_table

if TYPE_CHECKING:
    from gpuviz.analysis.activity import GpuActivity
    from gpuviz.analysis.hardware import Hardware
    from gpuviz.analysis.summary import Summary
    from gpuviz.trace.cache_memo import Output

ANALYSIS_THREADS = 4
"""Threads of :func:`_analyse`: the MFU's (the longest part) and three that share the
summary's five figures."""


def main(args: argparse.Namespace) -> int:
    """Load ``args.trace``, print its summary as text or, with ``args.json``, one JSON object.

    Where the trace's cache entry holds the output of a run with the same options (and
    gpuviz's code is the same), that is printed instead (:mod:`gpuviz.trace.cache_memo`).
    """
    from gpuviz.errors import BadInputError

    path = Path(args.trace)
    if not path.exists():
        raise BadInputError(f"{args.trace}: no such file or folder")
    if getattr(args, "compile_info", None) is not None:
        from gpuviz.commands.reading import given_compile_info

        given_compile_info(args.compile_info)  # a folder that is not one: exit 2 before work
    from gpuviz.trace.cache_memo import output_memo

    options = _printed_options(args)
    memo = output_memo("summary", path, options)
    kept = memo.get() if memo is not None else None
    if kept is None:
        kept = _compute(path, args, options)
        if memo is not None and kept is not None:
            memo.put(kept)
    if kept is not None:
        for line in kept.stderr:
            echo(line, file=sys.stderr)
        echo(kept.stdout)
    return 0


def _printed_options(args: argparse.Namespace) -> dict[str, Any]:
    """The options that change what ``summary`` prints (``--max-memory`` does not: a trace
    that had to leave parts out is never cached)."""
    return {
        "json": bool(args.json),
        "peak_tflops": getattr(args, "peak_tflops", None),
        "peak_bandwidth": getattr(args, "peak_bandwidth", None),
        "captures": _capture_stamps(args),
        # The compiled kernels' FLOPs (the MFU) come from the compile-info folder in use.
        "compile_info": _compile_info_key(Path(args.trace), getattr(args, "compile_info", None)),
    }


def _capture_stamps(args: argparse.Namespace) -> list[list[Any]]:
    """The graph captures the serving steps' bytes would read (``--capture-trace``, else
    ``capture_traces/`` beside TRACE): each file's path, size and mtime, so that a kept output
    is not printed for other captures."""
    import os

    from gpuviz.trace.graph_captures import capture_files, folder_captures

    given = getattr(args, "capture_trace", None)
    if given is None:
        files = capture_files(args.trace)
    else:
        files = folder_captures(Path(given)) if Path(given).is_dir() else [Path(given)]
    out = []
    for f in files:
        try:
            st = os.stat(f)
        except OSError:
            continue
        out.append([str(f), st.st_size, st.st_mtime_ns])
    return out


def _compile_info_key(path: Path, given: str | None) -> list[Any] | None:
    """The compile-info folder a run reads (``--compile-info``, else ``NAME.compile/``
    beside the trace) and its files' times: a folder added or rewritten is another output.

    On the standard library alone, as the rest of a kept output's printing (no import of
    :mod:`gpuviz.analysis.inductor_provenance`, whose ``sibling_path`` this mirrors)."""
    name = path.name.removesuffix(".gz").removesuffix(".json")
    folder = Path(given) if given is not None else path.with_name(name + ".compile")
    if not folder.is_dir():
        return None
    stamps = sorted(
        (str(f), f.stat().st_mtime_ns)
        for f in folder.rglob("*")
        if f.suffix in (".py", ".json", ".gz") and f.is_file()
    )
    return [str(folder.resolve()), stamps]


def _compute(path: Any, args: argparse.Namespace, options: dict[str, Any]) -> Output | None:
    """Load the trace and make the output; None when it was printed already (a trace that
    left parts out to fit its memory limit: what it says on stderr comes as it reads).
    ``options``: :func:`_printed_options` of ``args`` (the captures and compile info found)."""
    from gpuviz.commands.reading import read_trace
    from gpuviz.commands.summary_ranks import summarize_ranks
    from gpuviz.trace.cache_memo import Output

    # A rank folder without the cache, or too large for the memory limit: a rank at a time
    # (not with graph captures: their merge needs the whole run; nor with compile info:
    # the compiled kernels' FLOPs need the whole trace's attribution).
    captures = getattr(args, "capture_trace", None) is not None or bool(options["captures"])
    compiled = options["compile_info"] is not None
    by_rank = None if captures or compiled else summarize_ranks(path, args)
    dropped = False
    serving = None
    if by_rank is not None:
        summary, hw, err, serving = by_rank
    else:
        trace = read_trace(
            path,
            say_dropped=args.json,
            meanwhile=analysis_imports(),
            captures=captures,
            capture_trace=getattr(args, "capture_trace", None),
            compile_info=getattr(args, "compile_info", None),
        )
        summary, hw, err = _analyse(trace, args)
        serving = _serving(trace, hw)
        dropped = bool(trace.dropped)
        del trace
    if args.json:
        out = summary.to_json()
        out["mfu"] = hw.mfu_json()
        if serving is not None:
            out["serving"] = serving
        text = json_text(out)
    else:
        text = format_summary(summary)
        if summary.has_gpu_events:
            text += "\n\n" + "\n".join(format_mfu(hw))
        if serving is not None:
            from gpuviz.report.serving import serving_lines

            text += "\n\n" + "\n".join(serving_lines(serving))
    output = Output(text, err)
    if dropped or summary.incomplete is not None:  # not the whole trace: print, keep nothing
        for line in err:
            echo(line, file=sys.stderr)
        echo(text)
        return None
    return output


def _serving(trace: Any, hw: Hardware) -> dict[str, Any] | None:
    """The ``serving`` object (docs/serving.md) of a trace with serving steps, else None."""
    from gpuviz.analysis.serving_markers import serving_markers

    if not serving_markers(trace):
        return None
    from gpuviz.analysis.serving_phases import serving_report
    from gpuviz.analysis.steps import find_steps

    report = serving_report(trace, find_steps(trace), hw)
    return None if report is None else report.to_json()


ANALYSIS_MODULES = (
    "logging",  # concurrent.futures's, 6 ms of it
    "concurrent.futures",
    "gpuviz.analysis",
    "gpuviz.analysis.activity",
    "gpuviz.analysis.kernels",
    "gpuviz.analysis.memory",
    "gpuviz.analysis.intervals",
    "gpuviz.analysis.overlap",
    "gpuviz.analysis.split_plan",
    "gpuviz.analysis.splits",
    "gpuviz.analysis.streams",
    "gpuviz.analysis.summary",
    "gpuviz.analysis.dtypes",
    "gpuviz.analysis.op_args",
    "gpuviz.analysis.conv_hints",
    "gpuviz.analysis.flops",
    "gpuviz.analysis.names",
    "gpuviz.analysis.node_args",
    "gpuviz.analysis.peaks",
    "gpuviz.analysis.roofline",
    "gpuviz.analysis.op_calls",
    "gpuviz.analysis.coverage",
    "gpuviz.analysis.serving_annotations",
    "gpuviz.analysis.serving_markers",
    "gpuviz.analysis.steps",
    "gpuviz.analysis.step_flops",
    "gpuviz.analysis.mfu_brief",
    "gpuviz.analysis.exact_sums",
    "gpuviz.analysis.hardware",
    "gpuviz.commands.peak_options",
)
"""What :func:`_analyse` imports (40 ms of a 0.5 s start on a 16-core H200, issue 25), each
module after those it imports: one import a piece, each a few ms, so that the import's
pipeline can fit them between its waits for the children (``meanwhile``)."""


def analysis_imports() -> list[Callable[[], object]]:
    """:data:`ANALYSIS_MODULES`' imports, a piece each, to run while the import's children
    decode the trace (where the importer waits for them) rather than after."""
    import importlib

    return [partial(importlib.import_module, name) for name in ANALYSIS_MODULES]


def _analyse(trace: Any, args: argparse.Namespace) -> tuple[Summary, Hardware, list[str]]:
    """The summary's figures and the MFU figures (with :func:`_hardware`'s stderr lines), side
    by side on :data:`ANALYSIS_THREADS` threads.

    They read the same columns and write none of them (the trace's own indexes are built
    whole, then stored in one assignment; the args text's cache has a lock). Most of their
    time is numpy work that releases the GIL, so on a large trace they take several cores:
    8 ranks of 100k kernels on the 2-core VM, the MFU beside the summary took 0.30-0.49 s
    instead of 0.57-0.62 s; 64 ranks on a 16-core H200, the summary's five figures on threads
    of their own besides took 2.4-2.6 s instead of 3.1-3.3 s, for a peak 0-90 MB higher
    (over a trace of 2.5 GB).

    A trace that left parts out to fit the memory limit (``trace.dropped``) is analysed one
    part after the other: the two's temporaries at once were a third of the peak over the
    trace (8 ranks of 100k kernels: about 150 MB over 380).
    """
    from concurrent.futures import ThreadPoolExecutor

    from gpuviz.analysis.activity import gpu_activity
    from gpuviz.analysis.summary import summarize

    activity = gpu_activity(trace)  # one selection of the GPU rows for both
    if trace.dropped:
        from gpuviz.trace.gcpause import release_freed_memory

        # Freed temporaries stay resident in glibc's heap unless given back: between the
        # parts, that lowered the peak of 8 ranks under 400M from 442 to 410 MB.
        summary = summarize(trace, activity, between=release_freed_memory)  # ends with one
        hw, err = _hardware(trace, args, activity, between=release_freed_memory)
        return summary, hw, err
    with ThreadPoolExecutor(ANALYSIS_THREADS, thread_name_prefix="gpuviz-analysis") as pool:
        mfu = pool.submit(_hardware, trace, args, activity)  # the longest: first
        summary = summarize(trace, activity, executor=pool)
        hw, err = mfu.result()
    return summary, hw, err


def _hardware(
    trace: Any,
    args: argparse.Namespace,
    activity: GpuActivity,
    between: Callable[[], None] | None = None,
) -> tuple[Hardware, list[str]]:
    """The trace's MFU figures, and the unknown-device line for stderr where they need a peak
    (``between``: called after the steps are found, before their FLOPs are counted)."""
    from gpuviz.analysis.hardware import hardware
    from gpuviz.analysis.steps import find_steps
    from gpuviz.commands.peak_options import peak_override_of, unknown_device_line

    steps = find_steps(trace, activity)
    if between is not None:
        between()
    hw = hardware(trace, peak_override_of(args), steps=steps)
    line = unknown_device_line(hw)
    # calls skipped or flagged (shapes no tensor has, impossible FLOP counts), counted
    warned = [f"gpuviz: warning: {terminal_safe(w, one_line=True)}" for w in hw.warnings]
    return hw, warned + ([] if line is None else [line])


MFU_ROWS = 20


def format_mfu(hw: Hardware) -> list[str]:
    """The MFU section: the peaks used, a headline, then one line per step (the first
    :data:`MFU_ROWS`) and per rank. Unknown figures say why; a figure from FLOPs known for part
    of the GPU time is a lower bound (``>= X% (FLOPs known for Y% of GPU time)``)."""
    from gpuviz.analysis.hardware import mfu_brief, mfu_unknown_reason
    from gpuviz.report.peaks import peak_phrase

    lines = [
        "MFU per step (FLOPs from the recorded shapes, each precision against its own dense peak)"
    ]
    lines.append("  " + peak_phrase(hw))
    brief = mfu_brief(hw)
    if brief is None:
        why = terminal_safe(mfu_unknown_reason(hw), one_line=True)
        floors = [s.floor for s in hw.steps if s.floor is not None]
        if floors:  # below the coverage that makes a lower bound worth reading: say it anyway
            why += f"; the FLOPs known give >= {pct(min(floors))}"
        lines.append(f"  MFU: unknown ({why})")
        if hw.shapes_dropped or not any(s.flops > 0 for s in hw.steps):
            return lines
    else:
        lines.append("  " + mfu_headline(brief))
    shown = hw.steps[:MFU_ROWS]
    lines += text_table(
        ["rank", "step", "ms", "GFLOP", "precisions", "FLOPs known", "MFU"],
        [
            [
                _rank(s.rank),
                terminal_safe(s.label, one_line=True),
                _ms(s.duration_ns),
                _gflop(s),
                " + ".join(s.precisions) or "-",
                "-" if s.coverage is None else f"{100 * s.coverage:.0f}%",
                mfu_cell(s),
            ]
            for s in shown
        ],
        left=(1, 4),
    )
    if len(hw.steps) > len(shown):
        lines.append(f"  … {len(hw.steps) - len(shown)} more steps")
    lines += _notes(hw.steps)
    if len(hw.ranks) > 1:
        lines += ["", "MFU per rank (its steps together: their time at peak over their time)"]
        lines += text_table(
            ["rank", "steps", "ms", "GFLOP", "precisions", "FLOPs known", "MFU"],
            [
                [
                    _rank(r.rank),
                    r.steps,
                    _ms(r.duration_ns),
                    _gflop(r),
                    " + ".join(r.precisions) or "-",
                    "-" if r.coverage is None else f"{100 * r.coverage:.0f}%",
                    mfu_cell(r, 2),
                ]
                for r in hw.ranks
            ],
            left=(4,),
        )
    return lines


def mfu_headline(brief: Any) -> str:
    """``MFU: mean >= 12.3% over 5 steps (FLOPs known for 68% of GPU time); bf16 + fp32,
    each against its own peak``."""
    ge = ">= " if brief.lower_bound else ""
    n = f"{brief.steps} step{'s' if brief.steps != 1 else ''}"
    line = f"MFU: mean {ge}{pct(brief.mean)} over {n}"
    if brief.lower_bound and brief.coverage is not None:  # the least of the steps'
        line += f" (FLOPs known for {100 * brief.coverage:.0f}% of GPU time)"
    if len(brief.mixed) > 1:
        line += f"; steps mix {' + '.join(brief.mixed)}, each against its own peak"
    elif brief.mixed:
        line += f"; all {brief.mixed[0]}"
    return line


def mfu_cell(fig: Any, digits: int = 1) -> str:
    """A step's or rank's MFU: ``12.3%``, ``>= 12.3%`` (a lower bound), or ``unknown (…)``."""
    if fig.mfu is None:
        if fig.inconsistent:
            return "unknown (inconsistent)"
        if fig.floor is not None:
            return f"unknown (>= {pct(fig.floor)})"
        return "unknown"
    mfu = pct(fig.mfu) if fig.mfu < 0.01 else f"{100 * fig.mfu:.{digits}f}%"
    return f"{'>= ' if fig.lower_bound else ''}{mfu}"  # >= 50% known


def _gflop(fig: Any) -> str:
    got = fig.flops_json()["flops"]
    if got is None:
        return "unknown"
    return f"{got / 1e9:.1f}" if got >= 1e8 else f"{got / 1e9:.2g}"  # not "0.0" for 129k


def _notes(steps: Sequence[Any], most: int = 3) -> list[str]:
    """Why the first few unknown MFUs are unknown (the table says only "unknown")."""
    out = []
    unknown = [s for s in steps if s.mfu is None and s.mfu_note]
    for s in unknown[:most]:
        label = terminal_safe(s.label, one_line=True)
        out.append(f"  {label}: MFU unknown: {terminal_safe(s.mfu_note, one_line=True)}")
    if len(unknown) > most:
        out.append(f"  … and {len(unknown) - most} more steps with an unknown MFU")
    return out


def _ms(ns: float) -> str:
    return f"{ns / 1e6:.3f}"


def _rank(r: int | None) -> str:
    return "-" if r is None else str(r)


def _mib(b: int | None) -> str:
    return "-" if b is None else f"{b / 2**20:.1f}"


def format_summary(s: Summary) -> str:
    """The text form of a summary: per device and stream, top kernels, memory, overlap."""
    lines = [f"trace: {', '.join(terminal_safe(p, one_line=True) for p in s.sources)}"]
    ranks = "one process" if s.ranks == [None] else ", ".join(_rank(r) for r in s.ranks)
    lines.append(
        f"events: {s.events}  skipped: {s.warnings}  span: {_ms(s.span_ns)} ms  ranks: {ranks}"
    )
    lines += warning_lines(s.warning_samples)
    if s.incomplete is not None:
        lines.append(
            f"incomplete: {s.incomplete['ranks_failed']} of {s.incomplete['of']} rank files "
            "failed and are left out (named on stderr); the figures are the other ranks'"
        )
    if not s.has_gpu_events:
        lines.append("")
        lines.append(
            "No GPU events in this trace: no kernels, copies or sets were recorded "
            "(CPU activity only)."
        )
        return "\n".join(lines)

    lines += ["", "GPU streams (times in ms)"]
    lines += text_table(
        ["rank", "device", "stream", "kernels", "kernel", "copies", "copied MiB", "sets", "busy"],
        [
            [
                _rank(x.rank),
                x.device,
                x.stream,
                x.kernels,
                _ms(x.kernel_ns),
                x.memcpy,
                _mib(x.memcpy_bytes),
                x.memset,
                _ms(x.busy_ns),
            ]
            for x in s.streams
        ],
    )
    lines += ["", "GPU devices"]
    lines += text_table(
        ["rank", "device", "busy ms", "utilization"],
        [
            [_rank(d.rank), d.device, _ms(d.busy_ns), f"{100 * d.utilization:.1f}%"]
            for d in s.devices
        ],
    )
    lines += ["", f"Top {counted(len(s.top_kernels), 'kernel')} by total time"]
    lines += text_table(
        ["total ms", "count", "mean us", "name"],
        [
            [_ms(k.total_ns), k.count, f"{k.mean_ns / 1e3:.2f}", _short(k.name)]
            for k in s.top_kernels
        ],
        left=(3,),
    )
    lines += ["", "GPU memory (peaks, MiB)"]
    if s.memory:
        lines += text_table(
            ["rank", "device", "allocated", "reserved", "source"],
            [
                [
                    _rank(m.rank),
                    m.device,
                    _mib(m.peak_allocated_bytes),
                    _mib(m.peak_reserved_bytes),
                    "running sum of deltas" if m.from_deltas else "allocator totals",
                ]
                for m in s.memory
            ],
            left=(4,),
        )
    else:
        lines.append("  no [memory] events (record with profile_memory=True)")
    lines += [
        "",
        "Overlap (summed over devices)",
        f"  kernel and copy at once:         {_ms(s.compute_copy_ns)} ms",
        f"  kernels on 2+ streams at once:   {_ms(s.multi_stream_ns)} ms",
    ]
    if s.splits:
        lines += ["", "DataParallel splits"]
        lines += text_table(
            ["rank", "step", "device", "rows", "planned", "gpu ms"],
            [
                [
                    _rank(r.rank),
                    r.step,
                    r.device,
                    "?" if r.rows is None else r.rows,
                    "?" if r.planned_rows is None else r.planned_rows,
                    _ms(r.gpu_ns),
                ]
                for r in s.splits
            ],
        )
    return "\n".join(lines)


def _short(name: str, width: int = 90) -> str:
    return name if len(name) <= width else name[: width - 1] + "…"
