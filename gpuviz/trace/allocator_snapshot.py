"""CUDA caching-allocator snapshots (``torch.cuda.memory._dump_snapshot``), read safely, as columns.

:func:`load_snapshot` unpickles with an unpickler that loads no class
(:mod:`gpuviz.trace.snapshot_pickle`: nothing in the file runs) and turns the result into
columns (:mod:`gpuviz.trace.allocator_columns`) and allocation intervals
(:mod:`gpuviz.trace.allocations`). No object per entry survives the load, and the entries are
never all Python objects at once: device 0's history is read in chunks while the unpickler
still makes it, each chunk's dicts emptied as soon as they are columns
(:mod:`gpuviz.trace.allocator_trace`); a large snapshot's peak memory is about half what
``pickle.load`` of it takes (3M entries of a real snapshot: 0.53x).

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

Refused too: a part of the wrong type (``segments`` that is not a list, a block that is not a
dict) and an entry without a key torch always writes, read as a default it would make up an
allocation: a trace entry's ``action``, ``size`` and ``addr`` (``device_free`` for an OOM), a
segment's ``address``, ``total_size`` and ``blocks``, a block's ``size`` and ``state``
(``segments[3].blocks[0]: no 'size'``).

Tolerated: other missing keys (``stream``, ``time_us``, ``frames``, a segment's ``device``),
older layouts (blocks without ``address``, no
``external_annotations``, ``free`` instead of ``free_requested``/``free_completed``, frames
without C++ entries, ``history`` instead of ``frames`` on blocks) and empty traces.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from gpuviz.trace.allocations import pair_allocations
from gpuviz.trace.allocator_columns import (
    BLOCK_STATE_NAMES,
    AllocatorSnapshot,
    Annotations,
    AnnotationStage,
    Blocks,
    BlockState,
    Segments,
)
from gpuviz.trace.allocator_trace import (
    MAX_BYTES,
    MAX_TIME_US,
    Interner,
    TraceReader,
    TraceWatch,
    _check_range,
    _int_column,
)
from gpuviz.trace.errors import TraceFormatError
from gpuviz.trace.gcpause import gc_paused
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

MAX_DEVICES = 1024
"""Device indices (and ``device_traces``) a snapshot may have."""
_BLOCK_KEYS = ("size", "state")
"""Keys every block has (torch writes them all; a default would invent a block)."""
_TRACE_SUFFIXES = (".json.gz", ".json", ".pt.trace.json.gz", ".pt.trace.json")


def _as_list(value: Any, src: str, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):
        raise TraceFormatError(src, where, f"expected a list, got {type(value).__name__}")
    return value if isinstance(value, list) else list(value)


def _segments_and_blocks(segs: list[Any], interner: Interner, src: str) -> tuple[Segments, Blocks]:
    n = len(segs)
    for i, s in enumerate(segs):
        if not isinstance(s, dict):
            raise TraceFormatError(
                src, f"segments[{i}]", f"expected a dict, got {type(s).__name__}"
            )
    address = _check_range(
        _int_column(segs, "address", 0, src, "segments", required=True),
        "address",
        src,
        "segments",
        None,
    )
    total = _check_range(
        _int_column(segs, "total_size", 0, src, "segments", required=True),
        "total_size",
        src,
        "segments",
        MAX_BYTES,
    )
    device = _check_range(
        _int_column(segs, "device", 0, src, "segments"), "device", src, "segments", MAX_DEVICES - 1
    )
    block_lists = []
    for i, s in enumerate(segs):
        if "blocks" not in s:
            raise TraceFormatError(src, f"segments[{i}]", "no 'blocks'")
        blocks = _as_list(s["blocks"], src, f"segments[{i}].blocks")
        for k, b in enumerate(blocks):
            if not isinstance(b, dict):
                raise TraceFormatError(
                    src, f"segments[{i}].blocks[{k}]", f"expected a dict, got {type(b).__name__}"
                )
            for key in _BLOCK_KEYS:
                if key not in b:
                    raise TraceFormatError(src, f"segments[{i}].blocks[{k}]", f"no {key!r}")
            if not isinstance(b["state"], str):  # an unknown name reads as inactive, not this
                raise TraceFormatError(
                    src,
                    f"segments[{i}].blocks[{k}]",
                    f"'state' is a {type(b['state']).__name__}, expected a name",
                )
        block_lists.append(blocks)
    counts = np.fromiter(map(len, block_lists), dtype=np.int64, count=n)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    flat: list[Any] = [b for bl in block_lists for b in bl]
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


def _annotations(items: list[Any], interner: Interner, src: str) -> Annotations:
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
        it goes: ``data`` is left without its history.

    Raises
    ------
    TraceFormatError
        A part has the wrong type (the message names the place).
    """
    return _snapshot_from_data(data, source, consume, Interner(), None)


def _snapshot_from_data(
    data: dict[str, Any],
    source: str,
    consume: bool,
    interner: Interner,
    started: TraceReader | None,
) -> AllocatorSnapshot:
    """:func:`snapshot_from_data`, device 0's trace maybe begun by ``started`` (the load's)."""
    segs = _as_list(data.get("segments"), source, "segments")
    traces_raw = _as_list(data.get("device_traces"), source, "device_traces")
    if len(traces_raw) > MAX_DEVICES:
        raise TraceFormatError(
            source, "device_traces", f"{len(traces_raw):,} devices: more than {MAX_DEVICES:,}"
        )
    traces = []
    for d, t in enumerate(traces_raw):
        where = f"device_traces[{d}]"
        items = _as_list(t, source, where)
        if d == 0 and started is not None:
            reader = started
        else:
            reader = TraceReader(interner, source, where)
        reader.read(items, len(items), consume)
        if consume:
            items.clear()
        traces.append(reader.finish())
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
    src = str(path)
    interner = Interner()
    watch = TraceWatch(TraceReader(interner, src, "device_traces[0]"))
    data: dict[str, Any] = {}
    # the raw tree is millions of containers that are all reachable: collecting is wasted work
    with gc_paused():
        try:
            # device 0's history is read (and freed) while the unpickler makes it
            data = load_snapshot_data(path, progress, cancelled, watch=watch)
            watch.check(data, src)
            snap = _snapshot_from_data(data, src, True, interner, watch.reader)
        except RecursionError:
            # a value nested deeper than the interpreter follows, where a name or number belongs
            raise TraceFormatError(
                src, "", "a value is nested too deeply to be part of an allocator snapshot"
            ) from None
        finally:
            release(data)
    return snap


def release(data: dict[str, Any]) -> None:
    """Free an unpickled snapshot in slices of entries.

    Freeing a million entries in one ``del`` is one long C call that holds the GIL (a third
    of a second here); slices of 20k entries let another thread (the app's GUI) run between them.
    """
    if not isinstance(data, dict):
        return  # not a snapshot: nothing large to free in slices
    traces = data.get("device_traces")
    # any value may be here (the file is being refused): never raise over its error
    for trace in traces if isinstance(traces, list) else ():
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
