"""A rank folder's ``--by op-shape`` table from its ranks' parts, as the folder read whole
gives it.

The table's rows are sums over calls like the op table's, but its roofline columns
(:func:`gpuviz.analysis.hardware.annotate_breakdown`) come from the folder's op shapes
(:class:`~gpuviz.analysis.hardware.OpShape`): per op, shapes, types and precision, the calls'
summed FLOPs, bytes and device time, with rates, intensity, bound and roof share made from
those sums against the folder's peaks. So each rank keeps, besides its rows
(:func:`shapes_part`):

- each row's raw ``Input Dims`` text and where that text first appears among the rank's ops:
  the folder groups rows by the raw text (two texts of one shape are two rows) and orders
  rows that tie on every sum by the first appearance of their text, ranks one after another;
- its shapes' sums (:class:`ShapeSums`) and whether a call was flagged (an impossible
  recorded FLOP count, more FLOPs than the peak does in the time): the merge adds the sums
  by shape and fills the figures with :func:`gpuviz.analysis.hardware.shape_figures`, the
  rule the whole trace uses;
- its peaks, the calls skipped or flagged (counted), its steps' precisions (the peaks line).

Exact, or declined (a string saying why; the caller reads the folder whole):

- sums: a call's FLOPs and bytes are whole numbers (formulas, and Kineto's ``flops`` made
  ``int``), summed as exact ints by the whole trace and by each rank
  (:mod:`gpuviz.analysis.exact_sums`), so the ranks' sums add up to the folder's at any size,
  past 2**53 too (where a float64 sum would depend on its order). Where a count is not a
  whole number (:attr:`ShapesPart.exact`, or a row's
  :attr:`~gpuviz.analysis.breakdown_table.BreakdownRow.flops_exact`) the sums are float64,
  whose rounding is not the folder's: declined;
- peaks: the folder's are its first file's with ``deviceProperties``; the ranks' differ:
  declined (each rank counted against its own);
- convolutions recorded without ``Concrete Inputs`` are counted from what the trace's
  backwards say of them (:class:`~gpuviz.analysis.conv_hints.ConvHints`), over the whole
  trace: the ranks' hints differ: declined;
- shapes: the whole trace reads no op's shapes where the first and last of its ops have none
  (:data:`~gpuviz.analysis.op_calls.SHAPE_PROBE`); ranks whose counted ops have shapes beside
  ranks (or ops) that have none: declined;
- graph replays (their calls count once per replay, matched over the whole trace) and
  compiled code counted from its compile-info folder: declined on the rank.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np

from gpuviz.analysis.breakdown_table import Breakdown, BreakdownRow
from gpuviz.analysis.conv_hints import ConvHints
from gpuviz.analysis.exact_sums import group_sums
from gpuviz.analysis.hardware import Hardware, OpShape, annotate_breakdown, shape_figures
from gpuviz.analysis.peaks import PeakMatch, PeakOverride
from gpuviz.analysis.step_flops import StepFigures
from gpuviz.trace.model import Trace

if TYPE_CHECKING:
    from gpuviz.analysis.attribution import Attribution

_EMPTY = np.zeros(0, dtype=np.int64)


@dataclass
class ShapeSums:
    """One op, shapes, types and precision of one rank: its calls' sums and flags.

    Attributes
    ----------
    name : str
    input_dims, input_types : list
        Decoded, as :class:`~gpuviz.analysis.hardware.OpShape` has them.
    precision : str
    calls : int
    flops, nbytes : int, float or None
        Summed over the calls (exact ints, or float64 sums where :attr:`ShapesPart.exact` is
        false); None where no call has one (FLOPs: also where a call's recorded FLOPs are
        impossible, the other calls' sum is kept).
    device_ns : int
    recorded_bad, bad : bool
        A call's recorded FLOPs are impossible; a call did more than the peak.
    first : int
        Its first call's index among the rank's counted calls.
    """

    name: str
    input_dims: Any
    input_types: Any
    precision: str
    calls: int
    flops: float | None
    nbytes: float | None
    device_ns: int
    recorded_bad: bool
    bad: bool
    first: int


@dataclass
class ShapesPart:
    """What a rank's op-shape rows need beside themselves to merge (see the module notes).

    Attributes
    ----------
    raw_dims : list of bytes
        Each row's raw ``Input Dims`` text (in the part's row order).
    first_seen : list of int
        Where each row's text first appears among the rank's ops (any name).
    sums : list of ShapeSums
    peaks : PeakMatch
    hints : ConvHints
        What its convolution backwards say.
    shapes : str
        ``"all"``, ``"none"`` (its counted ops have shapes, have none), ``"mixed"`` or
        ``"empty"`` (it has no op to count).
    flop_warnings : list of str
        Its calls skipped or flagged as FLOPs were counted (the folder's count them all).
    steps : list of StepFigures
        Its steps' figures (the peaks line names the precisions they do FLOPs in).
    exact : bool
        Its sums' FLOPs and bytes are exact ints (every call's count a whole number).
    """

    raw_dims: list[bytes]
    first_seen: list[int]
    sums: list[ShapeSums]
    peaks: PeakMatch
    hints: ConvHints
    shapes: str
    flop_warnings: list[str] = field(default_factory=list)
    steps: list[StepFigures] = field(default_factory=list)
    exact: bool = True


def shapes_part(
    trace: Trace, table: Breakdown, override: PeakOverride | None = None
) -> ShapesPart | str:
    """What the op-shape ``table`` of one rank file's ``trace`` needs to merge with the other
    ranks', or why it cannot be merged exactly.

    Parameters
    ----------
    trace : Trace
        One file's trace.
    table : Breakdown
        Its ``op-shape`` table (:func:`gpuviz.analysis.breakdown.breakdown`).
    override : PeakOverride, optional
        The caller's peaks.

    Returns
    -------
    ShapesPart or str
    """
    from gpuviz.analysis.attribution import attribute
    from gpuviz.analysis.hardware import hardware

    why = _unmerged(trace)
    if why:
        return why
    att = attribute(trace)
    dims = _row_dims(att, table)
    if isinstance(dims, str):
        return dims
    hw = hardware(trace, override)
    mine = rank_shapes(trace, hw, att)
    return ShapesPart(
        raw_dims=dims[0],
        first_seen=dims[1],
        sums=mine.sums,
        peaks=hw.peaks,
        hints=mine.hints,
        shapes=mine.shapes,
        flop_warnings=list(hw.warnings),
        steps=list(hw.steps),
        exact=mine.exact,
    )


@dataclass
class RankShapes:
    """A rank's op shapes' sums and what decides whether they add up to the folder's
    (:func:`rank_shapes`; the advisor's by-rank passes merge them with :func:`job_shapes`).

    Attributes
    ----------
    sums : list of ShapeSums
        In the order of the rank's :attr:`~gpuviz.analysis.hardware.Hardware.shapes`.
    hints : ConvHints
        What its convolution backwards say.
    shapes : str
        ``"all"``, ``"none"``, ``"mixed"`` or ``"empty"`` (see :class:`ShapesPart`).
    exact : bool
        Its sums' FLOPs and bytes are exact ints.
    unmerged : str
        Why its calls may not be counted as the folder counts them ("" where they are):
        graph replays, compiled code.
    """

    sums: list[ShapeSums]
    hints: ConvHints
    shapes: str
    exact: bool
    unmerged: str = ""


def rank_shapes(trace: Trace, hw: Hardware, att: Attribution | None = None) -> RankShapes:
    """The sums of ``hw``'s shapes (``hardware`` of one rank file's ``trace``) and the facts
    :func:`job_shapes` checks (``att``: the trace's attribution where made already)."""
    from gpuviz.analysis.hardware import RECORDED_BAD

    calls, n = hw.calls, len(hw.shapes)
    fin = np.isfinite(calls.flops)
    # Recomputed from the calls: a shape with an impossible recorded count has its FLOPs
    # nulled, but the merged shape's bound is made from the other calls' sum.
    flops = group_sums(calls.flops, calls.shape, n)  # exact ints; None: not whole numbers
    have_f = np.bincount(calls.shape[fin], minlength=n) > 0
    flagged = calls.bad if calls.bad is not None else np.zeros(len(calls.shape), dtype=bool)
    bad = np.bincount(calls.shape[flagged], minlength=n) > 0
    _, first = np.unique(calls.shape, return_index=True)
    sums = [
        ShapeSums(
            s.name,
            s.input_dims,
            s.input_types,
            s.precision,
            s.calls,
            flops[j] if have_f[j] else None,
            s.nbytes,
            s.device_ns,
            RECORDED_BAD in (s.note or ""),
            bool(bad[j]),
            int(first[j]),
        )
        for j, s in enumerate(hw.shapes)
    ]
    return RankShapes(
        sums,
        _hints(trace),
        _shapes_state(trace, att),
        None not in flops and all(isinstance(s.nbytes, int | None) for s in hw.shapes),
        _unmerged(trace),
    )


def _unmerged(trace: Trace) -> str:
    """Why a rank file's calls are not counted as the folder read whole counts them, or ""."""
    from gpuviz.analysis.hardware import COMPILE_INFO_KEY
    from gpuviz.analysis.names import graph_launch_mask

    if COMPILE_INFO_KEY in trace.derived:
        return "compiled code counted from its compile-info folder"
    if graph_launch_mask(trace.symbols).any():
        return "graph replays (a captured call counts once per replay of the whole trace)"
    return ""


def _decoded(raw: bytes) -> Any:
    """A row's ``input_shapes`` from its raw text, as :func:`~gpuviz.analysis.op_table.op_table`
    decodes it."""
    try:
        return (msgspec.json.decode(raw) if raw else None) or []
    except msgspec.DecodeError:
        return []


def _row_dims(att: Attribution, table: Breakdown) -> tuple[list[bytes], list[int]] | str:
    """Each row's raw ``Input Dims`` text and the first op (any name) that has it; why not
    where two texts of one op read as the same shapes (the folder's rows would be two)."""
    from gpuviz.analysis.op_table import op_display_name

    nodes = att.op_node_indices()
    raws = att.op_args(("input_dims",)).input_dims  # decoded already by the op-shape table
    first: dict[bytes, int] = {}
    for i, raw in enumerate(raws):
        first.setdefault(raw, i)
    names = att.trace.symbols.strings
    text: dict[tuple[str, bytes], bytes] = {}
    for nid, raw in set(zip(att.name[nodes].tolist(), raws, strict=True)):
        key = (op_display_name(names[nid]), msgspec.json.encode(_decoded(raw)))
        if text.setdefault(key, raw) != raw:
            return f"{key[0]!r}: two texts of one shape's Input Dims"
    out: list[bytes] = []
    for r in table.rows:
        got = text.get((r.key, msgspec.json.encode(r.input_shapes or [])))
        if got is None:
            return f"{r.key!r}: a row of no op's shapes"
        out.append(got)
    return out, [first[raw] for raw in out]


def _hints(trace: Trace) -> ConvHints:
    """What the trace's convolution backwards say of their forwards, as
    :func:`~gpuviz.analysis.op_calls.count_calls` reads them."""
    from gpuviz.analysis.names import name_mask
    from gpuviz.analysis.node_args import decode_args
    from gpuviz.analysis.op_args import CONV_BACKWARDS, OLD_CONV_BACKWARDS
    from gpuviz.analysis.op_calls import _conv_hints, candidate_rows

    s = trace.slices
    backward = name_mask(trace.symbols, lambda n: n in CONV_BACKWARDS or n in OLD_CONV_BACKWARDS)
    rows = candidate_rows(trace)
    rows = rows[backward[s.name[rows]]] if len(backward) else rows[:0]
    if not len(rows):
        return ConvHints()
    got = decode_args(trace, rows, ("input_dims",))
    return _conv_hints(trace.symbols.strings, s.name[rows].tolist(), got.input_dims)


def _shapes_state(trace: Trace, att: Attribution | None = None) -> str:
    """Whether the ops the FLOPs and bytes may be counted at have shapes: ``all``, ``none``,
    ``mixed``, or ``empty`` (no such op); from ``att``'s decoded args where given."""
    from gpuviz.analysis.node_args import decode_args
    from gpuviz.analysis.op_calls import candidate_rows

    rows = candidate_rows(trace)
    if not len(rows):
        return "empty"
    if att is None:
        has = {bool(r) for r in decode_args(trace, rows, ("input_dims",)).input_dims}
        return "mixed" if len(has) > 1 else ("all" if has.pop() else "none")
    where = np.full(len(trace.slices), -1, dtype=np.int64)
    op_rows = att.forest.rows[att.op_node_indices()]
    where[op_rows] = np.arange(len(op_rows))
    at = where[rows]
    raws = att.op_args(("input_dims",)).input_dims  # decoded already by the op-shape table
    has = {bool(raws[i]) for i in at[at >= 0].tolist()}
    if (at < 0).any():  # ops not in the table (another kind of node): read here
        has |= {bool(r) for r in decode_args(trace, rows[at < 0], ("input_dims",)).input_dims}
    return "mixed" if len(has) > 1 else ("all" if has.pop() else "none")


def merge_shapes(
    rows: Sequence[list[BreakdownRow]],
    infos: Sequence[ShapesPart | None],
    with_properties: Sequence[bool],
    ranks: Sequence[int | None],
    add: Callable[[BreakdownRow, BreakdownRow], str | None],
) -> tuple[Breakdown, Hardware] | str:
    """The op-shape table of a folder from its ranks' parts (in rank order), with its
    roofline columns and figures; or why it cannot be merged exactly.

    Parameters
    ----------
    rows : sequence of list of BreakdownRow
        Each rank's rows (``BreakdownPart.rows``).
    infos : sequence of ShapesPart or None
        What each rank's rows need to merge (``BreakdownPart.shapes``).
    with_properties : sequence of bool
        Whether each rank's file has ``deviceProperties`` (the folder's peaks are the first
        such file's).
    ranks : sequence of int or None
        Their ranks.
    add : callable
        Adds one row's sums to another's of the same key, or says why not
        (:mod:`gpuviz.analysis.breakdown_parts`' rule for every table).

    Returns
    -------
    (Breakdown, Hardware) or str
        The table (its device time in no row left 0 for the caller) and the figures it was
        annotated from.
    """
    from gpuviz.analysis.op_calls import sum_call_warnings

    if any(i is None for i in infos):
        return "a rank without its op shapes"
    got = [i for i in infos if i is not None]
    peaks = next((i.peaks for w, i in zip(with_properties, got) if w), got[0].peaks)
    if any(i.peaks != peaks for i in got):
        return "the ranks' devices have different peaks"
    apart = _counted_apart(got)
    if apart:
        return apart
    if not all(i.exact for i in got):
        # Float64 sums of counts that are not whole numbers depend on their order.
        return NOT_WHOLE
    merged: dict[tuple[str, bytes], BreakdownRow] = {}
    seen: dict[bytes, tuple[int, int]] = {}
    for k, (mine, info) in enumerate(zip(rows, got)):
        for r, raw, at in zip(mine, info.raw_dims, info.first_seen, strict=True):
            seen.setdefault(raw, (k, at))  # the folder's first op with this text
            into = merged.get((r.key, raw))
            if into is None:
                merged[(r.key, raw)] = dataclasses.replace(r, extra=dict(r.extra))
                continue
            why = add(into, r)
            if why is not None:
                return f"{r.key!r}: {why}"
    # Rows that tie on every sort key are in the order of their Input Dims' first appearance.
    keys = sorted(merged, key=lambda kr: (kr[0], seen[kr[1]]))
    shapes = merged_shapes([i.sums for i in got], peaks.peaks)
    warnings = sum_call_warnings([i.flop_warnings for i in got])
    if warnings is None:
        return "FLOP warnings of several kinds (their order is the whole trace's)"
    steps = [dataclasses.replace(f, rank=r) for i, r in zip(got, ranks) for f in i.steps]
    hw = Hardware(peaks, shapes, steps, warnings=warnings)
    table = Breakdown("op-shape", [merged[k] for k in keys], _EMPTY, _EMPTY).sorted()
    annotate_breakdown(table, hw)
    return table, hw


NOT_WHOLE = "FLOP or byte counts that are not whole numbers (their float sums depend on order)"


def _counted_apart(parts: Sequence[ShapesPart | RankShapes]) -> str:
    """Why the ranks' calls, each counted in its own file, are not counted as the folder read
    whole counts them, or ""."""
    states = {i.shapes for i in parts} - {"empty"}
    if len(states) > 1 or "mixed" in states:
        # the folder reads no op's shapes where its first and last ops have none
        return "some op calls have shapes and some not"
    if any(i.hints != parts[0].hints for i in parts):
        return "the ranks' convolution backwards say different things of their forwards"
    return ""


def job_shapes(parts: Sequence[RankShapes], peaks: Any, exact: bool) -> list[OpShape] | str:
    """A rank folder's op shapes (``hardware`` of the folder read whole) from its ranks'
    :func:`rank_shapes`, in rank order; or why they are not the folder's.

    Parameters
    ----------
    parts : sequence of RankShapes
        Each rank's.
    peaks : DevicePeaks or None
        The folder's (the ranks' must all be these: the caller checks).
    exact : bool
        The figures are printed (a roof rule fires): decline where a sum is not exact or a
        rank's calls may be counted apart (graph replays, compiled code); else only which
        shapes have FLOPs matters.

    Returns
    -------
    list of OpShape or str
        Their ``kernels`` are empty (a rank's are its own: :func:`with_job_shapes`).
    """
    why = _counted_apart(parts)
    if exact and any(p.sums for p in parts):  # else nothing is counted, whole or by rank
        why = why or next((p.unmerged for p in parts if p.unmerged), "")
    if why:
        return why
    if exact and not all(p.exact for p in parts):
        return NOT_WHOLE
    out = merged_shapes([p.sums for p in parts], peaks)
    known = {_key(s): s.flops is not None for s in out}
    for p in parts:
        for s in p.sums:
            if known[_key(s)] != (s.flops is not None and not s.recorded_bad):
                # a rank alone picks its ops by it (memory_bound_hot): not as the folder does
                return f"{s.name}'s FLOPs are known on some ranks and not on others"
    return out


def with_job_shapes(hw: Hardware, shapes: Sequence[OpShape]) -> Hardware:
    """``hw`` (one rank's) with each shape's figures replaced by the job's of that op, shapes,
    types and precision (:func:`job_shapes`), its kernels still the rank's.

    Raises
    ------
    KeyError
        A shape of the rank is not among ``shapes``.
    """
    by = {_key(s): s for s in shapes}
    out = dataclasses.replace(hw)  # the cached lookups start empty
    out.shapes = [dataclasses.replace(by[_key(s)], kernels=s.kernels) for s in hw.shapes]
    return out


def _key(s: OpShape | ShapeSums) -> tuple[tuple[str, bytes, bytes], str]:
    from gpuviz.analysis.op_calls import shape_key

    return shape_key(s.name, s.input_dims, s.input_types), s.precision


def merged_shapes(parts: Sequence[Sequence[ShapeSums]], peaks: Any) -> list[OpShape]:
    """The folder's op shapes from the ranks' sums (in rank order), in
    :func:`~gpuviz.analysis.hardware.hardware`'s order (largest device time first, then
    name, then first call), filled against ``peaks`` (DevicePeaks or None)."""
    merged: dict[tuple[tuple[str, bytes, bytes], str], ShapeSums] = {}
    order: dict[tuple[tuple[str, bytes, bytes], str], tuple[int, int]] = {}
    for k, sums in enumerate(parts):
        for s in sums:
            key = _key(s)
            into = merged.get(key)
            if into is None:
                merged[key] = dataclasses.replace(s)
                order[key] = (k, s.first)
                continue
            into.calls += s.calls
            into.device_ns += s.device_ns
            into.flops = _plus(into.flops, s.flops)
            into.nbytes = _plus(into.nbytes, s.nbytes)
            into.recorded_bad |= s.recorded_bad
            into.bad |= s.bad
    out: list[OpShape] = []
    for key in sorted(merged, key=lambda x: order[x]):
        s = merged[key]
        row = OpShape(
            s.name,
            s.input_dims,
            s.input_types,
            s.calls,
            s.flops,
            s.nbytes,
            s.device_ns,
            s.precision,
        )
        out.append(shape_figures(row, peaks, s.recorded_bad, s.bad))
    out.sort(key=lambda x: (-x.device_ns, x.name))  # stable: ties keep the first call's order
    return out


def _plus(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else a + b


__all__ = [
    "RankShapes",
    "ShapeSums",
    "ShapesPart",
    "job_shapes",
    "merge_shapes",
    "merged_shapes",
    "rank_shapes",
    "shapes_part",
    "with_job_shapes",
]
