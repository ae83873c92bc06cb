"""The few args of many slices that attribution reads (input shapes, sequence numbers, flops,
Python ids), decoded in bulk.

A trace keeps each event's ``args`` as JSON text (:class:`gpuviz.trace.model.ArgsStore`).
Decoding a million rows one ``get`` at a time costs seconds; here the rows' texts are joined
into one JSON array and decoded by msgspec in one call into a Struct that names only the
fields wanted (msgspec skips the others without building them). Shapes and types are kept as
their raw JSON text, so that grouping by shape is grouping by bytes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import msgspec
import numpy as np
import numpy.typing as npt

from gpuviz.trace.model import Trace

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]

_EMPTY = msgspec.Raw(b"")
SPAN_ROWS = 1 << 17
"""Store rows one msgspec call covers at most (a span's text, not the whole store, at once)."""
DENSE = 2
"""Wanted rows at least one byte in this many of a span's text: decode the whole span (the
other rows cost their text's scan; cutting out each wanted row costs a Python step)."""


class _Args(msgspec.Struct):
    input_dims: msgspec.Raw = msgspec.field(default=_EMPTY, name="Input Dims")
    input_type: msgspec.Raw = msgspec.field(default=_EMPTY, name="Input type")
    concrete: msgspec.Raw = msgspec.field(default=_EMPTY, name="Concrete Inputs")
    sequence: Any = msgspec.field(default=None, name="Sequence number")
    flops: Any = None
    python_id: Any = msgspec.field(default=None, name="Python id")
    python_parent_id: Any = msgspec.field(default=None, name="Python parent id")


FIELDS = (
    "input_dims",
    "input_types",
    "concrete_inputs",
    "sequence",
    "flops",
    "python_id",
    "python_parent_id",
)
"""The fields :func:`decode_args` can fill."""


@dataclass
class ArgColumns:
    """The wanted args of some slices, one entry per slice.

    Attributes
    ----------
    input_dims, input_types, concrete_inputs : list of bytes
        ``Input Dims``, ``Input type`` and ``Concrete Inputs`` as their JSON text (``b""``
        where absent).
    sequence : int64
        ``Sequence number``, -1 where absent.
    flops : float64
        Kineto's ``flops`` (``with_flops=True``), NaN where absent.
    python_id, python_parent_id : int64
        ``Python id`` and ``Python parent id`` of ``python_function`` events, -1 where absent.
    """

    input_dims: list[bytes]
    input_types: list[bytes]
    concrete_inputs: list[bytes]
    sequence: I64
    flops: F64
    python_id: I64
    python_parent_id: I64


def _int(v: Any) -> int:
    return v if type(v) is int else -1


def _num(v: Any) -> float:
    return float(v) if type(v) in (int, float) else float("nan")


def decode_args(trace: Trace, rows: npt.ArrayLike, fields: Iterable[str] = FIELDS) -> ArgColumns:
    """The wanted args of slice ``rows``.

    Parameters
    ----------
    trace : Trace
    rows : array_like of int
        Slice rows.
    fields : iterable of str
        The :class:`ArgColumns` fields to fill (the others stay absent): filling a field
        costs a Python step per row.

    Returns
    -------
    ArgColumns
        One entry per row; absent values where a row has no args or a field is missing or of
        another type.
    """
    rows = np.asarray(rows, dtype=np.int64)
    want = set(fields)
    arg_rows = trace.slices.args[rows].astype(np.int64)
    have = np.flatnonzero(arg_rows >= 0)
    n = len(rows)
    out = ArgColumns(
        [b""] * n,
        [b""] * n,
        [b""] * n,
        np.full(n, -1, dtype=np.int64),
        np.full(n, np.nan),
        np.full(n, -1, dtype=np.int64),
        np.full(n, -1, dtype=np.int64),
    )
    decoded, failed = _decode(trace, arg_rows[have])
    if failed:  # rows that did not decode: left absent
        keep = [i for i, a in enumerate(decoded) if a is not None]
        have = have[keep]
        decoded = [decoded[i] for i in keep]
    items: list[_Args] = decoded  # type: ignore[assignment]
    idx = have.tolist()
    if "input_dims" in want:
        for i, a in zip(idx, items):
            if a.input_dims:
                out.input_dims[i] = bytes(a.input_dims)
    if "input_types" in want:
        for i, a in zip(idx, items):
            if a.input_type:
                out.input_types[i] = bytes(a.input_type)
    if "concrete_inputs" in want:
        for i, a in zip(idx, items):
            if a.concrete:
                out.concrete_inputs[i] = bytes(a.concrete)
    if "sequence" in want:
        out.sequence[have] = [_int(a.sequence) for a in items]
    if "flops" in want:
        out.flops[have] = [_num(a.flops) for a in items]
    if "python_id" in want:
        out.python_id[have] = [_int(a.python_id) for a in items]
    if "python_parent_id" in want:
        out.python_parent_id[have] = [_int(a.python_parent_id) for a in items]
    return out


def args_text(trace: Trace) -> bytes | memoryview:
    """The whole args text of ``trace`` (uncompressed text is not copied)."""
    store = trace.args
    if len(store) == 0:
        return b""
    return store.span(0, len(store) - 1)[0]


def _decode(trace: Trace, arg_rows: I64) -> tuple[list[_Args | None], bool]:
    """Decode args rows, in the order given; and whether any row failed (is None).

    Where the wanted rows are most of a span's text, every row of the span is decoded at once -- the span's text with a comma put between rows by
    numpy, one msgspec call -- and the wanted ones picked: cheaper than cutting each row out.
    Sparse rows are cut out one by one. A span that does not decode is done row by row.
    """
    store = trace.args
    if len(arg_rows) == 0:
        return [], False
    o = store.offsets
    failed = False
    order = np.argsort(arg_rows, kind="stable")
    rows = arg_rows[order]
    whole = memoryview(args_text(trace)) if len(rows) > 256 else None
    decoder = msgspec.json.Decoder(list[_Args])
    got: list[_Args | None] = []
    i = 0
    while i < len(rows):
        lo = int(rows[i])
        j = int(np.searchsorted(rows, lo + SPAN_ROWS, side="left"))
        hi = int(rows[j - 1])
        a, b = int(o[lo]), int(o[hi + 1])
        text = whole[a:b] if whole is not None else memoryview(store.text.read(a, b))
        want = rows[i:j] - lo
        wanted_bytes = int((o[rows[i:j] + 1] - o[rows[i:j]]).sum())
        if wanted_bytes * DENSE >= b - a:
            # Every row of the span, commas between them.
            buf = np.frombuffer(text, dtype=np.uint8)
            cuts = o[lo + 1 : hi + 1] - a
            joined = np.insert(buf, cuts, np.uint8(ord(","))).tobytes()
            try:
                every = decoder.decode(b"[" + joined + b"]")
                got.extend(every[k] for k in want.tolist())
                i = j
                continue
            except (msgspec.DecodeError, RecursionError):
                pass
        starts = (o[rows[i:j]] - a).tolist()
        ends = (o[rows[i:j] + 1] - a).tolist()
        # Slices of bytes cost a third of a memoryview's (a span's copy is a few MB).
        chunk = bytes(text)
        pieces = [chunk[x:y] for x, y in zip(starts, ends)]
        try:
            got.extend(decoder.decode(b"[" + b",".join(pieces) + b"]"))
        except (msgspec.DecodeError, RecursionError):
            for p in pieces:  # a row that is not an object of the expected shape is left out
                try:
                    got.append(msgspec.json.decode(p, type=_Args))
                except (msgspec.DecodeError, RecursionError):
                    got.append(None)
                    failed = True
        i = j
    out: list[_Args | None] = [None] * len(rows)
    for k, v in zip(order.tolist(), got):
        out[k] = v
    return out, failed
