"""The parsers of the commands that read traces: summary, split, memory, advise, breakdown,
export, check, critical-path and whatif (:mod:`gpuviz.cli` adds them by name)."""

from __future__ import annotations

import argparse
import textwrap
from typing import Any

from gpuviz.cli.options import (
    add_capture_trace,
    add_cluster,
    add_compile_info,
    add_max_memory,
    add_no_cache,
    add_peak_options,
    percent,
)


def add_summary(sub: Any) -> None:
    s = sub.add_parser("summary", help="figures of one trace (all its ranks)")
    s.add_argument("trace", metavar="TRACE")
    s.add_argument("--json", action="store_true")
    add_capture_trace(s)
    add_peak_options(s)
    add_compile_info(s)
    add_no_cache(s)
    add_max_memory(s)
    add_cluster(s)


def add_split(sub: Any) -> None:
    sp = sub.add_parser("split", help="DataParallel's per-GPU rows for a batch")
    sp.add_argument("--batch", type=int, required=True, help="rows in the batch (dim 0)")
    sp.add_argument(
        "--gpus", type=int, required=True, help="devices DataParallel scatters over (1 to 120)"
    )
    sp.add_argument("--json", action="store_true")


def add_memory(sub: Any) -> None:
    m = sub.add_parser(
        "memory", help="a CUDA allocator snapshot's figures, sites and OOM (runs nothing in it)"
    )
    m.add_argument(
        "snapshot",
        metavar="SNAP.pickle",
        help="torch.cuda.memory._dump_snapshot output, or a folder of rank-N.memory.pickle "
        "files (one table of the ranks)",
    )
    m.add_argument("--json", action="store_true")
    m.add_argument("--top", type=int, default=10, metavar="N", help="sites to list (default 10)")


def add_advise(sub: Any) -> None:
    ad = sub.add_parser(
        "advise", help="why a trace is slow: step breakdown and findings ranked by saving"
    )
    ad.add_argument("trace", metavar="TRACE")
    ad.add_argument("--against", metavar="TRACE2", help="compare with another trace")
    ad.add_argument("--json", action="store_true")
    add_capture_trace(ad)
    add_compile_info(ad)
    add_no_cache(ad)
    add_max_memory(ad)
    add_cluster(ad)


def add_breakdown(sub: Any) -> None:
    b = sub.add_parser(
        "breakdown",
        help="where the time went: by op, op and shape, module, source line, kernel or step",
    )
    b.add_argument("trace", metavar="TRACE")
    b.add_argument(
        "--by",
        choices=("op", "op-shape", "module", "line", "kernel", "step"),
        default="op",
        help="what the rows are (default op; module and line need a trace with Python stacks)",
    )
    b.add_argument(
        "--mine",
        action="store_true",
        help="--by line: the innermost line in your own files (not torch, the standard "
        "library or installed packages)",
    )
    b.add_argument("--json", action="store_true")
    b.add_argument(
        "--top", type=int, default=20, metavar="N", help="rows to print (default 20; 0: all)"
    )
    add_capture_trace(b)
    add_peak_options(b)
    add_compile_info(b)
    add_no_cache(b)
    add_max_memory(b)
    add_cluster(b)


def add_export(sub: Any) -> None:
    e = sub.add_parser(
        "export", help="write a normalized Chrome trace (Perfetto) or per-rank files (HTA)"
    )
    e.add_argument("trace", metavar="TRACE")
    g = e.add_mutually_exclusive_group(required=True)
    g.add_argument("-o", dest="output", metavar="OUT.json[.gz]")
    g.add_argument("--per-rank", metavar="DIR")
    add_no_cache(e)
    add_max_memory(e)


def add_check(sub: Any) -> None:
    """``gpuviz check``: the CI gate."""
    c = sub.add_parser(
        "check",
        help="CI gate: exit 1 when NEW regressed against BASELINE (step time, memory, findings)",
        description=(
            "Compare NEW with BASELINE (two runs of one job): a verdict on what changed (the "
            "GPU work kernel for kernel, the host time, syncs, copies, op calls per step), "
            "then step time, peak memory, MFU and findings against the limits."
        ),
        epilog=(
            "exit status:\n"
            "  0  within the limits\n"
            "  1  a regression: NEW exceeds a limit\n"
            "  2  bad input: a file or folder that cannot be read, a folder whose files are\n"
            "     not one job, a trace without steps, a bad option (one line on stderr)\n"
            '  3  internal failure: gpuviz itself failed ("internal error: ..." on stderr; the\n'
            "     traceback with --debug or GPUVIZ_DEBUG=1); never read it as a regression"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    c.add_argument("new", metavar="NEW", help="the new run's trace (file or rank folder)")
    c.add_argument("--against", required=True, metavar="BASELINE", help="the baseline run's trace")
    c.add_argument(
        "--max-step-regression",
        type=percent,
        default=0.05,
        metavar="PCT",
        help="allowed growth of the mean step, in percent: 5%% or 5 (default 5%%; a bare "
        "number below 1 must carry %%: 0.5%%)",
    )
    c.add_argument(
        "--max-memory-regression",
        type=percent,
        default=0.10,
        metavar="PCT",
        help="allowed growth of the peak GPU memory, when both runs recorded it, in percent "
        "(default 10%%)",
    )
    c.add_argument(
        "--fail-on",
        choices=("critical", "warning"),
        default="critical",
        help="fail on new findings at this level or above (default critical)",
    )
    c.add_argument("--json", action="store_true")
    c.add_argument(
        "--debug",
        action="store_true",
        help="on an internal failure (exit 3), print its traceback (also GPUVIZ_DEBUG=1)",
    )
    add_no_cache(c)
    add_max_memory(c)
    add_cluster(c)


_GRAPH_EXITS = (
    "exit status:\n"
    "  0  done\n"
    "  1  the work failed\n"
    "  2  bad input: a file or folder that cannot be read, a trace without GPU or CPU work,\n"
    "     a step or NAME that is not in it, a bad option (one line on stderr)"
)


def _add_step_options(p: Any) -> None:
    p.add_argument("trace", metavar="TRACE", help="a trace file or a folder of rank files")
    p.add_argument(
        "--step",
        type=int,
        metavar="N",
        help="the step number (ProfilerStep#N, or the step's index; default: the step of "
        "median time among those every rank has)",
    )
    p.add_argument("--json", action="store_true")
    p.add_argument(
        "--top", type=int, default=10, metavar="N", help="kernels and ops to list (default 10)"
    )
    add_no_cache(p)
    add_max_memory(p)


def add_critical_path(sub: Any) -> None:
    """``gpuviz critical-path``: what a step's end waited for."""
    c = sub.add_parser(
        "critical-path",
        help="the chain of work a step waited for, across threads, streams and ranks",
        description=textwrap.fill(
            "Build the step's dependency graph (CPU ops in order on each thread, launches, "
            "kernels in order on each stream, event waits, synchronize calls, blocking copies, "
            "collectives released by the last rank to arrive) and print its longest path: the "
            "ops, kernels and ranks on it, the share of the step each holds, and its time by "
            "category (compute, communication, copies, cpu, waits). docs/critical_path.md "
            "says how."
        ),
        epilog=_GRAPH_EXITS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_step_options(c)


def add_whatif(sub: Any) -> None:
    """``gpuviz whatif``: a step replayed with some work faster or removed."""
    w = sub.add_parser(
        "whatif",
        help="predict a step's time with some kernels, ops, modules or a rank faster or gone",
        description=textwrap.fill(
            "Replay the step's dependency graph with changed durations and print the "
            "predicted step time and the new critical path. NAME is a kernel, an op, a "
            "record_function range, a module (nn.Module: NAME) or rank:R; * and ? match any "
            "text. Work that waited on a dependency waits as long as the replay says; gaps on "
            "the CPU stay as recorded."
        ),
        epilog=_GRAPH_EXITS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_step_options(w)
    w.add_argument(
        "--faster",
        action="append",
        default=[],
        metavar="NAME=FACTOR",
        help="make NAME FACTOR times as fast (repeatable)",
    )
    w.add_argument(
        "--remove", action="append", default=[], metavar="NAME", help="take NAME away (repeatable)"
    )
    w.add_argument("--rank", type=int, metavar="R", help="change NAME on rank R only")


__all__ = [
    "add_advise",
    "add_breakdown",
    "add_check",
    "add_critical_path",
    "add_export",
    "add_memory",
    "add_split",
    "add_summary",
    "add_whatif",
]
