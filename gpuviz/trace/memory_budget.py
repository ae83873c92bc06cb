"""The memory an import may take, and what it leaves out to stay within it.

Before it reads a byte of events, the importer estimates from the files' sizes what the whole
Trace would take (:func:`plan_import`). Where that is more than the limit (``--max-memory``,
``GPUVIZ_MAX_MEMORY``; by default half the machine's RAM), it keeps what the views need (kernels,
copies, runtime calls, CPU ops, counters, flows) and leaves out, in this order:

1. :data:`DROP_CPU_ARGS`: the ``args`` text of CPU ops and Python functions (their input
   shapes and types: the roofline's FLOPs). The ids the views link by (``External id``,
   ``correlation``) are read from it first and kept as columns.
2. :data:`DROP_FLOWS`: Kineto's launch flows (category ``ac2g``: an arrow from each CUDA
   runtime call to the GPU work it launched, two events a kernel). The kernels keep their
   launches' correlation ids, which the views and the analysis link them by; an export has
   no arrows. The ``fwdbwd`` flows (forward op to backward op) stay.
3. :data:`DROP_PYTHON`: the ``python_function`` slices themselves (a ``with_stack`` trace's
   Python call stacks: half its slices or more), where the first 2 MiB of the first file
   hold any (:func:`python_share`, which also sizes what leaving them out saves).

and says so in the trace's import warnings (:func:`dropped_warning`).

The estimate, per byte of JSON (uncompressed; a gzip file's size from its trailer, else 8x),
is made of figures measured on the traces in ``tests/data`` and ``benchmarks/gen_trace.py``'s
(``Trace`` bytes / JSON bytes, one process, 2-core VM):

============================================  ======  =======  ===================
trace                                          JSON    columns  args text (plain)
============================================  ======  =======  ===================
gen_trace 20k kernels                          33 MB   0.17     0.33 (CPU ops 25 %)
hta df_index_resolver                          54 MB   0.20     0.25 (CPU ops 23 %)
kineto tb_plugin resnet50                      31 MB   0.12     0.59 (CPU ops 77 %)
tl h100 Falconsai (with_stack)                2.3 MB   0.13     0.48 (CPU+py 90 %)
============================================  ======  =======  ===================

The import's peak holds more than its result: the columns about twice (the chunks' parts
and the joined table) and a chunk's decoded events. Its peak resident set above the
interpreter's, measured per JSON byte (one process): 0.99 (gen_trace 20k), 1.00 (hta), 1.20
(resnet50); leaving out the CPU args and python slices: 0.89, 0.91, 0.75. So
:data:`COLUMN_BYTES` (0.5) and :data:`ARGS_BYTES` (0.6) add up to 1.1 a byte, 0.8 without the
CPU args; the args text is held once, plain, or a tenth of it where the import compresses it
(rank folders, several children).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import NamedTuple

from gpuviz.errors import BadInputError

ENV = "GPUVIZ_MAX_MEMORY"
"""The memory limit, as ``--max-memory`` takes it (``8G``, ``512M``, a byte count)."""
DROP_CPU_ARGS = "cpu-args"
DROP_FLOWS = "launch-flows"
DROP_PYTHON = "python-functions"
DROP_ORDER = (DROP_CPU_ARGS, DROP_FLOWS, DROP_PYTHON)
"""What an import leaves out, first to last, while the estimate exceeds the limit."""
DROP_ENV = "GPUVIZ_IMPORT_DROP"
"""How a spawned import child is told what to leave out (comma-separated; set by its importer)."""

COLUMN_BYTES = 0.5
"""The columns and the import's working memory at its peak, per JSON byte."""
ARGS_BYTES = 0.6
"""The args text, per JSON byte (measured 0.25-0.59)."""
CPU_ARGS_SHARE = 0.5
"""The part of the args text that is CPU ops' and Python functions' (measured 0.23-0.90)."""
FLOWS_SHARE = 0.2
"""The part of the columns that is launch flows (measured on the traces in ``tests/data``:
0.04-0.31, most 0.14-0.23; ``gen_trace``'s 0.22)."""
SAMPLE_BYTES = 2 << 20
"""The JSON read (inflated) from the start of the first file to tell how much of the trace
is python_function events (:func:`python_share`)."""
COMPRESSED = 0.1
"""Compressed args text, per plain byte (zlib level 1: about 10x on Kineto args)."""
BASE_BYTES = 64 << 20
"""The interpreter, numpy and msgspec: what an import costs before its first event."""
GZIP_RATIO = 8
"""A gzip file whose trailer cannot be trusted (over 4 GiB inflated) counts 8x its size."""

_UNITS = {
    "": 1, "b": 1, "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9,
    "t": 10**12, "tb": 10**12, "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40,
}  # fmt: skip


def parse_bytes(text: str) -> int:
    """A byte count from ``"5000000000"``, ``"500M"``, ``"5 GB"`` or ``"1GiB"``.

    Raises
    ------
    ValueError
        ``text`` is not a non-negative size.
    """
    m = re.fullmatch(r"\s*(\d+(?:\.\d*)?)\s*([A-Za-z]*)\s*", text)
    if m is None or m.group(2).lower() not in _UNITS:
        raise ValueError(f"not a size: {text!r} (examples: 5000000000, 500M, 5GB, 1GiB)")
    return int(float(m.group(1)) * _UNITS[m.group(2).lower()])


def parse_size(text: str, what: str = "--max-memory") -> int:
    """Bytes from ``512M``, ``8G``, ``1.5GiB`` or ``1000000`` (as :func:`parse_bytes`), more
    than 0.

    Raises
    ------
    BadInputError
        Not a size, or 0 (the message names ``what``).
    """
    try:
        size = parse_bytes(text)
    except ValueError:
        raise BadInputError(
            f"{what} {text!r}: expected a size such as 512M, 8G or 1.5GiB"
        ) from None
    if size <= 0:
        raise BadInputError(f"{what} {text!r}: must be more than 0 bytes")
    return size


def machine_memory() -> int:
    """The machine's physical memory in bytes (0 where the OS does not say)."""
    try:
        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, OSError, ValueError):  # pragma: no cover - not POSIX
        return 0


def memory_limit() -> int:
    """The limit an import keeps to: ``GPUVIZ_MAX_MEMORY``, else half the machine's RAM
    (0, no limit, where neither is known)."""
    value = os.environ.get(ENV, "").strip()
    if value:
        return parse_size(value, ENV)
    return machine_memory() // 2


def drop_from_env() -> tuple[str, ...]:
    """What to leave out, as :data:`DROP_ENV` says (unknown names ignored)."""
    named = os.environ.get(DROP_ENV, "").split(",")
    return tuple(d for d in DROP_ORDER if d in named)


def json_bytes(path: str) -> int:
    """The uncompressed size of a trace file: a gzip file's from its trailer (ISIZE, the size
    modulo 4 GiB; where that is below the compressed size, 8x the file), else the file's."""
    try:
        size = os.stat(path).st_size
        with open(path, "rb") as f:
            if f.read(2) != b"\x1f\x8b":
                return size
            f.seek(-4, os.SEEK_END)
            inflated = int.from_bytes(f.read(4), "little")
    except OSError:
        return 0
    return inflated if inflated >= size else size * GZIP_RATIO


class ImportPlan(NamedTuple):
    """What an import keeps, and why.

    A NamedTuple, not a dataclass: this module is on the path of a kept output
    (:mod:`gpuviz.trace.cache_memo`), where :mod:`dataclasses` (and its :mod:`inspect`) is a
    tenth of the process.

    Attributes
    ----------
    limit : int
        The memory limit in bytes (0: none).
    json_bytes : int
        The files' JSON, uncompressed (estimated for gzip files).
    full_bytes : int
        The estimated peak of the whole import.
    kept_bytes : int
        The estimated peak with ``drop`` left out.
    drop : tuple of str
        What is left out (names from :data:`DROP_ORDER`), first to last.
    """

    limit: int
    json_bytes: int
    full_bytes: int
    kept_bytes: int
    drop: tuple[str, ...] = ()

    @property
    def fits(self) -> bool:
        """Whether the estimate, after what is left out, is within the limit."""
        return not self.limit or self.kept_bytes <= self.limit


def python_share(path: str, sample: int = SAMPLE_BYTES) -> float:
    """The part of a trace file's events that are python_function ones, from its first
    ``sample`` bytes of JSON (0.0 where it cannot be read: the import then reports it).

    A with_stack trace of an H100 run (2,117 python_function events of 5,138): 0.48; one
    without: 0.0.
    """
    import gzip  # only here: the plan of a large import

    try:
        with open(path, "rb") as f:
            gz = f.read(2) == b"\x1f\x8b"
        with gzip.open(path, "rb") if gz else open(path, "rb") as f:
            head = f.read(sample)
    except (OSError, EOFError, gzip.BadGzipFile):
        return 0.0
    events = head.count(b'"ph"')
    return min(head.count(b'"python_function"') / events, 1.0) if events else 0.0


def estimate_bytes(
    json_size: int, compressed_args: bool, drop: Sequence[str] = (), python: float = 0.0
) -> int:
    """The estimated peak memory of importing ``json_size`` bytes of JSON, without ``drop``
    (``python``: the part of its events that are python_function ones)."""
    columns = COLUMN_BYTES * json_size
    args = ARGS_BYTES * json_size * (COMPRESSED if compressed_args else 1.0)
    if DROP_CPU_ARGS in drop:
        args *= 1.0 - CPU_ARGS_SHARE
    if DROP_FLOWS in drop:
        columns *= 1.0 - FLOWS_SHARE
    if DROP_PYTHON in drop:
        columns *= 1.0 - python
    return int(BASE_BYTES + columns + args)


def plan_import(
    paths: Sequence[str], compressed_args: bool, limit: int | None = None
) -> ImportPlan:
    """What an import of ``paths`` keeps within ``limit`` (default :func:`memory_limit`).

    Parameters
    ----------
    paths : sequence of str
        The trace's files.
    compressed_args : bool
        Whether the import compresses its args text (:func:`args_text.compression_for`).
    limit : int, optional
        Bytes; 0 for no limit.
    """
    limit = memory_limit() if limit is None else limit
    size = sum(json_bytes(str(p)) for p in paths)
    full = estimate_bytes(size, compressed_args)
    drop: tuple[str, ...] = ()
    kept = full
    python = -1.0  # read only when it matters
    for part in DROP_ORDER:
        if not limit or kept <= limit:
            break
        if part == DROP_PYTHON:
            python = python_share(str(paths[0])) if paths else 0.0
            if not python:  # none to leave out
                break
        drop += (part,)
        kept = estimate_bytes(size, compressed_args, drop, max(python, 0.0))
    return ImportPlan(limit, size, full, kept, drop)


def dropped_warning(
    plan: ImportPlan, cpu_args_rows: int, python_slices: int, launch_flows: int = 0
) -> str:
    """The import warning that says what was left out, and why.

    Parameters
    ----------
    plan : ImportPlan
    cpu_args_rows : int
        CPU ops and Python functions whose args text was left out.
    python_slices : int
        ``python_function`` slices left out.
    launch_flows : int
        Launch flow events left out.
    """
    parts = []
    if DROP_CPU_ARGS in plan.drop:
        parts.append(
            f"the args text of {cpu_args_rows:,} CPU ops and Python functions (their input "
            "shapes and types: no FLOPs for the roofline)"
        )
    if DROP_FLOWS in plan.drop and launch_flows:
        parts.append(
            f"{launch_flows:,} launch flow events (the arrows from CUDA calls to their kernels; "
            "the kernels still link to their launches by correlation id)"
        )
    if DROP_PYTHON in plan.drop and python_slices:
        parts.append(f"{python_slices:,} python_function slices")
    over = "" if plan.fits else "; it may still not fit"
    return (
        f"left out {' and '.join(parts)} to stay within the memory limit of "
        f"{_mib(plan.limit)} (the whole trace would take about {_mib(plan.full_bytes)}: "
        f"{_mib(plan.json_bytes)} of JSON){over}; raise it with --max-memory or "
        f"{ENV} to keep them"
    )


def _mib(n: int) -> str:
    return f"{n / (1 << 30):.1f} GiB" if n >= 1 << 30 else f"{n / (1 << 20):.0f} MiB"


__all__ = [
    "DROP_CPU_ARGS",
    "DROP_ENV",
    "DROP_FLOWS",
    "DROP_ORDER",
    "DROP_PYTHON",
    "ENV",
    "ImportPlan",
    "drop_from_env",
    "dropped_warning",
    "estimate_bytes",
    "json_bytes",
    "machine_memory",
    "memory_limit",
    "parse_bytes",
    "parse_size",
    "plan_import",
    "python_share",
]
