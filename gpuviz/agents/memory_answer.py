"""The ``memory`` tool's text: an allocator snapshot's figures, or a trace's memory peaks.

A snapshot answer is ``gpuviz memory``'s figures (:func:`~gpuviz.analysis.allocator.snapshot_figures`)
made short: per device the peak and when, the out-of-memory failure, and the top sites at the
peak with their stacks folded as the CLI folds them. ``at_us`` (µs from the start of the
recorded history, as the CLI's ``+ms`` times) adds what was live then and where it came from.
A trace answer is its ``[memory]`` peaks per GPU (``gpuviz summary``'s), and ``at_us`` (µs
from the trace start) the allocated bytes then.
"""

from __future__ import annotations

import math
import sys
from typing import TYPE_CHECKING, Any

import numpy as np

from gpuviz.agents.answers import name

if TYPE_CHECKING:
    from gpuviz.analysis.allocator import DeviceFigures, SnapshotFigures
    from gpuviz.analysis.summary import Summary
    from gpuviz.trace.allocator_columns import AllocatorSnapshot

SITES = 5
"""Sites a short answer lists."""


def _at(t_us: int | None, t0_us: int | None) -> str:
    if t_us is None or t0_us is None:
        return "?"
    return f"+{(t_us - t0_us) / 1000:.1f} ms"


def _device(
    snap: AllocatorSnapshot, d: DeviceFigures, at_us: float | None, detail: bool
) -> tuple[list[str], dict[str, Any]]:
    from gpuviz.display import format_bytes
    from gpuviz.report.memory import site_lines

    t0 = d.window_start_us
    lines = []
    if d.trace_entries:
        span = (d.window_end_us or 0) - (t0 or 0)
        before = (
            f"; {format_bytes(d.window_start_live_bytes)} was live before it began"
            if d.window_start_live_bytes
            else ""
        )
        lines.append(
            f"cuda:{d.device}: peak allocated {format_bytes(d.peak_allocated_bytes)} at "
            f"{_at(d.peak_time_us, t0)} of a {span / 1000:.1f} ms history ({d.trace_entries} "
            f"entries{before})."
        )
    else:
        lines.append(
            f"cuda:{d.device}: no history recorded (record_memory_history was off): the state "
            "at the snapshot only."
        )
    lines.append(
        f"  At the snapshot: reserved {format_bytes(d.reserved_bytes)} in {d.segments} "
        f"segments, allocated {format_bytes(d.allocated_bytes)}; free "
        f"{format_bytes(d.free_bytes)}, largest free block "
        f"{format_bytes(d.largest_free_block_bytes)}, fragmentation {d.fragmentation:.2f}."
    )
    if d.oom is not None:
        o = d.oom
        lines.append(
            f"  OUT OF MEMORY at {_at(o.time_us, t0)}: asked for {format_bytes(o.request_bytes)}"
            f"; CUDA reported {format_bytes(o.free_bytes)} free; {format_bytes(o.live_bytes)} was "
            "allocated. Biggest live sites then:"
        )
        lines += site_lines(snap, o.top_sites[:SITES], stacks=False)
    figures = d.to_json()
    figures["at"] = None
    if at_us is not None:
        more, figures["at"] = _at_time(snap, d, at_us, detail)
        lines += more
    n = len(d.top_sites_at_peak) if detail else SITES
    if d.trace_entries:
        lines.append(
            "  Top sites at the peak (bytes, blocks, file:line function, stack innermost first):"
        )
        lines += site_lines(snap, d.top_sites_at_peak[:n], stacks=True) or ["    (none)"]
    else:
        lines.append("  Top sites at the snapshot:")
        lines += site_lines(snap, d.top_sites[:n], stacks=True) or ["    (none)"]
    return lines, figures


def clamp_at(at_us: float, span_us: float) -> tuple[str, float]:
    """``(position, used_us)``: ``at_us`` against a history of ``span_us`` from its start,
    clamped into it (``before``/``after`` it: its start or end is looked at).

    Raises
    ------
    BadInputError
        ``at_us`` is not a number (NaN).
    """
    from gpuviz.errors import BadInputError

    if math.isnan(at_us):
        raise BadInputError("at_us is not a number: give µs from the start of the history.")
    if at_us < 0:
        return "before", 0.0
    if at_us > span_us:
        return "after", float(span_us)
    return "within", float(at_us)


def _at_time(
    snap: AllocatorSnapshot, d: DeviceFigures, at_us: float, detail: bool
) -> tuple[list[str], dict[str, Any] | None]:
    from gpuviz.analysis.allocator import live_bytes_curve, sites_live_at
    from gpuviz.display import format_bytes
    from gpuviz.report.memory import site_lines

    if not d.trace_entries or d.window_start_us is None:
        return [f"  at_us={at_us:g}: no history to look into."], None
    span = (d.window_end_us or d.window_start_us) - d.window_start_us
    position, used = clamp_at(at_us, span)
    tr = snap.trace_columns(d.device)
    if position == "before":
        k = -1  # before the first entry: what was live when the history began
    else:
        k = int(np.searchsorted(tr.time_us, d.window_start_us + used, side="right")) - 1
    baseline, live = live_bytes_curve(snap.device_allocations(d.device), len(tr))
    live_k = baseline if k < 0 else int(live[k])
    sites = sites_live_at(snap, d.device, k, None if detail else SITES)
    if position == "within":
        head = f"  At +{used / 1000:.1f} ms (entry {k}): {format_bytes(live_k)} allocated."
    elif position == "before":
        head = (
            f"  at_us={at_us:g} is before the recorded history (it starts at +0.0 ms); when it "
            f"began, {format_bytes(live_k)} was allocated."
        )
    else:
        head = (
            f"  at_us={at_us:g} is after the recorded history (it ends at +{span / 1000:.1f} "
            f"ms); at its end (entry {k}), {format_bytes(live_k)} was allocated."
        )
    at = {
        "at_us": _finite(at_us),
        "position": position,
        "used_us": used,
        "entry": k,
        "allocated_bytes": live_k,
    }
    return [f"{head} Its sites:", *site_lines(snap, sites, stacks=detail)], at


def _finite(x: float) -> float:
    # JSON has no infinity: the largest float stands for it (the position says which side)
    return max(min(float(x), sys.float_info.max), -sys.float_info.max)


def snapshot_answer(
    label: str,
    snap: AllocatorSnapshot,
    figures: SnapshotFigures,
    at_us: float | None = None,
    detail: bool = False,
) -> tuple[str, dict[str, Any]]:
    """The figures of an allocator snapshot, key numbers first; its text and its data
    (:class:`~gpuviz.agents.schemas.SnapshotMemory`)."""
    devices = figures.devices
    head = f"{name(label, 200)}: CUDA allocator snapshot, {len(devices)} device{'s' if len(devices) != 1 else ''}."
    if not devices:
        return head + " No allocator activity: no segments and no history.", {"devices": []}
    ooms = [d for d in devices if d.oom is not None]
    if ooms:
        head += f" It ends in OUT OF MEMORY on cuda:{', cuda:'.join(str(d.device) for d in ooms)}."
    lines = [head]
    data = []
    for d in devices:
        more, fig = _device(snap, d, at_us, detail)
        lines += more
        data.append(fig)
    return "\n".join(lines), {"devices": data}


def trace_memory_answer(
    label: str, summary: Summary, at_us: float | None, snapshots: list[str]
) -> tuple[str, dict[str, Any]]:
    """A trace's GPU memory peaks from its ``[memory]`` events, and what was allocated at
    ``at_us`` (µs from the trace start; clamped to its events); text and data
    (:class:`~gpuviz.agents.schemas.TraceMemory`)."""
    from gpuviz.display import format_bytes

    lines = [f"{name(label, 200)}: Kineto trace."]
    if not summary.memory:
        lines.append(
            "No GPU [memory] events: the run was recorded without profile_memory (gpuviz "
            "profile --memory records them; --memory-snapshot records the allocator's history "
            "with stacks, which memory(path) reads)."
        )
    gpus = []
    for m in summary.memory:
        who = f"rank {m.rank} " if m.rank is not None else ""
        reserved = (
            f", peak reserved {format_bytes(m.peak_reserved_bytes)}"
            if m.peak_reserved_bytes is not None
            else ""
        )
        how = "running sum of the events' deltas" if m.from_deltas else "allocator totals"
        lines.append(
            f"{who}GPU {m.device}: peak allocated {format_bytes(m.peak_allocated_bytes)}"
            f"{reserved} ({how}, {len(m.ts_ns)} events)."
        )
        at = None
        if at_us is not None and len(m.ts_ns):
            line, at = _trace_at(m, at_us)
            lines.append(line)
        gpus.append(
            {
                "rank": m.rank,
                "device": m.device,
                "peak_allocated_bytes": int(m.peak_allocated_bytes),
                "peak_reserved_bytes": m.peak_reserved_bytes,
                "events": len(m.ts_ns),
                "from_deltas": m.from_deltas,
                "at": at,
            }
        )
    for s in snapshots:
        lines.append(
            f"Allocator snapshot beside it: {name(s, 200)} (memory on it gives sites and stacks)."
        )
    return "\n".join(lines), {"gpus": gpus, "snapshots_beside": list(snapshots)}


def _trace_at(m: Any, at_us: float) -> tuple[str, dict[str, Any]]:
    """What a trace's ``[memory]`` events say was allocated at ``at_us`` (µs from the trace
    start): before the first event it is not known; after the last, the last figure holds."""
    from gpuviz.display import format_bytes

    first_us, last_us = m.ts_ns[0] / 1000.0, m.ts_ns[-1] / 1000.0
    position, used = clamp_at(at_us - first_us, last_us - first_us)
    used += first_us
    at = {"at_us": _finite(at_us), "position": position, "used_us": used}
    if position == "before":
        at.update(entry=None, allocated_bytes=None)
        return (
            f"  at_us={at_us:g} is before the recorded history (the first [memory] event is at "
            f"{first_us:.1f} µs): allocated not known then.",
            at,
        )
    k = int(np.searchsorted(m.ts_ns, round(used * 1000), side="right")) - 1
    now = int(m.allocated_bytes[max(k, 0)])
    at.update(entry=k, allocated_bytes=now)
    if position == "after":
        return (
            f"  at_us={at_us:g} is after the recorded history (the last [memory] event is at "
            f"{last_us:.1f} µs): {format_bytes(now)} allocated at its end.",
            at,
        )
    return f"  at {used:.1f} µs: {format_bytes(now)} allocated.", at
