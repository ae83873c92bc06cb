"""An allocator snapshot's history as columns, read chunk by chunk, while it is unpickled too.

:class:`TraceReader` turns one device's entries into columns :data:`TRACE_CHUNK` entries at a
time from the start; consuming, it frees each chunk's entries as soon as they are columns.
:class:`TraceWatch` does that while the unpickler is still making the list (called between
its reads; see :func:`~gpuviz.trace.allocator_snapshot.load_snapshot`), so that a large
snapshot never holds all its entries as Python objects at once: an entry is about 480 bytes of
dicts and ints, its columns 37 bytes (issue 25: the load's peak memory is at most
``pickle.load``'s). Stacks are interned by :class:`Interner`.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import itemgetter
from typing import Any

import numpy as np
import numpy.typing as npt

from gpuviz.trace.allocator_columns import ACTION_NAMES, NO_STACK, Action, TraceEntries
from gpuviz.trace.errors import TraceFormatError
from gpuviz.trace.model import SymbolTable

I64 = npt.NDArray[np.int64]
I32 = npt.NDArray[np.int32]

MAX_BYTES = 1 << 40
"""The largest size a block, segment or request may claim: 1 TiB (the largest GPU holds 288 GB)."""
MAX_OOM_REQUEST = 1 << 56
"""The largest request an OOM entry may name: 64 PiB (an absurd request is real data here)."""
MAX_TIME_US = (1 << 62) // 1000
"""The latest ``time_us`` (in 2116): in ns it still fits int64, with room for differences."""
_MAX_LINE = (1 << 31) - 1

TRACE_CHUNK = 1 << 16
"""Trace entries turned into columns at a time (:class:`TraceReader`)."""

_PROBE_CANDIDATES = 8
"""Stacks remembered per probe in :meth:`Interner.stacks_of` (more fall back to a dict)."""


class Interner:
    """Frames and stacks, interned by object identity first (PyTorch shares them), then by value."""

    def __init__(self) -> None:
        self.symbols = SymbolTable()
        self.frame_by_id: dict[int, int] = {}
        self.frame_by_key: dict[tuple[str, int, str], int] = {}
        self.frame_filename: list[int] = []
        self.frame_name: list[int] = []
        self.frame_line: list[int] = []
        self.stack_by_ids: dict[tuple[int, ...], int] = {}
        self.stack_by_frames: dict[tuple[int, ...], int] = {}
        self.stack_offsets: list[int] = [0]
        self.stack_frames: list[int] = []
        self.probe: dict[tuple[int, int, int], list[tuple[Any, int]]] = {}
        # the objects interned by identity stay referenced, so no id is reused while we run
        self.keep: list[Any] = []

    def frame(self, f: Any) -> int:
        i = self.frame_by_id.get(id(f))
        if i is not None:
            return i
        if isinstance(f, dict):
            fn, ln, nm = f.get("filename", ""), f.get("line", 0), f.get("name", "")
        else:
            fn, ln, nm = "?", 0, str(f)[:200]
        if not isinstance(ln, int) or isinstance(ln, bool) or not 0 <= ln <= _MAX_LINE:
            ln = 0
        key = (str(fn), ln, str(nm))
        i = self.frame_by_key.get(key)
        if i is None:
            i = len(self.frame_line)
            self.frame_by_key[key] = i
            self.frame_filename.append(self.symbols.intern(key[0]))
            self.frame_name.append(self.symbols.intern(key[2]))
            self.frame_line.append(ln)
        self.frame_by_id[id(f)] = i
        self.keep.append(f)
        return i

    def stack(self, frames: Any) -> int:
        """The stack id of a list of frames (by the identities of its frames, then by value)."""
        if not frames or not isinstance(frames, (list, tuple)):
            return NO_STACK
        ids = tuple(map(id, frames))
        s = self.stack_by_ids.get(ids)
        return s if s is not None else self._new_stack(frames, ids)

    def _new_stack(self, frames: Any, ids: tuple[int, ...]) -> int:
        if not isinstance(frames, (list, tuple)):
            return NO_STACK
        fids = tuple(self.frame(f) for f in frames)
        s = self.stack_by_frames.get(fids)
        if s is None:
            s = len(self.stack_offsets) - 1
            self.stack_by_frames[fids] = s
            self.stack_frames.extend(fids)
            self.stack_offsets.append(len(self.stack_frames))
        self.stack_by_ids[ids] = s
        self.keep.append(frames)
        return s

    def stacks_of(self, items: Sequence[Any], rows: npt.ArrayLike | None = None) -> I32:
        """Stack ids of ``items`` (or of ``items[rows]``), from their ``frames``."""
        seq = items if rows is None else [items[i] for i in np.asarray(rows).tolist()]
        try:
            lists = list(map(itemgetter("frames"), seq))
        except (KeyError, TypeError):
            lists = [_frames_of(e) for e in seq]
        # The fast path: a probe (the length and the identities of the first and last frames)
        # names the few stacks seen with it, most recent first, and list equality (identity
        # first, in C) picks one; entries mostly repeat a stack seen before. Otherwise the
        # identities of all frames decide. Stacks often differ only in their middle frames: one
        # candidate per probe (as before) missed 29% of a 100k-entry trace's allocs.
        probe = self.probe
        get = probe.get
        by_ids = self.stack_by_ids
        new = self._new_stack
        out: list[int] = []
        add = out.append
        for f in lists:
            if not f:
                add(NO_STACK)
                continue
            try:
                k = (len(f), id(f[0]), id(f[-1]))
            except (TypeError, KeyError, IndexError):
                add(NO_STACK)
                continue
            cands = get(k)
            if cands is not None:
                for c in cands:
                    if f == c[0]:
                        add(c[1])
                        break
                else:
                    cands = None
                if cands is not None:
                    continue
            ids = tuple(map(id, f))
            s = by_ids.get(ids)
            if s is None:
                s = new(f, ids)
            got = probe.setdefault(k, [])
            got.insert(0, (f, s))
            del got[_PROBE_CANDIDATES:]
            add(s)
        return np.asarray(out, dtype=np.int32)


def _frames_of(e: Any) -> Any:
    if not isinstance(e, dict):
        return None
    frames = e.get("frames")
    if frames is None:
        history = e.get("history")  # before torch 2.1 a block kept its frames in history[0]
        if isinstance(history, list) and history and isinstance(history[0], dict):
            frames = history[0].get("frames")
    return frames


def _int_column(
    items: Sequence[Any],
    key: str,
    default: int,
    src: str,
    where: str,
    first: int = 0,
    rows: Sequence[int] | None = None,
    required: bool = False,
) -> I64:
    """``items[i][key]`` as int64; fast when every item has it, exact error when one is bad.

    For messages, ``items[i]`` is ``where[first + i]``, or ``where[rows[i]]`` when ``items``
    are picked rows (a chunk's OOM entries, say). A ``required`` key that an item lacks is
    refused (``where[i]: no 'size'``); others read as ``default``.
    """
    n = len(items)
    try:
        return np.fromiter(map(itemgetter(key), items), dtype=np.int64, count=n)
    except (KeyError, TypeError, ValueError, OverflowError):
        pass
    out = np.empty(n, dtype=np.int64)
    for i, e in enumerate(items):
        at = f"{where}[{first + i if rows is None else rows[i]}]"
        if not isinstance(e, dict):
            raise TraceFormatError(src, at, f"expected a dict, got {type(e).__name__}")
        if required and key not in e:
            # torch writes it on every entry: read as the default, a missing size or address
            # would make up an allocation (a 512 B one at address 0)
            raise TraceFormatError(src, at, f"no {key!r}")
        v = e.get(key, default)
        if v is None:
            v = default
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v:
            raise TraceFormatError(src, at, f"{key!r} is {v!r}, expected a number")
        try:
            out[i] = int(v)
        except (ValueError, OverflowError):
            raise TraceFormatError(src, at, f"{key!r} = {v!r} is out of range") from None
    return out


def _check_range(
    column: I64, key: str, src: str, where: str, high: int | None, rows: Any = None
) -> I64:
    """Refuse a value below 0 or above ``high``; the message names its entry (``rows[i]``)."""
    bad = column < 0
    if high is not None:
        bad |= column > high
    if bad.any():
        i = int(np.argmax(bad))
        v = int(column[i])
        at = i if rows is None else int(rows[i])
        if v < 0:
            what = f"{key!r} is {v}: it cannot be negative"
        else:
            what = f"{key!r} is {v:,}: more than {high:,}, which no snapshot can hold"
        raise TraceFormatError(src, f"{where}[{at}]", what)
    return column


_ACTION_CODES = {k: int(v) for k, v in ACTION_NAMES.items()}
_REQUIRED = frozenset({"addr", "device_free"})
"""Keys of a trace entry read by :meth:`TraceReader._column` that it must have (with
``action`` and ``size``); ``stream``, ``time_us`` and ``frames`` may be missing (older
snapshots, history recorded without stacks)."""
_FREES = (int(Action.FREE_REQUESTED), int(Action.FREE_COMPLETED), int(Action.FREE))


def _actions(items: list[Any]) -> npt.NDArray[np.int8]:
    n = len(items)
    try:  # all in C when every entry is a dict with a known action
        # (checked to be strings first: hashing a value from the file could recurse as deep as
        # a nested tuple goes, in C; see gpuviz.trace.snapshot_pickle)
        if not set(map(type, map(itemgetter("action"), items))) <= {str}:
            raise TypeError
        return np.fromiter(
            map(_ACTION_CODES.__getitem__, map(itemgetter("action"), items)), dtype=np.int8, count=n
        )
    except (KeyError, TypeError):
        other = int(Action.OTHER)
        names = (e.get("action") if isinstance(e, dict) else None for e in items)
        return np.fromiter(
            (_ACTION_CODES.get(a, other) if isinstance(a, str) else other for a in names),
            dtype=np.int8,
            count=n,
        )


class _OrphanFrees:
    """Frees of allocations from before the window, found chunk by chunk from the trace's start.

    The same frees as :func:`~gpuviz.trace.allocations.orphan_frees` (a ``free_completed`` or
    ``free`` whose previous alloc-or-free at its address is not an alloc), without the whole
    trace's columns: the state is the addresses whose last such event was an alloc.
    """

    def __init__(self) -> None:
        self.live: I64 = np.empty(0, dtype=np.int64)  # sorted, unique

    def chunk(self, action: npt.NDArray[np.int8], addr: I64) -> npt.NDArray[np.bool_]:
        """Which of the chunk's entries are frees of allocations from before the window."""
        is_alloc = action == Action.ALLOC
        sel = np.flatnonzero(is_alloc | (action == Action.FREE_COMPLETED) | (action == Action.FREE))
        out = np.zeros(len(action), dtype=bool)
        if len(sel) == 0:
            return out
        order = np.argsort(addr[sel], kind="stable")  # by address, then entry index
        a = addr[sel][order]
        k = is_alloc[sel][order]
        first = np.ones(len(a), dtype=bool)
        first[1:] = a[1:] != a[:-1]
        prev_alloc = np.zeros(len(a), dtype=bool)
        prev_alloc[1:] = k[:-1]
        prev_alloc &= ~first
        # an address's first event in the chunk: the previous one is in the state
        live = self.live
        if len(live):
            head = a[first]
            pos = np.minimum(np.searchsorted(live, head), len(live) - 1)
            prev_alloc[first] = live[pos] == head
        out[sel[order[~k & ~prev_alloc]]] = True
        last = np.ones(len(a), dtype=bool)
        last[:-1] = first[1:]
        ended = a[last]
        # (ended is unique, and none of it is kept: np.union1d would import numpy.ma)
        kept = np.setdiff1d(live, ended, assume_unique=True)
        self.live = np.sort(np.concatenate([kept, ended[k[last]]]))
        return out


class TraceReader:
    """One device's entries as columns, read chunk by chunk from the start of its list.

    Parameters
    ----------
    interner
        Where the shown stacks are interned (the snapshot's).
    src, where
        The file and the trace's place in it (``device_traces[0]``), for messages.
    """

    def __init__(self, interner: Interner, src: str, where: str) -> None:
        self.interner = interner
        self.src = src
        self.where = where
        self.done = 0
        """Entries read so far (``items[:done]``)."""
        self.orphans = _OrphanFrees()
        self.parts: list[tuple[Any, ...]] = []

    def read(self, items: list[Any], upto: int, consume: bool = False, empty: bool = False) -> None:
        """Read ``items[done:upto]``.

        With ``consume``, each chunk's places in ``items`` are set to None once it is
        columns (freeing its entries); with ``empty`` too, its dicts are emptied first (one
        the unpickler's memo still holds is then freed but for its shell).
        """
        src, where = self.src, self.where
        while self.done < upto:
            a = self.done
            b = min(a + TRACE_CHUNK, upto)
            part = items[a:b]
            act = _actions(part)
            for i in np.flatnonzero(act == Action.OTHER).tolist():
                e = part[i]
                if not isinstance(e, dict):
                    raise TraceFormatError(
                        src, f"{where}[{a + i}]", f"expected a dict, got {type(e).__name__}"
                    )
                if "action" not in e:
                    raise TraceFormatError(src, f"{where}[{a + i}]", "no 'action'")
                if not isinstance(e["action"], str):  # an unknown name is tolerated, not this
                    raise TraceFormatError(
                        src,
                        f"{where}[{a + i}]",
                        f"'action' is a {type(e['action']).__name__}, expected a name",
                    )
            rows = range(a, b)
            size = _int_column(part, "size", 0, src, where, a, required=True)
            is_oom = act == Action.OOM
            any_oom = bool(is_oom.any())
            not_oom = np.flatnonzero(~is_oom)
            oom = np.flatnonzero(is_oom)
            if any_oom:
                # An OOM entry's size is what the program asked for, however absurd (a real
                # one asked for 16 TiB): it is shown, never summed.
                _check_range(size[not_oom], "size", src, where, MAX_BYTES, a + not_oom)
                _check_range(size[oom], "size", src, where, MAX_OOM_REQUEST, a + oom)
            else:
                _check_range(size, "size", src, where, MAX_BYTES, rows)
            stream = self._column(part, a, "stream", None)
            time_us = self._column(part, a, "time_us", MAX_TIME_US)
            if any_oom:  # an OOM entry carries device_free where the others carry addr
                addr = np.zeros(b - a, dtype=np.int64)
                addr[not_oom] = self._column(part, a, "addr", None, not_oom)
                addr[oom] = self._column(part, a, "device_free", MAX_BYTES, oom)
            else:
                addr = self._column(part, a, "addr", None)
            # intern the stacks that are shown: all but frees, plus frees of pre-window
            # allocations
            stack = np.full(b - a, NO_STACK, dtype=np.int32)
            shown = np.flatnonzero(~np.isin(act, _FREES) | self.orphans.chunk(act, addr))
            stack[shown] = self.interner.stacks_of(part, shown)
            self.parts.append((act, addr, size, stream, time_us, stack))
            if consume:
                if empty:
                    for e in part:
                        if type(e) is dict:
                            e.clear()
                items[a:b] = [None] * (b - a)
            del part
            self.done = b

    def _column(
        self, part: list[Any], a: int, key: str, high: int | None, sel: I64 | None = None
    ) -> I64:
        """``key`` of the chunk ``part`` (entries from ``a``), or of its rows ``sel``,
        range-checked; a message names the entry's index in the trace. ``addr`` and
        ``device_free`` are required (torch writes one of them on every entry)."""
        required = key in _REQUIRED
        if sel is None:
            col = _int_column(part, key, 0, self.src, self.where, a, required=required)
            return _check_range(col, key, self.src, self.where, high, range(a, a + len(part)))
        at = (a + sel).tolist()
        col = _int_column(
            [part[i] for i in sel.tolist()],
            key,
            0,
            self.src,
            self.where,
            rows=at,
            required=required,
        )
        return _check_range(col, key, self.src, self.where, high, at)

    def finish(self) -> TraceEntries:
        """The columns of every entry read."""
        if not self.parts:
            return TraceEntries.empty()
        # a column at a time, each chunk's freed as it is joined: the parts and the whole
        # are never both held for more than one column
        columns = [list(c) for c in zip(*self.parts, strict=True)]
        self.parts.clear()
        joined = []
        while columns:
            parts = columns.pop(0)
            joined.append(np.concatenate(parts))
            del parts
        act, addr, size, stream, time_us, stack = joined
        return TraceEntries(act, addr, size, stream, time_us, stack)


class TraceWatch:
    """Reads device 0's history while the unpickler is still making it.

    Called after each read of the unpickler's input, with the unpickler and the bytes read
    (:func:`~gpuviz.trace.snapshot_pickle.load_snapshot_data`'s ``watch``). Once the key
    ``device_traces`` has gone by, the unpickler's memo names the lists made right after it:
    as ``pickle`` writes a dict of lists, the outer list and device 0's list. From then on,
    each :data:`TRACE_CHUNK` entries appended to that list (each complete: ``APPENDS`` adds
    built dicts) are read and consumed (:class:`TraceReader`). Entries are dicts the memo
    still holds, so consuming empties them: their keys, ints and table are freed, their shells
    stay until the load ends. A file laid out otherwise is read after the load, as before
    (the memo is looked at a few times at most).

    After the load, :attr:`trace` must be ``data["device_traces"][0]``
    (:meth:`check`): its first entries are gone. An entry dict that the file names twice (its
    memo lets it; torch never does) is empty the second time: refused as an entry with no
    ``action``.
    """

    def __init__(self, reader: TraceReader) -> None:
        self.reader = reader
        self.trace: list[Any] | None = None
        self._key_seen = False
        self._tail = b""
        self._looks = 0

    def __call__(self, unpickler: Any, data: bytes) -> None:
        trace = self.trace
        if trace is not None:
            n = len(trace)
            if n - self.reader.done >= TRACE_CHUNK:
                upto = n - (n - self.reader.done) % TRACE_CHUNK
                self.reader.read(trace, upto, consume=True, empty=True)
            return
        if self._looks >= 4:
            return
        if not self._key_seen:
            self._key_seen = b"device_traces" in self._tail + data[:16] or b"device_traces" in data
            self._tail = data[-16:]
            return  # the unpickler has yet to read what it just got
        self._looks += 1
        memo = unpickler.memo.copy()
        key = next((i for i, v in memo.items() if type(v) is str and v == "device_traces"), None)
        if key is None:  # the bytes were part of something else: wait for them again
            self._key_seen = False
            return
        outer, inner = memo.get(key + 1), memo.get(key + 2)
        if type(outer) is list and not outer and type(inner) is list:
            self.trace = inner

    def check(self, data: Any, src: str) -> None:
        """Refuse a file whose list read during the load is not device 0's history."""
        if self.trace is None or self.reader.done == 0:  # nothing read: nothing lost
            return
        traces = data.get("device_traces") if isinstance(data, dict) else None
        if not (isinstance(traces, list) and traces and traces[0] is self.trace):
            raise TraceFormatError(
                src,
                "device_traces",
                "a list made after the key device_traces is not device 0's history, as torch "
                "writes it: not an allocator snapshot",
            )
