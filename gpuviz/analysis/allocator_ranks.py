"""Allocator snapshots of many ranks: a folder of ``rank-N.memory.pickle`` files, read side by side.

``gpuviz profile`` and ``gpuviz run --memory-snapshot`` under torchrun write one snapshot per
rank, ``rank-N.memory.pickle`` beside ``rank-N.json.gz``. :func:`rank_snapshot_files` finds them
(``.pickle.gz`` too); :func:`map_ranks` reads them, in parallel where it pays; the figures of a
rank are exactly those of ``gpuviz memory FILE`` (:func:`~gpuviz.analysis.allocator.
snapshot_figures`), and :class:`RankTable` names the rank whose peak is highest.

Reading a snapshot is the standard library's C unpickler (which never releases the GIL) and
Python loops and numpy passes over Python lists, so threads cannot share the work; processes
can. On the shared 2-core box this was written on (load 3-6 from other work; this process got
about half a core) no way of reading showed a speed-up: 8 copies of a 100k-entry snapshot
(8.9 MB each), their figures, took 1.4-3.9 s one after the other, 2.0-4.1 s in two threads and
1.6-3.2 s in two forked processes over four runs (``benchmarks/bench_memory_ranks.py``, which
gives the figures of a machine with idle cores). The ranks go to a process pool (forked on
Linux, as the trace importer's children: :func:`~gpuviz.trace.kineto_worker.start_method`)
only where cores are idle (:func:`worker_count`). Only the figures come back to the CLI (a few
kB a rank); the app gets each rank's drawing model, whose columns pickle as raw buffers
(14 MB, 25 ms to pickle and 13 ms to unpickle for 100k entries, against 0.56 s to build).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from gpuviz.analysis.allocator import TOP_SITES, DeviceFigures, SnapshotFigures
from gpuviz.analysis.allocator_timeline import MemoryTimeline
from gpuviz.errors import BadInputError

T = TypeVar("T")

RANK_SNAPSHOT = re.compile(r"rank-(\d+)(?:\.memory)?\.(?:pickle|pkl)(?:\.gz)?", re.IGNORECASE)
"""A rank's snapshot: ``rank-N.memory.pickle`` (what gpuviz writes), ``rank-N.pickle``, each
optionally gzip-compressed."""
WORKERS_ENV = "GPUVIZ_SNAPSHOT_WORKERS"
"""Sets how many processes read the ranks (0 or 1: read in this process)."""
COLUMNS = ("rank", "device", "peak allocated", "reserved", "fragmentation", "largest free", "OOM")
"""The columns of the ranks' table (:func:`table_rows`)."""


def rank_snapshot_files(folder: str | Path) -> list[tuple[int, Path]]:
    """The rank snapshots of a folder, by rank.

    Parameters
    ----------
    folder
        A folder (for example ``--out DIR`` of a multi-process ``gpuviz profile``).

    Returns
    -------
    list of (int, Path)
        ``(rank, file)``, ascending ranks; empty when the folder holds none.

    Raises
    ------
    BadInputError
        Two files of the same rank (``rank-0.memory.pickle`` and ``rank-0.memory.pickle.gz``).
    """
    found: dict[int, Path] = {}
    for p in sorted(Path(folder).iterdir()):
        m = RANK_SNAPSHOT.fullmatch(p.name)
        if m is None or not p.is_file():
            continue
        rank = int(m.group(1))
        if rank in found:
            raise BadInputError(f"{p}: a second snapshot of rank {rank} (with {found[rank].name})")
        found[rank] = p
    return sorted(found.items())


def has_rank_snapshots(folder: str | Path) -> bool:
    """Whether ``folder`` is a folder that holds at least one rank snapshot."""
    p = Path(folder)
    return p.is_dir() and any(RANK_SNAPSHOT.fullmatch(q.name) for q in p.iterdir())


@dataclass
class RankFigures:
    """The figures of one rank's snapshot (``gpuviz memory FILE``'s, with the rank).

    Attributes
    ----------
    rank : int
    figures : SnapshotFigures
    """

    rank: int
    figures: SnapshotFigures

    @property
    def source(self) -> str:
        """The snapshot file."""
        return self.figures.source

    @property
    def peak(self) -> DeviceFigures | None:
        """The device whose peak is highest (None: no allocator activity)."""
        devices = self.figures.devices
        return max(devices, key=lambda d: d.peak_allocated_bytes) if devices else None

    @property
    def peak_bytes(self) -> int:
        """The rank's highest peak of allocated bytes over its devices (0: no activity)."""
        d = self.peak
        return 0 if d is None else d.peak_allocated_bytes

    def to_json(self) -> dict[str, Any]:
        """``{"rank", "source", "devices", "allocator_settings"}``."""
        return {"rank": self.rank, **self.figures.to_json()}


@dataclass
class RankTable:
    """The ranks of a folder, and the one whose peak is highest.

    Attributes
    ----------
    source : str
        The folder.
    ranks : list of RankFigures
        Ascending ranks.
    """

    source: str
    ranks: list[RankFigures]

    @property
    def highest_peak_rank(self) -> int | None:
        """The rank with the highest peak (the lowest such rank on a tie); None when no rank
        has allocator activity."""
        best = max(self.ranks, key=lambda r: (r.peak_bytes, -r.rank), default=None)
        return None if best is None or best.peak is None else best.rank

    def to_json(self) -> dict[str, Any]:
        """``{"source", "ranks": [...], "highest_peak_rank"}`` (``gpuviz memory DIR --json``)."""
        return {
            "source": self.source,
            "ranks": [r.to_json() for r in self.ranks],
            "highest_peak_rank": self.highest_peak_rank,
        }


def table_rows(table: RankTable) -> list[tuple[str, ...]]:
    """The table's cells, a row per rank and device (a rank with no activity: one row)."""
    from gpuviz.display import format_bytes  # a leaf module: no Qt, no torch

    rows: list[tuple[str, ...]] = []
    for r in table.ranks:
        if not r.figures.devices:
            rows.append((str(r.rank), "-", "no allocator activity", "", "", "", ""))
        for d in r.figures.devices:
            oom = "-" if d.oom is None else f"asked {format_bytes(d.oom.request_bytes)}"
            rows.append(
                (
                    str(r.rank),
                    f"cuda:{d.device}",
                    format_bytes(d.peak_allocated_bytes),
                    format_bytes(d.reserved_bytes),
                    f"{d.fragmentation:.2f}",
                    format_bytes(d.largest_free_block_bytes),
                    oom,
                )
            )
    return rows


def highest_peak_line(table: RankTable) -> str:
    """One line naming the rank whose peak is highest."""
    from gpuviz.display import format_bytes  # a leaf module: no Qt, no torch

    best = table.highest_peak_rank
    if best is None:
        return "no rank has allocator activity"
    r = next(x for x in table.ranks if x.rank == best)
    d = r.peak
    assert d is not None
    others = [x.peak_bytes for x in table.ranks if x.rank != best]
    tail = f"; next highest {format_bytes(max(others))}" if others else ""
    return (
        f"highest peak: rank {best} (cuda:{d.device}), "
        f"{format_bytes(d.peak_allocated_bytes)} allocated{tail}"
    )


def worker_count(files: int) -> int:
    """Processes to read ``files`` snapshots with: one a file, at most one a core that is idle
    (the usable cores less the load, as the trace importer counts them); 0 (this process
    alone) for one file or fewer than two idle cores, where forking only adds the trip of
    the results back. :data:`WORKERS_ENV` sets it."""
    from gpuviz.trace.kineto_worker import _load_average, usable_cores

    try:
        want = int(os.environ.get(WORKERS_ENV, "-1"))
    except ValueError:
        want = -1
    if want < 0:
        cores = usable_cores()
        want = min(cores, round(cores - _load_average()))
    n = min(files, want)
    return n if n >= 2 else 0


def map_ranks(
    func: Callable[[Path], T],
    files: Sequence[Path],
    progress: Callable[[float], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    workers: int | None = None,
    on_error: Callable[[str], None] | None = None,
) -> list[T | None]:
    """``func(file)`` for each snapshot, in forked processes when there are cores for it
    (:func:`gpuviz.trace.rank_pool.map_ranks`; ``workers`` default :func:`worker_count`)."""
    from gpuviz.trace import rank_pool

    n = worker_count(len(files)) if workers is None else workers
    return rank_pool.map_ranks(func, files, n, progress, cancelled, on_error)


def rank_figures_of(path: Path, top: int = TOP_SITES) -> SnapshotFigures:
    """Read one snapshot and compute ``gpuviz memory``'s figures (runs in a child)."""
    from gpuviz.analysis.allocator import snapshot_figures
    from gpuviz.trace.allocator_snapshot import load_snapshot

    return snapshot_figures(load_snapshot(path), top=top)


class _FiguresOf:
    """``rank_figures_of`` with a ``top``, picklable for the pool."""

    def __init__(self, top: int) -> None:
        self.top = top

    def __call__(self, path: Path) -> SnapshotFigures:
        return rank_figures_of(path, self.top)


def rank_table(
    folder: str | Path,
    top: int = TOP_SITES,
    progress: Callable[[float], None] | None = None,
    workers: int | None = None,
    on_error: Callable[[str], None] | None = None,
) -> RankTable:
    """The figures of every rank snapshot in ``folder``.

    Parameters
    ----------
    on_error
        Given: a snapshot that cannot be read is passed to it (one line naming it) and left
        out of the table, and the others are read. Else it raises.

    Raises
    ------
    BadInputError
        The folder holds no rank snapshot, or (without ``on_error``) one of them cannot be
        read (named).
    """
    files = rank_snapshot_files(folder)
    if not files:
        raise BadInputError(f"{folder}: no rank-N.memory.pickle snapshots in this folder")
    figures = map_ranks(
        _FiguresOf(top), [f for _, f in files], progress, workers=workers, on_error=on_error
    )
    return RankTable(
        str(folder), [RankFigures(r, f) for (r, _), f in zip(files, figures) if f is not None]
    )


class RankTimelines:
    """Read one snapshot into its drawing models, one per device (for the app; picklable).

    Parameters
    ----------
    trace_zero_ns, trace_end_ns
        The trace opened with the snapshots (see
        :func:`~gpuviz.analysis.allocator_timeline.build_timelines`); None: snapshots alone.
    named
        Label the devices with the rank (``rank 3 cuda:0``); else ``cuda:0``.
    """

    def __init__(
        self, trace_zero_ns: int | None = None, trace_end_ns: int = 0, named: bool = True
    ) -> None:
        self.trace_zero_ns = trace_zero_ns
        self.trace_end_ns = trace_end_ns
        self.named = named

    def __call__(self, path: Path) -> list[MemoryTimeline]:
        from gpuviz.analysis.allocator_timeline import build_timelines
        from gpuviz.trace.allocator_snapshot import load_snapshot

        m = RANK_SNAPSHOT.fullmatch(path.name)
        name = "" if not self.named else f"rank {int(m.group(1))}" if m else path.name
        return build_timelines(load_snapshot(path), name, self.trace_zero_ns, self.trace_end_ns)


def table_of_timelines(
    folder: str | Path, ranks: Sequence[int], timelines: Sequence[Sequence[MemoryTimeline]]
) -> RankTable:
    """The :class:`RankTable` of ranks read by :class:`RankTimelines` (their figures are those
    the timelines were built with: ``gpuviz memory``'s, with the default top sites)."""
    rows = []
    for rank, tls in zip(ranks, timelines):
        if not tls:
            continue
        snap = tls[0].snap
        figures = SnapshotFigures(snap.source, [t.figures for t in tls], snap.allocator_settings)
        rows.append(RankFigures(rank, figures))
    return RankTable(str(folder), rows)


def on_common_origin(timelines: Sequence[MemoryTimeline]) -> list[MemoryTimeline]:
    """The ranks' timelines on one time axis: ns from the earliest rank's first entry.

    Snapshots opened without a trace are each drawn from their own first entry; stacked, the
    ranks need one origin. PyTorch stamps entries with the host's Unix time in µs, so ranks
    of one job line up as their hosts' clocks do. Timelines already on a trace's axis are
    returned as they are, and so are ranks whose first entries are more than
    :data:`~gpuviz.analysis.allocator_timeline.CLOCK_SLACK_NS` apart (snapshots of different
    runs, or clocks that differ: each is drawn from its own first entry).
    """
    from dataclasses import replace

    import numpy as np

    from gpuviz.analysis.allocator_timeline import CLOCK_SLACK_NS
    from gpuviz.trace.allocator_lod import ColumnPyramid

    loose = [t for t in timelines if not t.on_trace_axis and len(t.t_ns)]
    if not loose:
        return list(timelines)
    origin = min(t.origin_ns for t in loose)
    if max(t.origin_ns for t in loose) - origin > CLOCK_SLACK_NS:
        return list(timelines)  # not one job's clocks: each rank from its own first entry
    moved = {id(t) for t in loose}
    out = []
    for t in timelines:
        shift = t.origin_ns - origin
        if id(t) not in moved or shift == 0:
            out.append(t)
            continue
        t_ns = t.t_ns + np.int64(shift)
        lanes = t.lanes
        if lanes is not None:
            lanes = replace(lanes, start_ns=lanes.start_ns + shift, end_ns=lanes.end_ns + shift)
        # the pyramid's buckets are aligned to absolute times: built again on the new ones
        pyramid = ColumnPyramid(t_ns, t.live)
        out.append(replace(t, origin_ns=origin, t_ns=t_ns, lanes=lanes, pyramid=pyramid))
    return out
