"""A Kineto file's decoded events, chunk by chunk, into numpy column parts.

Every field of a chunk's :class:`~gpuviz.trace.kineto_events.Event` structs goes straight into a
numpy column with one C-level pass (``map`` + ``np.fromiter``); the structs die with their
chunk. Odd events (wrong types, missing fields) take a slower path, event by event
(:meth:`ColumnBuilder.decode_loose`), that coerces what it can and counts the rest as warnings;
GPU activity without a valid ``ts``/``dur`` is an error, as DESIGN.md's bad-input policy says.

Used by the importer (:class:`gpuviz.trace.kineto_decode.FileReader`) and by its worker
children (:mod:`gpuviz.trace.kineto_worker`), which build the same columns for chunks they are
sent.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import attrgetter, is_
from typing import Any

import msgspec
import numpy as np
import numpy.typing as npt

from gpuviz.trace.args_text import TextWriter
from gpuviz.trace.errors import ImportWarnings, TraceFormatError
from gpuviz.trace.kineto_events import (
    ARG_ERRORS,
    MEMORY_ARGS,
    ONE_EVENT,
    STRING_CODE_BASE,
    Event,
    Interner,
    MemoryArgs,
    coerce_event,
    loose_fields,
    meta_dict,
    us_to_ns,
)
from gpuviz.trace.kineto_fields import (
    GPU_KINDS,
    IS_FLOW,
    IS_INSTANT,
    MEMORY_ROWS,
    PH_BEGIN,
    PH_END,
    PH_META,
    PH_OTHER,
    PH_X,
    PHASES,
    Loose,
    bad_times,
    json_array,
    phase_byte,
    slice_arg_fields,
    take,
)
from gpuviz.trace.kineto_tracks import TrackTable
from gpuviz.trace.memory_budget import DROP_CPU_ARGS, DROP_FLOWS, DROP_PYTHON
from gpuviz.trace.model import NONE, Kind, TrackKind

Array = npt.NDArray[Any]

_PH, _NAME, _CAT, _TS, _DUR, _PID, _TID, _ID, _BP, _ARGS = (
    attrgetter(f) for f in ("ph", "name", "cat", "ts", "dur", "pid", "tid", "id", "bp", "args")
)

_SLICE_COLS = ("start_ns", "dur_ns", "track", "name", "cat", "kind", "correlation",
               "external_id", "bytes", "args")  # fmt: skip
_INSTANT_COLS = ("ts_ns", "lane", "name", "cat", "phase", "args")
_FLOW_COLS = ("ts_ns", "lane", "name", "cat", "phase", "flow_id", "enclosing")
_MEMORY_COLS = ("ts_ns", "lane", "device_type", "device_id", "addr", "bytes", "total_allocated",
                "total_reserved")  # fmt: skip


@dataclass(frozen=True)
class Mark:
    """How far a :class:`ColumnBuilder` had got (see :meth:`ColumnBuilder.rollback`)."""

    parts: list[int]
    blob: int
    arg_lengths: int
    n_args: int
    n_events: int
    meta_events: int
    begin_end: int
    dropped_python: int = 0
    dropped_flows: int = 0


LAUNCH_FLOW_CAT = "ac2g"
"""The category of Kineto's flows from a CUDA runtime call to the GPU work it launched."""


class ColumnBuilder:
    """The column parts of one file, filled chunk by chunk (:meth:`add`).

    Parameters
    ----------
    path : str
        The file (for error messages).
    interner : Interner
        Shared with the other files of the trace.
    blob : bytearray or TextWriter, optional
        Where to append the args text: the importer's files, read one after another, share
        one writer (so that joining them copies nothing); a child's decoder appends to a
        bytearray of its own (the default), compressed as a whole reply.

    Attributes
    ----------
    slices, instants, flows, memory : dict of str to list of arrays
        Per table, per column: one array per chunk.
    blob, arg_lengths, n_args
        The raw ``args`` text of the events that have any, their lengths, and their count.
    tracks : TrackTable
        The file's lanes and tracks.
    n_events : int
        Events read so far (skipped ones included).
    meta_events, begin_end
        Metadata events as dicts; ``B``/``E`` events (with their index), paired at the end.
    warnings : ImportWarnings
    drop : tuple of str
        What is left out (:data:`gpuviz.trace.memory_budget.DROP_ORDER`): CPU-side args
        text, launch flows, python_function slices.
    """

    def __init__(
        self,
        path: str,
        interner: Interner,
        blob: bytearray | TextWriter | None = None,
        drop: Sequence[str] = (),
    ) -> None:
        self.path = path
        self.it = interner
        # What the import leaves out to fit its memory limit (gpuviz.trace.memory_budget).
        self.drop = tuple(drop)
        self._drop_args = DROP_CPU_ARGS in self.drop
        self._drop_python = DROP_PYTHON in self.drop
        self._drop_flows = DROP_FLOWS in self.drop
        self.dropped_python = 0  # python_function slices left out
        self.dropped_flows = 0  # launch flow events left out
        self.warnings = ImportWarnings()
        self.tracks = TrackTable()
        self.n_events = 0
        self.slices: dict[str, list[Array]] = {c: [] for c in _SLICE_COLS}
        self.instants: dict[str, list[Array]] = {c: [] for c in _INSTANT_COLS}
        self.flows: dict[str, list[Array]] = {c: [] for c in _FLOW_COLS}
        self.memory: dict[str, list[Array]] = {c: [] for c in _MEMORY_COLS}
        self.blob: bytearray | TextWriter = bytearray() if blob is None else blob
        self.arg_lengths: list[Array] = []
        self.n_args = 0
        self.meta_events: list[dict[str, Any]] = []
        self.begin_end: list[tuple[int, Event]] = []

    def clear_parts(self) -> None:
        """Drop the column parts, args, warnings and rare events, keeping the numbering (tracks,
        lanes, symbols): a worker child reuses one builder for every chunk it is sent."""
        for table in (self.slices, self.instants, self.flows, self.memory):
            for parts in table.values():
                parts.clear()
        self.blob = bytearray()
        self.arg_lengths = []
        self.n_args = 0
        self.n_events = 0
        self.warnings = ImportWarnings()
        self.meta_events.clear()
        self.begin_end.clear()
        self.dropped_python = 0
        self.dropped_flows = 0

    def mark(self) -> Mark:
        """Where the columns stand now, for :meth:`rollback`."""
        return Mark(
            parts=[len(parts) for _, table in self.tables for parts in table.values()],
            blob=len(self.blob), arg_lengths=len(self.arg_lengths), n_args=self.n_args,
            n_events=self.n_events, meta_events=len(self.meta_events),
            begin_end=len(self.begin_end), dropped_python=self.dropped_python,
            dropped_flows=self.dropped_flows,
        )  # fmt: skip

    def rollback(self, mark: Mark) -> None:
        """Take back every part, args text and rare event added since ``mark`` (a chunk that
        a worker child does not take after all), and the warnings (a child takes no chunk
        with any). The numbering (symbols, lanes, tracks) stays: it is only ever added to."""
        at = iter(mark.parts)
        for _, table in self.tables:
            for parts in table.values():
                del parts[next(at) :]
        del self.blob[mark.blob :]
        del self.arg_lengths[mark.arg_lengths :]
        self.n_args = mark.n_args
        self.n_events = mark.n_events
        self.dropped_python = mark.dropped_python
        self.dropped_flows = mark.dropped_flows
        del self.meta_events[mark.meta_events :]
        del self.begin_end[mark.begin_end :]
        self.warnings = ImportWarnings()

    @property
    def tables(self) -> tuple[tuple[str, dict[str, list[Array]]], ...]:
        """``(name, columns)`` of the four tables."""
        return (("slices", self.slices), ("instants", self.instants), ("flows", self.flows),
                ("memory", self.memory))  # fmt: skip

    def decode_loose(
        self, raws: list[msgspec.Raw], offset: int, is_list: bool
    ) -> tuple[list[Event], Loose]:
        """Event by event, for a chunk with odd values: coerce what can be, note the rest."""
        events: list[Event] = []
        loose = Loose()
        base = self.n_events
        for k, raw in enumerate(raws):
            index = base + k
            try:
                events.append(ONE_EVENT.decode(raw))
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
            ev, reason = coerce_event(value)
            if ev is None:
                self.warnings.add(f"event {index}: {reason}, skipped")
                loose.skipped += 1
                continue
            if reason:
                loose.reasons[len(events)] = reason
            events.append(ev)
            loose.index.append(k)
        return events, loose

    def add(self, ev: list[Event], base: int, loose: Loose | None) -> None:
        """Add a chunk's decoded events (``base``: the file index of the first; ``loose``:
        what :meth:`decode_loose` learnt, for a chunk that took that path) to the columns."""
        it = self.it
        n = len(ev)
        index = np.asarray(loose.index, dtype=np.int64) + base if loose else None
        reasons = loose.reasons if loose else {}

        def event_index(k: int) -> int:
            return int(index[k]) if index is not None else base + k

        ph = np.fromiter(map(PHASES.__getitem__, map(_PH, ev)), np.uint8, n)
        ts = np.fromiter(map(_TS, ev), np.float64, n)
        names = it.names
        name = np.fromiter(map(names.__getitem__, map(_NAME, ev)), np.int32, n)
        pre = self._common(ev, name)
        x = np.flatnonzero(ph == PH_X)
        inst = np.flatnonzero(IS_INSTANT[ph])
        flow = np.flatnonzero(IS_FLOW[ph])
        rare = np.flatnonzero((ph == PH_META) | (ph == PH_BEGIN) | (ph == PH_END))
        if x.size == n:
            sub_x = ev
        elif x.size:
            sub_x = take(ev, x)
        if x.size:
            self._slices(sub_x, x, ts[x], _rows(pre, x), event_index, reasons)
        if inst.size:
            self._instants(
                take(ev, inst),
                inst,
                ts[inst],
                _rows(pre, inst),
                ph[inst],
                event_index,
                reasons,
            )
        if flow.size:
            self._flows(
                take(ev, flow),
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
                self.meta_events.append(meta_dict(e))
            elif ph[k] in (PH_BEGIN, PH_END):
                self.begin_end.append((event_index(k), e))

    def _common(self, ev: list[Event], name: Array) -> dict[str, Array]:
        """Columns every table uses: name, category, pid, tid and (pid, tid) lane ids."""
        it = self.it
        n = len(ev)
        pid = it.int_codes(lambda: map(_PID, ev), n)
        tid = it.int_codes(lambda: map(_TID, ev), n)
        return {
            "name": name, "cat": np.fromiter(map(it.names.__getitem__, map(_CAT, ev)), np.int32, n),
            "pid": pid, "tid": tid, "lane": self.tracks.lane_ids(pid, tid),
        }  # fmt: skip

    def _store_args(self, raws: Sequence[msgspec.Raw | bytes]) -> Array:
        """Append raw args to the store; each one's row, -1 for an event without args."""
        n = len(raws)
        lengths = np.fromiter(map(len, raws), np.int64, n)
        rows = np.full(n, NONE, dtype=np.int32)
        has = lengths > 0
        k = int(has.sum())
        if k:
            rows[has] = np.arange(self.n_args, self.n_args + k, dtype=np.int32)
            self.blob.extend(b"".join(raws))
            self.arg_lengths.append(lengths[has])
            self.n_args += k
        return rows

    def _slices(
        self,
        sub: list[Event],
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
        keep = bad_times(self.path, self.warnings, sub, rows, ts, dur, kind, event_index, reasons)
        if keep is not None:
            sub = take(sub, keep)
            ts, dur, kind, pre = ts[keep], dur[keep], kind[keep], _rows(pre, keep)
            n = len(sub)
            if not n:
                return
        if self._drop_python:
            keep = np.flatnonzero(kind != Kind.PYTHON_FUNCTION)
            if keep.size < n:
                self.dropped_python += n - int(keep.size)
                sub = take(sub, keep)
                ts, dur, kind, pre = ts[keep], dur[keep], kind[keep], _rows(pre, keep)
                n = len(sub)
                if not n:
                    return
        name, cat, pid, tid, lane = pre["name"], pre["cat"], pre["pid"], pre["tid"], pre["lane"]
        raws = list(map(_ARGS, sub))
        if self._drop_args:
            # Their ids (External id) are read below from the text all the same.
            has = np.fromiter(map(len, raws), np.int64, n) > 0
            cpu = ((kind == Kind.CPU_OP) | (kind == Kind.PYTHON_FUNCTION)).tolist()
            args = self._store_args([b"" if c else r for r, c in zip(raws, cpu)])
        else:
            args = self._store_args(raws)
            has = args >= 0
        k = int(has.sum())
        on_gpu = GPU_KINDS[kind] | (kind == Kind.GPU_USER_ANNOTATION)
        if k == n:
            fields = slice_arg_fields(raws, on_gpu)
        else:
            fields = np.full((7, n), NONE, dtype=np.int64)
            if k:
                fields[:, has] = slice_arg_fields([r for r in raws if len(r)], on_gpu[has])
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
        sub: list[Event],
        rows: Array,
        ts: Array,
        pre: dict[str, Array],
        phase: Array,
        event_index: Callable[[int], int],
        reasons: dict[int, str],
    ) -> None:
        keep = bad_times(self.path, self.warnings, sub, rows, ts, None, None, event_index, reasons)
        if keep is not None:
            sub = take(sub, keep)
            ts, pre, phase = ts[keep], _rows(pre, keep), phase[keep]
            if not sub:
                return
        is_mem = pre["name"] == self.it.memory_name
        if is_mem.any():
            mem = np.flatnonzero(is_mem)
            self._memory(take(sub, mem), ts[mem], pre["lane"][mem])
            other = np.flatnonzero(~is_mem)
            sub = take(sub, other)
            ts, pre, phase = ts[other], _rows(pre, other), phase[other]
            if not sub:
                return
        unknown = np.flatnonzero(phase == PH_OTHER)
        if unknown.size:  # phases the model has no table for keep their own byte
            phase = phase.copy()
            phase[unknown] = [phase_byte(sub[k].ph) for k in unknown.tolist()]
        out = self.instants
        out["ts_ns"].append(us_to_ns(ts))
        out["lane"].append(pre["lane"])
        out["name"].append(pre["name"])
        out["cat"].append(pre["cat"])
        out["phase"].append(phase)
        out["args"].append(self._store_args(list(map(_ARGS, sub))))

    def _memory(self, sub: list[Event], ts: Array, lane: Array) -> None:
        n = len(sub)
        raws = list(map(_ARGS, sub))
        fields = np.full((6, n), NONE, dtype=np.int64)
        fields[3] = 0
        has = np.fromiter(map(len, raws), np.int64, n) > 0
        if has.any():
            present = raws if has.all() else take(raws, np.flatnonzero(has))
            try:
                decoded = MEMORY_ARGS.decode(json_array(present))
                cols = [
                    np.fromiter(map(attrgetter(f), decoded), np.int64, len(decoded))
                    for f in MEMORY_ROWS
                ]
                fields[:, has] = np.stack(cols)
            except ARG_ERRORS:
                fields[:, has] = (
                    np.array(
                        [loose_fields(r, MemoryArgs, MEMORY_ROWS) for r in present],
                        dtype=np.int64,
                    )
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
        sub: list[Event],
        rows: Array,
        ts: Array,
        pre: dict[str, Array],
        phase: Array,
        event_index: Callable[[int], int],
        reasons: dict[int, str],
    ) -> None:
        it = self.it
        if self._drop_flows:
            # Kineto's launch -> kernel arrows: the kernels keep their launches' correlation
            # ids, which is what the views and the analysis link them by.
            other = np.flatnonzero(pre["cat"] != it.names[LAUNCH_FLOW_CAT])
            if other.size < len(sub):
                self.dropped_flows += len(sub) - int(other.size)
                if not other.size:
                    return
                sub, rows, ts, phase = take(sub, other), rows[other], ts[other], phase[other]
                pre = _rows(pre, other)
        try:
            flow_id = np.fromiter(map(_ID, sub), np.int64, len(sub))  # the usual case: all ints
            no_id = None
        except (TypeError, ValueError, OverflowError):
            flow_id = None
            no_id = np.fromiter(map(is_, map(_ID, sub), repeat(None)), bool, len(sub))
        if no_id is not None and no_id.any():
            for k in np.flatnonzero(no_id)[:3].tolist():
                self.warnings.add(
                    f"event {event_index(int(rows[k]))}: flow event without an id, skipped", 0
                )
            self.warnings.count += int(no_id.sum())
            with_id = np.flatnonzero(~no_id)
            sub = take(sub, with_id)
            rows, ts, phase = rows[with_id], ts[with_id], phase[with_id]
            pre = _rows(pre, with_id)
        keep = bad_times(self.path, self.warnings, sub, rows, ts, None, None, event_index, reasons)
        if keep is not None:
            sub = take(sub, keep)
            ts, pre, phase = ts[keep], _rows(pre, keep), phase[keep]
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
            flow_id
            if flow_id is not None and len(flow_id) == n
            else it.int_codes(lambda: map(_ID, sub), n)
        )
        out["enclosing"].append(np.fromiter(map("e".__eq__, map(_BP, sub)), np.uint8, n))

    def pair_begin_end(self) -> None:
        """Pair ``B``/``E`` events per thread into slices; unpaired ones become instants."""
        if not self.begin_end:
            return
        stacks: dict[tuple[Any, Any], list[Event]] = {}
        slices: list[Event] = []
        lone: list[Event] = []
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
                phase = np.fromiter(map(phase_byte, map(_PH, group)), np.uint8, n)
                self._instants(group, np.arange(n), ts, pre, phase, no_index, {})


def _rows(cols: dict[str, Array], index: Array) -> dict[str, Array]:
    return {k: v[index] for k, v in cols.items()}


__all__ = ["GPU_KINDS", "ColumnBuilder", "Loose"]
