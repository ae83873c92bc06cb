"""The ``breakdown`` tool's text, and the "where the device time goes" lines of ``overview``.

Both read ``gpuviz breakdown``'s tables (:func:`~gpuviz.analysis.breakdown.breakdown`, with
the roofline columns and step MFU that :func:`~gpuviz.analysis.hardware.annotate_breakdown`
adds, as the CLI does). The answer leads with the key numbers: how much device time the trace
has, which rows launched most of it themselves (their *self* time: the rows of a table nest,
so their totals overlap, but their self times add up to the whole), and for steps the MFU;
then the table, its name column last so that no padding is spent on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from gpuviz.agents.answers import name
from gpuviz.display import counted
from gpuviz.report.shares import pct

if TYPE_CHECKING:
    from gpuviz.analysis.breakdown_table import Breakdown, BreakdownRow
    from gpuviz.analysis.hardware import Hardware
    from gpuviz.trace.model import Trace

TOP = 15
"""Rows the ``breakdown`` tool lists unless told otherwise."""

TITLES = {
    "op": "ops by name",
    "op-shape": "ops by name and input shapes",
    "module": "modules (forward and backward device time; * marks time outside any module)",
    "line": "source lines (innermost first)",
    "kernel": "kernels, copies and sets by name",
    "step": "steps, in order",
}


def _ms(ns: float | None) -> str:
    return "-" if ns is None else f"{ns / 1e6:.3f}"


def _num(value: Any, scale: float, digits: int, unit: str = "") -> str:
    return "-" if value is None else f"{value * scale:.{digits}f}{unit}"


def _pct(part: float, whole: float) -> str:
    return f"{100 * part / whole:.0f}%" if whole > 0 else "-"


def device_total_ns(trace: Trace, table: Breakdown) -> int:
    """The device time of every kernel, copy and set the table covers (in rows or not)."""
    return int(trace.slices.dur_ns[table.kernel_rows].sum())


def row_name(row: BreakdownRow, width: int) -> str:
    """A row's key as data on one line (``* `` before time outside any module)."""
    return ("* " if row.kind == "outside" else "") + name(row.key, width)


def top_self(table: Breakdown, n: int, kinds: tuple[str, ...] | None = None) -> list[BreakdownRow]:
    """The ``n`` rows that launched most device time themselves (of ``kinds`` only)."""
    rows = [r for r in table.rows if r.device_self_ns > 0 and (kinds is None or r.kind in kinds)]
    return sorted(rows, key=lambda r: (-r.device_self_ns, r.key))[:n]


def self_phrase(rows: list[BreakdownRow], total: int, width: int = 70) -> str:
    """``aten::mm 4.054 (20%), aten::copy_ 3.218 (16%)``: names, self ms, share of ``total``."""
    return ", ".join(
        f"{row_name(r, width)} {_ms(r.device_self_ns)} ({_pct(r.device_self_ns, total)})"
        for r in rows
    )


def breakdown_answer(
    label: str,
    table: Breakdown,
    trace: Trace,
    hw: Hardware | None,
    top: int = TOP,
    detail: bool = False,
    cursor: int = 0,
) -> tuple[str, dict[str, Any]]:
    """The ``breakdown`` tool's answer: key numbers, then the first ``top`` rows (0: all),
    in pages of whole rows from ``cursor`` (:mod:`gpuviz.agents.paging`); its text and its
    figures (:class:`~gpuviz.agents.schemas.BreakdownOut`).

    Parameters
    ----------
    label : str
        The file as the agent named it.
    table : Breakdown
        ``gpuviz breakdown``'s table (annotated for ``op-shape`` and ``step``).
    trace : Trace
        Its trace (for the device time in all).
    hw : Hardware or None
        The trace's roofline figures, for the peaks line of ``op-shape`` and ``step``.
    top : int
        Rows asked for (0: all).
    detail : bool
        Whole names, a longer page.
    cursor : int
        The first row to give (the ``next_cursor`` of the previous page).
    """
    from gpuviz.agents.answers import DETAIL_LIMIT, LIMIT, mfu_json
    from gpuviz.agents.paging import Page, check_cursor, rows_that_fit
    from gpuviz.report.tables import text_table

    by = table.by
    selected = table.rows if top == 0 else table.rows[:top]
    check_cursor(cursor, len(selected))
    total = device_total_ns(trace, table)
    lines: list[str] = []
    if by in ("op-shape", "step") and hw is not None:
        from gpuviz.report.peaks import peak_phrase

        lines.append(peak_phrase(hw) + ".")
    lines += _key_lines(table, total)
    lines += ["Times in ms, over the whole trace; share: of the device time."]
    headers = _headers(by)
    width = 400 if detail else 100
    candidates: list[Sequence[Any]] = [
        _cells(r, by, total, detail, width) for r in selected[cursor : cursor + 2000]
    ]

    def head_of(page: Page) -> str:
        head = (
            f"{name(label, 200)}: {TITLES[by]}, {counted(len(table.rows), 'row')} ({page.span()} below); "
            f"{_ms(total)} ms of device time (kernels, copies, sets) over the trace"
        )
        if table.unattributed_device_ns:
            head += f", {_ms(table.unattributed_device_ns)} ms of it in no row"
        return head

    # Whole rows while they fit beside the rest of the answer: the head at its longest, the
    # table's header row and the line on what is left (under 160 characters).
    formatted = text_table(headers, candidates, left=(len(headers) - 1,))
    widest = Page(10**6, 10**6, 10**7, 10**7)
    fixed = sum(len(x) + 1 for x in [head_of(widest), formatted[0], *lines]) + 160
    n = rows_that_fit(formatted[1:], (DETAIL_LIMIT if detail else LIMIT) - fixed, 0)
    n = n if candidates else 0
    page = Page(cursor, n, len(selected), len(table.rows))
    head = head_of(page)
    lines.insert(0, head + ".")
    lines += text_table(headers, candidates[:n], left=(len(headers) - 1,)) if n else ["  (no rows)"]
    if (more := page.more_line()) is not None:
        lines.append(more)
    elif len(selected) < len(table.rows):
        lines.append(f"… {len(table.rows) - len(selected)} more rows: raise top (0: all).")
    rows = []
    for r in selected[cursor : cursor + n]:
        row = r.to_json(by)
        row["key"] = name(r.key, 1000)
        rows.append(row)
    mfu = mfu_json(hw)[0] if by == "step" and hw is not None else None
    figures = {
        "path": label,
        "by": by,
        "device_us": total / 1000.0,
        "unattributed_device_us": table.unattributed_device_ns / 1000.0,
        "mfu": mfu,
        "page": page.to_json(),
        "rows": rows,
    }
    return "\n".join(lines), figures


def _headers(by: str) -> list[str]:
    headers = (
        ["device total", "share"] if by == "kernel" else ["device total", "share", "device self"]
    )
    if by in ("module", "line"):
        headers += ["forward", "backward", "other"]
    if by == "step":
        headers += ["duration"]
    headers += ["calls"] if by == "kernel" else ["cpu total", "cpu self", "calls"]
    if by == "op":
        headers += ["GFLOP"]
    if by == "op-shape":
        headers += ["GFLOP", "TFLOP/s", "FLOP/B", "bound", "roof", "precision"]
    if by == "step":
        headers += ["GFLOP", "MFU"]
    headers += [
        "step" if by == "step" else "name" + (" [input shapes]" if by == "op-shape" else "")
    ]
    return headers


def _cells(r: BreakdownRow, by: str, total: int, detail: bool, width: int) -> list[Any]:
    c: list[Any] = [_ms(r.device_total_ns), _pct(r.device_total_ns, total)]
    c += [] if by == "kernel" else [_ms(r.device_self_ns)]  # a kernel is all self time
    if by in ("module", "line"):
        c += [_ms(r.forward_device_ns), _ms(r.backward_device_ns), _ms(r.other_device_ns)]
    if by == "step":
        c += [_ms(r.duration_ns)]
    x = r.extra
    if by == "kernel":
        c += [r.calls]
    elif x.get("cpu_note"):  # a compiled model's module or line: its host time is unknown
        c += ["unknown", "unknown", r.calls]
    else:
        c += [_ms(r.cpu_total_ns), _ms(r.cpu_self_ns), r.calls]
    if by == "op":
        c += [_num(r.sane_flops, 1e-9, 3)]
    if by == "op-shape":
        c += [
            _num(x.get("flops", r.sane_flops), 1e-9, 3),
            _num(x.get("tflops"), 1, 1),
            _num(x.get("intensity"), 1, 1),
            x.get("bound") or "-",
            _num(x.get("roof_share"), 100, 0, "%"),
            x.get("precision") or "-",
        ]
    if by == "step":
        c += [_num(x.get("flops"), 1e-9, 1), _num(x.get("mfu"), 100, 1, "%")]
    key = row_name(r, width)
    if by == "op-shape":
        key += " " + name(str(r.input_shapes), 200 if detail else 80)
    c.append(key)
    return c


def _key_lines(table: Breakdown, total: int) -> list[str]:
    """What to read first: the largest self times, or for steps their time and MFU."""
    by = table.by
    if by == "step":
        if not table.rows:
            return []
        dur = [r.duration_ns or 0 for r in table.rows]
        out = [
            f"Steps: {len(dur)}, mean {_ms(sum(dur) / len(dur))} ms "
            f"(shortest {_ms(min(dur))}, longest {_ms(max(dur))})."
        ]
        mfus = [r.extra["mfu"] for r in table.rows if r.extra.get("mfu") is not None]
        if mfus:
            out.append(
                f"MFU: mean {pct(sum(mfus) / len(mfus))} over {len(mfus)} steps "
                f"(range {pct(min(mfus))[:-1]}–{pct(max(mfus))})."
            )
        return out
    if by == "kernel":
        return []  # its rows are their own self time: the table is the answer
    kinds = ("op",) if by in ("op", "op-shape") else None
    best = top_self(table, 3, kinds)
    if not best:
        return []
    return [f"Most device time launched by the row itself (self, ms): {self_phrase(best, total)}."]


def where_lines(
    trace: Trace,
    ops: Breakdown | None,
    modules: Breakdown | None,
    modules_missing: str | None = None,
    n: int = 5,
) -> list[str]:
    """``overview``'s lines on where the device time goes: the ops and the modules that
    launched most of it themselves (self time, so the shares add up and no time counts twice).

    Parameters
    ----------
    trace : Trace
    ops, modules : Breakdown or None
        ``breakdown(trace, "op")`` and ``breakdown(trace, "module")``; None where not made.
    modules_missing : str, optional
        Why there is no module table (said instead of it).
    n : int
        Names on each line.
    """
    lines = []
    table = ops if ops is not None else modules
    if table is None:
        return []
    total = device_total_ns(trace, table)
    if total <= 0:
        return []
    if ops is not None and (best := top_self(ops, n, ("op",))):
        lines.append(
            f"Top ops by device time they launched (ms over the trace, share of its "
            f"{_ms(total)} ms): {self_phrase(best, total, 60)}."
        )
    if modules is not None and (best := top_self(modules, n)):
        lines.append(
            "Top modules by device time their own code launched (* outside any module): "
            f"{self_phrase(best, total, 60)}."
        )
    elif modules_missing:
        lines.append(f"Modules: not known ({modules_missing}).")
    return lines
