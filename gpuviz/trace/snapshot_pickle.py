"""Unpickling allocator snapshots without running anything: an unpickler that loads no class.

A pickle can name any importable function and call it while loading (``os.system`` is the
classic). :func:`load_snapshot_data` uses an unpickler whose ``find_class`` and
``persistent_load`` always refuse, so a file may only hold dicts, lists, tuples, strings,
numbers, booleans and None: all that ``torch.cuda.memory._dump_snapshot`` writes (checked on
torch 2.11 training and out-of-memory snapshots: no GLOBAL, REDUCE or similar opcode). A file
that names a class is refused with the class it would have loaded, and nothing in it runs.
gzip-compressed files (``.pickle.gz``) are read too.

No file may crash the reader, and none may take memory out of proportion to it:

- Nesting. Unpickling is iterative, but hashing a tuple is a C recursion with no guard: a dict
  key or set member that is a 1,000,000-deep nested tuple (1 MB of ``TUPLE1`` opcodes) overflows
  the C stack (SIGSEGV; ``pickle.loads`` does the same). Only tuples chain that way (a list or
  dict in the chain stops the hash with a TypeError, a frozenset caches its members' hashes), so
  the depth of any tuple is at most the number of tuple opcodes, which is at most the number of
  bytes that could be one (``t`` and 0x85-0x87). The reader counts those bytes before the
  unpickler sees them (a 100k-entry, 9 MB snapshot has 12,800; counting takes 2.3 ms) and
  unpickles in a thread whose stack holds 16 million levels (4 GiB of reserved address space,
  touched only as deep as a file really nests); a file with more such bytes is refused (a real
  1 GB snapshot, 12M entries, has 5.9 million: the bytes of its ints and memo indices). An
  exact depth pass over the opcodes in Python was measured at 8x the unpickling (1.10 s against
  0.13 s on that snapshot), so it is not done. Past the unpickler, gpuviz hashes no value from
  the file before checking that it is a string, and every other path a deep value can reach
  (repr, comparison, Python code) has a recursion guard: its ``RecursionError`` is bad input.
- Memory. Each byte that could make a container counts as one (an empty list is 56 bytes, so a
  file of ``]`` takes 56 times its size), each that could be a tuple opcode as the stack one
  level of hashing may take too, each other byte as :data:`BYTES_PER_BYTE`; a file whose
  estimate passes the memory limit (``GPUVIZ_MAX_MEMORY``, else half the machine's memory) is
  refused as it is read (a 100k-entry snapshot: 240k such bytes in 8.9 MB, an estimate of
  160 MB for the 55 MB it takes; a real 1 GB one: 20 GB, for the 3 GB gpuviz takes to read it
  and the 6.2 GB ``pickle.load`` takes).
- Size. A string or bytes object longer than :data:`MAX_OBJECT_BYTES`, or a gzip stream that
  inflates to more than :data:`MAX_GZIP_RATIO` times its file (plus :data:`GZIP_SLACK_BYTES`), is
  refused before it is read into memory: a 13 MB ``.pickle.gz`` holding 3 GB of padding in one
  string took 5.9 GB. Real snapshots hold short strings (file and function names) and inflate
  about 12x (snap_train.pickle.gz: 54,683 bytes to 657,678).

The garbage collector is paused while the unpickler builds its millions of containers: they
are all reachable, so a collection could free nothing, and pausing it saves about a third of
the load time (measured here on a 100k-entry snapshot: 204 ms with, 133 ms without).
"""

from __future__ import annotations

import gzip
import pickle
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gpuviz.trace.errors import ImportCancelledError, TraceFormatError
from gpuviz.trace.gcpause import gc_paused
from gpuviz.trace.memory_budget import ENV, memory_limit

MAX_OBJECT_BYTES = 256 << 20
"""The longest string or bytes object (and pickle frame) a snapshot may hold."""
MAX_GZIP_RATIO = 100
"""How many times its file a ``.pickle.gz`` may inflate to (real ones: about 12)."""
GZIP_SLACK_BYTES = 64 << 20
"""Inflated bytes allowed beyond the ratio (a small file of highly repetitive history)."""
STACK_BYTES = 4 << 30
"""The unpickling thread's stack: reserved address space, touched only as deep as a file nests."""
STACK_BYTES_PER_LEVEL = 256
"""Stack one level of tuple hashing may take (measured: about 50 bytes on CPython 3.11; x5)."""
BYTES_PER_CONTAINER = 72
"""Memory an empty list, dict or set (and its slot) may take, for the memory estimate."""
BYTES_PER_BYTE = 16
"""Memory one byte of pickle may become apart from containers (real snapshots: about 6)."""
# Every byte but those that could be TUPLE, TUPLE1, TUPLE2 or TUPLE3 (and, for the memory
# estimate, any opcode that makes a container): deleting the others and taking the length
# counts them in one pass (2.3 ms for 9 MB; four bytes.count took 16 ms)
_TUPLE_OPCODES = b"t\x85\x86\x87"
_CONTAINER_OPCODES = _TUPLE_OPCODES + b"]}ld\x8f\x91"
_NOT_TUPLE_OPCODES = bytes(b for b in range(256) if b not in _TUPLE_OPCODES)
_NOT_CONTAINER_OPCODES = bytes(b for b in range(256) if b not in _CONTAINER_OPCODES)


def memory_budget_bytes() -> int:
    """The memory a snapshot may take to read: ``GPUVIZ_MAX_MEMORY``, else half the machine's
    (16 GiB where neither is known)."""
    return memory_limit() or 16 << 30


class _TooLarge(Exception):
    """A refusal raised from inside the unpickler's reads (it is not a pickle error)."""


class _WatchFailed(Exception):
    """An error of the caller's ``watch``, carried out through the unpickler as it is."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


class _RefusedGlobal(Exception):
    def __init__(self, module: str, name: str) -> None:
        super().__init__(f"{module}.{name}")
        self.module = module
        self.name = name


class _NoGlobalsUnpickler(pickle.Unpickler):
    """An unpickler that loads no class and calls no function: plain data only.

    Every opcode that could run code (GLOBAL, STACK_GLOBAL, INST, OBJ, REDUCE, NEWOBJ, BUILD on
    an object, EXT1/2/4) first needs a callable, and callables only come from ``find_class``
    (or ``persistent_load``). Both refuse, so nothing named in the file is ever imported or run.
    """

    def find_class(self, module: str, name: str) -> Any:
        raise _RefusedGlobal(module, name)

    def persistent_load(self, pid: Any) -> Any:
        raise _RefusedGlobal("persistent id", repr(pid)[:60])


def _open_bytes(path: Path) -> Any:
    f = open(path, "rb")
    if f.peek(2)[:2] == b"\x1f\x8b":
        return gzip.GzipFile(fileobj=f, mode="rb")
    return f


class _Reader:
    """The unpickler's input, read through Python methods.

    The C unpickler holds the GIL for as long as it runs, unless it calls back into Python:
    with reads that are Python calls (one per 64 KiB pickle frame), another thread (the app's
    GUI) gets the GIL between frames, and the caller gets progress and can cancel.
    """

    def __init__(
        self,
        raw: Any,
        total: int,
        progress: Callable[[float], None] | None,
        cancelled: Callable[[], bool] | None,
        watch: Callable[[Any, bytes], None] | None = None,
    ) -> None:
        self.raw = raw
        self.watch = watch
        self.unpickler: Any = None
        self.total = max(total, 1)
        self.progress = progress
        self.cancelled = cancelled
        self.done = 0
        self._next_report = 0
        self.gzip = getattr(raw, "fileobj", None) is not None
        self.max_bytes = total * MAX_GZIP_RATIO + GZIP_SLACK_BYTES if self.gzip else None
        self.max_depth = STACK_BYTES // STACK_BYTES_PER_LEVEL  # as the thread's stack holds
        self.tuple_ops = 0
        self.containers = 0
        self.memory_budget = memory_budget_bytes()

    def _check_request(self, n: int) -> None:
        # the unpickler asks for a whole string, bytes object or frame at once: refuse a huge
        # one before it is read (a readinto's buffer is allocated but not yet touched)
        if n > MAX_OBJECT_BYTES:
            raise _TooLarge(
                f"holds a string, bytes object or frame of {n:,} bytes (more than "
                f"{MAX_OBJECT_BYTES >> 20} MiB): not an allocator snapshot"
            )

    def _account(self, data: Any, n: int) -> None:
        # every byte that could be a tuple opcode counts as one level the hashing may need
        view = data if isinstance(data, bytes) else bytes(data[:n])
        kept = view.translate(None, _NOT_CONTAINER_OPCODES)
        self.containers += len(kept)
        self.tuple_ops += len(kept.translate(None, _NOT_TUPLE_OPCODES))
        if self.tuple_ops > self.max_depth:
            raise _TooLarge(
                f"may nest tuples {self.tuple_ops:,} deep (more than {self.max_depth:,}, "
                "which could not be read safely): not an allocator snapshot"
            )
        self.done += n
        # a byte of "]" is a 56-byte list: a small file of them is a memory bomb
        estimate = (
            self.containers * BYTES_PER_CONTAINER
            + self.tuple_ops * STACK_BYTES_PER_LEVEL
            + self.done * BYTES_PER_BYTE
        )
        if estimate > self.memory_budget:
            raise _TooLarge(
                f"may take more than {self.memory_budget / (1 << 30):.1f} GiB to read (the "
                f"memory limit, {ENV} or half this machine's memory: up to "
                f"{self.containers:,} lists, dicts or tuples in {self.done:,} bytes so far); "
                "refused before it is"
            )
        if self.max_bytes is not None and self.done > self.max_bytes:
            raise _TooLarge(
                f"inflates to more than {self.max_bytes:,} bytes ({MAX_GZIP_RATIO}x its "
                "compressed size): a gzip bomb, not an allocator snapshot"
            )
        if self.done >= self._next_report:
            self._next_report = self.done + (1 << 22)
            if self.cancelled is not None and self.cancelled():
                raise ImportCancelledError("snapshot")
            if self.progress is not None:
                # a gzip file's progress is where its compressed stream is
                inner = getattr(self.raw, "fileobj", None)
                at = inner.tell() if inner is not None else self.done
                self.progress(min(at / self.total, 1.0))
        if self.watch is not None:
            try:
                self.watch(self.unpickler, view)
            except Exception as exc:  # not the unpickler's: raised to the caller as it is
                raise _WatchFailed(exc) from exc

    def read(self, n: int = -1) -> bytes:
        self._check_request(n if n >= 0 else MAX_OBJECT_BYTES + 1)
        data = self.raw.read(n)
        self._account(data, len(data))
        return data

    def readinto(self, buf: Any) -> int:
        view = memoryview(buf).cast("B")
        self._check_request(len(view))
        n = self.raw.readinto(view)
        self._account(view, n or 0)
        return n

    def readline(self) -> bytes:
        data = self.raw.readline(MAX_OBJECT_BYTES + 1)
        self._check_request(len(data) - 1)
        self._account(data, len(data))
        return data


_stack_lock = threading.Lock()


def _load_in_deep_stack(reader: _Reader) -> Any:
    """Unpickle from ``reader`` in a thread whose stack holds :data:`STACK_BYTES`.

    The reader refuses a file that could nest tuples deeper than that stack holds, so hashing
    the deepest tuple the file can hold cannot overflow it. Where a stack that large cannot be
    had (a system that commits thread stacks up front), a quarter of it is tried, and so on,
    with the reader's limit lowered to match. The caller waits; exceptions are raised in it.
    """
    out: list[Any] = []

    def run() -> None:
        try:
            unpickler = _NoGlobalsUnpickler(reader)
            reader.unpickler = unpickler
            out.append(("ok", unpickler.load()))
        except BaseException as exc:  # handed to the caller, which raises it
            out.append(("error", exc))
        finally:
            # the unpickler holds the reader's methods: a cycle (the GC is paused) would keep
            # its memo, every object it made, alive
            reader.unpickler = None

    stack = STACK_BYTES
    with _stack_lock:  # stack_size() is process-wide: set it only for this thread
        old = threading.stack_size()
        try:
            while True:
                reader.max_depth = stack // STACK_BYTES_PER_LEVEL
                try:
                    threading.stack_size(stack)
                    # a daemon: Ctrl-C in the caller must not wait for the unpickling to end
                    worker = threading.Thread(target=run, name="gpuviz-unpickle", daemon=True)
                    worker.start()
                    break
                except (RuntimeError, ValueError, MemoryError):
                    if stack <= 1 << 24:
                        raise
                    stack //= 4
        finally:
            threading.stack_size(old)
    worker.join()
    kind, value = out[0]
    if kind == "error":
        raise value
    return value


def load_snapshot_data(
    path: str | Path,
    progress: Callable[[float], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    watch: Callable[[Any, bytes], None] | None = None,
) -> dict[str, Any]:
    """Unpickle a snapshot file without loading any class: the raw dict.

    Parameters
    ----------
    path
        The file (plain or gzip-compressed pickle).
    progress
        Called with the fraction of the file read, every 4 MiB.
    cancelled
        Checked every 4 MiB; when it returns True, ``ImportCancelledError`` is raised.
    watch
        Called after each read of the file (a 64 KiB pickle frame) with the unpickler and the
        bytes read, while the unpickler runs: it may look at the objects made so far (through
        the unpickler's memo). What it raises is raised here as it is.

    Raises
    ------
    TraceFormatError
        Not a pickle, truncated, empty, a pickle of something else, or a pickle that names a
        class or function (the message names it; nothing from the file ran).
    """
    p = Path(path)
    src = str(path)
    try:
        size = p.stat().st_size
    except OSError as exc:
        raise TraceFormatError(src, "", exc.strerror or "cannot be read") from None
    if p.is_dir():
        raise TraceFormatError(src, "", "is a folder, not a snapshot file")
    if size == 0:
        raise TraceFormatError(src, "", "empty file (expected a CUDA allocator snapshot pickle)")
    try:
        with _open_bytes(p) as f, gc_paused():
            data = _load_in_deep_stack(_Reader(f, size, progress, cancelled, watch))
    except _WatchFailed as exc:
        raise exc.error from None
    except _TooLarge as exc:
        raise TraceFormatError(src, "", str(exc)) from None
    except _RefusedGlobal as exc:
        raise TraceFormatError(
            src,
            "",
            f"refused: the pickle would load {exc.module}.{exc.name}; an allocator snapshot "
            "holds plain data only, so nothing from this file was run",
        ) from None
    except EOFError:
        with open(p, "rb") as head:
            gz = head.read(2) == b"\x1f\x8b"
        what = "truncated or damaged gzip data" if gz else "truncated: the pickle ends early"
        raise TraceFormatError(src, "", what) from None
    except gzip.BadGzipFile as exc:
        raise TraceFormatError(src, "", f"not a gzip file ({exc})") from None
    except pickle.UnpicklingError as exc:
        msg = str(exc)
        if "truncated" in msg:
            raise TraceFormatError(src, "", "truncated: the pickle ends early") from None
        raise TraceFormatError(src, "", f"not a pickle ({msg})") from None
    except (OSError, ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:
        raise TraceFormatError(src, "", f"not a readable pickle ({exc})") from None
    except (MemoryError, RecursionError) as exc:
        raise TraceFormatError(src, "", f"not a readable pickle ({type(exc).__name__})") from None
    if not isinstance(data, dict) or not ("segments" in data or "device_traces" in data):
        raise TraceFormatError(
            src,
            "",
            f"not a CUDA allocator snapshot: a pickle of {_kind_text(data)}; expected a dict "
            "with 'segments' and 'device_traces' (torch.cuda.memory._dump_snapshot)",
        )
    return data


def _kind_text(data: Any) -> str:
    if isinstance(data, dict):
        keys = ", ".join(_short_repr(k) for k in list(data)[:4])
        return f"a dict with keys {keys}" if keys else "an empty dict"
    return f"a {type(data).__name__}"


def _short_repr(value: Any) -> str:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return repr(value)[:40]
    return f"a {type(value).__name__}"  # a nested key's repr could recurse as deep as it nests
