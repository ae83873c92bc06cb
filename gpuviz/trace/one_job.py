"""Whether a folder's trace files are one job: the rule a rank folder must pass to be merged.

A folder of trace files is merged into one Trace with one rank per file (DESIGN.md). That is
right for the files of one distributed job and wrong for anything else: 18 unrelated traces
side by side became ranks 0-17 of a job that spanned 5.5 years, with one device's peaks
applied to every other's work and every rank 0.0% busy. So before the merge the files'
own facts are held against each other (:func:`check_one_job`); the folder is refused
(:class:`NotOneJobError`, exit 2 in the CLI; the app opens each file in its own tab) where
they disagree on any of:

- the job: ``distributedInfo.world_size`` (where files state it) differs, or two files
  declare the same ``distributedInfo.rank``;
- the devices: the set of GPU names in ``deviceProperties`` (where files have it) differs;
- the clock: the files' spans in absolute time neither overlap nor lie within
  :data:`CLOSE_NS` (or the longest file's own span, if that is longer) of each other. The
  ranks of one job are recorded by one schedule at the same time; traces recorded minutes,
  days or years apart are different runs.

Files that state none of these (no ``distributedInfo``, no ``deviceProperties``) agree with
every other file on that point: a folder recorded together by tools that write neither keeps
opening. The facts come from what the importer has already read (the top-level fields and
each file's earliest and latest time), so the check reads nothing twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuviz.trace.errors import TraceFormatError

CLOSE_NS = 60 * 10**9
"""How far apart in absolute time two files of one job may start or end: a minute (ranks of
one job profile the same steps; clocks of a cluster's nodes agree to milliseconds)."""


@dataclass(frozen=True)
class FileFacts:
    """What one file says about the job it belongs to.

    Attributes
    ----------
    path : str
        The file.
    rank, world_size : int or None
        ``distributedInfo.rank`` and ``world_size``; None where not stated.
    devices : tuple of str
        The distinct GPU names of ``deviceProperties``, sorted; empty where it has none.
    first_ns, end_ns : int or None
        Absolute time (ns) of its earliest event and its latest end; None: no timed event.
    """

    path: str
    rank: int | None
    world_size: int | None
    devices: tuple[str, ...]
    first_ns: int | None
    end_ns: int | None


def file_facts(
    path: str, metadata: dict[str, Any], first_ns: int | None, end_ns: int | None
) -> FileFacts:
    """The :class:`FileFacts` of a file from its top-level fields and its time range."""
    info = metadata.get("distributedInfo")
    world = info.get("world_size") if isinstance(info, dict) else None
    if isinstance(world, str) and world.strip().isdigit():
        world = int(world)
    if not isinstance(world, int) or isinstance(world, bool):
        world = None
    props = metadata.get("deviceProperties")
    names = set()
    if isinstance(props, list):
        names = {str(d["name"]) for d in props if isinstance(d, dict) and d.get("name")}
    return FileFacts(
        path=str(path),
        rank=declared_rank(metadata),
        world_size=world,
        devices=tuple(sorted(names)),
        first_ns=first_ns,
        end_ns=end_ns,
    )


def declared_rank(metadata: dict[str, Any]) -> int | None:
    """The rank a file's top-level fields declare (``distributedInfo.rank``), or None."""
    info = metadata.get("distributedInfo")
    if isinstance(info, dict):
        r = info.get("rank")
        if isinstance(r, int) and not isinstance(r, bool):
            return r
        if isinstance(r, str) and r.strip().isdigit():
            return int(r)
    return None


class NotOneJobError(TraceFormatError):
    """A folder whose files are not one job (see the module docstring): not merged.

    Attributes
    ----------
    files : list of str
        Every trace file of the folder, in file order: what the app opens one by one.
    reasons : list of str
        Each disagreement found, naming the files.
    """

    def __init__(self, folder: str, files: Sequence[str], reasons: Sequence[str]) -> None:
        self.files = list(files)
        self.reasons = list(reasons)
        super().__init__(
            folder,
            "",
            "its files are not one job, so they are not merged as ranks: "
            + "; ".join(self.reasons)
            + "; open each file on its own",
        )


def check_one_job(folder: str | Path, facts: Sequence[FileFacts]) -> None:
    """Raise :class:`NotOneJobError` unless the files of ``folder`` are one job.

    Parameters
    ----------
    folder : str or Path
        The folder (named in the message; the files are named relative to it).
    facts : sequence of FileFacts
        Each file's facts (:func:`file_facts`), in file order.

    Raises
    ------
    NotOneJobError
        The files disagree on the job, the devices or the clock; the message names two files
        that disagree on each point, and how.
    """
    if len(facts) < 2:
        return
    root = Path(folder)

    def name(f: FileFacts) -> str:
        try:
            return str(Path(f.path).relative_to(root))
        except ValueError:
            return f.path

    reasons = []
    sized = [f for f in facts if f.world_size is not None]
    other = next((f for f in sized if f.world_size != sized[0].world_size), None)
    if other is not None:
        reasons.append(
            f"{name(sized[0])} has world size {sized[0].world_size}, "
            f"{name(other)} {other.world_size}"
        )
    else:
        seen: dict[int, FileFacts] = {}
        for f in facts:
            if f.rank is None:
                continue
            if f.rank in seen:
                reasons.append(f"{name(seen[f.rank])} and {name(f)} both declare rank {f.rank}")
                break
            seen[f.rank] = f
    gpus = [f for f in facts if f.devices]
    other = next((f for f in gpus if f.devices != gpus[0].devices), None)
    if other is not None:
        reasons.append(
            f"{name(gpus[0])} ran on {', '.join(gpus[0].devices)}, "
            f"{name(other)} on {', '.join(other.devices)}"
        )
    apart = _time_apart(facts)
    if apart is not None:
        a, b, gap = apart
        reasons.append(f"{name(a)} and {name(b)} were recorded {describe_gap(gap)} apart")
    if reasons:
        raise NotOneJobError(str(folder), [f.path for f in facts], reasons)


def _time_apart(facts: Sequence[FileFacts]) -> tuple[FileFacts, FileFacts, int] | None:
    """The first two files (by start) whose spans lie apart by more than the job allows:
    (earlier file, later file, gap ns); None where every span joins the others'."""
    timed = sorted(
        (
            (f.first_ns, f.end_ns, f)
            for f in facts
            if f.first_ns is not None and f.end_ns is not None
        ),
        key=lambda x: (x[0], x[2].path),
    )
    if len(timed) < 2:
        return None
    close = max(CLOSE_NS, max(end - first for first, end, _ in timed))
    reach, last = timed[0][1], timed[0][2]
    for first, end, f in timed[1:]:
        if first - reach > close:
            return last, f, first - reach
        if end > reach:
            reach, last = end, f
    return None


def describe_gap(ns: int) -> str:
    """A time gap in a unit it fills twice (a year once): ``90 s``, ``3.2 h``, ``5.5 years``."""
    s = ns / 1e9
    for unit, size, least in (("years", 365.25 * 86400, 1), ("days", 86400.0, 2),
                              ("h", 3600.0, 2), ("min", 60.0, 2)):  # fmt: skip
        if s >= least * size:
            return f"{s / size:.1f} {unit}"
    return f"{s:.0f} s"


__all__ = [
    "CLOSE_NS",
    "FileFacts",
    "NotOneJobError",
    "check_one_job",
    "declared_rank",
    "describe_gap",
    "file_facts",
]
