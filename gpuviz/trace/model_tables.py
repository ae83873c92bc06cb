"""The trace model's column tables: slices, tracks, flows, memory events, instants.

Each table is a dataclass of equal-length numpy columns with the shared behaviour of
:class:`_Columns` (length, row selection, concatenation), and :data:`NARROWED_COLUMNS` says
which columns an import may hold narrower. They are apart from :mod:`gpuviz.trace.model`,
which re-exports them, because they are the layout of the data (what the importers and the
cache write, column by column), while that module holds the :class:`~gpuviz.trace.model.Trace`
that joins them and its lookups. The codes in the ``kind`` columns are
:class:`~gpuviz.trace.model.Kind` and :class:`~gpuviz.trace.model.TrackKind`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import numpy.typing as npt

I64 = npt.NDArray[np.int64]
I32 = npt.NDArray[np.int32]
I16 = npt.NDArray[np.int16]
U8 = npt.NDArray[np.uint8]
I8 = npt.NDArray[np.int8]


class _Columns:
    """Shared behaviour of the column tables: length, row selection, concatenation."""

    def __len__(self) -> int:
        first = fields(self)[0]  # type: ignore[arg-type]
        return len(getattr(self, first.name))

    def take(self, index: npt.ArrayLike) -> Any:
        """Return a new table of the rows ``index`` (an index array or a boolean mask)."""
        return type(self)(**{f.name: getattr(self, f.name)[index] for f in fields(self)})  # type: ignore[arg-type]

    @classmethod
    def empty(cls) -> Any:
        """Return a table with no rows."""
        return cls(**{f.name: np.empty(0, dtype=_DTYPES[f.name]) for f in fields(cls)})  # type: ignore[arg-type]

    @classmethod
    def concat(cls, parts: list[Any]) -> Any:
        """Concatenate tables of this type."""
        if not parts:
            return cls.empty()
        names = [f.name for f in fields(cls)]  # type: ignore[arg-type]
        return cls(**{n: np.concatenate([getattr(p, n) for p in parts]) for n in names})


@dataclass
class Slices(_Columns):
    """Events with a duration (``ph: X``, and paired ``B``/``E``).

    Attributes
    ----------
    start_ns, dur_ns : int64
        Start relative to the trace zero, and duration.
    track : int32
        Row in :class:`Tracks`.
    depth : int16
        Stacking row within the track (0 = top). Nesting on CPU threads; overlap rows on GPU.
    name, cat : int32
        Symbol ids of the name and of the original category string.
    kind : uint8
        :class:`~gpuviz.trace.model.Kind`.
    correlation : int32 or int64
        ``args.correlation`` (links a runtime launch to its kernel/copy), or -1. An imported
        trace holds it as int32 where every id fits (they count from about 1 per process).
    external_id : int32 or int64
        ``args["External id"]`` (links a cpu op to its launches), or -1; int32 as the above.
    bytes : int32 or int64
        ``args.bytes`` of copies and sets, or -1; int32 where every count fits.
    args : int32
        Row in :class:`~gpuviz.trace.model.ArgsStore`, or -1 when the event had no args.
    """

    start_ns: I64
    dur_ns: I64
    track: I32
    depth: I16
    name: I32
    cat: I32
    kind: U8
    correlation: npt.NDArray[np.int32] | I64
    external_id: npt.NDArray[np.int32] | I64
    bytes: npt.NDArray[np.int32] | I64
    args: I32

    @property
    def end_ns(self) -> I64:
        """``start_ns + dur_ns``."""
        return self.start_ns + self.dur_ns


@dataclass
class Tracks(_Columns):
    """Timeline lanes. A GPU lane is (rank, device, stream); a CPU lane is (rank, pid, tid).

    Attributes
    ----------
    kind : uint8
        :class:`~gpuviz.trace.model.TrackKind`.
    rank : int32
        The rank (``distributedInfo.rank``, or file order in a folder), or -1 for a lone file.
    device : int32
        GPU device index for GPU lanes, -1 for CPU lanes.
    stream : int64
        GPU stream for GPU lanes (``"stream 7"`` -> 7), -1 for CPU lanes.
    pid, tid : int64
        The process and thread ids as the file had them (strings are interned: see ``label``).
    label : int32
        Symbol id of the lane's display name (thread name, ``"stream 7"``).
    """

    kind: U8
    rank: I32
    device: I32
    stream: I64
    pid: I64
    tid: I64
    label: I32


@dataclass
class Flows(_Columns):
    """Flow events (``ph`` s/t/f): arrows between slices, kept for export and display.

    Attributes
    ----------
    flow_id : int32 or int64
        The ``id`` that pairs a start with its finish; int32 where every id fits.
    phase : uint8
        ``ord('s')``, ``ord('t')`` or ``ord('f')``.
    ts_ns : int64
        Time relative to the trace zero.
    track : int32
        The lane the flow point sits on.
    name, cat : int32
        Symbol ids (cat: ``ac2g``, ``async_cpu_to_gpu``, ``async``, ``fwdbwd`` …).
    enclosing : uint8
        1 when ``bp: "e"`` (binds to the enclosing slice).
    """

    flow_id: npt.NDArray[np.int32] | I64
    phase: U8
    ts_ns: I64
    track: I32
    name: I32
    cat: I32
    enclosing: U8


@dataclass
class MemoryEvents(_Columns):
    """``[memory]`` instant events: allocator activity per device.

    Attributes
    ----------
    ts_ns : int64
        Time relative to the trace zero.
    rank : int32
        As in :class:`Tracks`.
    device_type : int8
        ``Device Type``: 0 CPU, 1 CUDA (ROCm reports 1 too).
    device_id : int32
        ``Device Id``.
    addr, bytes : int64
        ``Addr`` and ``Bytes`` (negative for a free).
    total_allocated, total_reserved : int64
        ``Total Allocated``/``Total Reserved`` after the event, or -1 (2021-era traces).
    track : int32
        The CPU lane it was recorded on.
    """

    ts_ns: I64
    rank: I32
    device_type: I8
    device_id: I32
    addr: I64
    bytes: I64
    total_allocated: I64
    total_reserved: I64
    track: I32


@dataclass
class Instants(_Columns):
    """Other events without a duration that are worth keeping (``ph`` i/I/C, unpaired B/E…).

    Attributes
    ----------
    ts_ns : int64
        Time relative to the trace zero.
    track : int32
        The lane.
    name, cat : int32
        Symbol ids.
    phase : uint8
        ``ord(ph)``.
    args : int32
        Row in :class:`~gpuviz.trace.model.ArgsStore`, or -1.
    """

    ts_ns: I64
    track: I32
    name: I32
    cat: I32
    phase: U8
    args: I32


NARROWED_COLUMNS: dict[str, tuple[str, ...]] = {
    "slices": ("correlation", "external_id", "bytes"),
    "flows": ("flow_id",),
}
"""Per table, the int64 columns an import holds as int32 where every value fits, else int64
(the empty table's dtype): correlation and external ids (they count from about 1 in each
process), copies' byte counts (under 2 GiB a copy in nearly every trace) and flow ids
(Kineto's are the correlation ids). Readers treat them as integers of either width."""

_DTYPES: dict[str, Any] = {
    "start_ns": np.int64,
    "dur_ns": np.int64,
    "track": np.int32,
    "depth": np.int16,
    "name": np.int32,
    "cat": np.int32,
    "kind": np.uint8,
    "correlation": np.int64,
    "external_id": np.int64,
    "bytes": np.int64,
    "args": np.int32,
    "rank": np.int32,
    "device": np.int32,
    "stream": np.int64,
    "pid": np.int64,
    "tid": np.int64,
    "label": np.int32,
    "flow_id": np.int64,
    "phase": np.uint8,
    "ts_ns": np.int64,
    "enclosing": np.uint8,
    "device_type": np.int8,
    "device_id": np.int32,
    "addr": np.int64,
    "total_allocated": np.int64,
    "total_reserved": np.int64,
}
