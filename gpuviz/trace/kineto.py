"""Import Kineto traces (``torch.profiler`` JSON) into the columnar :class:`Trace` model.

:func:`load_trace` reads one ``.json``/``.json.gz`` file, or a folder of per-rank files, and
returns one :class:`Trace`. The file is read in chunks (:mod:`gpuviz.trace.jsonscan`); each
chunk of events is decoded by msgspec into small structs holding only the fields the model
needs, which go straight into numpy columns. No Python object per event outlives its chunk.

Format eras handled (see DESIGN.md): 2021 categories (``Kernel``, ``Memcpy`` …), string tids
(``"stream 7"``), absolute µs or µs relative to ``baseTimeNanoseconds``, bare JSON lists,
``[memory]`` events with or without totals, peer-to-peer copies (``args.inDevice``), ROCm.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from gpuviz.trace.errors import ImportCancelledError, ImportWarnings, TraceFormatError
from gpuviz.trace.jsonscan import EventChunks, decode_error_offset
from gpuviz.trace.model import (
    CATEGORY_KINDS,
    NONE,
    ArgsStore,
    Flows,
    Instants,
    Kind,
    MemoryEvents,
    RankInfo,
    Slices,
    SymbolTable,
    Trace,
    TrackKind,
    Tracks,
)
from gpuviz.trace.stacking import stack_depths

__all__ = ["ImportCancelledError", "load_trace", "trace_files"]

_NAN = math.nan
# |ts| and dur above this many µs would overflow int64 nanoseconds once made absolute.
_LIMIT_US = 4.0e15
# Codes of string pids/tids that are not numbers: far from any real id (real tids can be
# negative, e.g. -247463936 in a sample), so that they never collide.
_STRING_CODE_BASE = -(1 << 40)


class _Event(msgspec.Struct, gc=False):
    """The fields of an event that the model uses; everything else is skipped by msgspec."""

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


class _SliceArgs(msgspec.Struct, gc=False):
    """The ``args`` fields of slices that the model keeps in columns."""

    correlation: int = NONE
    external_id: int = msgspec.field(name="External id", default=NONE)
    external_id_2021: int = msgspec.field(name="external id", default=NONE)
    bytes: int = NONE
    device: int = NONE
    in_device: int = msgspec.field(name="inDevice", default=NONE)
    stream: int = NONE


class _MemoryArgs(msgspec.Struct, gc=False):
    """The ``args`` of a ``[memory]`` event."""

    device_type: int = msgspec.field(name="Device Type", default=NONE)
    device_id: int = msgspec.field(name="Device Id", default=NONE)
    addr: int = msgspec.field(name="Addr", default=NONE)
    bytes: int = msgspec.field(name="Bytes", default=0)
    total_allocated: int = msgspec.field(name="Total Allocated", default=NONE)
    total_reserved: int = msgspec.field(name="Total Reserved", default=NONE)


_EVENTS = msgspec.json.Decoder(list[_Event])
_SLICE_ARGS = msgspec.json.Decoder(list[_SliceArgs], strict=False)
_MEMORY_ARGS = msgspec.json.Decoder(list[_MemoryArgs], strict=False)
_SLICE_ARG_FIELDS = attrgetter(
    "correlation", "external_id", "external_id_2021", "bytes", "device", "in_device", "stream"
)
_MEMORY_ARG_FIELDS = attrgetter(
    "device_type", "device_id", "addr", "bytes", "total_allocated", "total_reserved"
)

# Phase codes used while sorting a chunk's events into tables.
_PH_X, _PH_INSTANT, _PH_FLOW, _PH_META, _PH_BEGIN, _PH_END, _PH_OTHER = range(7)


class _PhaseCodes(dict[str, int]):
    def __missing__(self, key: str) -> int:
        return _PH_OTHER


_PHASES = _PhaseCodes(
    X=_PH_X,
    i=_PH_INSTANT,
    I=_PH_INSTANT,
    s=_PH_FLOW,
    t=_PH_FLOW,
    f=_PH_FLOW,
    M=_PH_META,
    B=_PH_BEGIN,
    E=_PH_END,
)
_GPU_KINDS = np.zeros(256, dtype=bool)
_GPU_KINDS[[Kind.KERNEL, Kind.MEMCPY, Kind.MEMSET]] = True
_TRACE_SUFFIXES = (".json", ".json.gz")


def trace_files(path: str | os.PathLike[str]) -> list[Path]:
    """The trace files a TRACE path stands for: the file, or a folder's files in name order.

    Parameters
    ----------
    path : str or PathLike
        A ``.json``/``.json.gz`` file (any name is accepted for a file), or a folder.

    Returns
    -------
    list of Path
        The files, naturally sorted (``rank-2`` before ``rank-10``).

    Raises
    ------
    TraceFormatError
        The path does not exist, or the folder holds no trace files.
    """
    p = Path(path)
    if p.is_dir():
        files = [c for c in p.iterdir() if c.is_file() and c.name.lower().endswith(_TRACE_SUFFIXES)]
        if not files:
            raise TraceFormatError(
                str(p), "", "the folder holds no trace files (.json or .json.gz)"
            )
        return sorted(files, key=_natural_key)
    if not p.exists():
        raise TraceFormatError(str(p), "", "no such file or folder")
    return [p]


def _natural_key(p: Path) -> list[Any]:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", p.name)]


def load_trace(
    path: str | os.PathLike[str],
    *,
    progress: Callable[[float], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> Trace:
    """Read a Kineto trace file, or a folder of per-rank trace files, into one Trace.

    Parameters
    ----------
    path : str or PathLike
        A ``.json`` or ``.json.gz`` file (gzip is detected from the content), or a folder of
        them, one per rank.
    progress : callable, optional
        Called now and then with the fraction done, from 0.0 to 1.0.
    cancelled : callable, optional
        Polled between chunks; when it returns True the import stops with
        :class:`ImportCancelledError`.

    Returns
    -------
    Trace
        All ranks, aligned on absolute time; times are ns relative to the earliest event.

    Raises
    ------
    TraceFormatError
        The file is not JSON, not a trace, truncated, empty, a memory-timeline export, or holds
        a GPU activity slice without a valid ``ts``/``dur`` (the message names the file and the
        byte or event).
    ImportCancelledError
        ``cancelled()`` returned True.

    Notes
    -----
    Ranks come from ``distributedInfo.rank`` (in a folder, when every file has a distinct
    one), else from the files' name order; a lone file without it has rank None.
    """
    root = Path(path)
    files = trace_files(root)
    is_folder = root.is_dir()
    sizes = [max(f.stat().st_size, 1) for f in files]
    total = float(sum(sizes))
    symbols = SymbolTable()
    interner = _Interner(symbols)
    parts: list[_FileColumns] = []
    done_before = 0
    for f, size in zip(files, sizes):
        on_read = None
        if progress is not None:
            before = done_before

            def on_read(n: int, before: int = before) -> None:
                progress(min((before + n) / total, 1.0) * 0.95)

        reader = _FileReader(str(f), interner, on_read, cancelled)
        parts.append(reader.read())
        done_before += size
    ranks = _assign_ranks(parts, is_folder)
    trace = _assemble(parts, ranks, symbols)
    if progress is not None:
        progress(1.0)
    return trace


# --------------------------------------------------------------------------- interning


class _Interner:
    """Memo tables shared by all files: strings -> symbol ids, categories -> kinds, ids -> codes."""

    def __init__(self, symbols: SymbolTable) -> None:
        self.symbols = symbols
        sym = symbols

        class Names(dict[str, int]):
            def __missing__(self, key: str) -> int:
                v = sym.intern(key)
                self[key] = v
                return v

        class Kinds(dict[str, int]):
            def __missing__(self, key: str) -> int:
                v = int(CATEGORY_KINDS.get(key.lower(), Kind.OTHER))
                self[key] = v
                return v

        class Codes(dict[Any, int]):
            def __missing__(self, key: Any) -> int:
                v = _id_code(key, sym)
                self[key] = v
                return v

        self.names = Names()
        self.kinds = Kinds()
        self.codes = Codes()


_STREAM_RE = re.compile(r"\s*(?:stream\s*)?(-?\d+)\s*$", re.IGNORECASE)


def _id_code(value: Any, symbols: SymbolTable) -> int:
    """An int64 for a pid/tid/flow id as the file wrote it: ints as they are, ``"7"`` and
    ``"stream 7"`` -> 7, other strings -> a code far below any real id."""
    if isinstance(value, bool):
        return _STRING_CODE_BASE - symbols.intern(str(value).lower())
    if isinstance(value, int):
        if -(1 << 62) < value < (1 << 62):
            return value
        return _STRING_CODE_BASE - symbols.intern(str(value))
    s = str(value)
    m = _STREAM_RE.match(s)
    if m and len(m.group(1)) < 18:
        return int(m.group(1))
    if s[:2].lower() == "0x":
        try:
            v = int(s, 16)
            if v < (1 << 62):
                return v
        except ValueError:
            pass
    return _STRING_CODE_BASE - symbols.intern(s)


def _is_string_code(code: int) -> bool:
    return code <= _STRING_CODE_BASE


# --------------------------------------------------------------------------- one file


@dataclass
class _Part:
    """Columns of one chunk (or of one file once joined)."""

    cols: dict[str, np.ndarray]

    @staticmethod
    def join(
        parts: list[_Part], names: Sequence[str], dtypes: Sequence[Any]
    ) -> dict[str, np.ndarray]:
        out = {}
        for n, dt in zip(names, dtypes):
            arrs = [p.cols[n] for p in parts]
            out[n] = np.concatenate(arrs).astype(dt, copy=False) if arrs else np.empty(0, dt)
        return out


_SLICE_COLS = (
    ("ts", np.float64),
    ("dur", np.float64),
    ("pid", np.int64),
    ("tid", np.int64),
    ("name", np.int32),
    ("cat", np.int32),
    ("kind", np.uint8),
    ("correlation", np.int64),
    ("external_id", np.int64),
    ("bytes", np.int64),
    ("device", np.int64),
    ("stream", np.int64),
    ("args", np.int32),
)
_INSTANT_COLS = (
    ("ts", np.float64),
    ("pid", np.int64),
    ("tid", np.int64),
    ("name", np.int32),
    ("cat", np.int32),
    ("phase", np.uint8),
    ("args", np.int32),
)
_FLOW_COLS = (
    ("ts", np.float64),
    ("pid", np.int64),
    ("tid", np.int64),
    ("name", np.int32),
    ("cat", np.int32),
    ("phase", np.uint8),
    ("flow_id", np.int64),
    ("enclosing", np.uint8),
)
_MEMORY_COLS = (
    ("ts", np.float64),
    ("pid", np.int64),
    ("tid", np.int64),
    ("device_type", np.int8),
    ("device_id", np.int32),
    ("addr", np.int64),
    ("bytes", np.int64),
    ("total_allocated", np.int64),
    ("total_reserved", np.int64),
)


@dataclass
class _FileColumns:
    """Everything read from one file, before ranks are known and times aligned."""

    path: str
    metadata: dict[str, Any]
    event_count: int
    slices: dict[str, np.ndarray]
    instants: dict[str, np.ndarray]
    flows: dict[str, np.ndarray]
    memory: dict[str, np.ndarray]
    args: ArgsStore
    metadata_events: list[dict[str, Any]]
    thread_names: dict[tuple[int, int], str]
    warnings: ImportWarnings
    rank: int | None = None
    offset_ns: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


class _FileReader:
    """Reads one file chunk by chunk into column parts."""

    def __init__(
        self,
        path: str,
        interner: _Interner,
        on_read: Callable[[int], None] | None,
        cancelled: Callable[[], bool] | None,
    ) -> None:
        self.path = path
        self.it = interner
        self.on_read = on_read
        self.cancelled = cancelled
        self.warnings = ImportWarnings()
        self.n_events = 0
        self.slice_parts: list[_Part] = []
        self.instant_parts: list[_Part] = []
        self.flow_parts: list[_Part] = []
        self.memory_parts: list[_Part] = []
        self.args_blobs: list[bytes] = []
        self.args_lengths: list[np.ndarray] = []
        self.n_args = 0
        self.meta_events: list[dict[str, Any]] = []
        self.begin_end: list[tuple[int, _Event]] = []

    def read(self) -> _FileColumns:
        chunks = EventChunks(self.path, on_read=self.on_read, cancelled=self.cancelled)
        is_list: bool | None = None
        for chunk in chunks:
            if is_list is None:
                is_list = chunks.is_list
            self._read_chunk(chunk.text, chunk.byte_offset, chunks.is_list)
        if chunks.is_list and self.n_events == 0:
            pass  # an empty list is an empty (valid) trace
        self._pair_begin_end()
        lengths = np.concatenate(self.args_lengths) if self.args_lengths else np.empty(0, np.int64)
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        args = ArgsStore(b"".join(self.args_blobs), offsets)
        self.args_blobs = []
        thread_names = _thread_names(self.meta_events, self.it)
        return _FileColumns(
            path=self.path,
            metadata=chunks.metadata,
            event_count=self.n_events,
            slices=_Part.join(self.slice_parts, *zip(*_SLICE_COLS)),
            instants=_Part.join(self.instant_parts, *zip(*_INSTANT_COLS)),
            flows=_Part.join(self.flow_parts, *zip(*_FLOW_COLS)),
            memory=_Part.join(self.memory_parts, *zip(*_MEMORY_COLS)),
            args=args,
            metadata_events=self.meta_events,
            thread_names=thread_names,
            warnings=self.warnings,
        )

    # -- decoding

    def _read_chunk(self, text: bytes, offset: int, is_list: bool) -> None:
        buf = b"[" + text + b"]"
        try:
            events: list[_Event] = _EVENTS.decode(buf)
            checked: dict[int, str] = {}
        except msgspec.ValidationError:
            events, checked = self._decode_loose(buf, offset, is_list)
        except (msgspec.DecodeError, UnicodeDecodeError) as e:
            raise _malformed(self.path, e, offset) from None
        del buf
        base = self.n_events
        self.n_events += len(events) + len(checked.get("skipped", ()))  # type: ignore[arg-type]
        self._columns(events, base, checked)

    def _decode_loose(
        self, buf: bytes, offset: int, is_list: bool
    ) -> tuple[list[_Event], dict[Any, Any]]:
        """Event by event, for a chunk with odd values: coerce what can be, note the rest."""
        try:
            raws = msgspec.json.decode(buf, type=list[msgspec.Raw])
        except (msgspec.DecodeError, UnicodeDecodeError) as e:
            raise _malformed(self.path, e, offset) from None
        events: list[_Event] = []
        # index in chunk -> reason why ts/dur is unusable (for the error or warning message)
        notes: dict[Any, Any] = {"bad_time": {}, "positions": []}
        base = self.n_events
        skipped = 0
        for k, raw in enumerate(raws):
            index = base + k
            try:
                events.append(msgspec.json.decode(raw, type=_Event))
                notes["positions"].append(k)
                continue
            except msgspec.ValidationError:
                pass
            except (msgspec.DecodeError, UnicodeDecodeError) as e:
                raise _malformed(self.path, e, offset) from None
            value = msgspec.json.decode(raw)
            if not isinstance(value, dict):
                if is_list and index == 0:
                    if isinstance(value, list):
                        raise TraceFormatError(
                            self.path,
                            "",
                            "a memory-timeline export (a JSON list of lists, as written by "
                            "export_memory_timeline), not a Kineto trace",
                        )
                    raise TraceFormatError(
                        self.path,
                        "event 0",
                        f"not a trace: a JSON list of {type(value).__name__} values, not of events",
                    )
                self.warnings.add(f"event {index}: not a JSON object, skipped")
                skipped += 1
                notes["positions"].append(None)
                continue
            ev, reason = _coerce(value)
            if ev is None:
                self.warnings.add(f"event {index}: {reason}, skipped")
                skipped += 1
                notes["positions"].append(None)
                continue
            if reason:
                notes["bad_time"][len(events)] = reason
            events.append(ev)
            notes["positions"].append(k)
        # Map positions in `events` back to the chunk index (skipped elements shift them).
        notes["index"] = [k for k in notes["positions"] if k is not None]
        notes["skipped"] = [None] * skipped
        return events, notes

    def _columns(self, events: list[_Event], base: int, notes: dict[Any, Any]) -> None:
        n = len(events)
        if n == 0:
            return
        it = self.it
        chunk_index = np.asarray(notes["index"], dtype=np.int64) if "index" in notes else None

        def index_of(k: int) -> int:
            return base + (int(chunk_index[k]) if chunk_index is not None else k)

        ph = np.fromiter(map(_PHASES.__getitem__, map(attrgetter("ph"), events)), np.uint8, n)
        groups = {code: np.flatnonzero(ph == code) for code in range(7)}
        bad_time: dict[int, str] = notes.get("bad_time", {})

        # ---- slices (ph X)
        xi = groups[_PH_X]
        if xi.size:
            self._slices(events, xi, index_of, bad_time)
        # ---- instants, and [memory] among them; other phases with a time go there too
        ii = np.concatenate([groups[_PH_INSTANT], groups[_PH_OTHER]])
        if ii.size:
            ii.sort()
            self._instants(events, ii, index_of, bad_time)
        fi = groups[_PH_FLOW]
        if fi.size:
            self._flows(events, fi, index_of, bad_time)
        for k in groups[_PH_META].tolist():
            e = events[k]
            self.meta_events.append(_meta_dict(e))
        for k in np.concatenate([groups[_PH_BEGIN], groups[_PH_END]]).tolist():
            self.begin_end.append((index_of(k), events[k]))
        del it

    def _take(self, events: list[_Event], idx: np.ndarray) -> list[_Event]:
        if idx.size == len(events):
            return events
        return [events[k] for k in idx.tolist()]

    def _times(self, sub: list[_Event], with_dur: bool) -> tuple[np.ndarray, np.ndarray]:
        n = len(sub)
        ts = np.fromiter(map(attrgetter("ts"), sub), np.float64, n)
        dur = np.fromiter(map(attrgetter("dur"), sub), np.float64, n) if with_dur else ts
        return ts, dur

    def _ids(self, sub: list[_Event], name: str) -> np.ndarray:
        return np.fromiter(
            map(self.it.codes.__getitem__, map(attrgetter(name), sub)), np.int64, len(sub)
        )

    def _syms(self, sub: list[_Event], name: str) -> np.ndarray:
        return np.fromiter(
            map(self.it.names.__getitem__, map(attrgetter(name), sub)), np.int32, len(sub)
        )

    def _args_rows(self, sub: list[_Event]) -> tuple[np.ndarray, list[msgspec.Raw]]:
        """Store the raw args of ``sub``; return each one's row (-1 for none) and the raws."""
        raws = list(map(attrgetter("args"), sub))
        lengths = np.fromiter(map(len, raws), np.int64, len(raws))
        has = lengths > 0
        rows = np.full(len(raws), NONE, dtype=np.int32)
        k = int(has.sum())
        if k:
            rows[has] = np.arange(self.n_args, self.n_args + k, dtype=np.int32)
            present = [r for r in raws if len(r)] if k < len(raws) else raws
            self.args_blobs.append(b"".join(present))  # type: ignore[arg-type]
            self.args_lengths.append(lengths[has])
            self.n_args += k
        return rows, raws

    def _slices(
        self,
        events: list[_Event],
        xi: np.ndarray,
        index_of: Callable[[int], int],
        bad_time: dict[int, str],
    ) -> None:
        sub = self._take(events, xi)
        n = len(sub)
        it = self.it
        ts, dur = self._times(sub, True)
        cats = list(map(attrgetter("cat"), sub))
        kind = np.fromiter(map(it.kinds.__getitem__, cats), np.uint8, n)
        bad = (
            ~np.isfinite(ts)
            | ~np.isfinite(dur)
            | (dur < 0)
            | (np.abs(ts) > _LIMIT_US)
            | (dur > _LIMIT_US)
        )
        gpu = _GPU_KINDS[kind]
        bad_gpu = gpu & (bad | (ts < 0))
        if bad_gpu.any():
            k = int(np.flatnonzero(bad_gpu)[0])
            e = sub[k]
            reason = bad_time.get(int(xi[k])) or _time_problem(e.ts, e.dur)
            raise TraceFormatError(
                self.path,
                f"event {index_of(int(xi[k]))}",
                f"GPU activity slice {e.name[:80]!r} (cat {e.cat!r}): {reason}",
            )
        if bad.any():
            for k in np.flatnonzero(bad)[:3].tolist():
                e = sub[k]
                reason = bad_time.get(int(xi[k])) or _time_problem(e.ts, e.dur)
                self.warnings.add(
                    f"event {index_of(int(xi[k]))}: slice {e.name[:60]!r}: {reason}, skipped", 0
                )
            self.warnings.count += int(bad.sum())
            keep = np.flatnonzero(~bad)
            sub = [sub[k] for k in keep.tolist()]
            ts, dur, kind, gpu = ts[keep], dur[keep], kind[keep], gpu[keep]
            cats = [cats[k] for k in keep.tolist()]
            n = len(sub)
            if n == 0:
                return
        rows, raws = self._args_rows(sub)
        fields = np.full((n, 7), NONE, dtype=np.int64)
        has = rows >= 0
        if has.any():
            present = [r for r in raws if len(r)] if not has.all() else raws
            fields[has] = self._decode_slice_args(present)
        ext = np.where(fields[:, 1] != NONE, fields[:, 1], fields[:, 2])
        pid = self._ids(sub, "pid")
        tid = self._ids(sub, "tid")
        device = np.where(fields[:, 4] != NONE, fields[:, 4], fields[:, 5])
        pid_dev = np.where((pid >= 0) & (pid < (1 << 31)), pid, NONE)
        device = np.where(device != NONE, device, pid_dev)
        stream = np.where(
            fields[:, 6] != NONE, fields[:, 6], np.where(tid > _STRING_CODE_BASE, tid, NONE)
        )
        self.slice_parts.append(
            _Part(
                {
                    "ts": ts,
                    "dur": dur,
                    "pid": pid,
                    "tid": tid,
                    "name": self._syms(sub, "name"),
                    "cat": np.fromiter(map(it.names.__getitem__, cats), np.int32, n),
                    "kind": kind,
                    "correlation": fields[:, 0],
                    "external_id": ext,
                    "bytes": fields[:, 3],
                    "device": device,
                    "stream": stream,
                    "args": rows,
                }
            )
        )

    def _decode_slice_args(self, raws: list[msgspec.Raw]) -> np.ndarray:
        buf = b"[" + b",".join(raws) + b"]"  # type: ignore[arg-type]
        try:
            decoded = _SLICE_ARGS.decode(buf)
            return np.array(list(map(_SLICE_ARG_FIELDS, decoded)), dtype=np.int64).reshape(-1, 7)
        except _ARG_ERRORS:
            return np.array(
                [_loose_fields(r, _SliceArgs, _SLICE_ARG_FIELDS, 7) for r in raws], dtype=np.int64
            ).reshape(-1, 7)

    def _instants(
        self,
        events: list[_Event],
        ii: np.ndarray,
        index_of: Callable[[int], int],
        bad_time: dict[int, str],
    ) -> None:
        sub = self._take(events, ii)
        ts, _ = self._times(sub, False)
        bad = ~np.isfinite(ts) | (np.abs(ts) > _LIMIT_US)
        if bad.any():
            for k in np.flatnonzero(bad)[:3].tolist():
                e = sub[k]
                reason = bad_time.get(int(ii[k])) or "ts is missing"
                self.warnings.add(
                    f"event {index_of(int(ii[k]))}: {e.ph!r} event {e.name[:60]!r}: {reason}, skipped",
                    0,
                )
            self.warnings.count += int(bad.sum())
            keep = np.flatnonzero(~bad)
            sub = [sub[k] for k in keep.tolist()]
            ts = ts[keep]
        if not sub:
            return
        is_mem = np.fromiter((e.name == "[memory]" for e in sub), bool, len(sub))
        if is_mem.any():
            mem = [e for e, m in zip(sub, is_mem.tolist()) if m]
            self._memory(mem, ts[is_mem])
            keep = np.flatnonzero(~is_mem)
            sub = [sub[k] for k in keep.tolist()]
            ts = ts[keep]
            if not sub:
                return
        n = len(sub)
        rows, _ = self._args_rows(sub)
        self.instant_parts.append(
            _Part(
                {
                    "ts": ts,
                    "pid": self._ids(sub, "pid"),
                    "tid": self._ids(sub, "tid"),
                    "name": self._syms(sub, "name"),
                    "cat": self._syms(sub, "cat"),
                    "phase": np.fromiter((_phase_byte(e.ph) for e in sub), np.uint8, n),
                    "args": rows,
                }
            )
        )

    def _memory(self, sub: list[_Event], ts: np.ndarray) -> None:
        n = len(sub)
        raws = [e.args for e in sub]
        fields = np.full((n, 6), NONE, dtype=np.int64)
        fields[:, 3] = 0
        has = np.fromiter(map(len, raws), np.int64, n) > 0
        if has.any():
            present = [r for r in raws if len(r)]
            buf = b"[" + b",".join(present) + b"]"  # type: ignore[arg-type]
            try:
                decoded = _MEMORY_ARGS.decode(buf)
                fields[has] = np.array(
                    list(map(_MEMORY_ARG_FIELDS, decoded)), dtype=np.int64
                ).reshape(-1, 6)
            except _ARG_ERRORS:
                fields[has] = np.array(
                    [_loose_fields(r, _MemoryArgs, _MEMORY_ARG_FIELDS, 6) for r in present],
                    dtype=np.int64,
                ).reshape(-1, 6)
        self.memory_parts.append(
            _Part(
                {
                    "ts": ts,
                    "pid": self._ids(sub, "pid"),
                    "tid": self._ids(sub, "tid"),
                    "device_type": np.clip(fields[:, 0], -128, 127),
                    "device_id": np.clip(fields[:, 1], -(1 << 31), (1 << 31) - 1),
                    "addr": fields[:, 2],
                    "bytes": fields[:, 3],
                    "total_allocated": fields[:, 4],
                    "total_reserved": fields[:, 5],
                }
            )
        )

    def _flows(
        self,
        events: list[_Event],
        fi: np.ndarray,
        index_of: Callable[[int], int],
        bad_time: dict[int, str],
    ) -> None:
        sub = self._take(events, fi)
        ts, _ = self._times(sub, False)
        no_id = np.fromiter((e.id is None for e in sub), bool, len(sub))
        bad = ~np.isfinite(ts) | (np.abs(ts) > _LIMIT_US) | no_id
        if bad.any():
            for k in np.flatnonzero(bad)[:3].tolist():
                e = sub[k]
                reason = (
                    "id is missing"
                    if e.id is None
                    else (bad_time.get(int(fi[k])) or "ts is missing")
                )
                self.warnings.add(
                    f"event {index_of(int(fi[k]))}: flow event {e.name[:60]!r}: {reason}, skipped",
                    0,
                )
            self.warnings.count += int(bad.sum())
            keep = np.flatnonzero(~bad)
            sub = [sub[k] for k in keep.tolist()]
            ts = ts[keep]
        n = len(sub)
        if not n:
            return
        self.flow_parts.append(
            _Part(
                {
                    "ts": ts,
                    "pid": self._ids(sub, "pid"),
                    "tid": self._ids(sub, "tid"),
                    "name": self._syms(sub, "name"),
                    "cat": self._syms(sub, "cat"),
                    "phase": np.fromiter((_phase_byte(e.ph) for e in sub), np.uint8, n),
                    "flow_id": self._ids(sub, "id"),
                    "enclosing": np.fromiter((e.bp == "e" for e in sub), np.uint8, n),
                }
            )
        )

    def _pair_begin_end(self) -> None:
        """Pair ``B``/``E`` events per thread into slices; unpaired ones become instants."""
        if not self.begin_end:
            return
        events = sorted(
            self.begin_end, key=lambda p: (p[1].ts if math.isfinite(p[1].ts) else _NAN, p[0])
        )
        stacks: dict[tuple[Any, Any], list[tuple[int, _Event]]] = {}
        slices: list[_Event] = []
        lone: list[_Event] = []
        for index, e in events:
            if not math.isfinite(e.ts):
                self.warnings.add(
                    f"event {index}: {e.ph!r} event {e.name[:60]!r}: ts is missing, skipped"
                )
                continue
            key = (e.pid, e.tid)
            if e.ph == "B":
                stacks.setdefault(key, []).append((index, e))
            else:
                st = stacks.get(key)
                if st:
                    _, b = st.pop()
                    slices.append(msgspec.structs.replace(b, ph="X", dur=e.ts - b.ts))
                else:
                    lone.append(e)
        for st in stacks.values():
            lone.extend(b for _, b in st)
        if slices:
            self._slices(slices, np.arange(len(slices)), lambda k: -1, {})
        if lone:
            self._instants(lone, np.arange(len(lone)), lambda k: -1, {})


_ARG_ERRORS = (msgspec.ValidationError, msgspec.DecodeError, OverflowError, UnicodeDecodeError)


def _malformed(path: str, e: Exception, offset: int) -> TraceFormatError:
    if isinstance(e, UnicodeDecodeError):
        return TraceFormatError(path, f"byte {offset}", "not UTF-8 text (in the events from here)")
    return TraceFormatError(path, decode_error_offset(e, offset), f"malformed JSON ({_short(e)})")


def _short(e: Exception) -> str:
    s = str(e)
    return s if len(s) < 200 else s[:200] + "…"


def _time_problem(ts: float, dur: float) -> str:
    for label, v in (("ts", ts), ("dur", dur)):
        if math.isnan(v):
            return f"{label} is missing or not a number"
        if v < 0:
            return f"{label} is negative ({v:g})"
        if v > _LIMIT_US:
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


def _coerce(value: dict[str, Any]) -> tuple[_Event | None, str]:
    """An event object with odd field types as an _Event; None and why when it is unusable."""
    ph = value.get("ph")
    if not isinstance(ph, str) or not ph:
        return None, "no 'ph' phase"
    name = value.get("name", "")
    cat = value.get("cat", "")
    ts, why_ts = _number(value.get("ts"))
    dur, why_dur = (_NAN, "") if "dur" not in value else _number(value.get("dur"))
    if "dur" not in value and ph == "X":
        why_dur = "is missing"
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
    ev = _Event(
        ph=ph,
        name=name if isinstance(name, str) else str(name),
        cat=cat if isinstance(cat, str) else str(cat),
        ts=ts,
        dur=dur,
        pid=pid,
        tid=tid,
        id=fid,
        bp=bp if isinstance(bp, str) else "",
        args=raw,
    )
    return ev, reason


def _loose_fields(
    raw: msgspec.Raw, cls: type, getter: Callable[[Any], tuple[Any, ...]], n: int
) -> tuple[int, ...]:
    """One args object's fields, each coerced to an int or -1, whatever the JSON held."""
    try:
        value = msgspec.json.decode(raw)
    except (msgspec.DecodeError, UnicodeDecodeError):
        return (NONE,) * n
    if not isinstance(value, dict):
        return (NONE,) * n
    defaults = getter(cls())
    out = []
    for f, default in zip(msgspec.structs.fields(cls), defaults):
        v = value.get(f.encode_name, default)
        out.append(_as_int(v, default))
    return tuple(out)


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


def _meta_dict(e: _Event) -> dict[str, Any]:
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


def _thread_names(meta: list[dict[str, Any]], it: _Interner) -> dict[tuple[int, int], str]:
    names: dict[tuple[int, int], str] = {}
    for d in meta:
        if d.get("name") == "thread_name":
            args = d.get("args")
            if isinstance(args, dict) and isinstance(args.get("name"), str):
                key = (it.codes[d["pid"]], it.codes[d["tid"]])
                names[key] = args["name"].strip()
    return names


# --------------------------------------------------------------------------- ranks and assembly


def _assign_ranks(parts: list[_FileColumns], is_folder: bool) -> list[int | None]:
    declared = [_declared_rank(p.metadata) for p in parts]
    if not is_folder:
        return [declared[0]]
    if all(r is not None for r in declared) and len(set(declared)) == len(declared):
        return declared
    for p, r in zip(parts, declared):
        if r is not None:
            p.warnings.add(
                f"{p.path}: distributedInfo.rank {r} ignored: ranks taken from file order", 0
            )
    return list(range(len(parts)))


def _declared_rank(metadata: dict[str, Any]) -> int | None:
    info = metadata.get("distributedInfo")
    if isinstance(info, dict):
        r = info.get("rank")
        if isinstance(r, int) and not isinstance(r, bool):
            return r
        if isinstance(r, str) and r.strip().isdigit():
            return int(r)
    return None


def _base_ns(metadata: dict[str, Any]) -> int:
    b = metadata.get("baseTimeNanoseconds")
    if isinstance(b, bool):
        return 0
    if isinstance(b, int):
        return b
    if isinstance(b, float) and math.isfinite(b):
        return int(b)
    if isinstance(b, str) and b.strip().isdigit():
        return int(b)
    return 0


def _us_to_ns(us: np.ndarray) -> np.ndarray:
    """µs (float64) -> ns (int64), exact to the float's own precision for absolute µs."""
    whole = np.floor(us)
    return whole.astype(np.int64) * 1000 + np.rint((us - whole) * 1000.0).astype(np.int64)


def _assemble(parts: list[_FileColumns], ranks: list[int | None], symbols: SymbolTable) -> Trace:
    warnings = ImportWarnings()
    infos: list[RankInfo] = []
    order = sorted(range(len(parts)), key=lambda i: (ranks[i] is None, ranks[i] or 0, i))
    parts = [parts[i] for i in order]
    ranks = [ranks[i] for i in order]
    # Absolute ns of every time column, file by file.
    starts: list[int] = []
    for p, r in zip(parts, ranks):
        p.rank = r
        p.offset_ns = _base_ns(p.metadata)
        for table in (p.slices, p.instants, p.flows, p.memory):
            table["ts_ns"] = _us_to_ns(table.pop("ts")) + p.offset_ns
            if table["ts_ns"].size:
                starts.append(int(table["ts_ns"].min()))
    zero = min(starts) if starts else 0
    if not starts:
        meta_ts = [
            p.offset_ns + int(round(d["ts"] * 1000))
            for p in parts
            for d in p.metadata_events
            if isinstance(d.get("ts"), int | float)
        ]
        zero = min(meta_ts) if meta_ts else 0

    track_rows: list[dict[str, np.ndarray]] = []
    slice_parts, instant_parts, flow_parts, memory_parts = [], [], [], []
    args_parts: list[ArgsStore] = []
    meta_events: list[dict[str, Any]] = []
    n_tracks = 0
    event_count = 0
    for p, r in zip(parts, ranks):
        rank_code = NONE if r is None else r
        tracks, s_track, lane_track = _file_tracks(p, rank_code, symbols)
        args_parts.append(p.args)
        s = p.slices
        slice_parts.append(
            {
                "start_ns": s["ts_ns"] - zero,
                "dur_ns": np.rint(s["dur"] * 1000.0).astype(np.int64),
                "track": s_track + n_tracks,
                "name": s["name"],
                "cat": s["cat"],
                "kind": s["kind"],
                "correlation": s["correlation"],
                "external_id": s["external_id"],
                "bytes": s["bytes"],
                "args": s["args"],
                "_rank_args": np.full(len(s["args"]), len(args_parts) - 1, np.int32),
            }
        )
        inst = p.instants
        instant_parts.append(
            {
                "ts_ns": inst["ts_ns"] - zero,
                "track": lane_track(inst["pid"], inst["tid"]) + n_tracks,
                "name": inst["name"],
                "cat": inst["cat"],
                "phase": inst["phase"],
                "args": inst["args"],
                "_rank_args": np.full(len(inst["args"]), len(args_parts) - 1, np.int32),
            }
        )
        fl = p.flows
        flow_parts.append(
            {
                "flow_id": fl["flow_id"],
                "phase": fl["phase"],
                "ts_ns": fl["ts_ns"] - zero,
                "track": lane_track(fl["pid"], fl["tid"]) + n_tracks,
                "name": fl["name"],
                "cat": fl["cat"],
                "enclosing": fl["enclosing"],
            }
        )
        m = p.memory
        memory_parts.append(
            {
                "ts_ns": m["ts_ns"] - zero,
                "rank": np.full(len(m["ts_ns"]), rank_code, np.int32),
                "device_type": m["device_type"],
                "device_id": m["device_id"],
                "addr": m["addr"],
                "bytes": m["bytes"],
                "total_allocated": m["total_allocated"],
                "total_reserved": m["total_reserved"],
                "track": lane_track(m["pid"], m["tid"]) + n_tracks,
            }
        )
        track_rows.append(tracks)
        n_tracks += len(tracks["kind"])
        for d in p.metadata_events:
            d["rank"] = r
            meta_events.append(d)
        warnings.extend(p.warnings)
        event_count += p.event_count
        infos.append(
            RankInfo(
                rank=r,
                source=p.path,
                metadata=p.metadata,
                offset_ns=p.offset_ns,
                event_count=p.event_count,
            )
        )

    args, shifts = ArgsStore.concat(args_parts)
    shift_arr = np.asarray(shifts, dtype=np.int64)
    tracks = Tracks(
        **{
            k: np.concatenate([t[k] for t in track_rows])
            for k in ("kind", "rank", "device", "stream", "pid", "tid", "label")
        }
    )
    # Track order: rank, then GPU lanes by device and stream, then CPU lanes by pid and tid.
    is_cpu = (tracks.kind >= TrackKind.CPU_THREAD).astype(np.int64)
    order = np.lexsort(
        (
            tracks.kind,
            tracks.tid,
            tracks.pid,
            tracks.stream,
            tracks.device,
            is_cpu,
            tracks.rank.astype(np.int64) + 1,
        )
    )
    tracks = tracks.take(order)
    remap = np.empty(len(order), dtype=np.int32)
    remap[order] = np.arange(len(order), dtype=np.int32)

    def join(ps: list[dict[str, np.ndarray]], key: str, dt: Any) -> np.ndarray:
        return (
            np.concatenate([q[key] for q in ps]).astype(dt, copy=False) if ps else np.empty(0, dt)
        )

    def args_rows(ps: list[dict[str, np.ndarray]]) -> np.ndarray:
        rows = join(ps, "args", np.int64)
        owner = join(ps, "_rank_args", np.int64)
        out = np.where(rows >= 0, rows + (shift_arr[owner] if len(shift_arr) else 0), NONE)
        return out.astype(np.int32)

    start = join(slice_parts, "start_ns", np.int64)
    dur = join(slice_parts, "dur_ns", np.int64)
    track = (
        remap[join(slice_parts, "track", np.int32)]
        if n_tracks
        else join(slice_parts, "track", np.int32)
    )
    # Sort by track, then start; a longer slice first at equal starts so parents precede children.
    order = np.lexsort((-dur, start, track))
    slices = Slices(
        start_ns=start[order],
        dur_ns=dur[order],
        track=track[order],
        depth=np.zeros(len(order), np.int16),
        name=join(slice_parts, "name", np.int32)[order],
        cat=join(slice_parts, "cat", np.int32)[order],
        kind=join(slice_parts, "kind", np.uint8)[order],
        correlation=join(slice_parts, "correlation", np.int64)[order],
        external_id=join(slice_parts, "external_id", np.int64)[order],
        bytes=join(slice_parts, "bytes", np.int64)[order],
        args=args_rows(slice_parts)[order],
    )
    slices.depth = stack_depths(slices.track, slices.start_ns, slices.dur_ns)

    inst_track = join(instant_parts, "track", np.int32)
    instants = Instants(
        ts_ns=join(instant_parts, "ts_ns", np.int64),
        track=remap[inst_track] if inst_track.size else inst_track,
        name=join(instant_parts, "name", np.int32),
        cat=join(instant_parts, "cat", np.int32),
        phase=join(instant_parts, "phase", np.uint8),
        args=args_rows(instant_parts),
    )
    fl_track = join(flow_parts, "track", np.int32)
    flows = Flows(
        flow_id=join(flow_parts, "flow_id", np.int64),
        phase=join(flow_parts, "phase", np.uint8),
        ts_ns=join(flow_parts, "ts_ns", np.int64),
        track=remap[fl_track] if fl_track.size else fl_track,
        name=join(flow_parts, "name", np.int32),
        cat=join(flow_parts, "cat", np.int32),
        enclosing=join(flow_parts, "enclosing", np.uint8),
    )
    m_track = join(memory_parts, "track", np.int32)
    memory = MemoryEvents(
        ts_ns=join(memory_parts, "ts_ns", np.int64),
        rank=join(memory_parts, "rank", np.int32),
        device_type=join(memory_parts, "device_type", np.int8),
        device_id=join(memory_parts, "device_id", np.int32),
        addr=join(memory_parts, "addr", np.int64),
        bytes=join(memory_parts, "bytes", np.int64),
        total_allocated=join(memory_parts, "total_allocated", np.int64),
        total_reserved=join(memory_parts, "total_reserved", np.int64),
        track=remap[m_track] if m_track.size else m_track,
    )
    return Trace(
        symbols=symbols,
        slices=slices,
        tracks=tracks,
        flows=flows,
        memory=memory,
        instants=instants,
        args=args,
        ranks=infos,
        zero_ns=int(zero),
        event_count=event_count,
        warnings=warnings,
        metadata_events=meta_events,
    )


def _file_tracks(
    p: _FileColumns, rank: int, symbols: SymbolTable
) -> tuple[dict[str, np.ndarray], np.ndarray, Callable[[np.ndarray, np.ndarray], np.ndarray]]:
    """The tracks of one file, each slice's track, and a map from (pid, tid) lanes to tracks."""
    s = p.slices
    kind = s["kind"]
    gpu = _GPU_KINDS[kind]
    gpu_annot = kind == Kind.GPU_USER_ANNOTATION
    on_gpu = gpu | gpu_annot
    tkind = np.where(
        gpu,
        TrackKind.GPU_STREAM,
        np.where(
            gpu_annot,
            TrackKind.GPU_ANNOTATION,
            np.where(kind == Kind.USER_ANNOTATION, TrackKind.CPU_ANNOTATION, TrackKind.CPU_THREAD),
        ),
    )
    a = np.where(on_gpu, s["device"], s["pid"])
    b = np.where(on_gpu, s["stream"], s["tid"])
    keys = (
        np.stack([tkind.astype(np.int64), a, b], axis=1)
        if len(kind)
        else np.empty((0, 3), np.int64)
    )
    uniq, inverse = (
        np.unique(keys, axis=0, return_inverse=True)
        if len(keys)
        else (np.empty((0, 3), np.int64), np.empty(0, np.int64))
    )
    inverse = inverse.reshape(-1)
    table: dict[tuple[int, int, int], int] = {tuple(row): i for i, row in enumerate(uniq.tolist())}  # type: ignore[misc]
    # The (pid, tid) lanes of GPU activity, so that flows on a stream land on its GPU track.
    lane_gpu: dict[tuple[int, int], int] = {}
    track_lane: dict[int, tuple[int, int]] = {}
    if on_gpu.any():
        gi = np.flatnonzero(on_gpu)
        pairs = np.stack([s["pid"][gi], s["tid"][gi], inverse[gi], gpu[gi]], axis=1)
        for pid, tid, t, is_activity in np.unique(pairs, axis=0).tolist():
            track_lane.setdefault(t, (pid, tid))
            if is_activity:
                lane_gpu.setdefault((pid, tid), t)

    def lane_track(pid: np.ndarray, tid: np.ndarray) -> np.ndarray:
        if not len(pid):
            return np.empty(0, np.int32)
        lanes, inv = np.unique(np.stack([pid, tid], axis=1), axis=0, return_inverse=True)
        ids = []
        for lp, lt in lanes.tolist():
            t = lane_gpu.get((lp, lt))
            if t is None:
                key = (int(TrackKind.CPU_THREAD), lp, lt)
                t = table.get(key)
                if t is None:
                    t = table[key] = len(table)
            ids.append(t)
        return np.asarray(ids, dtype=np.int32)[inv.reshape(-1)]

    # The track table is built after every lane is known: callers use lane_track first.
    def build() -> dict[str, np.ndarray]:
        rows = sorted(table.items(), key=lambda kv: kv[1])
        n = len(rows)
        out = {
            "kind": np.empty(n, np.uint8),
            "rank": np.full(n, rank, np.int32),
            "device": np.full(n, NONE, np.int32),
            "stream": np.full(n, NONE, np.int64),
            "pid": np.full(n, NONE, np.int64),
            "tid": np.full(n, NONE, np.int64),
            "label": np.empty(n, np.int32),
        }
        for (tk, x, y), i in rows:
            out["kind"][i] = tk
            if tk in (TrackKind.GPU_STREAM, TrackKind.GPU_ANNOTATION):
                out["device"][i] = x
                out["stream"][i] = y
                lane = track_lane.get(i)
                if lane is not None:
                    out["pid"][i], out["tid"][i] = lane
                label = f"stream {y}" if y != NONE else "stream ?"
                if tk == TrackKind.GPU_ANNOTATION:
                    label += " annotations"
            else:
                out["pid"][i] = x
                out["tid"][i] = y
                label = _thread_label(x, y, p.thread_names, symbols)
                if tk == TrackKind.CPU_ANNOTATION:
                    label += " annotations"
            out["label"][i] = symbols.intern(label)
        return out

    # Resolve the lanes of the other tables now, so their CPU tracks exist before build().
    for table_cols in (p.instants, p.flows, p.memory):
        table_cols["_track"] = lane_track(table_cols["pid"], table_cols["tid"])
    tracks = build()

    def cached(pid: np.ndarray, tid: np.ndarray) -> np.ndarray:
        for table_cols in (p.instants, p.flows, p.memory):
            if table_cols["pid"] is pid:
                return table_cols.pop("_track")
        return lane_track(pid, tid)  # pragma: no cover

    return tracks, inverse.astype(np.int32), cached


def _thread_label(
    pid: int, tid: int, names: dict[tuple[int, int], str], symbols: SymbolTable
) -> str:
    name = names.get((pid, tid))
    if name:
        return name
    pid_s = symbols[_STRING_CODE_BASE - pid] if _is_string_code(pid) else str(pid)
    tid_s = symbols[_STRING_CODE_BASE - tid] if _is_string_code(tid) else f"thread {tid}"
    if _is_string_code(pid):
        # Kineto's own lanes ("Spans"/"PyTorch Profiler", "Traces"/…, ""/""): name both parts.
        return " / ".join(x for x in (pid_s, tid_s) if x) or "(unnamed)"
    return tid_s or "(unnamed)"


def iter_sources(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """All trace files of several TRACE paths (files or folders), in order."""
    out: list[Path] = []
    for p in paths:
        out.extend(trace_files(p))
    return out


def _phase_byte(ph: str) -> int:
    """``ord(ph)`` for the column; ``?`` for an empty or non-ASCII phase."""
    c = ord(ph[0]) if ph else 63
    return c if c < 128 else 63
