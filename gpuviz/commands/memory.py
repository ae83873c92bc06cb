"""``gpuviz memory SNAP [--json]``: a CUDA allocator snapshot's figures, sites and OOM.

A folder of per-rank snapshots is :mod:`gpuviz.commands.memory_ranks`'s.

The snapshot is read by an unpickler that loads no class (nothing in the file runs). The
text report: per device, the totals, the peak over the recorded window (counting what was live
before it began), the out-of-memory failure (what was asked, what was free, the biggest live
sites then), and the top sites with their stacks folded.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpuviz.analysis.allocator import DeviceFigures, SnapshotFigures
    from gpuviz.trace.allocator_columns import AllocatorSnapshot


def main(args: argparse.Namespace) -> int:
    """Load ``args.snapshot``; print its figures as text or, with ``args.json``, one object."""
    from pathlib import Path

    from gpuviz.analysis.allocator import snapshot_figures
    from gpuviz.errors import BadInputError
    from gpuviz.trace.allocator_snapshot import load_snapshot

    if args.top < 0:
        raise BadInputError(f"--top {args.top}: must be 0 or more")
    path = Path(args.snapshot)
    if not path.exists():
        raise BadInputError(f"{args.snapshot}: no such file")
    if path.is_dir():  # a folder of rank-N.memory.pickle files
        from gpuviz.commands.memory_ranks import main as ranks_main

        return ranks_main(args)
    snap = load_snapshot(path)
    figures = snapshot_figures(snap, top=args.top)
    from gpuviz.display import echo, json_text

    if args.json:
        echo(json_text(figures.to_json()))
    else:
        echo(format_report(snap, figures))
    return 0


def _at(t_us: int | None, t0_us: int | None) -> str:
    if t_us is None or t0_us is None:
        return ""
    return f"+{(t_us - t0_us) / 1000:.1f} ms"


def _device_report(snap: AllocatorSnapshot, d: DeviceFigures) -> list[str]:
    from gpuviz.display import counted, format_bytes
    from gpuviz.report.memory import site_lines

    t0 = d.window_start_us
    lines = [
        f"cuda:{d.device}: reserved {format_bytes(d.reserved_bytes)} in "
        f"{counted(d.segments, 'segment')}, "
        f"allocated {format_bytes(d.allocated_bytes)}",
        f"  blocks: {d.active_blocks} active ({d.pending_free_blocks} waiting for their free), "
        f"{d.inactive_blocks} free; free {format_bytes(d.free_bytes)}, largest free block "
        f"{format_bytes(d.largest_free_block_bytes)}, fragmentation {d.fragmentation:.2f}",
    ]
    if d.trace_entries:
        span = (d.window_end_us or 0) - (t0 or 0)
        lines.append(
            f"  history: {counted(d.trace_entries, 'entry', 'entries')} over {span / 1000:.1f} ms"
            + (
                f"; {format_bytes(d.window_start_live_bytes)} was already live when it began "
                "(counted in the peak)"
                if d.window_start_live_bytes
                else ""
            )
        )
        lines.append(
            f"  peak allocated: {format_bytes(d.peak_allocated_bytes)} at {_at(d.peak_time_us, t0)}"
        )
    else:
        lines.append("  no history recorded (record_memory_history was off): state only")
    if d.oom is not None:
        o = d.oom
        lines += [
            "",
            f"  OUT OF MEMORY at {_at(o.time_us, t0)}: asked for {format_bytes(o.request_bytes)}; "
            f"CUDA reported {format_bytes(o.free_bytes)} free on the device; {format_bytes(o.live_bytes)} "
            "was allocated",
            "  biggest live sites then:",
        ]
        lines += site_lines(snap, o.top_sites[:5], stacks=False)
    lines += ["", "  top sites at the peak:"]
    lines += site_lines(snap, d.top_sites_at_peak, stacks=True) or ["    (none)"]
    lines += ["", "  top sites at the snapshot:"]
    lines += site_lines(snap, d.top_sites, stacks=False) or ["    (none)"]
    return lines


def format_report(snap: AllocatorSnapshot, figures: SnapshotFigures) -> str:
    """The text report of ``gpuviz memory``."""
    from gpuviz.display import terminal_safe

    lines = [f"snapshot: {terminal_safe(figures.source, one_line=True)}"]
    if not figures.devices:
        lines.append("no allocator activity: no segments and no history in this snapshot")
        return "\n".join(lines)
    for d in figures.devices:
        lines.append("")
        lines += _device_report(snap, d)
    return "\n".join(lines)
