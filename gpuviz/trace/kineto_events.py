"""What the Kineto importer decodes from each event, and how ids and odd values become numbers.

msgspec decodes a chunk of events into :class:`Event` structs that hold only the fields the
model uses (``args`` stays raw text); :class:`SliceArgs` and :class:`MemoryArgs` are the
``args`` fields kept in columns. An event whose fields have the wrong types is decoded as a
plain value and coerced (:func:`coerce_event`). Pids, tids and flow ids become int64 codes
(:func:`id_code`), strings interned through one :class:`Interner` per trace.

Shared by the importer (:mod:`gpuviz.trace.kineto_decode`), the column builder
(:mod:`gpuviz.trace.kineto_columns`) and the import workers (:mod:`gpuviz.trace.kineto_worker`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from typing import Any

import msgspec
import numpy as np
import numpy.typing as npt

from gpuviz.trace.errors import TraceFormatError
from gpuviz.trace.jsonscan import decode_error_offset, deep_nesting
from gpuviz.trace.model import CATEGORY_KINDS, NONE, Kind, SymbolTable

Array = npt.NDArray[Any]

_NAN = math.nan
# |ts| and dur above this many µs would overflow int64 nanoseconds once made absolute.
LIMIT_US = 4.0e15
# Codes of string pids/tids that are not numbers: far from any real id (real tids can be
# negative, e.g. -247463936 in a sample), so that they never collide.
STRING_CODE_BASE = -(1 << 40)
MEMORY_NAME = "[memory]"


class Event(msgspec.Struct, gc=False):
    """The fields of an event that the model uses; msgspec skips everything else."""

    ph: str = ""
    name: str = ""
    cat: str = ""
    ts: float = _NAN
    dur: float = _NAN
    pid: int | str = ""
    tid: int | str = ""
    id: int | str | None = None
    bp: str = ""
    args: msgspec.Raw = msgspec.Raw()


class SliceArgs(msgspec.Struct, gc=False):
    """The ``args`` fields of slices that the model keeps in columns."""

    correlation: int = NONE
    external_id: int = msgspec.field(name="External id", default=NONE)
    external_id_2021: int = msgspec.field(name="external id", default=NONE)
    bytes: int = NONE
    device: int = NONE
    in_device: int = msgspec.field(name="inDevice", default=NONE)
    stream: int = NONE


class MemoryArgs(msgspec.Struct, gc=False):
    """The ``args`` of a ``[memory]`` event."""

    device_type: int = msgspec.field(name="Device Type", default=NONE)
    device_id: int = msgspec.field(name="Device Id", default=NONE)
    addr: int = msgspec.field(name="Addr", default=NONE)
    bytes: int = msgspec.field(name="Bytes", default=0)
    total_allocated: int = msgspec.field(name="Total Allocated", default=NONE)
    total_reserved: int = msgspec.field(name="Total Reserved", default=NONE)


EVENTS = msgspec.json.Decoder(list[Event])
ONE_EVENT = msgspec.json.Decoder(Event)
RAWS = msgspec.json.Decoder(list[msgspec.Raw])
SLICE_ARGS = msgspec.json.Decoder(list[SliceArgs], strict=False)
MEMORY_ARGS = msgspec.json.Decoder(list[MemoryArgs], strict=False)
ARG_ERRORS = (msgspec.ValidationError, msgspec.DecodeError, OverflowError, UnicodeDecodeError)

_STREAM_RE = re.compile(r"\s*(?:stream\s*)?(-?\d+)\s*$", re.IGNORECASE)


class Interner:
    """Memo tables shared by all files of a trace: strings -> symbol ids, ids -> codes."""

    def __init__(self, symbols: SymbolTable) -> None:
        self.symbols = symbols
        sym = symbols

        class Names(dict[str, int]):
            def __missing__(self, key: str) -> int:
                v = sym.intern(key)
                self[key] = v
                return v

        class Codes(dict[Any, int]):
            def __missing__(self, key: Any) -> int:
                v = id_code(key, sym)
                self[key] = v
                return v

        self.names = Names()
        self.codes = Codes()
        self._kinds = np.zeros(0, dtype=np.uint8)
        self.memory_name = self.names[MEMORY_NAME]

    def kinds(self, cat_ids: Array) -> Array:
        """The :class:`Kind` of each category symbol id."""
        n = len(self.symbols)
        if len(self._kinds) < n:
            new = [
                int(CATEGORY_KINDS.get(s.lower(), Kind.OTHER))
                for s in self.symbols.strings[len(self._kinds) : n]
            ]
            self._kinds = np.concatenate([self._kinds, np.asarray(new, dtype=np.uint8)])
        return self._kinds[cat_ids]

    def int_codes(self, values: Callable[[], Iterable[Any]], n: int) -> Array:
        """int64 codes of pids/tids/ids (ints as they are; see :func:`id_code`).

        ``values()`` gives the values (called twice when they are not all plain ints).
        """
        try:
            out = np.fromiter(values(), np.int64, n)  # the usual case: all ints
            if not ((out <= STRING_CODE_BASE) | (out >= (1 << 62))).any():
                return out
        except (TypeError, ValueError, OverflowError):
            pass
        return np.fromiter(map(self.codes.__getitem__, values()), np.int64, n)


def id_code(value: Any, symbols: SymbolTable) -> int:
    """An int64 for a pid/tid/flow id as the file wrote it.

    Ints stay as they are, ``"7"`` and ``"stream 7"`` become 7, ``"0x1f"`` 31; other strings
    get a code far below any real id, ``STRING_CODE_BASE - symbol id`` (the label keeps the
    string).
    """
    if isinstance(value, bool):
        return STRING_CODE_BASE - symbols.intern(str(value).lower())
    if isinstance(value, int):
        if STRING_CODE_BASE < value < (1 << 62):
            return value
        return STRING_CODE_BASE - symbols.intern(str(value))  # out of range: as its text
    s = str(value)
    m = _STREAM_RE.match(s)
    if m and len(m.group(1)) < 18 and int(m.group(1)) > STRING_CODE_BASE:
        return int(m.group(1))
    if s[:2].lower() == "0x":
        try:
            v = int(s, 16)
            if v < (1 << 62):
                return v
        except ValueError:
            pass
    return STRING_CODE_BASE - symbols.intern(s)


def is_string_code(code: int) -> bool:
    """Whether a pid/tid code stands for a string (see :func:`id_code`)."""
    return code <= STRING_CODE_BASE


def us_to_ns(us: Array) -> Array:
    """µs (float64) -> ns (int64), exact to the float's own precision for absolute µs."""
    whole = np.floor(us)
    return whole.astype(np.int64) * 1000 + np.rint((us - whole) * 1000.0).astype(np.int64)


def malformed(path: str, e: Exception, offset: int) -> TraceFormatError:
    """The error for a chunk that is not valid JSON (or not UTF-8)."""
    if isinstance(e, UnicodeDecodeError):
        return TraceFormatError(path, f"byte {offset}", "not UTF-8 text (in the events from here)")
    s = str(e)
    return TraceFormatError(
        path,
        decode_error_offset(e, offset),
        f"malformed JSON ({s if len(s) < 200 else s[:200] + '…'})",
    )


def too_deep(
    path: str, text: bytes | bytearray | memoryview, offset: int, depth: int = 0
) -> TraceFormatError:
    """The error for text that a decoder found nested too deeply (it raised RecursionError).

    ``offset`` is the file offset of ``text[0]`` and ``depth`` the file's nesting there (for a
    chunk's :meth:`~gpuviz.trace.jsonscan.Chunk.json_array`, whose ``[`` stands for the events
    array: one byte before the chunk, one level less than the array's elements).
    """
    at, what = deep_nesting(text, depth)
    return TraceFormatError(path, f"byte {max(offset + at, 0)}", what)


def time_problem(ts: float, dur: float) -> str:
    for label, v in (("ts", ts), ("dur", dur)):
        if math.isnan(v):
            return f"{label} is missing"
        if v < 0:
            return f"{label} is negative ({v:g})"
        if v > LIMIT_US:
            return f"{label} is out of range ({v:g})"
    return "ts/dur out of range"


def _number(v: Any) -> tuple[float, str]:
    """A ts/dur value as float, or NaN and why not."""
    if v is None:
        return _NAN, "is missing"
    if isinstance(v, bool) or not isinstance(v, int | float):
        return _NAN, f"is not a number ({str(v)[:30]!r})"
    try:
        return float(v), ""
    except OverflowError:
        return _NAN, "is out of range"


def coerce_event(value: dict[str, Any]) -> tuple[Event | None, str]:
    """An event object with odd field types as an Event; None and why when it is unusable."""
    ph = value.get("ph")
    if not isinstance(ph, str) or not ph:
        return None, "no 'ph' phase"
    name = value.get("name", "")
    cat = value.get("cat", "")
    ts, why_ts = _number(value.get("ts"))
    dur, why_dur = (_NAN, "is missing") if "dur" not in value else _number(value.get("dur"))
    reason = ""
    if why_ts:
        reason = f"ts {why_ts}"
    elif ph == "X" and why_dur:
        reason = f"dur {why_dur}"
    pid = value.get("pid", "")
    tid = value.get("tid", "")
    if not isinstance(pid, int | str) or isinstance(pid, bool):
        pid = str(pid)
    if not isinstance(tid, int | str) or isinstance(tid, bool):
        tid = str(tid)
    fid = value.get("id")
    if fid is not None and (not isinstance(fid, int | str) or isinstance(fid, bool)):
        fid = str(fid)
    args = value.get("args")
    raw = msgspec.Raw(msgspec.json.encode(args)) if isinstance(args, dict) else msgspec.Raw()
    bp = value.get("bp", "")
    ev = Event(
        ph=ph, name=name if isinstance(name, str) else str(name),
        cat=cat if isinstance(cat, str) else str(cat), ts=ts, dur=dur, pid=pid, tid=tid,
        id=fid, bp=bp if isinstance(bp, str) else "", args=raw,
    )  # fmt: skip
    return ev, reason


def loose_fields(raw: msgspec.Raw, cls: Any) -> tuple[int, ...]:
    """One args object's fields, each coerced to an int or its default, whatever the JSON held."""
    defaults = tuple(getattr(cls(), f) for f in cls.__struct_fields__)
    try:
        value = msgspec.json.decode(raw)
    except (msgspec.DecodeError, UnicodeDecodeError):
        return defaults
    if not isinstance(value, dict):
        return defaults
    return tuple(
        _as_int(value.get(f.encode_name, default), default)
        for f, default in zip(msgspec.structs.fields(cls), defaults)
    )


def _as_int(v: Any, default: int) -> int:
    if isinstance(v, bool):
        return default
    if isinstance(v, int):
        return v if -(1 << 63) <= v < (1 << 63) else default
    if isinstance(v, float) and math.isfinite(v) and abs(v) < 9.2e18:
        return int(v)
    if isinstance(v, str):
        try:
            return int(v, 0)
        except ValueError:
            return default
    return default


def meta_dict(e: Event) -> dict[str, Any]:
    d: dict[str, Any] = {"name": e.name, "ph": "M"}
    if math.isfinite(e.ts):
        d["ts"] = e.ts
    d["pid"] = e.pid
    d["tid"] = e.tid
    if e.cat:
        d["cat"] = e.cat
    if len(e.args):
        try:
            d["args"] = msgspec.json.decode(e.args)
        except (msgspec.DecodeError, UnicodeDecodeError):
            d["args"] = {}
    return d


__all__ = [
    "ARG_ERRORS",
    "EVENTS",
    "LIMIT_US",
    "MEMORY_ARGS",
    "MEMORY_NAME",
    "ONE_EVENT",
    "RAWS",
    "SLICE_ARGS",
    "STRING_CODE_BASE",
    "Event",
    "Interner",
    "MemoryArgs",
    "SliceArgs",
    "coerce_event",
    "id_code",
    "is_string_code",
    "loose_fields",
    "malformed",
    "meta_dict",
    "time_problem",
    "too_deep",
    "us_to_ns",
]
