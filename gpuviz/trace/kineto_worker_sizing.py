"""How many import children to start, and how: sizes, idle cores, fork or spawn.

:func:`worker_count` decides how many children an import of so many bytes gets (from the
usable cores less those busy, :func:`_load_average`), :func:`whole_file_max_bytes` which files
of a folder a child reads whole, and :func:`start_method` whether they are forked or spawned.
These are policy read before any child exists, by the importer and by the other pools that
start children the same way (:mod:`gpuviz.trace.rank_pool`,
:mod:`gpuviz.analysis.allocator_ranks`), so they live apart from the processes themselves
(:mod:`gpuviz.trace.kineto_worker`, which re-exports every name here).
"""

from __future__ import annotations

import os
import sys

WHOLE_FILE_MAX_BYTES = 64 << 20
"""In an import of several files, a file at most this large (estimated), or at most half a
decoder's share of the bytes (:func:`whole_file_max_bytes`), is read by one child from start
to end, instead of chunk by chunk by the importer: the importer's own share of a 64-rank
folder (scanning, shipping and merging 900 chunks) kept 15 children waiting.
``GPUVIZ_IMPORT_WHOLE_FILE_MAX_BYTES`` sets the limit instead."""
MIN_BYTES_DEFAULT = 64 << 20
"""Imports this large (uncompressed, estimated, all files together) use child processes."""
MAX_WORKERS = 15
"""Children beyond this many would wait on the importer, which merges every reply."""
BYTES_PER_WORKER = 12 << 20
"""At most one forked child per this many bytes to import. A forked child starts in a few
ms and shares the importer's modules, so it costs only its working memory: about 14 MB of
proportional set each on a 16-core host (a chunk's events and columns, the pages it dirties
of those it shares, its reply). A 100k-kernel trace (166 MB) gets 14 of them. On a 16-core
H200 (2026-11-29, 4 rounds each, side by side) its decoding took 0.241 s with 14, 0.261 s
with 10 and 0.342 s with 7 (one per 24 MB, as before), for 0.37x json.load's memory (PSS)
with 14 against 0.27x with 7."""
SPAWNED_BYTES_PER_WORKER = 64 << 20
"""The same for children spawned as fresh interpreters (see :func:`start_method`): each
costs its start (0.3-0.5 s of a core) and its own memory (30-40 MB resident), worth it only
for that much work. On a 16-core host, 15 spawned children for a 166 MB file took 10 s of
CPU and 1.4x json.load's memory."""


def estimated_bytes(path: str) -> int:
    """The uncompressed size of a trace file, estimated (a gzip file's size times 8)."""
    try:
        size = os.stat(path).st_size
        with open(path, "rb") as f:
            if f.read(2) == b"\x1f\x8b":
                size *= 8  # a Kineto trace compresses about tenfold
    except OSError:
        return 0
    return size


def usable_cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def worker_count(total_bytes: int) -> int:
    """How many children to import ``total_bytes`` (uncompressed) with: 0 for a small import.

    By default, from :data:`MIN_BYTES_DEFAULT` on, one for each core that is idle besides the
    importer's own (the importer decodes too): the usable cores less those busy with other
    work (:func:`_load_average`), rounded, at most one fewer than the usable cores, and at
    most one per :data:`BYTES_PER_WORKER` (:data:`SPAWNED_BYTES_PER_WORKER` where children
    spawn). On a machine whose cores are
    all busy, children only add their own start-up and the shipping of columns (measured on
    a shared 2-core box: 20 % more CPU time and no speed-up), so there are none.
    ``GPUVIZ_IMPORT_WORKERS`` sets the count (0 turns them off),
    ``GPUVIZ_IMPORT_WORKER_MIN_BYTES`` the size from which they are used.
    """
    try:
        min_bytes = int(os.environ.get("GPUVIZ_IMPORT_WORKER_MIN_BYTES", str(MIN_BYTES_DEFAULT)))
        n = int(os.environ.get("GPUVIZ_IMPORT_WORKERS", "-1"))
    except ValueError:
        return 0
    if total_bytes < min_bytes:
        return 0
    if n >= 0:
        return n
    cores = usable_cores()
    per = BYTES_PER_WORKER if start_method() == "fork" else SPAWNED_BYTES_PER_WORKER
    by_size = -(-total_bytes // per)
    return max(0, min(cores - 1, MAX_WORKERS, by_size, round(cores - _load_average())))


def whole_file_max_bytes(total_bytes: int = 0, decoders: int = 1) -> int:
    """The largest file of an import of ``total_bytes`` by ``decoders`` (children and the
    importer) that one decoder reads whole: ``GPUVIZ_IMPORT_WHOLE_FILE_MAX_BYTES`` where set,
    else :data:`WHOLE_FILE_MAX_BYTES` or half a decoder's share of the bytes, the larger.

    Half a share keeps the files in flight at the end short next to the whole (a folder of
    two large files is still read chunk by chunk, by every decoder). Chunk by chunk, a
    64-rank folder of 166 MB files was 10,000 replies that the importer scanned, shipped and
    merged, and as many column parts that the assembly joined: on the 2-core VM whole files
    took 82 s against 108 s, and 3.4 GB of PSS against 3.6.
    """
    try:
        return int(os.environ["GPUVIZ_IMPORT_WHOLE_FILE_MAX_BYTES"])
    except (KeyError, ValueError):
        return max(WHOLE_FILE_MAX_BYTES, total_bytes // (2 * max(decoders, 1)))


_LOADAVG = "/proc/loadavg"  # "0.52 0.58 0.59 3/345 12345": the 4th field is running/all tasks


def _load_average() -> float:
    """Cores busy with other work: the 1-minute load average, or, where Linux tells it and it
    is lower, the tasks running right now besides this one.

    The load average lags: a run of imports (a benchmark, a user opening trace after trace)
    raises it by several cores for a minute after their children are gone, and it is the
    whole machine's in a container. The count of running tasks is of this moment.
    """
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # not available (Windows): count the cores as idle
        return 0.0
    try:
        with open(_LOADAVG, "rb") as f:
            running = int(f.read().split()[3].split(b"/")[0])
    except (OSError, ValueError, IndexError):
        return load
    return min(load, max(running - 1, 0))


START_ENV = "GPUVIZ_IMPORT_START"
"""Set to ``fork`` or ``spawn`` to choose how import children start (see :func:`start_method`)."""


def start_method() -> str:
    """How the import's children start: ``"fork"`` on Linux, else ``"spawn"``.

    A forked child is ready at once, and shares the importer's modules (their pages are
    copied only where written). A spawned one (``python -m gpuviz.trace.kineto_worker``)
    first imports Python, numpy and msgspec: on a 16-core host its first reply came 0.34-0.6 s
    into a 100k-kernel import that took 0.8-1.2 s in all, with 3 to 15 children starting
    side by side, while the importer decoded alone. macOS's system libraries are not safe to
    use after a fork, so children spawn there, as wherever fork is missing.
    :data:`START_ENV` chooses.
    """
    want = os.environ.get(START_ENV, "")
    can_fork = hasattr(os, "fork")
    if want in ("fork", "spawn"):
        return want if can_fork or want == "spawn" else "spawn"
    return "fork" if can_fork and sys.platform.startswith("linux") else "spawn"
