"""The columnar trace model: every event of a trace in numpy columns, no object per event.

A :class:`Trace` is built once by an importer (``gpuviz.trace.kineto``) and then only read.
Its tables are plain dataclasses of equal-length numpy arrays. Strings (names, categories)
are interned in one :class:`SymbolTable` and stored as ``int32`` ids. Times are ``int64``
nanoseconds relative to :attr:`Trace.zero_ns`, the earliest event of any rank.

Invariants the importers guarantee and every reader may rely on:

- ``Slices`` are sorted by ``(track, start_ns)``; ``Trace.track_offsets[t]:track_offsets[t+1]``
  is the slice range of track ``t``.
- Overlapping slices on one track are kept; ``depth`` stacks them (nesting on CPU threads,
  overflow rows on GPU streams). Nothing is dropped.
- A missing integer is ``-1`` (correlation, args row, rank, stream, byte count).

The tables' classes (:class:`Slices`, :class:`Tracks`, :class:`Flows`, :class:`MemoryEvents`,
:class:`Instants`) are in :mod:`gpuviz.trace.model_tables`, re-exported here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

import msgspec
import numpy as np
import numpy.typing as npt

from gpuviz.trace.args_text import ArgsText, CorruptTextError, PlainText
from gpuviz.trace.model_tables import (
    NARROWED_COLUMNS,  # noqa: F401 (re-exported: the importer and the cache read it here)
    Flows,
    Instants,
    MemoryEvents,
    Slices,
    Tracks,
)

I64 = npt.NDArray[np.int64]
I32 = npt.NDArray[np.int32]
I16 = npt.NDArray[np.int16]
U8 = npt.NDArray[np.uint8]
I8 = npt.NDArray[np.int8]

NONE = -1
"""The value of a missing integer in any column."""


class Kind(IntEnum):
    """A slice's normalized category. Old eras' names map here (``Kernel`` -> KERNEL)."""

    OTHER = 0
    KERNEL = 1
    MEMCPY = 2
    MEMSET = 3
    RUNTIME = 4  # cuda_runtime, cuda_driver, hip runtime: the CPU side of a launch
    CPU_OP = 5
    USER_ANNOTATION = 6  # record_function ranges on a CPU thread
    GPU_USER_ANNOTATION = 7  # the same ranges as seen on a GPU stream
    PYTHON_FUNCTION = 8
    CUDA_SYNC = 9


GPU_ACTIVITY_KINDS = (Kind.KERNEL, Kind.MEMCPY, Kind.MEMSET)
"""The kinds that run on a GPU and count towards its busy time."""

# Category strings (lower-cased) of every era -> Kind. Unknown categories are Kind.OTHER,
# and keep their own string in Slices.cat for export.
CATEGORY_KINDS: dict[str, Kind] = {
    "kernel": Kind.KERNEL,
    "gpu_memcpy": Kind.MEMCPY,
    "memcpy": Kind.MEMCPY,
    "gpu_memset": Kind.MEMSET,
    "memset": Kind.MEMSET,
    "cuda_runtime": Kind.RUNTIME,
    "runtime": Kind.RUNTIME,
    "cuda_driver": Kind.RUNTIME,
    "cpu_op": Kind.CPU_OP,
    "operator": Kind.CPU_OP,
    "user_annotation": Kind.USER_ANNOTATION,
    "gpu_user_annotation": Kind.GPU_USER_ANNOTATION,
    "python_function": Kind.PYTHON_FUNCTION,
    "cuda_sync": Kind.CUDA_SYNC,
}

# The category each kind is exported under (today's Kineto names).
KIND_CATEGORIES: dict[Kind, str] = {
    Kind.KERNEL: "kernel",
    Kind.MEMCPY: "gpu_memcpy",
    Kind.MEMSET: "gpu_memset",
    Kind.RUNTIME: "cuda_runtime",
    Kind.CPU_OP: "cpu_op",
    Kind.USER_ANNOTATION: "user_annotation",
    Kind.GPU_USER_ANNOTATION: "gpu_user_annotation",
    Kind.PYTHON_FUNCTION: "python_function",
    Kind.CUDA_SYNC: "cuda_sync",
}


class TrackKind(IntEnum):
    """What a track (a timeline lane) holds."""

    GPU_STREAM = 0  # kernels, copies and sets of one (rank, device, stream)
    GPU_ANNOTATION = 1  # gpu_user_annotation ranges of one (rank, device, stream)
    CPU_THREAD = 2  # cpu ops, runtime calls, python functions of one (rank, pid, tid)
    CPU_ANNOTATION = 3  # user_annotation ranges of one (rank, pid, tid)


class SymbolTable:
    """Interned strings: each distinct string is stored once and named by an ``int32`` id.

    Parameters
    ----------
    strings : iterable of str, optional
        Strings to intern, in id order.
    """

    __slots__ = ("_ids", "strings")

    def __init__(self, strings: Iterable[str] = ()) -> None:
        self.strings: list[str] = []
        self._ids: dict[str, int] = {}
        for s in strings:
            self.intern(s)

    def intern(self, s: str) -> int:
        """Return the id of ``s``, adding it if new."""
        i = self._ids.get(s)
        if i is None:
            i = len(self.strings)
            self._ids[s] = i
            self.strings.append(s)
        return i

    def intern_many(self, strings: Iterable[str]) -> I32:
        """Return the ids of ``strings`` as an ``int32`` array."""
        get = self._ids.get
        out = []
        for s in strings:
            i = get(s)
            if i is None:
                i = self.intern(s)
            out.append(i)
        return np.asarray(out, dtype=np.int32)

    def find(self, s: str) -> int:
        """Return the id of ``s``, or ``-1`` when it is not interned."""
        return self._ids.get(s, NONE)

    def __getitem__(self, i: int) -> str:
        return self.strings[i]

    def __len__(self) -> int:
        return len(self.strings)

    def lookup(self, ids: npt.ArrayLike) -> list[str]:
        """Return the strings of an array of ids."""
        s = self.strings
        return [s[i] for i in np.asarray(ids).tolist()]


class ArgsStore:
    """Events' ``args`` objects, kept as their JSON text, decoded on demand.

    Rows are appended by importers as text, which they compress a block at a time
    (:mod:`gpuviz.trace.args_text`); readers call :meth:`get` for the few events they show
    (hover, the kernel table, splits) or :meth:`raw` to copy them into an export. Reading rows
    in order costs one decompression per block (an LRU keeps the last few blocks).

    Parameters
    ----------
    blob : bytes, bytearray or memoryview
        Plain, uncompressed text of every row, one after another (synthetic traces, tests).
    offsets : int64 array
        ``len(rows) + 1`` offsets into the uncompressed text.
    text : PlainText or BlockText, optional
        The text itself (instead of ``blob``): what an importer or the cache made.
    """

    __slots__ = ("offsets", "text")

    def __init__(
        self,
        blob: bytes | bytearray | memoryview = b"",
        offsets: I64 | None = None,
        text: ArgsText | None = None,
    ) -> None:
        self.text: ArgsText = PlainText(blob) if text is None else text
        self.offsets = np.zeros(1, dtype=np.int64) if offsets is None else offsets

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def raw(self, row: int) -> bytes:
        """The JSON text of row ``row`` (``b"{}"`` where a cached block is corrupt)."""
        o = self.offsets
        try:
            return self.text.read(int(o[row]), int(o[row + 1]))
        except CorruptTextError:
            return b"{}"

    def span(self, first: int, last: int) -> tuple[bytes | memoryview, int]:
        """The text of rows ``first`` to ``last`` (inclusive) in one piece, and its start: an
        export takes a rank's rows at once, not a block per row. Plain text is not copied."""
        o = self.offsets
        start, end = int(o[first]), int(o[last + 1])
        if isinstance(self.text, PlainText):
            return memoryview(self.text.blob)[start:end], start
        return self.text.read(start, end), start

    def get(self, row: int) -> dict[str, Any]:
        """The decoded args of row ``row``; ``{}`` for -1 (and for args nested too deeply)."""
        if row < 0:
            return {}
        try:
            value = msgspec.json.decode(self.raw(row))
        except RecursionError:  # imported, but too deep to decode from deeper in the stack
            return {}
        return value if isinstance(value, dict) else {}

    @classmethod
    def concat(cls, parts: list[ArgsStore]) -> tuple[ArgsStore, list[int]]:
        """Join stores (into plain text); returns the store and each part's row shift."""
        shifts, offs, base, row = [], [np.zeros(1, dtype=np.int64)], 0, 0
        blobs = []
        for p in parts:
            shifts.append(row)
            offs.append(p.offsets[1:] + base)
            blobs.append(p.text.read(0, len(p.text)))
            base += len(p.text)
            row += len(p)
        return cls(b"".join(blobs), np.concatenate(offs)), shifts


@dataclass
class RankInfo:
    """One source file of a trace.

    Attributes
    ----------
    rank : int or None
        ``distributedInfo.rank``; the file order in a folder without it; None for a lone file.
    source : str
        The file's path.
    metadata : dict
        The file's top-level fields other than ``traceEvents`` (``deviceProperties``,
        ``distributedInfo``, ``baseTimeNanoseconds`` …), as they were.
    offset_ns : int
        Absolute time of this file's zero, in ns (what was added to its timestamps).
    event_count : int
        Events in the file, of every phase.
    """

    rank: int | None
    source: str
    metadata: dict[str, Any] = field(default_factory=dict)
    offset_ns: int = 0
    event_count: int = 0


@dataclass
class Trace:
    """A whole trace: one file, or a folder of one file per rank, aligned on absolute time.

    Attributes
    ----------
    symbols : SymbolTable
        Interned strings for every ``name``/``cat``/``label`` column.
    slices, tracks, flows, memory, instants : column tables
        See their classes.
    args : ArgsStore
        The raw ``args`` of slices and instants.
    ranks : list of RankInfo
        The source files, in rank order.
    zero_ns : int
        Absolute time (ns) of ``t = 0``: the earliest event of any rank.
    event_count : int
        Events in all files, of every phase (``gpuviz summary``'s ``events``).
    warnings : ImportWarnings
        Events skipped on import.
    dropped : tuple of str
        What the import left out to stay within its memory limit
        (:data:`gpuviz.trace.memory_budget.DROP_ORDER`; named in ``warnings`` too). Such a
        trace is never cached as if it were whole.
    metadata_events : list of dict
        ``ph: M`` events (process/thread names, sort indexes), kept for export; their ``pid``
        and ``tid`` are as in the file, with ``"rank"`` added.
    """

    symbols: SymbolTable
    slices: Slices
    tracks: Tracks
    flows: Flows
    memory: MemoryEvents
    instants: Instants
    args: ArgsStore
    ranks: list[RankInfo]
    zero_ns: int = 0
    event_count: int = 0
    warnings: Any = None
    metadata_events: list[dict[str, Any]] = field(default_factory=list)
    dropped: tuple[str, ...] = ()
    _track_offsets: I64 | None = field(default=None, repr=False)
    _correlation_index: dict[str, Any] | None = field(default=None, repr=False)
    _slices_end_ns: int | None = field(default=None, repr=False)
    derived: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)
    """What analyses computed from this trace and keep while it lives (the attribution), by
    name. Held here, not in a module-level table: a table's value that refers to its trace
    (an Attribution does) would keep every trace alive."""

    @classmethod
    def empty(cls, source: str = "") -> Trace:
        """A trace with no events, of one file ``source`` (e.g. a snapshot opened alone)."""
        from gpuviz.trace.errors import ImportWarnings

        return cls(
            symbols=SymbolTable(),
            slices=Slices.empty(),
            tracks=Tracks.empty(),
            flows=Flows.empty(),
            memory=MemoryEvents.empty(),
            instants=Instants.empty(),
            args=ArgsStore(),
            ranks=[RankInfo(None, source)],
            warnings=ImportWarnings(),
        )

    @property
    def sources(self) -> list[str]:
        """The files this trace came from, in rank order."""
        return [r.source for r in self.ranks]

    @property
    def track_offsets(self) -> I64:
        """``len(tracks) + 1`` offsets: track ``t``'s slices are ``offsets[t]:offsets[t+1]``."""
        if self._track_offsets is None:
            # Needles of the column's own dtype: other ones would make numpy cast (copy) the
            # whole column first.
            track = self.slices.track
            self._track_offsets = np.searchsorted(
                track, np.arange(len(self.tracks) + 1, dtype=track.dtype), side="left"
            ).astype(np.int64)
        return self._track_offsets

    @property
    def slices_end_ns(self) -> int:
        """The end of the last slice (ns from the trace zero), 0 when there is none."""
        if self._slices_end_ns is None:
            s = self.slices
            # In blocks: start + dur of every slice at once would be a temporary as big as
            # both columns (50 MB at 3M slices; 160 MB of 64 ranks in gpuviz summary).
            self._slices_end_ns = max(
                (
                    int((s.start_ns[a : a + LOOKUP_BLOCK] + s.dur_ns[a : a + LOOKUP_BLOCK]).max())
                    for a in range(0, len(s), LOOKUP_BLOCK)
                ),
                default=0,
            )
        return self._slices_end_ns

    def prepare(self) -> Trace:
        """Compute the figures every view asks for first (track offsets, the slices' end).

        The thread that loads a trace calls it, so that the GUI thread that shows the trace
        does not pay for them (tens of ms at millions of slices). Returns the trace.
        """
        _ = self.track_offsets, self.slices_end_ns
        return self

    def track_range(self, track: int) -> slice:
        """The slice rows of one track."""
        o = self.track_offsets
        return slice(int(o[track]), int(o[track + 1]))

    def gpu_activity_mask(self) -> npt.NDArray[np.bool_]:
        """Rows that are kernels, copies or sets."""
        k = self.slices.kind
        return (k == Kind.KERNEL) | (k == Kind.MEMCPY) | (k == Kind.MEMSET)

    def name_of(self, row: int) -> str:
        """The name of slice ``row``."""
        return self.symbols[int(self.slices.name[row])]

    def track_label(self, track: int) -> str:
        """A lane's display name."""
        return self.symbols[int(self.tracks.label[track])]

    def rank_values(self) -> list[int | None]:
        """The ranks, in order, as ``gpuviz summary`` reports them."""
        return [r.rank for r in self.ranks]

    def with_rank(self, rank: int) -> Trace:
        """The same one-file trace as rank ``rank``: its lanes, memory events and
        :class:`RankInfo` say that rank.

        A folder whose files do not each declare a distinct rank numbers them in file order
        (:func:`gpuviz.trace.kineto_ranks.assign_ranks`); a file imported alone says None
        (-1) instead. Work done per rank file (``gpuviz advise`` by rank, issue 51) gives each
        such file its folder rank first, so that its findings name the rank the folder read
        whole names. The columns are replaced, not written: a cache-loaded trace's columns
        are read-only. The derived figures (attribution, launch lookup by rank) start afresh.

        Raises
        ------
        ValueError
            Where the trace holds more than one file.
        """
        if len(self.ranks) != 1:
            raise ValueError(f"with_rank takes one file's trace, not {len(self.ranks)}")
        t, m = self.tracks, self.memory
        return dataclasses.replace(
            self,
            tracks=dataclasses.replace(t, rank=np.full(len(t.rank), rank, dtype=t.rank.dtype)),
            memory=dataclasses.replace(m, rank=np.full(len(m.rank), rank, dtype=m.rank.dtype)),
            ranks=[dataclasses.replace(self.ranks[0], rank=rank)],
            _correlation_index=None,
        )

    def launches_of(self, rows: npt.ArrayLike) -> I64:
        """For GPU slice rows, the row of the runtime call with the same correlation and rank.

        Returns -1 where there is none. Where launches share an id (a damaged or merged
        file), each GPU slice of it gets the launch that time matches it to, or -1
        (:mod:`gpuviz.trace.correlation`), not the first launch of the id.
        """
        s, t = self.slices, self.tracks
        if self._correlation_index is None:
            dense = _dense_correlation_table(s, t)
            if dense is None:
                rt = _launch_rows(s, 0, len(s))
                key = correlation_key(t.rank[s.track[rt]], s.correlation[rt])
                order = np.argsort(key, kind="stable")
                keys = key[order]
                repeats = len(keys) > 1 and bool((keys[1:] == keys[:-1]).any())
                found = self.shared_launches() if repeats else None
                shared = None if found is None else (found.gpu_rows, found.launch_rows)
                self._correlation_index = {"keys": keys, "rows": rt[order], "dense": None}
                self._correlation_index["shared"] = shared
            else:
                self._correlation_index = {"dense": dense}
        rows = np.asarray(rows, dtype=np.int64)
        if len(rows) <= LOOKUP_BLOCK:
            return self._launches_block(rows)
        # In blocks: the lookup's temporaries are about 60 bytes a row (400 MB for the 6.4M
        # kernels of a 64-rank folder, at the peak of gpuviz summary's memory).
        out = np.empty(len(rows), dtype=np.int64)
        for a in range(0, len(rows), LOOKUP_BLOCK):
            out[a : a + LOOKUP_BLOCK] = self._launches_block(rows[a : a + LOOKUP_BLOCK])
        return out

    def _launches_block(self, rows: I64) -> I64:
        s, t = self.slices, self.tracks
        idx = self._correlation_index
        assert idx is not None
        if idx["dense"] is not None:
            return _dense_lookup(idx["dense"], t.rank[s.track[rows]], s.correlation[rows])
        if len(idx["keys"]) == 0:  # no launches at all
            return np.full(len(rows), NONE, dtype=np.int64)
        key = correlation_key(t.rank[s.track[rows]], s.correlation[rows])
        pos = np.searchsorted(idx["keys"], key)
        pos_c = np.minimum(pos, max(len(idx["keys"]) - 1, 0))
        found = (len(idx["keys"]) > 0) & (idx["keys"][pos_c] == key) & (s.correlation[rows] >= 0)
        out = np.full(len(rows), NONE, dtype=np.int64)
        out[found] = idx["rows"][pos_c[found]]
        if idx["shared"] is not None:  # ids that several launches share: matched by time
            from gpuviz.trace.correlation import apply_shared

            apply_shared(out, rows, idx["shared"])
        return out

    def shared_launches(self) -> Any:
        """Launches that share a (rank, correlation id), their GPU work matched by time: a
        :class:`~gpuviz.trace.correlation.SharedIds`, or None (the usual case)."""
        from gpuviz.trace.correlation import match_shared

        s, t = self.slices, self.tracks
        rt = _launch_rows(s, 0, len(s))
        key = correlation_key(t.rank[s.track[rt]], s.correlation[rt])
        ordered = np.sort(key)  # every import asks: the GPU rows only where a key repeats
        if len(ordered) < 2 or not bool((ordered[1:] == ordered[:-1]).any()):
            return None
        gpu = np.flatnonzero(self.gpu_activity_mask() & (s.correlation >= 0))
        return match_shared(
            *(rt, key, s.start_ns[rt]),
            *(gpu, correlation_key(t.rank[s.track[gpu]], s.correlation[gpu]), s.start_ns[gpu]),
        )


LOOKUP_BLOCK = 1 << 18
"""Rows a :meth:`Trace.launches_of` lookup, or a pass over the slices (their end, the launch
table), takes at once."""


def _launch_rows(s: Slices, a: int, b: int) -> I64:
    """The rows from ``a`` to ``b`` of runtime calls with a correlation id."""
    rows = np.flatnonzero((s.kind[a:b] == Kind.RUNTIME) & (s.correlation[a:b] >= 0))
    rows += a
    return rows


def _dense_correlation_table(s: Slices, t: Tracks) -> tuple[npt.NDArray[Any], int] | None:
    """A table of launch rows indexed by ``(rank + 1) * width + correlation``, and ``width``.

    Correlation ids count up from about 1 in each process, so a table as long as the number of
    launches (times the ranks) answers a lookup by indexing: a searchsorted of 300k kernels'
    keys took 18 ms, the whole lookup 35 ms. None where the ids are too sparse for a table
    (the sorted keys serve then), or where a (rank, correlation) repeats: the sorted keys
    give the first row of those, which one table slot cannot tell. The table is int32 where
    the rows fit (they do below 2^31 slices): it stays with the trace, and on 192 ranks of
    100k kernels int64 slots were about 300 MB.

    Built a block of slices at a time, in two passes (the table's size, then its slots): the
    launches' rows, ranks, ids and slots for all of them at once were about 30 bytes a launch
    (190 MB of 64 ranks, made while the summary's other figures ran, at its memory's peak).
    """
    blocks = [(a, min(a + LOOKUP_BLOCK, len(s))) for a in range(0, len(s), LOOKUP_BLOCK)]
    n = 0
    r_lo = c_hi = r_hi = row_hi = -1
    for a, b in blocks:
        rows = _launch_rows(s, a, b)
        if not len(rows):
            continue
        rank = t.rank[s.track[rows]]
        r_lo = int(rank.min()) if n == 0 else min(r_lo, int(rank.min()))
        n += len(rows)
        r_hi = max(r_hi, int(rank.max()))
        c_hi = max(c_hi, int(s.correlation[rows].max()))
        row_hi = int(rows[-1])
    if n == 0 or r_lo + 1 < 0:
        return None
    width = c_hi + 1
    size = (r_hi + 2) * width
    if size > 4 * n + (1 << 16):
        return None
    small = row_hi < np.iinfo(np.int32).max
    table: npt.NDArray[Any] = np.full(size, NONE, dtype=np.int32 if small else np.int64)
    for a, b in blocks:
        rows = _launch_rows(s, a, b)
        flat = t.rank[s.track[rows]].astype(np.int64)
        flat += 1
        flat *= width
        flat += s.correlation[rows]
        table[flat] = rows
    if np.count_nonzero(table >= 0) != n:  # a key repeats
        return None
    return table, width


def _dense_lookup(
    dense: tuple[npt.NDArray[Any], int],
    rank: npt.NDArray[Any],
    corr: npt.NDArray[Any],
) -> I64:
    """:meth:`Trace.launches_of` through the table of :func:`_dense_correlation_table`."""
    table, width = dense
    r = rank.astype(np.int64) + 1
    c = corr.astype(np.int64)
    flat = r * width + c
    ok = (c >= 0) & (c < width) & (r >= 0) & (flat < len(table))
    out = np.full(len(c), NONE, dtype=np.int64)
    out[ok] = table[flat[ok]]
    return out


def correlation_key(rank: npt.ArrayLike, corr: npt.ArrayLike) -> I64:
    """One int64 key per (rank, correlation id): ids restart in each process.

    Either column may be int32 or int64 (an imported trace holds ids as int32 where they
    fit): both are widened before the shift.
    """
    rank, corr = np.asarray(rank), np.asarray(corr)
    return (rank.astype(np.int64) + 1) << 44 | (corr.astype(np.int64) & ((1 << 44) - 1))


def rank_code(rank: int | None) -> int:
    """The value a rank takes in the ``rank`` columns: the rank, or -1 for a lone file."""
    return NONE if rank is None else int(rank)
