"""``gpuviz summary TRACE [--json]``: the figures of one trace (all its ranks)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from gpuviz.display import echo, json_text, terminal_safe, warning_lines

if TYPE_CHECKING:
    from gpuviz.analysis.summary import Summary


def main(args: argparse.Namespace) -> int:
    """Load ``args.trace``, print its summary as text or, with ``args.json``, one JSON object."""
    from pathlib import Path

    from gpuviz.analysis.summary import summarize
    from gpuviz.commands.reading import read_trace
    from gpuviz.errors import BadInputError

    path = Path(args.trace)
    if not path.exists():
        raise BadInputError(f"{args.trace}: no such file or folder")
    summary = summarize(read_trace(path, say_dropped=args.json))
    if args.json:
        echo(json_text(summary.to_json()))
    else:
        echo(format_summary(summary))
    return 0


def _table(
    headers: Sequence[str], rows: list[Sequence[Any]], left: Sequence[int] = ()
) -> list[str]:
    """Columns padded to fit; the columns ``left`` left-aligned, the rest right-aligned.

    Each cell is made one safe line first (a kernel name is data: escapes shown, not run).
    """
    cells = [[str(h) for h in headers]] + [
        [terminal_safe(str(c), one_line=True) for c in r] for r in rows
    ]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = []
    for r in cells:
        parts = [c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))]
        lines.append("  " + "  ".join(parts).rstrip())
    return lines


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
    if not s.has_gpu_events:
        lines.append("")
        lines.append(
            "No GPU events in this trace: no kernels, copies or sets were recorded "
            "(CPU activity only)."
        )
        return "\n".join(lines)

    lines += ["", "GPU streams (times in ms)"]
    lines += _table(
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
    lines += _table(
        ["rank", "device", "busy ms", "utilization"],
        [
            [_rank(d.rank), d.device, _ms(d.busy_ns), f"{100 * d.utilization:.1f}%"]
            for d in s.devices
        ],
    )
    lines += ["", f"Top {len(s.top_kernels)} kernels by total time"]
    lines += _table(
        ["total ms", "count", "mean us", "name"],
        [
            [_ms(k.total_ns), k.count, f"{k.mean_ns / 1e3:.2f}", _short(k.name)]
            for k in s.top_kernels
        ],
        left=(3,),
    )
    lines += ["", "GPU memory (peaks, MiB)"]
    if s.memory:
        lines += _table(
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
        lines += _table(
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
