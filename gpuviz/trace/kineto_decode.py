"""One Kineto file, chunk by chunk, into column parts: the inner loop of the importer.

Each chunk of events from :mod:`gpuviz.trace.jsonscan` is decoded by msgspec into small
structs that hold only what the model needs (``args`` stays raw text), and every field goes
straight into a numpy column with one C-level pass (``map`` + ``np.fromiter``). The structs die
with their chunk. Odd events (wrong types, missing fields) take a slower path, event by event,
that coerces what it can and counts the rest as warnings; GPU activity without a valid
``ts``/``dur`` is an error, as DESIGN.md's bad-input policy says.
"""

from __future__ import annotations

import math
import re
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import repeat
from operator import attrgetter, is_
from typing import Any

import msgspec
import numpy as np
import numpy.typing as npt

from gpuviz.trace.errors import ImportWarnings, TraceFormatError
from gpuviz.trace.jsonscan import Chunk, EventChunks, decode_error_offset
from gpuviz.trace.model import CATEGORY_KINDS, NONE, Kind, SymbolTable, TrackKind

Array = npt.NDArray[Any]

_NAN = math.nan
# |ts| and dur above this many µs would overflow int64 nanoseconds once made absolute.
LIMIT_US = 4.0e15
# Codes of string pids/tids that are not numbers: far from any real id (real tids can be
# negative, e.g. -247463936 in a sample), so that they never collide.
STRING_CODE_BASE = -(1 << 40)
MEMORY_NAME = "[memory]"


class _Event(msgspec.Struct, gc=False):
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
_ONE_EVENT = msgspec.json.Decoder(_Event)
_RAWS = msgspec.json.Decoder(list[msgspec.Raw])
_SLICE_ARGS = msgspec.json.Decoder(list[_SliceArgs], strict=False)
_MEMORY_ARGS = msgspec.json.Decoder(list[_MemoryArgs], strict=False)
_ARG_ERRORS = (msgspec.ValidationError, msgspec.DecodeError, OverflowError, UnicodeDecodeError)

_PH, _NAME, _CAT, _TS, _DUR, _PID, _TID, _ID, _BP, _ARGS = (
    attrgetter(f) for f in ("ph", "name", "cat", "ts", "dur", "pid", "tid", "id", "bp", "args")
)

# Phase codes: the phase's byte for the phases the model knows, 0 for any other.
PH_OTHER = 0


class _PhaseCodes(dict[str, int]):
    def __missing__(self, key: str) -> int:
        return PH_OTHER


_PHASES = _PhaseCodes({p: ord(p) for p in "XiIstfMBE"})
PH_X, PH_META, PH_BEGIN, PH_END = (ord(p) for p in "XMBE")
_IS_INSTANT = np.zeros(256, dtype=bool)
_IS_INSTANT[[PH_OTHER, ord("i"), ord("I")]] = True
_IS_FLOW = np.zeros(256, dtype=bool)
_IS_FLOW[[ord("s"), ord("t"), ord("f")]] = True
GPU_KINDS = np.zeros(256, dtype=bool)
GPU_KINDS[[Kind.KERNEL, Kind.MEMCPY, Kind.MEMSET]] = True
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


# --------------------------------------------------------------------------- tracks


@dataclass
class TrackTable:
    """The lanes and tracks of one file, filled chunk by chunk.

    A lane is a (pid, tid) pair as the file had it; a track is a timeline row of the model:
    ``(TrackKind.GPU_*, device, stream)`` or ``(TrackKind.CPU_*, lane)``.
    """

    lanes: dict[tuple[int, int], int] = field(default_factory=dict)
    tracks: dict[tuple[int, int, int], int] = field(default_factory=dict)
    # track id -> (pid, tid) of the first slice seen on it
    track_lane: dict[int, tuple[int, int]] = field(default_factory=dict)
    # lane id -> the GPU stream track of its GPU activity (flows there land on that track)
    lane_gpu: dict[int, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._values: dict[str, KeyIndex] = {n: KeyIndex() for n in ("pid", "tid", "a", "b")}
        self._lane_index = KeyIndex()
        self._track_index = KeyIndex()
        self._gpu_pairs = KeyIndex()

    def _small(self, name: str, values: Array) -> Array:
        # Each distinct value of a column gets a small number (its order of first sight).
        index = self._values[name]

        def number(key: int, row: int) -> int:
            index.count += 1
            return index.count - 1

        return index.lookup(values, number)

    def lane_ids(self, pid: Array, tid: Array) -> Array:
        """File lane ids of each (pid, tid)."""
        if not len(pid):
            return np.empty(0, np.int32)
        key = (self._small("pid", pid) << 31) | self._small("tid", tid)
        lanes = self.lanes

        def new_lane(_: int, row: int) -> int:
            return lanes.setdefault((int(pid[row]), int(tid[row])), len(lanes))

        return self._lane_index.lookup(key, new_lane).astype(np.int32)

    def track_ids(self, kind: Array, a: Array, b: Array, pid: Array, tid: Array) -> Array:
        """File track ids of rows keyed ``(kind, a, b)``; remembers a (pid, tid) for each."""
        if not len(kind):
            return np.empty(0, np.int32)
        key = (kind.astype(np.int64) << 58) | (self._small("a", a) << 29) | self._small("b", b)
        tracks = self.tracks

        def new_track(_: int, row: int) -> int:
            k = (int(kind[row]), int(a[row]), int(b[row]))
            v = tracks.get(k)
            if v is None:
                v = tracks[k] = len(tracks)
                self.track_lane[v] = (int(pid[row]), int(tid[row]))
            return v

        return self._track_index.lookup(key, new_track).astype(np.int32)

    def note_gpu_lanes(self, lane: Array, track: Array) -> None:
        """Remember the GPU track of lanes that carry GPU activity."""
        if not len(lane):
            return
        lane_gpu = self.lane_gpu

        def new_pair(_: int, row: int) -> int:
            lane_gpu.setdefault(int(lane[row]), int(track[row]))
            return 0

        self._gpu_pairs.lookup((lane.astype(np.int64) << 31) | track, new_pair)

    def cpu_track(self, lane: int) -> int:
        """The CPU thread track of a lane, made if needed."""
        key = (int(TrackKind.CPU_THREAD), lane, 0)
        v = self.tracks.get(key)
        if v is None:
            v = self.tracks[key] = len(self.tracks)
        return v

    def lane_tracks(self) -> Array:
        """Lane id -> the track that events on that lane (flows, instants, memory) belong to."""
        out = np.empty(len(self.lanes), dtype=np.int32)
        for lane in range(len(self.lanes)):
            t = self.lane_gpu.get(lane)
            out[lane] = self.cpu_track(lane) if t is None else t
        return out


class KeyIndex:
    """int64 keys -> ids, kept sorted: a chunk's keys are looked up with one searchsorted.

    Cheaper than factorizing each chunk (a sort of all its rows) when, as with lanes and
    tracks, a file has few distinct keys and each chunk repeats them.
    """

    def __init__(self) -> None:
        self.keys = np.empty(0, dtype=np.int64)
        self.ids = np.empty(0, dtype=np.int64)
        self.count = 0  # for callers that number keys in order of first sight

    def lookup(self, keys: Array, assign: Callable[[int, int], int]) -> Array:
        """The id of each key; ``assign(key, row)`` gives the id of a key not seen before
        (``row``: its first row in ``keys``)."""
        keys = keys.astype(np.int64, copy=False)
        pos = np.searchsorted(self.keys, keys)
        if len(self.keys):
            np.minimum(pos, len(self.keys) - 1, out=pos)
            miss = np.flatnonzero(self.keys[pos] != keys)
        else:
            miss = np.arange(len(keys))
        if miss.size:
            new, first = np.unique(keys[miss], return_index=True)
            new_ids = [assign(k, int(miss[f])) for k, f in zip(new.tolist(), first.tolist())]
            all_keys = np.concatenate([self.keys, new])
            order = np.argsort(all_keys)
            self.keys = all_keys[order]
            self.ids = np.concatenate([self.ids, np.asarray(new_ids, dtype=np.int64)])[order]
            pos = np.searchsorted(self.keys, keys)
        return self.ids[pos]


# --------------------------------------------------------------------------- one file


@dataclass
class FileColumns:
    """Everything read from one file: column parts per table, not yet joined or aligned.

    Times are ns relative to the file's own zero (``baseTimeNanoseconds``, or 0 for absolute
    µs); track ids and args rows are the file's own.
    """

    path: str
    metadata: dict[str, Any]
    event_count: int
    slices: dict[str, list[Array]]
    instants: dict[str, list[Array]]
    flows: dict[str, list[Array]]
    memory: dict[str, list[Array]]
    args_blob: bytearray
    args_offsets: Array
    tracks: TrackTable
    metadata_events: list[dict[str, Any]]
    warnings: ImportWarnings


_SLICE_COLS = ("start_ns", "dur_ns", "track", "name", "cat", "kind", "correlation",
               "external_id", "bytes", "args")  # fmt: skip
_INSTANT_COLS = ("ts_ns", "lane", "name", "cat", "phase", "args")
_FLOW_COLS = ("ts_ns", "lane", "name", "cat", "phase", "flow_id", "enclosing")
_MEMORY_COLS = ("ts_ns", "lane", "device_type", "device_id", "addr", "bytes", "total_allocated",
                "total_reserved")  # fmt: skip


class FileReader:
    """Reads one file into :class:`FileColumns`.

    Parameters
    ----------
    path : str
        The file.
    interner : Interner
        Shared with the other files of the trace.
    on_read, cancelled : callable, optional
        Progress (file bytes read so far) and cancellation, as for :class:`EventChunks`.
    """

    def __init__(
        self,
        path: str,
        interner: Interner,
        on_read: Callable[[int], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> None:
        self.path = path
        self.it = interner
        self.on_read = on_read
        self.cancelled = cancelled
        self.warnings = ImportWarnings()
        self.tracks = TrackTable()
        self.n_events = 0
        self.slices: dict[str, list[Array]] = {c: [] for c in _SLICE_COLS}
        self.instants: dict[str, list[Array]] = {c: [] for c in _INSTANT_COLS}
        self.flows: dict[str, list[Array]] = {c: [] for c in _FLOW_COLS}
        self.memory: dict[str, list[Array]] = {c: [] for c in _MEMORY_COLS}
        self.blob = bytearray()
        self.arg_lengths: list[Array] = []
        self.n_args = 0
        self.meta_events: list[dict[str, Any]] = []
        self.begin_end: list[tuple[int, _Event]] = []

    def read(self) -> FileColumns:
        """Read the whole file."""
        from gpuviz.trace.kineto_worker import worker_count

        try:
            chunks = self._read_all(guess=True, workers=worker_count(self.path))
        except _Restart:
            # A child found a guessed chunk end wrong after the scanner had moved on: read the
            # file again, in this process, finding every chunk end exactly.
            self.__init__(self.path, self.it, self.on_read, self.cancelled)  # type: ignore[misc]
            chunks = self._read_all(guess=False, workers=0)
        self._pair_begin_end()
        lengths = np.concatenate(self.arg_lengths) if self.arg_lengths else np.empty(0, np.int64)
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        return FileColumns(
            path=self.path, metadata=chunks.metadata, event_count=self.n_events,
            slices=self.slices, instants=self.instants, flows=self.flows, memory=self.memory,
            args_blob=self.blob, args_offsets=offsets, tracks=self.tracks,
            metadata_events=self.meta_events, warnings=self.warnings,
        )  # fmt: skip

    def _read_all(self, guess: bool, workers: int) -> EventChunks:
        chunks = EventChunks(self.path, on_read=self.on_read, cancelled=self.cancelled, guess=guess)
        if not workers:
            for chunk in chunks:
                self._read_chunk(chunk, chunks)
            return chunks
        from gpuviz.trace.kineto_worker import Worker, WorkerPool

        try:
            pool: WorkerPool | None = WorkerPool(workers)
        except OSError:  # children cannot be started here: read in this process
            for chunk in chunks:
                self._read_chunk(chunk, chunks)
            return chunks
        inflight: deque[tuple[Chunk, bytes, Worker | None]] = deque()
        turn = 0
        try:
            for chunk in chunks:
                while pool is not None and len(inflight) >= len(pool.workers):
                    pool = self._merge_next(inflight, chunks, pool)
                buf = chunk.json_array()
                if pool is None:
                    inflight.append((chunk, buf, None))
                    while inflight:
                        self._merge_next(inflight, chunks, None)
                    continue
                w: Worker | None = pool.workers[turn % len(pool.workers)]
                turn += 1
                try:
                    w.send(buf)  # type: ignore[union-attr]
                except OSError:
                    pool.close()
                    pool = None
                    w = None
                inflight.append((chunk, buf, w))
            while inflight:
                pool = self._merge_next(inflight, chunks, pool)
        finally:
            if pool is not None:
                pool.close()
        return chunks

    def _merge_next(
        self, inflight: deque[tuple[Chunk, bytes, Any]], chunks: EventChunks, pool: Any
    ) -> Any:
        """Take in the oldest chunk in flight (in file order); returns the pool, or None once
        a child failed (the rest is then read here)."""
        chunk, buf, worker = inflight.popleft()
        reply = None
        if worker is not None and pool is not None:
            try:
                reply = worker.receive()
            except (OSError, EOFError, msgspec.DecodeError):
                pool.close()
                pool = None
        if reply is not None and reply.get("ok"):
            self._merge(reply, worker)
        elif reply is not None and reply.get("why") == "decode" and chunk.guessed:
            raise _Restart
        else:
            self._read_chunk(chunk, chunks, buf)
        return pool

    def _merge(self, reply: dict[str, Any], w: Any) -> None:
        """Add a child's columns of a chunk, renumbered into this reader's ids."""
        names = self.it.names
        new = [names[s] for s in reply["symbols"]]
        w.symbols = np.concatenate([w.symbols, np.asarray(new, dtype=np.int64)])
        sym = w.symbols

        def code(c: int) -> int:  # a pid/tid code: string codes name the child's symbols
            return STRING_CODE_BASE - int(sym[STRING_CODE_BASE - c]) if c <= STRING_CODE_BASE else c

        t = self.tracks
        for pid, tid in reply["lanes"]:
            w.lanes.append(t.lanes.setdefault((code(pid), code(tid)), len(t.lanes)))
        for kind, a, b, pid, tid in reply["tracks"]:
            if kind >= TrackKind.CPU_THREAD:
                a = w.lanes[a]
            key = (kind, a, b)
            v = t.tracks.get(key)
            if v is None:
                v = t.tracks[key] = len(t.tracks)
                t.track_lane[v] = (code(pid), code(tid))
            w.tracks.append(v)
        for lane, track in reply["lane_gpu"]:
            t.lane_gpu.setdefault(w.lanes[lane], w.tracks[track])
        lanes = np.asarray(w.lanes, dtype=np.int32)
        tracks = np.asarray(w.tracks, dtype=np.int32)
        shift = self.n_args
        for table_name, table in (("slices", self.slices), ("instants", self.instants),
                                  ("flows", self.flows), ("memory", self.memory)):  # fmt: skip
            cols = reply["cols"].get(table_name)
            if not cols:
                continue
            for c, (dtype, data) in cols.items():
                a = np.frombuffer(data, dtype=dtype)  # read-only: the importer never writes
                if c in ("name", "cat"):
                    a = sym[a].astype(np.int32)
                elif c == "track":
                    a = tracks[a]
                elif c == "lane":
                    a = lanes[a]
                elif c == "args" and shift:
                    a = np.where(a >= 0, a + shift, a).astype(np.int32)
                table[c].append(a)
        lengths = np.frombuffer(reply["arg_lengths"], dtype=np.int64)
        if len(lengths):
            self.blob += reply["blob"]
            self.arg_lengths.append(lengths)
            self.n_args += len(lengths)
        self.n_events += int(reply["n"])

    # -- decoding

    def _read_chunk(self, chunk: Chunk, chunks: EventChunks, buf: bytes | None = None) -> None:
        if buf is None:
            buf = chunk.json_array()
        loose: _Loose | None = None
        try:
            try:
                events: list[_Event] = _EVENTS.decode(buf)
            except msgspec.ValidationError:
                raws = _RAWS.decode(buf)  # a JSON error here outranks the odd value
                events, loose = self._decode_loose(raws, chunk.byte_offset, chunks.is_list)
        except (msgspec.DecodeError, UnicodeDecodeError) as e:
            if chunk.guessed:
                chunks.reject()  # a wrong guess of the chunk's end: it is redone exactly
                return
            raise malformed(self.path, e, chunk.byte_offset) from None
        del buf
        base = self.n_events
        self.n_events += len(events) + (loose.skipped if loose else 0)
        if events:
            self._columns(events, base, loose)

    def _decode_loose(
        self, raws: list[msgspec.Raw], offset: int, is_list: bool
    ) -> tuple[list[_Event], _Loose]:
        """Event by event, for a chunk with odd values: coerce what can be, note the rest."""
        events: list[_Event] = []
        loose = _Loose()
        base = self.n_events
        for k, raw in enumerate(raws):
            index = base + k
            try:
                events.append(_ONE_EVENT.decode(raw))
                loose.index.append(k)
                continue
            except msgspec.ValidationError:
                pass
            value = msgspec.json.decode(raw)
            if not isinstance(value, dict):
                if is_list and index == 0:
                    if isinstance(value, list):
                        raise TraceFormatError(
                            self.path, "",
                            "a memory-timeline export (a JSON list of lists, as written by "
                            "export_memory_timeline), not a Kineto trace",
                        )  # fmt: skip
                    raise TraceFormatError(
                        self.path, "event 0",
                        f"not a trace: a JSON list of {type(value).__name__} values, not of events",
                    )  # fmt: skip
                self.warnings.add(f"event {index}: not a JSON object, skipped")
                loose.skipped += 1
                continue
            ev, reason = _coerce(value)
            if ev is None:
                self.warnings.add(f"event {index}: {reason}, skipped")
                loose.skipped += 1
                continue
            if reason:
                loose.reasons[len(events)] = reason
            events.append(ev)
            loose.index.append(k)
        return events, loose

    def _columns(self, ev: list[_Event], base: int, loose: _Loose | None) -> None:
        it = self.it
        n = len(ev)
        index = np.asarray(loose.index, dtype=np.int64) + base if loose else None
        reasons = loose.reasons if loose else {}

        def event_index(k: int) -> int:
            return int(index[k]) if index is not None else base + k

        ph = np.fromiter(map(_PHASES.__getitem__, map(_PH, ev)), np.uint8, n)
        ts = np.fromiter(map(_TS, ev), np.float64, n)
        names = it.names
        name = np.fromiter(map(names.__getitem__, map(_NAME, ev)), np.int32, n)
        pre = self._common(ev, name)
        x = np.flatnonzero(ph == PH_X)
        inst = np.flatnonzero(_IS_INSTANT[ph])
        flow = np.flatnonzero(_IS_FLOW[ph])
        rare = np.flatnonzero((ph == PH_META) | (ph == PH_BEGIN) | (ph == PH_END))
        if x.size == n:
            sub_x = ev
        elif x.size:
            sub_x = [ev[k] for k in x.tolist()]
        if x.size:
            self._slices(sub_x, x, ts[x], _rows(pre, x), event_index, reasons)
        if inst.size:
            self._instants(
                [ev[k] for k in inst.tolist()],
                inst,
                ts[inst],
                _rows(pre, inst),
                ph[inst],
                event_index,
                reasons,
            )
        if flow.size:
            self._flows(
                [ev[k] for k in flow.tolist()],
                flow,
                ts[flow],
                _rows(pre, flow),
                ph[flow],
                event_index,
                reasons,
            )
        for k in rare.tolist():
            e = ev[k]
            if ph[k] == PH_META:
                self.meta_events.append(_meta_dict(e))
            elif ph[k] in (PH_BEGIN, PH_END):
                self.begin_end.append((event_index(k), e))

    def _common(self, ev: list[_Event], name: Array) -> dict[str, Array]:
        """Columns every table uses: name, category, pid, tid and (pid, tid) lane ids."""
        it = self.it
        n = len(ev)
        pid = it.int_codes(lambda: map(_PID, ev), n)
        tid = it.int_codes(lambda: map(_TID, ev), n)
        return {
            "name": name, "cat": np.fromiter(map(it.names.__getitem__, map(_CAT, ev)), np.int32, n),
            "pid": pid, "tid": tid, "lane": self.tracks.lane_ids(pid, tid),
        }  # fmt: skip

    def _bad_times(
        self,
        sub: list[_Event],
        rows: Array,
        ts: Array,
        dur: Array | None,
        kind: Array | None,
        event_index: Callable[[int], int],
        reasons: dict[int, str],
    ) -> Array | None:
        """Check times; raise for GPU activity, warn for the rest; the rows to keep (or None)."""
        bad = ~np.isfinite(ts) | (np.abs(ts) > LIMIT_US)
        if dur is not None:
            bad |= ~np.isfinite(dur) | (dur < 0) | (dur > LIMIT_US)
        if kind is not None:
            bad_gpu = GPU_KINDS[kind] & (bad | (ts < 0))
            if bad_gpu.any():
                k = int(np.flatnonzero(bad_gpu)[0])
                e = sub[k]
                reason = reasons.get(int(rows[k])) or _time_problem(e.ts, e.dur)
                raise TraceFormatError(
                    self.path, f"event {event_index(int(rows[k]))}",
                    f"GPU activity slice {e.name[:80]!r} (cat {e.cat!r}): {reason}",
                )  # fmt: skip
        if not bad.any():
            return None
        for k in np.flatnonzero(bad)[:3].tolist():
            e = sub[k]
            reason = reasons.get(int(rows[k])) or (
                _time_problem(e.ts, e.dur) if dur is not None else "ts is missing or not a number"
            )
            self.warnings.add(
                f"event {event_index(int(rows[k]))}: {e.ph!r} event {e.name[:60]!r}: {reason}, skipped",
                0,
            )
        self.warnings.count += int(bad.sum())
        return np.flatnonzero(~bad)

    def _store_args(self, raws: list[msgspec.Raw]) -> Array:
        """Append raw args to the store; each one's row, -1 for an event without args."""
        n = len(raws)
        lengths = np.fromiter(map(len, raws), np.int64, n)
        rows = np.full(n, NONE, dtype=np.int32)
        has = lengths > 0
        k = int(has.sum())
        if k:
            rows[has] = np.arange(self.n_args, self.n_args + k, dtype=np.int32)
            self.blob += b"".join(raws)
            self.arg_lengths.append(lengths[has])
            self.n_args += k
        return rows

    def _slices(
        self,
        sub: list[_Event],
        rows: Array,
        ts: Array,
        pre: dict[str, Array],
        event_index: Callable[[int], int],
        reasons: dict[int, str],
    ) -> None:
        it = self.it
        n = len(sub)
        dur = np.fromiter(map(_DUR, sub), np.float64, n)
        kind = it.kinds(pre["cat"])
        keep = self._bad_times(sub, rows, ts, dur, kind, event_index, reasons)
        if keep is not None:
            sub = [sub[k] for k in keep.tolist()]
            ts, dur, kind, pre = ts[keep], dur[keep], kind[keep], _rows(pre, keep)
            n = len(sub)
            if not n:
                return
        name, cat, pid, tid, lane = pre["name"], pre["cat"], pre["pid"], pre["tid"], pre["lane"]
        raws = list(map(_ARGS, sub))
        args = self._store_args(raws)
        has = args >= 0
        k = int(has.sum())
        on_gpu = GPU_KINDS[kind] | (kind == Kind.GPU_USER_ANNOTATION)
        if k == n:
            fields = _slice_arg_fields(raws, on_gpu)
        else:
            fields = np.full((7, n), NONE, dtype=np.int64)
            if k:
                fields[:, has] = _slice_arg_fields([r for r in raws if len(r)], on_gpu[has])
        correlation, ext, ext_2021, nbytes, device, in_device, stream = fields
        ext = np.where(ext != NONE, ext, ext_2021)
        # A copy's device is args.device, else args.inDevice (p2p), else the GPU's pid.
        device = np.where(device != NONE, device, in_device)
        device = np.where(
            device != NONE, device, np.where((pid >= 0) & (pid < (1 << 31)), pid, NONE)
        )
        device[(device < NONE) | (device >= (1 << 31))] = NONE  # not a device index (int32)
        stream = np.where(stream != NONE, stream, np.where(tid > STRING_CODE_BASE, tid, NONE))
        gpu = GPU_KINDS[kind]
        gpu_annot = kind == Kind.GPU_USER_ANNOTATION
        on_gpu = gpu | gpu_annot
        tkind = np.where(
            gpu,
            TrackKind.GPU_STREAM,
            np.where(
                gpu_annot,
                TrackKind.GPU_ANNOTATION,
                np.where(
                    kind == Kind.USER_ANNOTATION, TrackKind.CPU_ANNOTATION, TrackKind.CPU_THREAD
                ),
            ),
        )
        a = np.where(on_gpu, device, lane)
        b = np.where(on_gpu, stream, 0)
        track = self.tracks.track_ids(tkind, a, b, pid, tid)
        if gpu.any():
            self.tracks.note_gpu_lanes(lane[gpu], track[gpu])
        start = us_to_ns(ts)
        out = self.slices
        out["start_ns"].append(start)
        # ts and dur each hold exact ns in µs (Kineto prints 3 decimals); converting dur on
        # its own keeps it exact, where ts + dur in float64 could be off by a ns.
        out["dur_ns"].append(np.rint(dur * 1000.0).astype(np.int64))
        out["track"].append(track)
        out["name"].append(name)
        out["cat"].append(cat)
        out["kind"].append(kind)
        out["correlation"].append(correlation)
        out["external_id"].append(ext)
        out["bytes"].append(nbytes)
        out["args"].append(args)

    def _instants(
        self,
        sub: list[_Event],
        rows: Array,
        ts: Array,
        pre: dict[str, Array],
        phase: Array,
        event_index: Callable[[int], int],
        reasons: dict[int, str],
    ) -> None:
        keep = self._bad_times(sub, rows, ts, None, None, event_index, reasons)
        if keep is not None:
            sub = [sub[k] for k in keep.tolist()]
            ts, pre, phase = ts[keep], _rows(pre, keep), phase[keep]
            if not sub:
                return
        is_mem = pre["name"] == self.it.memory_name
        if is_mem.any():
            mem = np.flatnonzero(is_mem)
            self._memory([sub[k] for k in mem.tolist()], ts[mem], pre["lane"][mem])
            other = np.flatnonzero(~is_mem)
            sub = [sub[k] for k in other.tolist()]
            ts, pre, phase = ts[other], _rows(pre, other), phase[other]
            if not sub:
                return
        unknown = np.flatnonzero(phase == PH_OTHER)
        if unknown.size:  # phases the model has no table for keep their own byte
            phase = phase.copy()
            phase[unknown] = [_phase_byte(sub[k].ph) for k in unknown.tolist()]
        out = self.instants
        out["ts_ns"].append(us_to_ns(ts))
        out["lane"].append(pre["lane"])
        out["name"].append(pre["name"])
        out["cat"].append(pre["cat"])
        out["phase"].append(phase)
        out["args"].append(self._store_args(list(map(_ARGS, sub))))

    def _memory(self, sub: list[_Event], ts: Array, lane: Array) -> None:
        n = len(sub)
        raws = list(map(_ARGS, sub))
        fields = np.full((6, n), NONE, dtype=np.int64)
        fields[3] = 0
        has = np.fromiter(map(len, raws), np.int64, n) > 0
        if has.any():
            present = [r for r in raws if len(r)]
            try:
                decoded = _MEMORY_ARGS.decode(_json_array(present))
                cols = [
                    np.fromiter(map(attrgetter(f), decoded), np.int64, len(decoded))
                    for f in _MemoryArgs.__struct_fields__
                ]
                fields[:, has] = np.stack(cols)
            except _ARG_ERRORS:
                fields[:, has] = (
                    np.array([_loose_fields(r, _MemoryArgs) for r in present], dtype=np.int64)
                    .reshape(-1, 6)
                    .T
                )
        out = self.memory
        out["ts_ns"].append(us_to_ns(ts))
        out["lane"].append(lane)
        out["device_type"].append(np.clip(fields[0], -128, 127).astype(np.int8))
        out["device_id"].append(np.clip(fields[1], -(1 << 31), (1 << 31) - 1).astype(np.int32))
        out["addr"].append(fields[2])
        out["bytes"].append(fields[3])
        out["total_allocated"].append(fields[4])
        out["total_reserved"].append(fields[5])

    def _flows(
        self,
        sub: list[_Event],
        rows: Array,
        ts: Array,
        pre: dict[str, Array],
        phase: Array,
        event_index: Callable[[int], int],
        reasons: dict[int, str],
    ) -> None:
        it = self.it
        ids = list(map(_ID, sub))
        try:
            flow_id = np.fromiter(ids, np.int64, len(ids))  # the usual case: all ints
            no_id = None
        except (TypeError, ValueError, OverflowError):
            flow_id = None
            no_id = np.fromiter(map(is_, ids, repeat(None)), bool, len(ids))
        if no_id is not None and no_id.any():
            for k in np.flatnonzero(no_id)[:3].tolist():
                self.warnings.add(
                    f"event {event_index(int(rows[k]))}: flow event without an id, skipped", 0
                )
            self.warnings.count += int(no_id.sum())
            with_id = np.flatnonzero(~no_id)
            sub = [sub[k] for k in with_id.tolist()]
            ids = [ids[k] for k in with_id.tolist()]
            rows, ts, phase = rows[with_id], ts[with_id], phase[with_id]
            pre = _rows(pre, with_id)
        keep = self._bad_times(sub, rows, ts, None, None, event_index, reasons)
        if keep is not None:
            sub = [sub[k] for k in keep.tolist()]
            ts, pre, phase = ts[keep], _rows(pre, keep), phase[keep]
            ids = [ids[k] for k in keep.tolist()]
            flow_id = None
        n = len(sub)
        if not n:
            return
        out = self.flows
        out["ts_ns"].append(us_to_ns(ts))
        out["lane"].append(pre["lane"])
        out["name"].append(pre["name"])
        out["cat"].append(pre["cat"])
        out["phase"].append(phase)
        out["flow_id"].append(
            flow_id if flow_id is not None and len(flow_id) == n else it.int_codes(lambda: ids, n)
        )
        out["enclosing"].append(np.fromiter(map("e".__eq__, map(_BP, sub)), np.uint8, n))

    def _pair_begin_end(self) -> None:
        """Pair ``B``/``E`` events per thread into slices; unpaired ones become instants."""
        if not self.begin_end:
            return
        stacks: dict[tuple[Any, Any], list[_Event]] = {}
        slices: list[_Event] = []
        lone: list[_Event] = []
        timed = []
        for index, e in self.begin_end:
            if math.isfinite(e.ts):
                timed.append((e.ts, index, e))
            else:
                self.warnings.add(
                    f"event {index}: {e.ph!r} event {e.name[:60]!r}: ts is missing, skipped"
                )
        for _, _, e in sorted(timed, key=lambda t: (t[0], t[1])):
            key = (e.pid, e.tid)
            if e.ph == "B":
                stacks.setdefault(key, []).append(e)
            elif stacks.get(key):
                b = stacks[key].pop()
                slices.append(msgspec.structs.replace(b, ph="X", dur=e.ts - b.ts))
            else:
                lone.append(e)
        for st in stacks.values():
            lone.extend(st)
        names = self.it.names

        def no_index(k: int) -> int:
            return -1

        for group in (slices, lone):
            if not group:
                continue
            n = len(group)
            ts = np.fromiter(map(_TS, group), np.float64, n)
            pre = self._common(
                group, np.fromiter(map(names.__getitem__, map(_NAME, group)), np.int32, n)
            )
            if group is slices:
                self._slices(group, np.arange(n), ts, pre, no_index, {})
            else:
                phase = np.fromiter(map(_phase_byte, map(_PH, group)), np.uint8, n)
                self._instants(group, np.arange(n), ts, pre, phase, no_index, {})


def _json_array(raws: list[msgspec.Raw]) -> bytearray:
    """``[raw,raw,…]`` with one copy of the text (``b"[" + … + b"]"`` would make two)."""
    buf = bytearray(b",").join(raws)
    buf[0:0] = b"["
    buf += b"]"
    return buf


def _rows(cols: dict[str, Array], index: Array) -> dict[str, Array]:
    return {k: v[index] for k, v in cols.items()}


class _Restart(Exception):
    """Read the file again, exactly (see :meth:`FileReader.read`)."""


@dataclass
class _Loose:
    """What the event-by-event path learnt about a chunk."""

    index: list[int] = field(default_factory=list)  # chunk position of each kept event
    reasons: dict[int, str] = field(default_factory=dict)  # kept position -> why ts/dur is bad
    skipped: int = 0


def _slice_arg_fields(raws: list[msgspec.Raw], gpu: Array) -> Array:
    """(7, n) int64: correlation, External id, external id, bytes, device, inDevice, stream.

    The last four are read for GPU activity only (``gpu``), the 2021 ``external id`` only
    where ``External id`` is missing: each field read costs a pass over the events.
    """
    n = len(raws)
    try:
        decoded = _SLICE_ARGS.decode(_json_array(raws))
    except _ARG_ERRORS:
        return (
            np.array([_loose_fields(r, _SliceArgs) for r in raws], dtype=np.int64).reshape(-1, 7).T
        )
    out = np.full((7, n), NONE, dtype=np.int64)
    out[0] = np.fromiter(map(_CORRELATION, decoded), np.int64, n)
    out[1] = np.fromiter(map(_EXTERNAL_ID, decoded), np.int64, n)
    missing = np.flatnonzero(out[1] == NONE)
    if missing.size:
        out[2, missing] = [decoded[k].external_id_2021 for k in missing.tolist()]
    g = np.flatnonzero(gpu)
    if g.size:
        sub = decoded if g.size == n else [decoded[k] for k in g.tolist()]
        for row, get in enumerate(_GPU_ARG_FIELDS, start=3):
            out[row, g] = np.fromiter(map(get, sub), np.int64, g.size)
    return out


_CORRELATION = attrgetter("correlation")
_EXTERNAL_ID = attrgetter("external_id")
_GPU_ARG_FIELDS = tuple(attrgetter(f) for f in ("bytes", "device", "in_device", "stream"))


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


def _time_problem(ts: float, dur: float) -> str:
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


def _coerce(value: dict[str, Any]) -> tuple[_Event | None, str]:
    """An event object with odd field types as an _Event; None and why when it is unusable."""
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
    ev = _Event(
        ph=ph, name=name if isinstance(name, str) else str(name),
        cat=cat if isinstance(cat, str) else str(cat), ts=ts, dur=dur, pid=pid, tid=tid,
        id=fid, bp=bp if isinstance(bp, str) else "", args=raw,
    )  # fmt: skip
    return ev, reason


def _loose_fields(raw: msgspec.Raw, cls: Any) -> tuple[int, ...]:
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


def _phase_byte(ph: str) -> int:
    """``ord(ph)`` for the column; ``?`` for an empty or non-ASCII phase."""
    c = ord(ph[0]) if ph else 63
    return c if c < 128 else 63
