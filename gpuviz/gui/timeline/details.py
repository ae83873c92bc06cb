"""The timeline's words: a slice's hover text, the selection's info line, a measured range.

Pure text from the trace and the analyses (no Qt); rich text is HTML for Qt labels and tooltips.
Every name, lane, category and ``args`` value comes from the file: in rich text it is
:func:`~gpuviz.display.html_safe`, in plain text :func:`~gpuviz.display.terminal_safe` (control
characters shown as ``\x1b``), so ``<b>`` in a kernel name reads as ``<b>``.
"""

from __future__ import annotations

import numpy as np

from gpuviz.analysis.kernels import known_occupancy
from gpuviz.display import html_safe, terminal_safe
from gpuviz.gui.timeline.timefmt import format_at, format_ns
from gpuviz.trace.lanes import id_text
from gpuviz.trace.model import GPU_ACTIVITY_KINDS, KIND_CATEGORIES, Kind, Trace, TrackKind

OCCUPANCY_ARG = "est. achieved occupancy %"
MAIN_ARGS = (
    "grid",
    "block",
    "registers per thread",
    "shared memory",
    "blocks per SM",
    OCCUPANCY_ARG,
    "bytes",
    "memory bandwidth (GB/s)",
    "correlation",
    "External id",
    "Input Dims",
    "Input type",
    "device",
    "stream",
    "cbid",
)
"""The ``args`` a slice's hover text shows first, when it has them."""


def short(name: str, n: int = 140) -> str:
    """``name`` cut to ``n`` characters."""
    # C++ template kernel names run to hundreds of characters: keep the info line readable.
    return name if len(name) <= n else name[: n - 1] + "…"


def slice_where(trace: Trace, row: int) -> str:
    """Where slice ``row`` ran: ``rank 0 · GPU 1 · stream 7`` or ``pid 12 · thread 3``."""
    tr = trace.tracks
    t = int(trace.slices.track[row])
    kind = int(tr.kind[t])
    rank = int(tr.rank[t])
    rk = f"rank {rank} · " if rank >= 0 else ""
    if kind in (TrackKind.GPU_STREAM, TrackKind.GPU_ANNOTATION):
        return f"{rk}GPU {int(tr.device[t])} · stream {int(tr.stream[t])}"
    label = trace.track_label(t) or f"thread {id_text(trace, int(tr.tid[t]))}"
    return f"{rk}pid {id_text(trace, int(tr.pid[t]))} · {label}"


def describe_slice(trace: Trace, row: int, rich: bool = True) -> str:
    """The hover text of slice ``row``: name, category, duration, start, lane, main args."""
    s = trace.slices
    name = trace.name_of(row)
    kind = Kind(int(s.kind[row]))
    cat = KIND_CATEGORIES.get(kind, trace.symbols[int(s.cat[row])])

    def esc(text: str) -> str:
        return html_safe(text, one_line=True) if rich else terminal_safe(text, one_line=True)

    lines = [
        f"<b>{esc(short(name, 200))}</b>" if rich else esc(name),
        f"{esc(cat)} · {esc(format_ns(float(s.dur_ns[row])))} · starts at "
        f"{esc(format_at(float(s.start_ns[row]), max(float(s.dur_ns[row]) / 10, 1.0)))}",
        esc(slice_where(trace, row)),
    ]
    try:
        args = trace.args.get(int(s.args[row]))
    except Exception:
        args = {}
    shown = [(k, args[k]) for k in MAIN_ARGS if k in args]
    if not shown:
        shown = list(args.items())[:6]
    for k, v in shown[:8]:
        text = str(v)
        if k == OCCUPANCY_ARG and known_occupancy(v, args.get("warps per SM")) is None:
            text = "unknown (CUPTI computed none for this launch)"  # it writes 0: no figure
        if len(text) > 80:
            text = text[:77] + "…"
        lines.append(f"{esc(k)}: {esc(text)}")
    return "<br>".join(lines) if rich else "\n".join(lines)


def range_summary(trace: Trace, t0: int, t1: int) -> str:
    """The figures of a measured range ``[t0, t1)`` (rich text): kernels, busy time, overlap."""
    try:
        from gpuviz.analysis.ranges import range_stats

        st = range_stats(trace, t0, t1)
    except Exception as exc:  # an analysis bug must not break the selection
        return html_safe(f"Range {format_ns(t1 - t0)} (figures unavailable: {exc})")
    parts = [
        f"<b>Range {html_safe(format_ns(st.duration_ns))}</b> "
        f"({html_safe(format_at(t0, (t1 - t0) / 100))} → "
        f"{html_safe(format_at(t1, (t1 - t0) / 100))})",
        f"{st.kernels:,} kernel{'' if st.kernels == 1 else 's'} "
        f"({html_safe(format_ns(st.kernel_ns))})",
    ]
    if st.memcpy or st.memset:
        parts.append(f"{st.memcpy:,} copies, {st.memset:,} sets")
    busy = ", ".join(
        f"GPU {d.device}{'' if d.rank is None else f' r{d.rank}'}: "
        f"{html_safe(format_ns(d.busy_ns))} ({d.utilization:.0%})"
        for d in st.devices[:6]
    )
    parts.append(f"busy {html_safe(format_ns(st.busy_ns))}" + (f" [{busy}]" if busy else ""))
    parts.append(
        f"overlap: compute+copy {html_safe(format_ns(st.compute_copy_ns))}, "
        f"multi-stream {html_safe(format_ns(st.multi_stream_ns))}"
    )
    return " · ".join(parts)


def describe_rank_lane(
    rank: int, busy: float, compute: float, window_ns: float, collapsed: bool
) -> str:
    """The hover text of a rank's summary lane (rich text): its GPU busy share around a point.

    Parameters
    ----------
    rank : int
    busy, compute : float
        Shares of the window's time: GPUs busy, and busy with compute (the rest of the busy
        time is communication, copies and sets).
    window_ns : float
        The window's length (a few pixels).
    collapsed : bool
        Whether a click expands the rank.
    """
    other = max(busy - compute, 0.0)
    text = (
        f"<b>rank {rank}</b> · over {html_safe(format_ns(window_ns))}: GPU busy {busy:.0%} "
        f"(compute {compute:.0%}, communication and copies {other:.0%})"
    )
    if collapsed:
        text += "<br><i>click to expand this rank's lanes</i>"
    return text


def live_range_text(t0: float, t1: float) -> str:
    """The info line while a range is being dragged (rich text)."""
    return f"<b>Range {html_safe(format_ns(t1 - t0))}</b> (release to measure)"


def info_line(
    trace: Trace, selected: int, linked: np.ndarray, range_text: str, details: str = ""
) -> str:
    """The info line under the lanes (rich text): the selected slice and its link, then
    ``details`` of it (rich text its maker escaped: a kernel's op, module and line), the range."""
    parts = []
    if selected >= 0:
        s = trace.slices
        r = selected
        txt = (
            f"<b>{html_safe(short(trace.name_of(r)), one_line=True)}</b> · "
            f"{html_safe(format_ns(float(s.dur_ns[r])))} · {html_safe(slice_where(trace, r), one_line=True)}"
        )
        if len(linked):
            lk = int(linked[0])
            kind = "launch" if int(s.kind[r]) in GPU_ACTIVITY_KINDS else "GPU work"
            txt += (
                f" — {kind}: {html_safe(short(trace.name_of(lk)), one_line=True)} "
                f"({html_safe(slice_where(trace, lk), one_line=True)})"
            )
            if int(s.kind[r]) in GPU_ACTIVITY_KINDS:
                lat = float(s.start_ns[r]) - float(s.start_ns[lk])
                txt += f", launch → start {html_safe(format_ns(lat))}"
        parts.append(txt)
        if details:
            parts.append(details)
    if range_text:
        parts.append(range_text)
    if parts:
        return "<br>".join(parts)
    return (
        "<span style='color:#777'>Click a slice for details; shift+drag to measure a range.</span>"
    )


__all__ = [
    "MAIN_ARGS",
    "describe_rank_lane",
    "describe_slice",
    "info_line",
    "live_range_text",
    "range_summary",
    "short",
    "slice_where",
]
