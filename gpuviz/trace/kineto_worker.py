"""Child processes that decode chunks of a large Kineto file while the importer reads on.

msgspec holds the GIL while it decodes, so threads cannot share that work; processes can. For
a large file (hundreds of MB), :class:`WorkerPool` starts two children
(``python -m gpuviz.trace.kineto_worker``). The importer sends each a chunk of events in turn
and merges their replies in file order, so that ids, warnings and error messages come out as
they would from one process. A child handles only clean chunks: anything odd (values of the
wrong type, skipped events, errors, metadata events) is answered "not done", and the importer
reads that chunk itself.

The pipe protocol is length-prefixed msgpack (msgspec) frames of plain values and raw array
bytes: nothing is pickled, and no code travels.
"""

from __future__ import annotations

import contextlib
import os
import signal
import struct
import subprocess
import sys
from typing import IO, Any

import msgspec
import numpy as np

from gpuviz.trace.kineto_columns import ColumnBuilder
from gpuviz.trace.kineto_events import EVENTS, Interner
from gpuviz.trace.model import SymbolTable

_LEN = struct.Struct("<Q")
MIN_BYTES_DEFAULT = 384 << 20
"""Files this large (uncompressed, estimated) are read with child processes."""


def worker_count(path: str) -> int:
    """How many children to read ``path`` with: 0 for a small file.

    ``GPUVIZ_IMPORT_WORKERS`` sets the count (0 turns them off);
    ``GPUVIZ_IMPORT_WORKER_MIN_BYTES`` the size from which they are used.
    """
    try:
        n = int(os.environ.get("GPUVIZ_IMPORT_WORKERS", "2"))
        min_bytes = int(os.environ.get("GPUVIZ_IMPORT_WORKER_MIN_BYTES", str(MIN_BYTES_DEFAULT)))
        size = os.stat(path).st_size
        with open(path, "rb") as f:
            if f.read(2) == b"\x1f\x8b":
                size *= 8  # a Kineto trace compresses about tenfold
    except (OSError, ValueError):
        return 0
    return max(n, 0) if size >= min_bytes and (os.cpu_count() or 1) > 1 else 0


def _write(stream: IO[bytes], payload: bytes) -> None:
    stream.write(_LEN.pack(len(payload)))
    stream.write(payload)
    stream.flush()


def _read(stream: IO[bytes]) -> bytes | None:
    head = stream.read(_LEN.size)
    if len(head) < _LEN.size:
        return None
    (n,) = _LEN.unpack(head)
    data = stream.read(n)
    if len(data) < n:
        raise EOFError("the pipe closed inside a frame")
    return data


class Worker:
    """One child process and its pipes."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gpuviz.trace.kineto_worker"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        )  # fmt: skip
        # The child's own numbering of symbols, lanes and tracks -> the importer's.
        self.symbols = np.empty(0, dtype=np.int64)
        self.lanes: list[int] = []
        self.tracks: list[int] = []

    def send(self, chunk: bytes) -> None:
        """Hand a chunk (a JSON array of events) to the child."""
        assert self.proc.stdin is not None
        _write(self.proc.stdin, chunk)

    def receive(self) -> dict[str, Any]:
        """The child's reply to the chunk it was last sent."""
        assert self.proc.stdout is not None
        data = _read(self.proc.stdout)
        if data is None:
            raise EOFError("the import worker exited")
        reply: dict[str, Any] = msgspec.msgpack.decode(data)
        return reply

    def kill(self) -> None:
        """Stop the child now (the import is cancelled or failed: its work is not wanted)."""
        with contextlib.suppress(OSError):
            self.proc.kill()
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    def close(self) -> None:
        """Stop the child (at once if it does not stop when asked)."""
        try:
            assert self.proc.stdin is not None
            _write(self.proc.stdin, b"")
            self.proc.stdin.close()
            self.proc.wait(timeout=2)
        except (OSError, ValueError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        finally:
            if self.proc.stdout is not None:
                self.proc.stdout.close()


class WorkerPool:
    """Children that take chunks in turn."""

    def __init__(self, n: int) -> None:
        self.workers: list[Worker] = []
        try:
            for _ in range(n):
                self.workers.append(Worker())
        except OSError:  # no way to start a child here: whatever started is closed
            self.close()
            raise

    def close(self) -> None:
        """Stop every child."""
        for w in self.workers:
            w.close()

    def kill(self) -> None:
        """Stop every child now."""
        for w in self.workers:
            w.kill()


# --------------------------------------------------------------------------- the child


class _ChildState:
    """What the child has already told the importer about its own numbering."""

    def __init__(self) -> None:
        self.columns = ColumnBuilder("<import worker>", Interner(SymbolTable()))
        self.symbols = 0
        self.lanes = 0
        self.tracks = 0
        self.lane_gpu: set[int] = set()

    def process(self, buf: bytes) -> dict[str, Any]:
        r = self.columns
        r.clear_parts()
        try:
            events = EVENTS.decode(buf)
        except (msgspec.DecodeError, UnicodeDecodeError):
            return {"ok": False, "why": "decode"}
        except msgspec.ValidationError:
            return {"ok": False, "why": "odd"}
        except RecursionError:  # nested too deeply: the importer reads it and says where
            return {"ok": False, "why": "error"}
        try:
            r.add(events, 0, None)
        except Exception:  # the importer reads this chunk itself, and reports what is wrong
            return {"ok": False, "why": "error"}
        if r.warnings.count or r.warnings.samples or r.meta_events or r.begin_end:
            return {"ok": False, "why": "odd"}
        t = r.tracks
        symbols = r.it.symbols.strings[self.symbols :]
        self.symbols += len(symbols)
        lanes = list(t.lanes)[self.lanes :]
        self.lanes += len(lanes)
        tracks = [
            [*key, *t.track_lane.get(v, (-1, -1))]
            for key, v in list(t.tracks.items())[self.tracks :]
        ]
        self.tracks += len(tracks)
        new_gpu = [[lane, tr] for lane, tr in t.lane_gpu.items() if lane not in self.lane_gpu]
        self.lane_gpu.update(lane for lane, _ in new_gpu)
        cols = {
            name: {c: [str(parts[0].dtype), b"".join(p.tobytes() for p in parts)]
                   for c, parts in table.items() if parts}
            for name, table in r.tables
        }  # fmt: skip
        lengths = np.concatenate(r.arg_lengths) if r.arg_lengths else np.empty(0, np.int64)
        return {
            "ok": True, "n": len(events), "symbols": symbols, "lanes": [list(k) for k in lanes],
            "tracks": tracks, "lane_gpu": new_gpu, "cols": cols, "blob": bytes(r.blob),
            "arg_lengths": lengths.astype(np.int64).tobytes(),
        }  # fmt: skip


def main() -> int:
    """The child's loop: a chunk in, its columns out, until an empty frame or end of input."""
    import gc

    gc.disable()  # as in the importer: many short-lived objects, no cycles
    # Ctrl-C reaches the whole process group: the importer decides, and stops us.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    state = _ChildState()
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        buf = _read(stdin)
        if not buf:
            return 0
        _write(stdout, msgspec.msgpack.encode(state.process(buf)))


if __name__ == "__main__":
    sys.exit(main())
