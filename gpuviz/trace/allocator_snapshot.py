"""CUDA caching-allocator snapshots (``torch.cuda.memory._dump_snapshot``), read safely, as columns.

:func:`load_snapshot` unpickles with an unpickler that loads no class
(:mod:`gpuviz.trace.snapshot_pickle`: nothing in the file runs) and turns the result into
columns (:mod:`gpuviz.trace.allocator_columns`) and allocation intervals
(:mod:`gpuviz.trace.allocations`). No object per entry survives the load: the history is read
in chunks, each chunk's dicts freed as soon as they are columns, so the load's peak memory
is the unpickled tree's, not the tree's plus the columns'.

The layout (``torch/cuda/memory.py``, ``_snapshot``)::

    {"segments": [{"device", "address", "total_size", "allocated_size", "active_size",
                   "requested_size", "stream", "segment_type", "is_expandable", "frames"?,
                   "blocks": [{"address"?, "size", "requested_size", "state", "frames"}]}],
     "device_traces": [[{"action", "addr" | "device_free", "size", "stream", "time_us",
                         "frames"}, ...] per device],
     "allocator_settings": {...}, "external_annotations": [{"name", "stage", "time_us", "device"}]}

Each frame is ``{"filename", "line", "name"}``, innermost call first. PyTorch shares frame dicts
between entries, so the pickle's memo makes each one object; stacks are interned by the
identities of their frames first, by value only on a miss. Only the stacks that a figure or a
view shows are interned: those of allocs, OOMs, segments, and of frees whose alloc came before
the window; a free's own stack is otherwise never shown (its allocation shows the alloc's).

Refused (:class:`~gpuviz.trace.errors.TraceFormatError`, naming the entry and the key): a size,
address, stream, time or device that is negative, not a number or absurd: a size or free byte
count over :data:`MAX_BYTES` (no GPU holds that much, and sums of such sizes would overflow), a
device index of :data:`MAX_DEVICES` or more (each device is a loop of its own).

Tolerated: missing keys, older layouts (blocks without ``address``, no
``external_annotations``, ``free`` instead of ``free_requested``/``free_completed``, frames
without C++ entries, ``history`` instead of ``frames`` on blocks) and empty traces.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import itemgetter
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from gpuviz.trace.allocations import pair_allocations
from gpuviz.trace.allocator_columns import (
    ACTION_NAMES,
    BLOCK_STATE_NAMES,
    NO_STACK,
    Action,
    AllocatorSnapshot,
    Annotations,
    AnnotationStage,
    Blocks,
    BlockState,
    Segments,
    TraceEntries,
)
from gpuviz.trace.errors import TraceFormatError
from gpuviz.trace.gcpause import gc_paused
from gpuviz.trace.model import SymbolTable
from gpuviz.trace.snapshot_pickle import load_snapshot_data

I64 = npt.NDArray[np.int64]
I32 = npt.NDArray[np.int32]

__all__ = [
    "SNAPSHOT_SUFFIX",
    "AllocatorSnapshot",
    "is_snapshot_path",
    "load_snapshot",
    "snapshot_from_data",
    "snapshot_path_for",
]

SNAPSHOT_SUFFIX = ".memory.pickle"
"""A snapshot recorded with a trace sits beside it: ``NAME.json.gz`` -> ``NAME.memory.pickle``."""

MAX_BYTES = 1 << 40
"""The largest size a block, segment or request may claim: 1 TiB (the largest GPU holds 288 GB)."""
MAX_OOM_REQUEST = 1 << 56
"""The largest request an OOM entry may name: 64 PiB (an absurd request is real data here)."""
MAX_TIME_US = (1 << 62) // 1000
"""The latest ``time_us`` (in 2116): in ns it still fits int64, with room for differences."""
MAX_DEVICES = 1024
"""Device indices (and ``device_traces``) a snapshot may have."""
_MAX_LINE = (1 << 31) - 1

TRACE_CHUNK = 1 << 16
"""Trace entries turned into columns at a time (see :func:`_trace_entries`)."""

_PROBE_CANDIDATES = 8
"""Stacks remembered per probe in :meth:`_Interner.stacks_of` (more fall back to a dict)."""

_TRACE_SUFFIXES = (".json.gz", ".json", ".pt.trace.json.gz", ".pt.trace.json")


class _Interner:
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
    items: Sequence[Any], key: str, default: int, src: str, where: str, first: int = 0
) -> I64:
    """``items[i][key]`` as int64; fast when every item has it, exact error when one is bad.

    ``first``: the index of ``items[0]`` in ``where`` (for a chunk of a trace), for messages.
    """
    n = len(items)
    try:
        return np.fromiter(map(itemgetter(key), items), dtype=np.int64, count=n)
    except (KeyError, TypeError, ValueError, OverflowError):
        pass
    out = np.empty(n, dtype=np.int64)
    for i, e in enumerate(items):
        at = f"{where}[{first + i}]"
        if not isinstance(e, dict):
            raise TraceFormatError(src, at, f"expected a dict, got {type(e).__name__}")
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


def _as_list(value: Any, src: str, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):
        raise TraceFormatError(src, where, f"expected a list, got {type(value).__name__}")
    return value if isinstance(value, list) else list(value)


_ACTION_CODES = {k: int(v) for k, v in ACTION_NAMES.items()}
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


def _trace_entries(
    items: list[Any], interner: _Interner, src: str, where: str, consume: bool = False
) -> TraceEntries:
    """One device's entries as columns, read in chunks of :data:`TRACE_CHUNK` from the start.

    With ``consume``, each chunk's dicts are replaced by None once they are columns (and
    ``items`` is emptied at the end), so the entries' Python objects (about 400 bytes each)
    are freed while the columns (37 bytes each) are made: the load's peak is the unpickled
    tree's, not the tree's plus the columns'.
    """
    n = len(items)
    if n == 0:
        return TraceEntries.empty()
    # filled chunk by chunk (np.empty's pages are only taken as they are written)
    action = np.empty(n, dtype=np.int8)
    addr = np.empty(n, dtype=np.int64)
    size = np.empty(n, dtype=np.int64)
    stream = np.empty(n, dtype=np.int64)
    time_us = np.empty(n, dtype=np.int64)
    stack = np.full(n, NO_STACK, dtype=np.int32)
    orphans = _OrphanFrees()
    for a in range(0, n, TRACE_CHUNK):
        b = min(a + TRACE_CHUNK, n)
        part = items[a:b]
        act = action[a:b] = _actions(part)
        for i in np.flatnonzero(act == Action.OTHER)[:1].tolist():
            if not isinstance(part[i], dict):
                raise TraceFormatError(
                    src, f"{where}[{a + i}]", f"expected a dict, got {type(part[i]).__name__}"
                )
        rows = range(a, b)
        size[a:b] = _int_column(part, "size", 0, src, where, a)
        is_oom = act == Action.OOM
        if is_oom.any():
            # An OOM entry's size is what the program asked for, however absurd (a real one
            # asked for 16 TiB): it is shown, never summed.
            not_oom = np.flatnonzero(~is_oom)
            oom = np.flatnonzero(is_oom)
            _check_range(size[a:b][not_oom], "size", src, where, MAX_BYTES, a + not_oom)
            _check_range(size[a:b][oom], "size", src, where, MAX_OOM_REQUEST, a + oom)
        else:
            _check_range(size[a:b], "size", src, where, MAX_BYTES, rows)
        stream[a:b] = _check_range(
            _int_column(part, "stream", 0, src, where, a), "stream", src, where, None, rows
        )
        time_us[a:b] = _check_range(
            _int_column(part, "time_us", 0, src, where, a), "time_us", src, where, MAX_TIME_US, rows
        )
        if is_oom.any():  # an OOM entry carries device_free where the others carry addr
            addr[a:b] = 0
            addr[a + not_oom] = _check_range(
                _int_column([part[i] for i in not_oom.tolist()], "addr", 0, src, where),
                "addr",
                src,
                where,
                None,
                a + not_oom,
            )
            addr[a + oom] = _check_range(
                _int_column([part[i] for i in oom.tolist()], "device_free", 0, src, where),
                "device_free",
                src,
                where,
                MAX_BYTES,
                a + oom,
            )
        else:
            addr[a:b] = _check_range(
                _int_column(part, "addr", 0, src, where, a), "addr", src, where, None, rows
            )
        # intern the stacks that are shown: all but frees, plus frees of pre-window allocations
        want = ~np.isin(act, _FREES) | orphans.chunk(act, addr[a:b])
        shown = np.flatnonzero(want)
        stack[a + shown] = interner.stacks_of(part, shown)
        del part
        if consume:
            items[a:b] = [None] * (b - a)
    if consume:
        items.clear()
    return TraceEntries(action, addr, size, stream, time_us, stack)


def _segments_and_blocks(segs: list[Any], interner: _Interner, src: str) -> tuple[Segments, Blocks]:
    n = len(segs)
    for i, s in enumerate(segs):
        if not isinstance(s, dict):
            raise TraceFormatError(
                src, f"segments[{i}]", f"expected a dict, got {type(s).__name__}"
            )
    address = _check_range(
        _int_column(segs, "address", 0, src, "segments"), "address", src, "segments", None
    )
    total = _check_range(
        _int_column(segs, "total_size", 0, src, "segments"),
        "total_size",
        src,
        "segments",
        MAX_BYTES,
    )
    device = _check_range(
        _int_column(segs, "device", 0, src, "segments"), "device", src, "segments", MAX_DEVICES - 1
    )
    block_lists = [
        _as_list(s.get("blocks"), src, f"segments[{i}].blocks") for i, s in enumerate(segs)
    ]
    counts = np.fromiter(map(len, block_lists), dtype=np.int64, count=n)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    flat: list[Any] = [b for bl in block_lists for b in bl]
    for j, b in enumerate(flat):
        if not isinstance(b, dict):
            raise TraceFormatError(src, f"block {j}", f"expected a dict, got {type(b).__name__}")
    nb = len(flat)
    seg_of_block = np.repeat(np.arange(n, dtype=np.int32), counts)
    bsize = _check_blocks(_int_column(flat, "size", 0, src, "blocks"), "size", src, offsets)
    breq = _check_blocks(
        _optional_ints(b.get("requested_size", b.get("size")) for b in flat),
        "requested_size",
        src,
        offsets,
    )
    # Older snapshots name no block address: blocks tile their segment in order.
    before = np.cumsum(bsize) - bsize
    seg_first = np.zeros(n, dtype=np.int64)
    has = counts > 0
    seg_first[has] = before[offsets[:-1][has]]
    implied = np.repeat(address - seg_first, counts) + before
    has_addr = np.fromiter((isinstance(b.get("address"), int) for b in flat), bool, count=nb)
    baddr = np.full(nb, -1, dtype=np.int64)
    given_rows = np.flatnonzero(has_addr)
    if len(given_rows):
        baddr[given_rows] = _int_column(
            [flat[j] for j in given_rows.tolist()], "address", 0, src, "blocks"
        )
        _check_blocks(np.where(has_addr, baddr, 0), "address", src, offsets)
    missing = ~has_addr
    baddr[missing] = implied[missing]
    state_codes = {k: int(v) for k, v in BLOCK_STATE_NAMES.items()}
    inactive = int(BlockState.INACTIVE)
    bstate = np.fromiter(
        (
            state_codes.get(st, inactive) if isinstance(st, str) else inactive
            for st in (b.get("state") for b in flat)
        ),
        dtype=np.int8,
        count=nb,
    )
    bstack = interner.stacks_of(flat)

    def per_segment(key: str, mask: npt.NDArray[np.bool_] | None) -> I64:
        given = [s.get(key) for s in segs]
        from_blocks = (
            np.bincount(seg_of_block[mask], weights=bsize[mask], minlength=n)
            if mask is not None
            else np.zeros(n)
        )
        values = _optional_ints(
            v if isinstance(v, int) and not isinstance(v, bool) else int(from_blocks[i])
            for i, v in enumerate(given)
        )
        return _check_range(values, key, src, "segments", MAX_BYTES)

    segments = Segments(
        device=device.astype(np.int32),
        address=address,
        total_size=total,
        allocated_size=per_segment("allocated_size", bstate == BlockState.ACTIVE_ALLOCATED),
        active_size=per_segment("active_size", bstate != BlockState.INACTIVE),
        requested_size=per_segment("requested_size", None),
        stream=_check_range(
            _int_column(segs, "stream", 0, src, "segments"), "stream", src, "segments", None
        ),
        is_large=np.asarray([s.get("segment_type", "large") != "small" for s in segs], dtype=bool),
        is_expandable=np.asarray([bool(s.get("is_expandable", False)) for s in segs], dtype=bool),
        stack=interner.stacks_of(segs),
        block_offsets=offsets,
    )
    return segments, Blocks(seg_of_block, baddr, bsize, breq, bstate, bstack)


def _optional_ints(values: Any) -> I64:
    """Python ints as int64 (a value out of int64's range becomes -1, refused by the range check)."""
    return np.asarray(
        [v if isinstance(v, int) and -(1 << 63) <= v < (1 << 63) else -1 for v in values],
        dtype=np.int64,
    )


def _check_blocks(column: I64, key: str, src: str, offsets: I64) -> I64:
    """:func:`_check_range` for a column of blocks, naming the segment a bad block is in."""
    high = None if key == "address" else MAX_BYTES
    bad = column < 0
    if high is not None:
        bad |= column > high
    if bad.any():
        j = int(np.argmax(bad))
        seg = int(np.searchsorted(offsets, j, side="right")) - 1
        first = int(offsets[seg])
        _check_range(column[j : j + 1], key, src, f"segments[{seg}].blocks", high, [j - first])
    return column


def _annotations(items: list[Any], interner: _Interner, src: str) -> Annotations:
    items = [a for a in items if isinstance(a, dict)]
    n = len(items)
    codes = {"START": int(AnnotationStage.START), "END": int(AnnotationStage.END)}
    other = int(AnnotationStage.OTHER)
    where = "external_annotations"
    return Annotations(
        device=_check_range(
            _int_column(items, "device", 0, src, where), "device", src, where, MAX_DEVICES - 1
        ).astype(np.int32),
        time_us=_check_range(
            _int_column(items, "time_us", 0, src, where), "time_us", src, where, MAX_TIME_US
        ),
        stage=np.fromiter(
            (
                codes.get(st, other) if isinstance(st, str) else other
                for st in (a.get("stage") for a in items)
            ),
            np.int8,
            count=n,
        ),
        name=np.fromiter(
            (interner.symbols.intern(str(a.get("name", ""))) for a in items), np.int32, count=n
        ),
    )


def _plain(value: Any, depth: int = 0) -> Any:
    """Settings as JSON-friendly plain data."""
    if depth > 4:
        return None
    if isinstance(value, dict):
        return {str(k): _plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v, depth + 1) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return repr(value)[:200]


def snapshot_from_data(
    data: dict[str, Any], source: str = "", consume: bool = False
) -> AllocatorSnapshot:
    """Turn an unpickled snapshot dict into columns and allocation intervals.

    Parameters
    ----------
    data
        The unpickled dict (:func:`~gpuviz.trace.snapshot_pickle.load_snapshot_data`).
    source
        The file it came from, for messages.
    consume
        Empty each device trace's list as it is turned into columns, freeing its entries as
        it goes (the loader's peak memory is then the unpickled tree's): ``data`` is left
        without its history.

    Raises
    ------
    TraceFormatError
        A part has the wrong type (the message names the place).
    """
    interner = _Interner()
    segs = _as_list(data.get("segments"), source, "segments")
    traces_raw = _as_list(data.get("device_traces"), source, "device_traces")
    if len(traces_raw) > MAX_DEVICES:
        raise TraceFormatError(
            source, "device_traces", f"{len(traces_raw):,} devices: more than {MAX_DEVICES:,}"
        )
    traces = [
        _trace_entries(
            _as_list(t, source, f"device_traces[{d}]"),
            interner,
            source,
            f"device_traces[{d}]",
            consume,
        )
        for d, t in enumerate(traces_raw)
    ]
    segments, blocks = _segments_and_blocks(segs, interner, source)
    annotations = _annotations(
        _as_list(data.get("external_annotations"), source, "external_annotations"), interner, source
    )
    settings = data.get("allocator_settings")
    settings = _plain(settings) if isinstance(settings, dict) else {}
    snap = AllocatorSnapshot(
        source=source,
        symbols=interner.symbols,
        frame_filename=np.asarray(interner.frame_filename, dtype=np.int32),
        frame_name=np.asarray(interner.frame_name, dtype=np.int32),
        frame_line=np.asarray(interner.frame_line, dtype=np.int64),
        stack_offsets=np.asarray(interner.stack_offsets, dtype=np.int64),
        stack_frame_ids=np.asarray(interner.stack_frames, dtype=np.int32),
        traces=traces,
        segments=segments,
        blocks=blocks,
        annotations=annotations,
        allocator_settings=settings,
    )
    expandable = bool(settings.get("expandable_segments")) or bool(segments.is_expandable.any())
    block_dev = segments.device[blocks.segment] if len(blocks) else np.empty(0, np.int32)
    active = blocks.state != BlockState.INACTIVE
    n_dev = max(len(traces), int(segments.device.max()) + 1 if len(segments) else 0)
    mss = settings.get("max_split_size")
    max_split_size = (
        int(mss) if isinstance(mss, int) and not isinstance(mss, bool) and mss <= MAX_BYTES else -1
    )
    for d in range(n_dev):
        rows = np.flatnonzero(active & (block_dev == d))
        segs_d = np.flatnonzero(segments.device == d)
        snap.allocations.append(
            pair_allocations(
                snap.trace_columns(d),
                blocks.address[rows],
                blocks.size[rows],
                blocks.requested_size[rows],
                segments.stream[blocks.segment[rows]],
                blocks.stack[rows],
                segments.address[segs_d],
                segments.total_size[segs_d],
                expandable,
                max_split_size,
            )
        )
    return snap


def load_snapshot(
    path: str | Path,
    progress: Callable[[float], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> AllocatorSnapshot:
    """Read a ``.pickle`` (or ``.pickle.gz``) allocator snapshot safely, as columns.

    Parameters
    ----------
    path
        A file written by ``torch.cuda.memory._dump_snapshot`` (or by gpuviz's
        ``--memory-snapshot``).
    progress, cancelled
        As in :func:`~gpuviz.trace.snapshot_pickle.load_snapshot_data` (reading is most of
        the time).

    Returns
    -------
    AllocatorSnapshot

    Raises
    ------
    TraceFormatError
        The file is not a snapshot, is damaged, or names a class (refused; nothing ran).
    """
    data = load_snapshot_data(path, progress, cancelled)
    # the raw tree is millions of containers that are all reachable: collecting is wasted work
    with gc_paused():
        try:
            snap = snapshot_from_data(data, str(path), consume=True)
        except RecursionError:
            # a value nested deeper than the interpreter follows, where a name or number belongs
            raise TraceFormatError(
                str(path), "", "a value is nested too deeply to be part of an allocator snapshot"
            ) from None
        finally:
            release(data)
    return snap


def release(data: dict[str, Any]) -> None:
    """Free an unpickled snapshot in slices of entries.

    Freeing a million entries in one ``del`` is one long C call that holds the GIL (a third
    of a second here); slices of 20k entries let another thread (the app's GUI) run between them.
    """
    for trace in data.get("device_traces") or []:
        if isinstance(trace, list):
            while trace:
                del trace[-20_000:]
    data.clear()


def is_snapshot_path(path: str | Path) -> bool:
    """Whether a file name looks like an allocator snapshot (``.pickle``, ``.pickle.gz``)."""
    name = Path(path).name.lower()
    return name.endswith((".pickle", ".pickle.gz", ".pkl", ".pkl.gz"))


def snapshot_path_for(trace_path: Path | str, rank: int | None = None) -> Path:
    """The snapshot file that belongs to a trace.

    Parameters
    ----------
    trace_path
        A trace file (``NAME.json.gz`` or ``NAME.json``), or a folder of per-rank traces.
    rank
        For a folder: the rank whose snapshot is meant (default 0). Ignored for a file.

    Returns
    -------
    Path
        ``NAME.memory.pickle`` beside a trace file; ``FOLDER/rank-N.memory.pickle`` for a
        folder, beside that rank's ``rank-N.json.gz``.
    """
    p = Path(trace_path)
    name = p.name
    for suffix in sorted(_TRACE_SUFFIXES, key=len, reverse=True):
        if name.endswith(suffix) and len(name) > len(suffix):
            return p.with_name(name[: -len(suffix)] + SNAPSHOT_SUFFIX)
    # no trace suffix: a rank folder (``--out DIR`` of a multi-process run)
    return p / f"rank-{0 if rank is None else int(rank)}{SNAPSHOT_SUFFIX}"
