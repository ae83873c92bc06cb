"""Traces and snapshots that a server process has opened, kept for its next questions.

An agent asks several questions about one file: the overview, then its findings, then the
events of one range. Each file is read once per server process (and, for traces, through
:func:`~gpuviz.trace.kineto.load_trace`, whose on-disk cache serves the next process), and
what the analyses made of it (the advice, the summary, the snapshot figures) is kept with it.
A file that changed on disk is read again: "the same file" is the trace cache's own test
(:func:`~gpuviz.trace.cache_key.source_stat`: real path, size, modification and change times,
inode), so a rewrite that keeps the size and modification time (``cp -p``, ``touch -r``) is
seen. The last :data:`KEEP` files are kept; older ones are let go, so a long session does not
grow without end.

Tools run in worker threads. No lock is held while a file loads: the store's lock guards only
its table, where each part (the trace, the advice...) is a :class:`~concurrent.futures.Future`.
The first question for a part makes it; one that arrives meanwhile waits on the same future (one
load for both), and questions about other files are answered at once. A part that failed is
forgotten, so that the next question tries again.

An allocator snapshot is bounded before and while it loads: a file over
:data:`SNAPSHOT_MAX_BYTES` is refused unread, one whose pickle opens with something other than
a dict (a list, a string...: never a snapshot) is refused from its first bytes
(:func:`_not_a_dict`) rather than after unpickling all of it, and a read past
:data:`SNAPSHOT_MAX_SECONDS` is stopped (at the reader's next check, every 4 MiB of the file),
each with one sentence.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuviz.errors import BadInputError

if TYPE_CHECKING:
    from gpuviz.analysis.advisor import Advice
    from gpuviz.analysis.allocator import SnapshotFigures
    from gpuviz.analysis.breakdown_table import Breakdown
    from gpuviz.analysis.hardware import Hardware
    from gpuviz.analysis.summary import Summary
    from gpuviz.trace.allocator_columns import AllocatorSnapshot
    from gpuviz.trace.model import Trace

KEEP = 8
"""How many files a server keeps open."""


SNAPSHOT_MAX_BYTES = 2 << 30
"""The largest allocator snapshot file the server reads (real ones of 12M entries: about 1 GB)."""
SNAPSHOT_MAX_SECONDS = 120.0
"""How long a snapshot may take to read before it is refused."""


# Opcodes that open a pickle's top object when it is plain data but not a dict.
_NOT_DICT = {
    "EMPTY_LIST": "a list", "EMPTY_TUPLE": "a tuple", "EMPTY_SET": "a set", "NONE": "None",
    "NEWTRUE": "a bool", "NEWFALSE": "a bool", "INT": "a number", "BININT": "a number",
    "BININT1": "a number", "BININT2": "a number", "LONG": "a number", "LONG1": "a number",
    "LONG4": "a number", "FLOAT": "a number", "BINFLOAT": "a number", "STRING": "a string",
    "BINSTRING": "a string", "SHORT_BINSTRING": "a string", "UNICODE": "a string",
    "SHORT_BINUNICODE": "a string", "BINUNICODE": "a string", "BINUNICODE8": "a string",
    "BINBYTES": "bytes", "SHORT_BINBYTES": "bytes", "BINBYTES8": "bytes", "BYTEARRAY8": "bytes",
}  # fmt: skip


def _not_a_dict(path: Path) -> str | None:
    """What a pickle's top object is when its first opcodes show it is not a dict (a
    snapshot is one: ``EMPTY_DICT``, or ``MARK DICT`` in protocol 0); None when it may be one,
    or when the head cannot tell (the loader then says what is wrong, e.g. a class it names)."""
    import gzip
    import io
    import pickletools

    try:
        if path.name.lower().endswith(".gz"):
            with gzip.open(path, "rb") as f:
                head = f.read(4096)
        else:
            with open(path, "rb") as f:
                head = f.read(4096)
        ops = []
        for op, _, _ in pickletools.genops(io.BytesIO(head)):
            if op.name not in ("PROTO", "FRAME"):
                ops.append(op.name)
            if len(ops) == 2:
                break
    except (OSError, EOFError, ValueError):
        return None  # damaged or short: the loader's message is the better one
    if ops and ops[0] in _NOT_DICT:
        return f"{_NOT_DICT[ops[0]]} ({ops[0]})"
    if ops[:2] == ["MARK", "LIST"]:
        return "a list (MARK LIST)"
    return None


def _signature(path: Path) -> tuple[Any, ...]:
    """What changes when a file (or any trace file of a rank folder) changes: the trace
    cache's key of each (:func:`~gpuviz.trace.cache_key.source_stat`)."""
    from gpuviz.agents.confine import folder_files
    from gpuviz.trace.cache_key import source_stat

    files = folder_files(path) if path.is_dir() else [path]
    return tuple(source_stat(f) for f in files)


@dataclass
class _Entry:
    """One file's parts, made (or being made) for the file as ``signature`` describes it."""

    signature: tuple[Any, ...]
    parts: dict[str, Future[Any]] = field(default_factory=dict)


class Store:
    """Opened files and their analyses, by resolved path (see the module docstring).

    Parameters
    ----------
    keep : int
        How many files to keep.
    snapshot_max_bytes : int
        The largest snapshot file read.
    snapshot_max_seconds : float
        How long a snapshot may take to read.
    """

    def __init__(
        self,
        keep: int = KEEP,
        snapshot_max_bytes: int = SNAPSHOT_MAX_BYTES,
        snapshot_max_seconds: float = SNAPSHOT_MAX_SECONDS,
    ) -> None:
        self._keep = keep
        self._snapshot_max_bytes = snapshot_max_bytes
        self._snapshot_max_seconds = snapshot_max_seconds
        self._lock = threading.Lock()  # guards _items and loads, never held during a load
        self._items: OrderedDict[Path, _Entry] = OrderedDict()
        self.loads = 0
        """How many times a file was read (the tests check that a second question reads none)."""

    def _count_load(self) -> None:
        with self._lock:
            self.loads += 1

    def _get(self, path: Path, part: str, make: Callable[[], Any]) -> Any:
        sig = _signature(path)  # stat calls: outside the lock
        with self._lock:
            entry = self._items.get(path)
            if entry is None or entry.signature != sig:
                entry = _Entry(sig)
                self._items[path] = entry
            self._items.move_to_end(path)
            while len(self._items) > self._keep:
                self._items.popitem(last=False)
            future = entry.parts.get(part)
            mine = future is None
            if future is None:
                future = entry.parts[part] = Future()
        if mine:
            try:
                future.set_result(make())
            except BaseException as exc:  # waiters get it too; the next question tries again
                future.set_exception(exc)
                with self._lock:
                    if entry.parts.get(part) is future:
                        del entry.parts[part]
        return future.result()

    def trace(self, path: Path) -> Trace:
        """The trace of a file or rank folder."""

        def load() -> Trace:
            from gpuviz.analysis.compiled_regions import attach_sibling_compile_info
            from gpuviz.trace.graph_captures import load_with_captures

            self._count_load()
            # With its graph captures (capture_traces/ beside it), as `gpuviz breakdown` reads it.
            trace = load_with_captures(path)
            # A compiled model's NAME.compile/ beside it: kernels on the model's modules/lines.
            attach_sibling_compile_info(trace, path)
            return trace

        return self._get(path, "trace", load)

    def advice(self, path: Path) -> Advice:
        """The advisor's breakdown and findings of a trace."""

        def make() -> Advice:
            from gpuviz.analysis.advisor import advise

            return advise(self.trace(path))

        return self._get(path, "advice", make)

    def summary(self, path: Path) -> Summary:
        """``gpuviz summary``'s figures of a trace."""

        def make() -> Summary:
            from gpuviz.analysis.summary import summarize

            return summarize(self.trace(path))

        return self._get(path, "summary", make)

    def snapshot(self, path: Path) -> AllocatorSnapshot:
        """An allocator snapshot, read without loading any class."""

        def load() -> AllocatorSnapshot:
            return self._load_snapshot(path)

        return self._get(path, "snapshot", load)

    def _load_snapshot(self, path: Path) -> AllocatorSnapshot:
        from gpuviz.trace.allocator_snapshot import load_snapshot
        from gpuviz.trace.errors import ImportCancelledError

        size = path.stat().st_size
        if size > self._snapshot_max_bytes:
            raise BadInputError(
                f"{path.name}: {size:,} bytes, larger than the {self._snapshot_max_bytes:,} "
                "bytes this server reads of a snapshot; read it with gpuviz memory instead."
            )
        what = _not_a_dict(path)
        if what is not None:
            raise BadInputError(
                f"{path.name}: not a CUDA allocator snapshot: its pickle holds {what}, not the "
                "dict torch.cuda.memory._dump_snapshot writes; refused from its first bytes."
            )
        self._count_load()
        deadline = time.monotonic() + self._snapshot_max_seconds
        try:
            return load_snapshot(path, cancelled=lambda: time.monotonic() >= deadline)
        except ImportCancelledError:
            raise BadInputError(
                f"{path.name}: reading it took more than {self._snapshot_max_seconds:g} s, "
                "so it was stopped (not an allocator snapshot, or too large to serve); read it "
                "with gpuviz memory instead."
            ) from None

    def snapshot_figures(self, path: Path) -> SnapshotFigures:
        """``gpuviz memory``'s figures of a snapshot."""

        def make() -> SnapshotFigures:
            from gpuviz.analysis.allocator import snapshot_figures

            return snapshot_figures(self.snapshot(path))

        return self._get(path, "figures", make)

    def hardware(self, path: Path) -> Hardware:
        """The roofline figures and step MFU of a trace, by ``gpuviz summary``'s own function
        (:func:`~gpuviz.analysis.hardware.hardware`, the device's listed peaks)."""

        def make() -> Hardware:
            from gpuviz.analysis.hardware import hardware

            return hardware(self.trace(path))

        return self._get(path, "hardware", make)

    def breakdown(self, path: Path, by: str) -> Breakdown:
        """``gpuviz breakdown``'s table of a trace, by ``by``, with its roofline columns
        (``op-shape``) or MFU (``step``) as the CLI adds them."""

        def make() -> Breakdown:
            from gpuviz.analysis.breakdown import breakdown
            from gpuviz.analysis.hardware import annotate_breakdown

            table = breakdown(self.trace(path), by)
            if by in ("op-shape", "step"):
                annotate_breakdown(table, self.hardware(path))
            return table

        return self._get(path, f"breakdown:{by}", make)
