"""The fields of a chunk's events that need more than one attribute read: phase codes, and
the ints of each slice's ``args`` (correlation, external ids, bytes, device, stream), decoded
for a whole chunk at once.

Also the checks of a chunk's times (:func:`bad_times`) and what the event-by-event path
learnt (:class:`Loose`). Used by :class:`gpuviz.trace.kineto_columns.ColumnBuilder`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from operator import attrgetter, itemgetter
from typing import Any

import msgspec
import numpy as np
import numpy.typing as npt

from gpuviz.trace.errors import ImportWarnings, TraceFormatError
from gpuviz.trace.kineto_events import (
    ARG_ERRORS,
    LIMIT_US,
    SLICE_ARGS,
    Event,
    SliceArgs,
    loose_fields,
    time_problem,
)
from gpuviz.trace.model import NONE, Kind

Array = npt.NDArray[Any]

# Phase codes: the phase's byte for the phases the model knows, 0 for any other.
PH_OTHER = 0


class PhaseCodes(dict[str, int]):
    def __missing__(self, key: str) -> int:
        return PH_OTHER


PHASES = PhaseCodes({p: ord(p) for p in "XiIstfMBE"})
PH_X, PH_META, PH_BEGIN, PH_END = (ord(p) for p in "XMBE")
IS_INSTANT = np.zeros(256, dtype=bool)
IS_INSTANT[[PH_OTHER, ord("i"), ord("I")]] = True
IS_FLOW = np.zeros(256, dtype=bool)
IS_FLOW[[ord("s"), ord("t"), ord("f")]] = True
GPU_KINDS = np.zeros(256, dtype=bool)
GPU_KINDS[[Kind.KERNEL, Kind.MEMCPY, Kind.MEMSET]] = True


def json_array(raws: list[msgspec.Raw]) -> bytearray:
    """``[raw,raw,…]`` with one copy of the text (``b"[" + … + b"]"`` would make two)."""
    buf = bytearray(b",").join(raws)
    buf[0:0] = b"["
    buf += b"]"
    return buf


def take(seq: Sequence[Any], index: Array) -> list[Any]:
    """``[seq[k] for k in index]``, at C speed."""
    if len(index) > 1:
        return list(itemgetter(*index.tolist())(seq))
    return [seq[int(k)] for k in index]


def slice_arg_fields(raws: list[msgspec.Raw], gpu: Array) -> Array:
    """(7, n) int64: correlation, External id, external id, bytes, device, inDevice, stream.

    The last four are read for GPU activity only (``gpu``), the 2021 ``external id`` only
    where ``External id`` is missing: each field read costs a pass over the events.
    """
    n = len(raws)
    try:
        return _slice_arg_columns(SLICE_ARGS.decode(json_array(raws)), gpu, n)
    except ARG_ERRORS:  # odd values, or an int beyond int64 (msgspec takes up to 2**64 - 1)
        return (
            np.array([loose_fields(r, SliceArgs, SLICE_ROWS) for r in raws], dtype=np.int64)
            .reshape(-1, 7)
            .T
        )


def _slice_arg_columns(decoded: list[SliceArgs], gpu: Array, n: int) -> Array:
    out = np.full((7, n), NONE, dtype=np.int64)
    out[0] = np.fromiter(map(_CORRELATION, decoded), np.int64, n)
    out[1] = np.fromiter(map(_EXTERNAL_ID, decoded), np.int64, n)
    missing = np.flatnonzero(out[1] == NONE)
    if missing.size:
        out[2, missing] = [decoded[k].external_id_2021 for k in missing.tolist()]
    g = np.flatnonzero(gpu)
    if g.size:
        sub = decoded if g.size == n else take(decoded, g)
        for row, get in enumerate(_GPU_ARG_FIELDS, start=3):
            out[row, g] = np.fromiter(map(get, sub), np.int64, g.size)
    return out


SLICE_ROWS = ("correlation", "external_id", "external_id_2021", "bytes", "device",
               "in_device", "stream")  # fmt: skip
MEMORY_ROWS = ("device_type", "device_id", "addr", "bytes", "total_allocated", "total_reserved")
_CORRELATION = attrgetter("correlation")
_EXTERNAL_ID = attrgetter("external_id")
_GPU_ARG_FIELDS = tuple(attrgetter(f) for f in ("bytes", "device", "in_device", "stream"))


def phase_byte(ph: str) -> int:
    """``ord(ph)`` for the column; ``?`` for an empty or non-ASCII phase."""
    c = ord(ph[0]) if ph else 63
    return c if c < 128 else 63


@dataclass
class Loose:
    """What the event-by-event path learnt about a chunk."""

    index: list[int] = field(default_factory=list)  # chunk position of each kept event
    reasons: dict[int, str] = field(default_factory=dict)  # kept position -> why ts/dur is bad
    skipped: int = 0


def bad_times(
    path: str,
    warnings: ImportWarnings,
    sub: list[Event],
    rows: Array,
    ts: Array,
    dur: Array | None,
    kind: Array | None,
    event_index: Callable[[int], int],
    reasons: dict[int, str],
) -> Array | None:
    """Check a chunk's times: raise for GPU activity, warn (into ``warnings``) for the rest.

    Returns
    -------
    numpy.ndarray or None
        The rows to keep; None where every row is good.
    """
    bad = ~np.isfinite(ts) | (np.abs(ts) > LIMIT_US)
    if dur is not None:
        bad |= ~np.isfinite(dur) | (dur < 0) | (dur > LIMIT_US)
    if kind is not None:
        bad_gpu = GPU_KINDS[kind] & (bad | (ts < 0))
        if bad_gpu.any():
            k = int(np.flatnonzero(bad_gpu)[0])
            e = sub[k]
            reason = reasons.get(int(rows[k])) or time_problem(e.ts, e.dur)
            raise TraceFormatError(
                path, f"event {event_index(int(rows[k]))}",
                f"GPU activity slice {e.name[:80]!r} (cat {e.cat!r}): {reason}",
            )  # fmt: skip
    if not bad.any():
        return None
    for k in np.flatnonzero(bad)[:3].tolist():
        e = sub[k]
        reason = reasons.get(int(rows[k])) or (
            time_problem(e.ts, e.dur) if dur is not None else "ts is missing or not a number"
        )
        warnings.add(
            f"event {event_index(int(rows[k]))}: {e.ph!r} event {e.name[:60]!r}: {reason}, skipped",
            0,
        )
    warnings.count += int(bad.sum())
    return np.flatnonzero(~bad)
