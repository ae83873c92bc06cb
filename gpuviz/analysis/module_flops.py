"""FLOPs and MFU of the ``--by module`` rows.

A module's FLOPs are those of the counted op calls (:mod:`gpuviz.analysis.op_calls`) inside
its outermost frames, forward and backward, held where the module table holds device time
(``Attribution.node_weights``): a forward call at its own node, a backward call at the forward
op it came from when linked, so that a module's backward GEMMs are its own. The FLOPs then sum
per module path as its ``device_total_ns`` does (with its child modules'), and per outside row
as its device time does. So the top-level modules' FLOPs and the outside rows' add up to the
FLOPs of every counted call. The sums are exact ints (whole-number counts summed in three
parts, :func:`gpuviz.analysis.exact_sums.parts`): past 2**53 FLOPs a float64 sum would depend on the order of its terms,
and a rank folder's rows, summed from its ranks' (:mod:`gpuviz.analysis.breakdown_modules`),
must be the folder read whole's to the last digit.

A row's MFU is its time at peak (each precision's FLOPs over that precision's dense peak) over
its device time (forward and backward, child modules in): how busy the GPU's math units were
while the module's kernels ran, not over the step's wall time. Above 100% it is impossible
(bad shapes or durations): null, with ``inconsistent`` and ``mfu_note`` saying so.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gpuviz.analysis.attribution import Attribution
from gpuviz.analysis.breakdown_table import Breakdown, BreakdownRow
from gpuviz.analysis.compiled_regions import compile_info_of, compiled_origins
from gpuviz.analysis.exact_sums import joined as _joined
from gpuviz.analysis.exact_sums import parts as _parts
from gpuviz.analysis.frame_rows import key_totals
from gpuviz.analysis.graph_replays import GRAPH_FLOPS, GRAPH_FLOPS_CAPTURED, graph_held_rows
from gpuviz.analysis.hardware import Hardware, OpCalls
from gpuviz.analysis.modules import module_paths, outside_keys
from gpuviz.analysis.op_args import MAX_CALL_FLOPS
from gpuviz.analysis.peaks import DevicePeaks
from gpuviz.analysis.step_flops import MAX_MFU, NO_FORMULA, NO_SHAPES, SHAPES_LEFT_OUT

F64 = npt.NDArray[np.float64]

NO_COMPILED_FLOPS = (
    "unknown (no call of known FLOPs: Inductor's generated kernels are counted from the "
    "compile-info folder's node shapes, and none were found for these)"
)


def _held_at(
    att: Attribution, calls: OpCalls
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.bool_]]:
    """The node that holds each call with known FLOPs (forward calls at their node, linked
    backward calls at their forward op), and which calls those are."""
    node = att.forest.node_of(calls.rows)
    ok = (node >= 0) & np.isfinite(calls.flops)
    node = node[ok]
    src = att.forward_op[node]
    return np.where(att.backward[node] & (src >= 0), src, node), ok


def node_flops(att: Attribution, calls: OpCalls, weight: F64 | None = None) -> dict[str, F64]:
    """Per precision, the FLOPs held at each node of the call forest (:func:`_held_at`); with
    ``weight``, that per-call figure instead (a part of each call's FLOPs: :func:`_parts`)."""
    at, ok = _held_at(att, calls)
    flops, precision = (calls.flops if weight is None else weight)[ok], calls.precision[ok]
    out: dict[str, F64] = {}
    for p in sorted(set(precision.tolist())):
        sel = precision == p
        out[p] = np.bincount(at[sel], weights=flops[sel], minlength=len(att.forest)).astype(
            np.float64, copy=False
        )
    return out


def node_known(att: Attribution, calls: OpCalls) -> F64:
    """Per node of the call forest, how many calls with known FLOPs it holds, placed as
    :func:`node_flops` places their FLOPs (a known 0 counts: a cast is known work)."""
    at, _ = _held_at(att, calls)
    return np.bincount(at, minlength=len(att.forest)).astype(np.float64)


def _call_flops(att: Attribution, calls: OpCalls) -> dict[str, F64]:
    """Per precision, the FLOPs of each op call at its own node (backward ones too)."""
    node = att.forest.node_of(calls.rows)
    ok = (node >= 0) & np.isfinite(calls.flops)
    out: dict[str, F64] = {}
    for p in sorted(set(calls.precision[ok].tolist())):
        sel = calls.precision[ok] == p
        out[p] = np.bincount(
            node[ok][sel], weights=calls.flops[ok][sel], minlength=len(att.forest)
        ).astype(np.float64, copy=False)
    return out


def exact_flops(calls: OpCalls) -> bool:
    """Whether the module rows' FLOPs of these calls are exact ints (:func:`_parts`)."""
    return _parts(calls.flops[np.isfinite(calls.flops)]) is not None


@dataclass
class RowFlops:
    """What a module table's row's FLOPs and MFU are made of (:func:`row_flops`).

    Attributes
    ----------
    by : dict of str to int or float
        Its FLOPs per precision (those above 0), in the order its MFU sums their time at
        peak: exact ints where every call's count is a whole number (:func:`_parts`), else
        float64 sums.
    known : int or None
        How many calls with known FLOPs it holds (a known 0 counts); None for a row the
        module and outside rows do not index (its FLOPs are those of ``by``, no note).
    compiled : bool
        A compiled model's row (``compiled_in``): FLOPs of the calls whose kernels it holds.
    """

    by: dict[str, int] | dict[str, float]
    known: int | None
    compiled: bool = False


def row_flops(table: Breakdown, hw: Hardware, att: Attribution) -> list[RowFlops]:
    """Per row of a ``module`` table (in its order), the FLOPs :func:`fill_row` makes its
    ``flops`` and ``mfu`` of (see the module docstring for where a call's FLOPs are held).

    Parameters
    ----------
    table : Breakdown
        ``breakdown(trace, "module")``.
    hw : Hardware
        ``hardware(trace)`` of the same trace: its counted calls.
    att : Attribution
        ``attribute(trace)``: the module frames and backward links the table was made from.

    Returns
    -------
    list of RowFlops
    """
    frame, path, paths = module_paths(att)
    out_key, out_names = outside_keys(att)
    outside = att.forest.nearest(frame) < 0
    parts = _parts(hw.calls.flops)
    # Per precision, the FLOPs per module path and per outside row: as float64 sums, or (all
    # whole numbers) as the sums of each of their three parts, joined into ints per row.
    per_module: dict[str, list[F64]] = {}
    per_outside: dict[str, list[F64]] = {}
    for weight in [None] if parts is None else parts:
        for p, w in node_flops(att, hw.calls, weight).items():
            per_module.setdefault(p, []).append(key_totals(att, frame, path, len(paths), w))
            per_outside.setdefault(p, []).append(
                np.bincount(out_key[outside], weights=w[outside], minlength=len(out_names)).astype(
                    np.float64, copy=False
                )
            )
    counted = node_known(att, hw.calls)
    known_module = key_totals(att, frame, path, len(paths), counted)
    known_outside: F64 = np.bincount(
        out_key[outside], weights=counted[outside], minlength=len(out_names)
    ).astype(np.float64, copy=False)
    module_index = {name: i for i, name in enumerate(paths)}
    outside_index = {name: i for i, name in enumerate(out_names)}
    # A compiled model's rows (issue 49): the FLOPs of the calls whose kernels they hold.
    compiled = compiled_row_flops(table, att, _call_flops(att, hw.calls), exact=parts is not None)
    out: list[RowFlops] = []
    for j, row in enumerate(table.rows):
        if "compiled_in" in row.extra:
            out.append(RowFlops(compiled.get(j, {}), None, compiled=True))
            continue
        if row.kind == "outside":
            i, source, known = outside_index.get(row.key), per_outside, known_outside
        else:
            i, source, known = module_index.get(row.key), per_module, known_module
        if i is None:
            out.append(RowFlops({}, None))
            continue
        sums = {p: float(v[0][i]) if parts is None else _joined(v, i) for p, v in source.items()}
        out.append(RowFlops({p: v for p, v in sums.items() if v > 0}, int(known[i])))
    return out


def unknown_flops(row: BreakdownRow, why: str) -> None:
    """A row whose FLOPs and MFU are unknown, and why."""
    row.extra.update(flops=None, mfu=None, inconsistent=False, mfu_note=why)


def fill_row(row: BreakdownRow, f: RowFlops, peaks: DevicePeaks | None) -> None:
    """Set a module row's ``flops``, ``mfu``, ``inconsistent`` and ``mfu_note`` from its
    FLOPs ``f``, its device time and the device's ``peaks`` (None: unknown)."""
    if f.compiled and not f.by:
        unknown_flops(row, NO_COMPILED_FLOPS)
        return
    if not f.compiled and f.known == 0:  # no call with a FLOP formula in it: unknown, not 0
        unknown_flops(row, NO_FORMULA)
        return
    by = f.by
    total = sum(by.values())
    # each precision at its own peak: time at peak over the row's device time
    at_peak = [v / (peaks.tflops(p) or 0) / 1e3 for p, v in by.items() if peaks and peaks.tflops(p)]
    dur = row.device_total_ns
    got = sum(at_peak) / dur if at_peak and dur > 0 else None
    note = None
    if got is not None and got > MAX_MFU:
        note = (
            "inconsistent: more FLOPs than the peak does in its device time "
            "(bad shapes or durations)"
        )
        got = None
    elif got is not None and len(at_peak) < len(by):
        note = "a lower bound: FLOPs of a precision with no peak left out"
    row.extra["flops"] = round(total) if total < MAX_CALL_FLOPS * 2**20 else None
    row.extra["mfu"] = None if got is None else round(got, 5)
    row.extra["inconsistent"] = note is not None and note.startswith("inconsistent")
    row.extra["mfu_note"] = note


def annotate_modules(table: Breakdown, hw: Hardware, att: Attribution) -> None:
    """Add ``flops`` and ``mfu`` to a ``module`` table's rows (in their ``extra``).

    Parameters
    ----------
    table : Breakdown
        ``breakdown(trace, "module")``; other tables are left as they are.
    hw : Hardware
        ``hardware(trace)`` of the same trace: its counted calls and peaks.
    att : Attribution
        ``attribute(trace)``: the module frames and backward links the table was made from.

    Notes
    -----
    ``mfu`` is null where no peak is known or the row has no FLOPs (as a step's is); both are
    null on every row of a trace with no counted FLOPs (recorded without shapes).
    A rank folder's table is made from its ranks' :func:`row_flops` summed
    (:mod:`gpuviz.analysis.breakdown_modules`), through :func:`fill_row` as here.
    """
    if table.by != "module":
        return
    if not np.isfinite(hw.calls.flops).any():
        for row in table.rows:
            unknown_flops(row, SHAPES_LEFT_OUT if hw.shapes_dropped else NO_SHAPES)
        return
    for row, f in zip(table.rows, row_flops(table, hw, att), strict=True):
        fill_row(row, f, hw.peaks.peaks)
    held = graph_held_rows(table, att)
    why = GRAPH_FLOPS
    if held:
        from gpuviz.analysis.graph_merge import merge_of

        merge = merge_of(att)
        if merge is not None and merge.own(att).any():
            why = GRAPH_FLOPS_CAPTURED  # the capture is here: the steps and ops count it
    for i in held:
        # Its graph replays' FLOPs are not counted per module.
        unknown_flops(table.rows[i], why)


def compiled_row_flops(
    table: Breakdown,
    att: Attribution,
    node_flops: dict[str, npt.NDArray[np.float64]],
    exact: bool = False,
) -> dict[int, dict[str, float]]:
    """Per precision, the FLOPs of the rows :func:`refine` added to a module table: those of
    the op calls (``aten::mm`` of ``extern_kernels.mm``, and Inductor's own kernels counted
    from the FX nodes they fuse: :mod:`gpuviz.analysis.compiled_calls`) whose kernels a row
    holds, its child rows' included. A row with no call of known FLOPs has none (absent from
    the result).

    Parameters
    ----------
    table : Breakdown
        A refined module table.
    att : Attribution
    node_flops : dict
        Precision -> FLOPs held at each forest node (each call at its own node).
    exact : bool
        Every count is a whole number: sum them as ints (exact however many, :func:`_parts`).

    Returns
    -------
    dict
        Row index -> precision -> FLOPs, for rows with FLOPs.
    """
    origins = compiled_origins(att, compile_info_of(att.trace))
    index = {r.key: i for i, r in enumerate(table.rows)}
    out: dict[int, dict[str, float]] = {}
    seen: set[tuple[int, int]] = set()
    for k in np.flatnonzero((origins.call >= 0) & (table.kernel_row >= 0)).tolist():
        leaf, call = int(table.kernel_row[k]), int(origins.call[k])
        row = table.rows[leaf]
        if "compiled_in" not in row.extra or (leaf, call) in seen:
            continue
        seen.add((leaf, call))  # a call's FLOPs once, however many kernels it ran
        top = str(row.extra["compiled_in"])
        key = row.key
        while True:
            i = index.get(key)
            if i is None or key == top:
                break
            for p, w in node_flops.items():
                if w[call] > 0:
                    out.setdefault(i, {})
                    out[i][p] = out[i].get(p, 0) + (int(w[call]) if exact else float(w[call]))
            key = key.rpartition(".")[0]
    return out
