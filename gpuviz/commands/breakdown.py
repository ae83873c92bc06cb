"""``gpuviz breakdown TRACE --by op|op-shape|module|line|kernel|step``: where the time went.

Prints one table of :func:`gpuviz.analysis.breakdown.breakdown`: ops (by name, or by name and
input shapes), modules (forward and backward device time), source lines, kernels or steps;
largest device time first (steps in order). ``--json`` prints
``{"by", "source", "rows": [...], "unattributed_device_us"}``, each row with ``key``,
``calls``, ``cpu_self_us``, ``cpu_total_us``, ``device_self_us``, ``device_total_us`` and the
fields of its kind (see README), and ``import_warnings`` where the import warned of something
(the text lists them under its ``trace:`` line). ``--top N`` keeps the first N rows (0: all).

With ``--cluster``, a rank folder's op, op-shape, kernel, module, line and step tables are
made a rank at a time on the cluster's workers and summed here
(:mod:`gpuviz.commands.breakdown_ranks`): the same output, plus ``incomplete``
(``{"ranks_failed", "of", "failed"}``) where a rank file failed
and was left out (named on stderr; the text says so under its ``trace:`` line).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuviz.display import counted, echo, json_text, terminal_safe, warning_lines
from gpuviz.errors import BadInputError

if TYPE_CHECKING:
    from gpuviz.analysis.breakdown_table import Breakdown, BreakdownRow
    from gpuviz.analysis.hardware import Hardware
    from gpuviz.analysis.peaks import PeakOverride
    from gpuviz.trace.model import Trace

DEFAULT_TOP = 20
KEY_WIDTH = 100


def main(args: argparse.Namespace) -> int:
    """Load ``args.trace`` and print its breakdown ``args.by``."""
    from gpuviz.analysis.breakdown import NoStacksError, breakdown
    from gpuviz.commands.reading import import_warnings, read_trace

    if args.top < 0:
        raise BadInputError(f"--top {args.top}: expected 0 (all rows) or a positive count")
    if args.mine and args.by != "line":
        raise BadInputError("--mine: applies to --by line only")
    path = Path(args.trace)
    if not path.exists():
        raise BadInputError(f"{args.trace}: no such file or folder")
    from gpuviz.commands.breakdown_ranks import breakdown_by_rank

    by_rank = breakdown_by_rank(path, args)  # --cluster: from the ranks' rows (None: whole)
    if by_rank is not None:
        merged, incomplete = by_rank
        if merged.no_stacks:
            from gpuviz.analysis.breakdown import NO_STACKS

            raise BadInputError(f"{args.trace}: --by {args.by}: the trace {NO_STACKS}")
        many = merged.sources
        source: Any = many[0] if len(many) == 1 else many
        warned = list(merged.warnings.samples)
        if merged.hardware is not None:
            say_hardware(merged.hardware)
        _report(args, merged.table, source, warned, merged.hardware, None, incomplete)
        return 0
    # What the import left out under --max-memory (shapes, stacks) changes these tables: say it.
    trace = read_trace(
        path,
        say_dropped=True,
        captures=True,
        capture_trace=args.capture_trace,
        compile_info=args.compile_info,
    )
    try:
        table = breakdown(trace, args.by, mine=args.mine)
    except NoStacksError as exc:
        from gpuviz.trace.memory_budget import DROP_PYTHON

        if DROP_PYTHON in trace.dropped:
            raise BadInputError(
                f"{args.trace}: --by {args.by}: its Python stacks were left out to fit the "
                "memory limit; raise --max-memory (or GPUVIZ_MAX_MEMORY) to keep them"
            ) from None
        raise BadInputError(f"{args.trace}: --by {args.by}: the trace {exc}") from None
    from gpuviz.commands.peak_options import peak_override_of

    hw = add_hardware_columns(table, trace, peak_override_of(args))
    source = trace.sources[0] if len(trace.sources) == 1 else trace.sources
    merged_note = _capture_note(trace) if table.by in ("op", "module", "line") else None
    _report(args, table, source, import_warnings(trace), hw, merged_note)
    return 0


def _report(
    args: argparse.Namespace,
    table: Breakdown,
    source: Any,
    warned: list[str],
    hw: Hardware | None,
    merged: dict[str, Any] | None,
    incomplete: dict[str, Any] | None = None,
) -> None:
    """Print ``table`` as ``args`` ask (``--json``, ``--top``): the one report of the folder
    read whole and of its ranks' rows merged (``incomplete``: the ranks left out)."""
    from gpuviz.report.peaks import peak_phrase

    peaks_line = peak_phrase(hw) if hw is not None else None
    rows = table.rows if args.top == 0 else table.rows[: args.top]
    if args.json:
        echo(
            json_text(
                {
                    "by": table.by,
                    "source": source,
                    "rows": [r.to_json(table.by) for r in rows],
                    "unattributed_device_us": round(table.unattributed_device_ns / 1000.0, 3),
                    **({"peaks": hw.peak_json()} if hw is not None else {}),
                    **({"graph_capture": merged} if merged is not None else {}),
                    **({"import_warnings": warned} if warned else {}),
                    **({"incomplete": incomplete} if incomplete is not None else {}),
                }
            )
        )
    else:
        text = format_breakdown(
            table, rows, source, len(table.rows), peaks_line, warned, incomplete
        )
        echo(text + ("" if merged is None else "\n\n" + capture_line(merged)))


def _capture_note(trace: Trace) -> dict[str, Any] | None:
    """``graph_capture`` of the JSON: the capture files and how many replayed kernels they
    placed; None where no capture is attached."""
    from gpuviz.analysis.attribution import attribute
    from gpuviz.analysis.graph_merge import captures_of, merge_of
    from gpuviz.trace.graph_captures import CAPTURE_ERRORS

    captures = captures_of(trace)
    errors = trace.derived.get(CAPTURE_ERRORS) or []
    if not captures and not errors:
        return None
    m = merge_of(attribute(trace)) if captures else None
    return {
        "files": [s for c in captures for s in c.sources],
        "graph_kernels": m.graph_kernels if m is not None else None,
        "matched_kernels": len(m.kernel) if m is not None else 0,
        "grid_mismatches": m.grid_mismatches if m is not None else None,
        **({"capture_errors": list(errors)} if errors else {}),
    }


def capture_line(note: dict[str, Any]) -> str:
    """The text report's line on the graph capture it used."""
    files = ", ".join(terminal_safe(f, one_line=True) for f in note["files"])
    skipped = [
        f"Graph capture left out: {terminal_safe(e, one_line=True)}"
        for e in note.get("capture_errors", [])
    ]
    if not note["files"]:
        return "\n".join(skipped)
    if not note["matched_kernels"]:
        return "\n".join([f"Graph capture: {files}: no replayed kernel matched it", *skipped])
    return "\n".join(
        [
            f"Graph capture: {note['matched_kernels']} of {note['graph_kernels']} replayed "
            f"kernels placed where they were captured ({files}); the rest stay on their graph "
            "unit",
            *skipped,
        ]
    )


def add_hardware_columns(
    table: Breakdown, trace: Trace, override: PeakOverride | None
) -> Hardware | None:
    """Roofline columns on ``op-shape`` rows, FLOPs and MFU on ``step`` and ``module`` rows;
    says on stderr when the device's peaks are unknown. Returns the figures (None for other
    tables)."""
    if table.by not in ("op-shape", "step", "module"):
        return None
    from gpuviz.analysis.hardware import annotate_breakdown, hardware

    hw = hardware(trace, override)
    if table.by == "module":
        from gpuviz.analysis.attribution import attribute
        from gpuviz.analysis.module_flops import annotate_modules

        annotate_modules(table, hw, attribute(trace))
    else:
        annotate_breakdown(table, hw)
    say_hardware(hw)
    return hw


def say_hardware(hw: Hardware) -> None:
    """On stderr: the calls skipped or flagged as FLOPs were counted, and the peaks unknown."""
    from gpuviz.commands.peak_options import unknown_device_line

    for warning in hw.warnings:  # calls skipped or flagged, counted
        echo(f"gpuviz: warning: {terminal_safe(warning, one_line=True)}", file=sys.stderr)
    line = unknown_device_line(hw)
    if line is not None:
        echo(line, file=sys.stderr)


def _compiled_note(rows: Sequence[BreakdownRow]) -> list[str]:
    """Under an op or kernel table with compiled code: how its rows were placed (issue 49)."""
    sources = {r.extra.get("attribution_source") for r in rows if "fused_ops" in r.extra}
    if not sources:
        return []
    if "compile-info" in sources:
        how = "from the run's compile-info folder"
    else:
        how = (
            "by kernel names only (which ops, not which layer): record with `gpuviz profile "
            "--compile-info` or pass --compile-info DIR"
        )
    return [
        f"  compiled code (torch.compile): Inductor kernels placed {how}; --json lists each "
        "row's fused_ops, fused_nodes and modules"
    ]


def _ms(ns: float | None) -> str:
    return "-" if ns is None else f"{ns / 1e6:.3f}"


def _num(value: Any, scale: float, digits: int, unit: str = "") -> str:
    return "-" if value is None else f"{value * scale:.{digits}f}{unit}"


def _gflop_cell(x: dict[str, Any]) -> str:
    """A step's or module's GFLOP: ``unknown`` where its FLOPs are (no shapes, shapes left
    out to fit --max-memory, no op with a formula), never 0.0."""
    flops = x.get("flops")
    if flops is None or (flops == 0 and x.get("mfu_note")):
        return "unknown"
    return f"{flops / 1e9:.1f}" if flops >= 1e8 or flops == 0 else f"{flops / 1e9:.2g}"


def _mfu_cell(x: dict[str, Any]) -> str:
    """``12.3%``, ``>= 12.3%`` (FLOPs known for part of the GPU time), ``unknown
    (inconsistent)`` or ``unknown``; the notes under the table say why."""
    from gpuviz.report.shares import pct

    mfu = x.get("mfu")
    if mfu is None:
        floor = x.get("mfu_lower_bound")
        if x.get("inconsistent"):
            return "unknown (inconsistent)"
        return "unknown" if floor is None else f"unknown (>= {pct(floor)})"
    # pct: a decode step's 0.03% must not read as 0.0%.
    return f"{'>= ' if x.get('mfu_is_lower_bound') else ''}{pct(mfu)}"


def _flop_notes(by: str, rows: list[BreakdownRow], most: int = 3) -> list[str]:
    """Why the first few rows' figures are unknown, inconsistent or lower bounds."""
    if by not in ("step", "module", "op-shape"):
        return []
    key = "roof_note" if by == "op-shape" else "mfu_note"
    noted = [r for r in rows if r.extra.get(key)]
    notes: dict[str, str] = {}
    for r in noted:  # one line per distinct reason, with the first row that has it
        notes.setdefault(str(r.extra[key]), r.key)
    out = [
        f"  {_short(terminal_safe(k, one_line=True), 40)}: {terminal_safe(why, one_line=True)}"
        for why, k in list(notes.items())[:most]
    ]
    if len(notes) > most:
        out.append(f"  … {len(notes) - most} more reasons")
    return ["", *out] if out else []


def _short(text: str, width: int = KEY_WIDTH) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


_TITLES = {
    "op": "Ops by name",
    "op-shape": "Ops by name and input shapes",
    "module": (
        "Modules (device time forward, backward and other (optimizer, loss...), FLOPs of both, MFU over their device time;"
        " rows outside any module marked *)"
    ),
    "line": "Source lines (innermost line first)",
    "kernel": "Kernels, copies and sets by name",
    "step": "Steps",
}


_ROW_KEY = {
    "op": "op",
    "op-shape": "op",
    "module": "module",
    "line": "source line",
    "kernel": "kernel",  # every kernel has a name: none is ever in no row
    "step": "step",
}
"""What a row of each ``--by`` is keyed by, for the line about device time in no row (it
said "outside any step" under ``--by module``)."""


def format_breakdown(
    table: Breakdown,
    rows: list[BreakdownRow],
    source: Any,
    total_rows: int,
    peaks_line: str | None = None,
    warned: Sequence[str] = (),
    incomplete: dict[str, Any] | None = None,
) -> str:
    """The text form: a title, then a table of ``rows`` (times in ms), names escaped; the
    import's warnings ``warned`` under the ``trace:`` line, and the ranks left out
    (``incomplete``, ``--cluster``) under them."""
    from gpuviz.report.tables import text_table

    by = table.by
    src = source if isinstance(source, str) else ", ".join(source)
    lines = [f"trace: {terminal_safe(src, one_line=True)}", *warning_lines(warned)]
    if incomplete is not None:
        lines.append(
            f"incomplete: {incomplete['ranks_failed']} of {incomplete['of']} rank files "
            "failed and are left out (named on stderr); the figures are the other ranks'"
        )
    lines.append("")
    shown = (
        f"{len(rows)} of {counted(total_rows, 'row')}"
        if len(rows) < total_rows
        else counted(total_rows, "row")
    )
    lines.append(f"{_TITLES[by]}, {shown}, times in ms")
    if peaks_line:
        lines.insert(-1, peaks_line)
    headers = ["device total", "device self"]
    if by in ("module", "line"):
        headers += ["forward", "backward", "other"]
    if by == "step":
        headers += ["duration"]
    headers += ["cpu total", "cpu self", "calls"]
    if by in ("op", "op-shape"):
        headers += ["GFLOP"]
    if by == "op-shape":
        headers += ["TFLOP/s", "FLOP/B", "bound", "roof"]
    if by in ("step", "module"):
        headers += ["GFLOP", "MFU"]
    phased = by == "step" and any("phase" in r.extra for r in rows)
    if phased:  # a serving trace's steps (docs/serving.md)
        headers += ["phase", "tokens"]
    headers += ["name" if by != "step" else "step"]
    if by == "op-shape":
        headers += ["input shapes"]
    cells: list[Sequence[Any]] = []
    for r in rows:
        c: list[Any] = [_ms(r.device_total_ns), _ms(r.device_self_ns)]
        if by in ("module", "line"):
            c += [_ms(r.forward_device_ns), _ms(r.backward_device_ns), _ms(r.other_device_ns)]
        if by == "step":
            c += [_ms(r.duration_ns)]
        if r.extra.get("cpu_note"):  # a compiled model's module or line: no frames of its own
            c += ["unknown", "unknown", r.calls]
        else:
            c += [_ms(r.cpu_total_ns), _ms(r.cpu_self_ns), r.calls]
        if by == "op":
            f = r.sane_flops
            c += [("-" if r.flops is None else "inconsistent") if f is None else f"{f / 1e9:.3f}"]
        if by == "op-shape":
            x = r.extra
            c += [
                _num(x.get("flops", r.sane_flops), 1e-9, 3),
                _num(x.get("tflops"), 1, 1),
                _num(x.get("intensity"), 1, 1),
                x.get("bound") or "-",
                "inconsistent" if x.get("inconsistent") else _num(x.get("roof_share"), 100, 0, "%"),
            ]
        if by in ("step", "module"):
            c += [_gflop_cell(r.extra), _mfu_cell(r.extra)]
        if phased:
            tokens = r.extra.get("tokens")
            c += [r.extra.get("phase") or "unknown", "unknown" if tokens is None else tokens]
        key = ("* " if r.kind == "outside" else "") + r.key
        c += [_short(terminal_safe(key, one_line=True))]
        if by == "op-shape":
            c += [_short(terminal_safe(str(r.input_shapes), one_line=True), 60)]
        cells.append(c)
    name_col = len(headers) - (2 if by == "op-shape" else 1)
    left = (name_col, name_col + 1) if by == "op-shape" else (name_col,)
    lines += text_table(headers, cells, left=left) if cells else ["  (no rows)"]
    lines += _flop_notes(by, rows)
    notes = sorted({str(r.extra["cpu_note"]) for r in rows if r.extra.get("cpu_note")})
    lines += [f"  cpu time {n}" for n in notes]
    lines += _compiled_note(rows)
    if table.unattributed_device_ns:
        lines += [
            "",
            f"Device time in no row: {_ms(table.unattributed_device_ns)} ms "
            f"(kernels whose launch is not in the trace, or launched outside any {_ROW_KEY[by]})",
        ]
    return "\n".join(lines)
