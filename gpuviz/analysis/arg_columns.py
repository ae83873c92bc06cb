"""The few args attribution reads (input shapes, sequence numbers, flops, Python ids), decoded in
bulk.

A trace keeps each event's ``args`` as JSON text (:class:`gpuviz.trace.model.ArgsStore`).
Decoding a million rows one ``get`` at a time costs seconds; here the rows' texts are joined
into one JSON array and decoded by msgspec in one call into a Struct that names only the
fields wanted (msgspec skips the others without building them). Shapes and types are kept as
their raw JSON text, so that grouping by shape is grouping by bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec
import numpy as np
import numpy.typing as npt

from gpuviz.trace.model import Trace

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]

_EMPTY = msgspec.Raw(b"")


class _Args(msgspec.Struct):
    input_dims: msgspec.Raw = msgspec.field(default=_EMPTY, name="Input Dims")
    input_type: msgspec.Raw = msgspec.field(default=_EMPTY, name="Input type")
    sequence: Any = msgspec.field(default=None, name="Sequence number")
    flops: Any = None
    python_id: Any = msgspec.field(default=None, name="Python id")
    python_parent_id: Any = msgspec.field(default=None, name="Python parent id")


@dataclass
class ArgColumns:
    """The wanted args of some slices, one entry per slice.

    Attributes
    ----------
    input_dims, input_types : list of bytes
        ``Input Dims`` and ``Input type`` as their JSON text (``b""`` where absent).
    sequence : int64
        ``Sequence number``, -1 where absent.
    flops : float64
        Kineto's ``flops`` (``with_flops=True``), NaN where absent.
    python_id, python_parent_id : int64
        ``Python id`` and ``Python parent id`` of ``python_function`` events, -1 where absent.
    """

    input_dims: list[bytes]
    input_types: list[bytes]
    sequence: I64
    flops: F64
    python_id: I64
    python_parent_id: I64


def _int(v: Any) -> int:
    return v if type(v) is int else -1


def _num(v: Any) -> float:
    return float(v) if type(v) in (int, float) else float("nan")


def decode_args(trace: Trace, rows: npt.ArrayLike) -> ArgColumns:
    """The wanted args of slice ``rows``.

    Parameters
    ----------
    trace : Trace
    rows : array_like of int
        Slice rows.

    Returns
    -------
    ArgColumns
        One entry per row; absent values where a row has no args or a field is missing or of
        another type.
    """
    rows = np.asarray(rows, dtype=np.int64)
    arg_rows = trace.slices.args[rows].astype(np.int64)
    have = np.flatnonzero(arg_rows >= 0)
    n = len(rows)
    dims: list[bytes] = [b""] * n
    types: list[bytes] = [b""] * n
    seq = np.full(n, -1, dtype=np.int64)
    flops = np.full(n, np.nan)
    pid = np.full(n, -1, dtype=np.int64)
    ppid = np.full(n, -1, dtype=np.int64)
    decoded = _decode(trace, arg_rows[have])
    for i, a in zip(have.tolist(), decoded):
        if a is None:
            continue
        if a.input_dims:
            dims[i] = bytes(a.input_dims)
        if a.input_type:
            types[i] = bytes(a.input_type)
        seq[i] = _int(a.sequence)
        flops[i] = _num(a.flops)
        pid[i] = _int(a.python_id)
        ppid[i] = _int(a.python_parent_id)
    return ArgColumns(dims, types, seq, flops, pid, ppid)


def _decode(trace: Trace, arg_rows: I64) -> list[_Args | None]:
    """Decode args rows: all at once as one JSON array; row by row where that fails."""
    store = trace.args
    if len(arg_rows) == 0:
        return []
    o = store.offsets
    if len(arg_rows) > 256:
        # One read of the whole text (a decompression per block, not per row) is cheaper than
        # a lookup per row once rows are many.
        whole = memoryview(store.text.read(0, len(store.text)))
        base = 0
    else:
        lo, hi = int(arg_rows.min()), int(arg_rows.max())
        whole = memoryview(store.text.read(int(o[lo]), int(o[hi + 1])))
        base = int(o[lo])
    starts = (o[arg_rows] - base).tolist()
    ends = (o[arg_rows + 1] - base).tolist()
    pieces = [whole[a:b] for a, b in zip(starts, ends)]
    try:
        return list(msgspec.json.decode(b"[" + b",".join(pieces) + b"]", type=list[_Args]))
    except (msgspec.DecodeError, RecursionError):
        pass
    out: list[_Args | None] = []
    for p in pieces:  # a row that is not an object of the expected shape is left out
        try:
            out.append(msgspec.json.decode(p, type=_Args))
        except (msgspec.DecodeError, RecursionError):
            out.append(None)
    return out
