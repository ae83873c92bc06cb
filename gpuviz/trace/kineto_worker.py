"""Decoders of chunks of Kineto events: child processes, and one in the importer's own process.

msgspec holds the GIL while it decodes, so threads cannot share that work; processes can.
When an import is large enough and cores are idle (:func:`worker_count`), the importer starts
children, one per idle core besides its own, and decodes chunks itself too
(:class:`LocalDecoder`) whenever every child is busy. On Linux the children are forked from
the importer (ready in a few ms, its modules shared); elsewhere they are spawned as
``python -m gpuviz.trace.kineto_worker`` (:func:`start_method`). Chunks of
all the files of a trace go through the same decoders, so the ranks of a folder decode in
parallel.

Every decoder numbers symbols, lanes and tracks its own way (:class:`ChunkDecoder`) and says
what it numbered anew with each reply; the importer merges the replies in file order and
renumbers them into its own ids (:meth:`gpuviz.trace.kineto_decode.FileReader.merge`), so that
ids, warnings and error messages come out as they would from one process. A decoder handles
only clean chunks: anything odd (values of the wrong type, skipped events, errors, ``B``/``E``
events) is answered "not done", and the importer reads that chunk itself. Metadata events
(``M``: process and thread names, in every file's first chunk) come back with the reply.

In an import of several files (a rank folder), each file up to :data:`WHOLE_FILE_MAX_BYTES`
goes to one child whole: the child scans and decodes it, and replies with the columns of
every chunk, in order, and the text of any chunk it did not take (which the importer reads
itself, as above). The importer then only merges, once per file.

A chunk of an uncompressed file goes to the child as where its text stands in the file (its
span), and the child reads it from there; any other chunk's JSON text goes through a scratch
file (memory-backed where Linux allows). The reply, a msgpack (msgspec) map of plain values
and raw array bytes, comes back through a scratch file too; the pipes carry only small
frames saying which file and slot (:mod:`gpuviz.trace.kineto_wire`). Neither
side ever waits for the other to drain a pipe. Nothing is pickled, and no code travels.

This module holds the processes: the importer's handle on each (:class:`Worker`), how a
forked one starts and ends, and the pool of them. How many (:func:`worker_count`) and how
they start (:func:`start_method`) are :mod:`gpuviz.trace.kineto_worker_sizing`'s; the child's
loop (:func:`serve`) is :mod:`gpuviz.trace.kineto_worker_child`'s; both are re-exported here.
The decoding itself is :class:`~gpuviz.trace.kineto_chunk_decoder.ChunkDecoder`'s.
"""

from __future__ import annotations

import collections
import contextlib
import os
import select
import signal
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

import msgspec
import numpy as np

from gpuviz.trace import args_text, memory_budget
from gpuviz.trace.kineto_chunk_decoder import ChunkDecoder
from gpuviz.trace.kineto_wire import (
    CHUNK,
    DEPTH,
    REPLY,
    REPLY_DECODER,
    SEND,
    SPAN,
    SPAN_HEAD,
    WHOLE_FILE,
    read_at,
    read_exact,
    read_records,
    scratch,
    write_all,
    write_at,
)

# Re-exported since the split of issue 48 (__all__; the private ones for the allocator and tests).
from gpuviz.trace.kineto_worker_child import _read_whole_file, _SpanReader, serve  # noqa: F401
from gpuviz.trace.kineto_worker_sizing import (
    BYTES_PER_WORKER,
    MAX_WORKERS,
    MIN_BYTES_DEFAULT,
    SPAWNED_BYTES_PER_WORKER,
    START_ENV,
    WHOLE_FILE_MAX_BYTES,
    _load_average,  # noqa: F401
    estimated_bytes,
    start_method,
    usable_cores,
    whole_file_max_bytes,
    worker_count,
)

if TYPE_CHECKING:  # subprocess loads where a child is spawned
    import subprocess

FILE_DEPTH = 2
"""Whole files handed to a child ahead of its replies."""


class Decoder:
    """The importer's side of a decoder: its numbering mapped to the importer's ids.

    Attributes
    ----------
    symbols : int64 array
        The decoder's symbol id -> the importer's.
    lanes, tracks : list of int
        The decoder's lane and track ids -> the importer's, for :attr:`file`.
    file : int
        The file whose lanes and tracks :attr:`lanes`/:attr:`tracks` map (-1: none yet).
    """

    def __init__(self) -> None:
        self.symbols = np.empty(0, dtype=np.int64)
        self.lanes: list[int] = []
        self.tracks: list[int] = []
        self.file = -1

    def forget(self) -> None:
        """Forget every map: the decoder numbers afresh from its next reply on."""
        self.symbols = np.empty(0, dtype=np.int64)
        self.start_file(-1)

    def start_file(self, file: int) -> None:
        """Forget the lane and track maps: the next reply numbers those of ``file`` afresh."""
        self.file = file
        self.lanes = []
        self.tracks = []


def _child_env() -> dict[str, str]:
    """The environment of a child: this process's, with its module path and one BLAS thread
    (unless the user set the BLAS threads).

    Children start without the ``site`` module (``python -S``): it takes about a sixth of a
    child's start (site-packages, ``.pth`` files, an editable install's finder), during which
    the importer decodes alone. They are handed this process's resolved ``sys.path`` instead,
    with the folder that holds gpuviz first.
    """
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    paths = [root, *(p for p in sys.path if p and p != root)]
    # A child decodes in one thread: without these, numpy's BLAS starts a thread per core in
    # each child as it is imported (15 children on a 16-core host: 240 threads, for nothing).
    blas = {
        k: os.environ.get(k, "1")
        for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
    }
    return dict(os.environ, PYTHONPATH=os.pathsep.join(paths), **blas)


class Worker(Decoder):
    """One child process: a pipe each way for control frames, scratch files for the data.

    A chunk is written to one of :data:`DEPTH` scratch files (or only its span in the file)
    and the child told where; it writes its reply to a scratch file of its own and says so on
    its pipe. Neither side ever waits for the other to drain a pipe, so the child decodes
    while the importer does its own share.

    Parameters
    ----------
    compress : bool
        Whether the child keeps its replies' args text as zlib blocks.
    start : {"spawn", "fork"}
        How the child starts (:func:`start_method`).
    inherited : sequence of int
        The importer's descriptors of the children started before this one, which a forked
        child closes (:attr:`fds`).
    drop : sequence of str
        What the child's decoder leaves out (:mod:`gpuviz.trace.memory_budget`).

    Attributes
    ----------
    queued : int
        Chunks sent and not yet answered.
    """

    def __init__(
        self,
        compress: bool = False,
        start: str = "spawn",
        inherited: Sequence[int] = (),
        drop: Sequence[str] = (),
    ) -> None:
        super().__init__()
        self.queued = 0
        self._sent = 0
        self._kinds: collections.deque[int] = collections.deque()  # of the jobs not answered
        self._in = [scratch() for _ in range(DEPTH)]
        self._out = [scratch() for _ in range(DEPTH)]
        try:
            if start == "fork":
                self.proc: subprocess.Popen[bytes] | _Forked = _Forked(
                    self._in, self._out, compress, inherited, drop
                )
            else:
                import subprocess

                fds = self._in + self._out
                self.proc = subprocess.Popen(
                    [sys.executable, "-S", "-m", "gpuviz.trace.kineto_worker", *map(str, fds)],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0, pass_fds=fds,
                    env=dict(
                        _child_env(),
                        **{args_text.ENV: "1" if compress else "0"},
                        **{memory_budget.DROP_ENV: ",".join(drop)},
                    ),
                )  # fmt: skip
        except BaseException:
            self._close_scratch()
            raise
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._stdin = self.proc.stdin.fileno()
        self._stdout = self.proc.stdout.fileno()

    @property
    def fds(self) -> list[int]:
        """The importer's ends of this child's pipes and scratch files (a child forked later
        closes its copies: see :class:`_Forked`)."""
        return [self._stdin, self._stdout, *self._in, *self._out]

    @property
    def can_take(self) -> bool:
        """Whether a chunk may be sent now (fewer than :data:`DEPTH` wait for replies)."""
        return self.queued < DEPTH

    @property
    def can_take_file(self) -> bool:
        """Whether a whole file may be sent now (fewer than :data:`FILE_DEPTH` wait)."""
        return self.queued < FILE_DEPTH

    def send(self, file: int, pieces: Sequence[Any]) -> None:
        """Hand a chunk of ``file`` to the child: its elements, in pieces (no brackets)."""
        self._send(file, [b"[", *pieces, b"]"], CHUNK)

    def send_span(self, file: int, path: str, offset: int, length: int) -> None:
        """Hand a chunk of ``file`` to the child as where its text stands in ``path``: the
        child reads it from the file (the page cache), so no scratch memory holds it (4 MB
        a child with chunks handed over as text)."""
        self._send(file, [SPAN_HEAD.pack(offset, length), os.fsencode(path)], SPAN)

    def send_file(self, file: int, path: str) -> None:
        """Hand the whole of ``file`` to the child, which reads it from ``path``."""
        self._send(file, [os.fsencode(path)], WHOLE_FILE)

    def _send(self, file: int, pieces: Sequence[Any], what: int) -> None:
        self._kinds.append(what)
        slot = self._sent % DEPTH
        n = write_at(self._in[slot], pieces)
        write_all(self._stdin, SEND.pack(n, file, slot, what))
        self._sent += 1
        self.queued += 1

    def wait(self, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` for the child's next reply; whether it is there."""
        return _readable([self._stdout], timeout_s)

    def ready(self) -> bool:
        """Whether the child's next reply can be read without waiting."""
        return self.wait(0)

    def receive(self) -> dict[str, Any]:
        """The child's reply to the oldest chunk it was sent (waits for it)."""
        head = read_exact(self._stdout, REPLY.size)
        if head is None:
            raise EOFError("the import worker exited")
        n, slot = REPLY.unpack(head)
        if slot >= DEPTH:
            raise EOFError("the import worker sent a bad frame")
        self.queued -= 1
        if self._kinds.popleft() != WHOLE_FILE:
            return msgspec.structs.asdict(REPLY_DECODER.decode(read_at(self._out[slot], n)))
        # A whole file's records are read one by one: read into one buffer, a 20 MB reply
        # made glibc raise its mmap threshold to that size, and the columns allocated after
        # it stayed in the heap for good (+220 MB peak RSS over a 64-rank import).
        *parts, reply = read_records(self._out[slot], n)
        # The scratch file's pages are memory (a memfd's are in no process's resident set):
        # a whole file's reply is several MB, and a slot would otherwise keep the largest
        # one written to it until the import ends (4 slots per child: about 25 MB each of 13
        # children on a 64-rank folder). Chunk replies are about a MB and reuse their pages.
        with contextlib.suppress(OSError):
            os.ftruncate(self._out[slot], 0)
        if reply.get("ok"):
            reply["parts"] = parts
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
        self._close_scratch()

    def ask_to_stop(self) -> None:
        """Tell the child to exit (see :meth:`close`); does not wait. Asked again, it does
        nothing."""
        stdin = self.proc.stdin
        if stdin is None or stdin.closed:
            # Asked already (the pool asks every child, then its reaper thread closes each):
            # the pipe's descriptor number may by now be another file's, and the stop frame
            # written there overwrote that file's first 17 bytes (a trace being copied, in CI).
            return
        try:
            write_all(stdin.fileno(), SEND.pack(0, 0, 0, CHUNK))
        except OSError:
            pass  # it is gone already, or close() kills it
        finally:
            stdin.close()

    def close(self) -> None:
        """Stop the child (at once if it does not stop when asked)."""
        import subprocess

        self.ask_to_stop()
        try:
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        finally:
            if self.proc.stdout is not None:
                self.proc.stdout.close()
            self._close_scratch()

    def _close_scratch(self) -> None:
        for fd in self._in + self._out:
            try:
                os.close(fd)
            except OSError:
                pass
        self._in = self._out = []


class _Forked:
    """A child forked from the importer, with the part of ``Popen``'s interface that
    :class:`Worker` uses.

    The child runs :func:`serve` and nothing else, then leaves by ``os._exit``. It needs no
    lock that another thread of the importer may hold at the fork (the app's Qt threads, a
    GPU driver's), only the interpreter's own, which fork resets, and numpy, msgspec and raw
    descriptors. It closes its copies of the importer's ends of the pipes and scratch files
    of the children started before it (``inherited``): otherwise a child would still hold
    an earlier one's input open after the importer closed it, and that one would never stop.

    A bare ``os.fork``, not ``multiprocessing``'s fork start: the child needs none of its
    bootstrap, and the importer none of its bookkeeping. On a 16-core H200 (2026-11-29),
    forking 14 bare children took 8-10 ms against 13-14 ms through ``multiprocessing``, and
    starting a 100k-kernel import's 14 workers 9-15 ms against 17-22 ms; the command no
    longer imports ``multiprocessing`` (with ``socket`` and ``selectors``) before its first
    fork. Whatever the child's loop raises, it ends by ``os._exit`` (:func:`_forked_main`).
    """

    def __init__(
        self,
        chunks: list[int],
        replies: list[int],
        compress: bool,
        inherited: Sequence[int],
        drop: Sequence[str] = (),
    ) -> None:
        to_r, to_w = os.pipe()
        from_r, from_w = os.pipe()
        close = [to_w, from_r, *inherited]
        self.returncode: int | None = None
        try:
            with warnings.catch_warnings():
                # Python 3.12 warns of any fork in a process that has threads (the app
                # imports on one): the child touches nothing they may hold (see above).
                warnings.simplefilter("ignore", DeprecationWarning)
                pid = os.fork()
        except BaseException:
            for fd in (to_r, to_w, from_r, from_w):
                os.close(fd)
            raise
        if pid == 0:  # the child: never returns
            _forked_main(to_r, from_w, chunks, replies, compress, close, tuple(drop))
        os.close(to_r)
        os.close(from_w)
        self.pid = pid
        self.stdin: Any = os.fdopen(to_w, "wb", buffering=0)
        self.stdout: Any = os.fdopen(from_r, "rb", buffering=0)

    def kill(self) -> None:
        """Stop the child now."""
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)

    def wait(self, timeout: float | None = None) -> int:
        """Wait for the child to exit; its exit code (raises ``TimeoutExpired`` on time)."""
        if self.returncode is None:
            if timeout is not None and not _exits_within(self.pid, timeout):
                import subprocess

                raise subprocess.TimeoutExpired("gpuviz import child", timeout)
            try:
                _, status = os.waitpid(self.pid, 0)
                self.returncode = os.waitstatus_to_exitcode(status)
            except ChildProcessError:  # reaped by someone else (a waitpid(-1) elsewhere)
                self.returncode = -1
        return self.returncode


def _exits_within(pid: int, timeout: float) -> bool:
    """Whether the child ``pid`` has exited, or does within ``timeout`` seconds (not reaped)."""
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):  # not Linux 5.3+: look every few ms
        import time

        deadline = time.monotonic() + timeout
        while True:
            try:
                if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                    return True
            except ChildProcessError:
                return True  # gone already: waitpid says so
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.002)
    try:
        return _readable([fd], timeout)
    finally:
        os.close(fd)


def _forked_main(
    stdin: int, stdout: int, chunks: list[int], replies: list[int], compress: bool,
    close: list[int], drop: tuple[str, ...] = (),
) -> NoReturn:  # fmt: skip
    """A forked child's life (see :class:`_Forked`): whatever happens, it ends here, by
    ``os._exit``, and never returns into the importer's code."""
    code = 1
    try:
        for fd in close:
            with contextlib.suppress(OSError):
                os.close(fd)
        code = serve(stdin, stdout, chunks, replies, ChunkDecoder(compress, drop))
    except BaseException:
        with contextlib.suppress(BaseException):
            import traceback

            traceback.print_exc()
            sys.stderr.flush()
    finally:
        os._exit(code)


def _readable(fds: Sequence[int], timeout_s: float) -> bool:
    """Whether any of ``fds`` can be read (or is closed) within ``timeout_s``.

    ``poll``, not ``select``: the importer's descriptors may be past ``select``'s 1024 (a test
    process with many files open), where ``select`` fails.
    """
    poller = select.poll()
    for fd in fds:
        poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
    try:
        return bool(poller.poll(max(0, int(timeout_s * 1000))))
    except (OSError, ValueError):
        return True  # reading tells what is wrong


class WorkerPool:
    """Children that take chunks in turn, started the way :func:`start_method` says.

    All start at once, before the importer reads anything. Started one at a time as the
    first chunks went out (tried on a 16-core H200), they cost the import more than they
    saved: each fork after the importer had filled its buffers made it copy the pages it
    then wrote (its reads of the file took 0.096 s instead of 0.056), and the children were
    half idle for the first 150 ms.
    """

    def __init__(self, n: int, compress: bool = False, drop: Sequence[str] = ()) -> None:
        self.workers: list[Worker] = []
        start = start_method()
        try:
            for _ in range(n):
                inherited = [fd for w in self.workers for fd in w.fds]
                self.workers.append(Worker(compress, start, inherited, drop))
        except OSError:  # no way to start a child here: whatever started is closed
            self.close()
            raise

    def idlest(self) -> Worker:
        """The child with the fewest chunks waiting."""
        return min(self.workers, key=lambda w: w.queued)

    def wait_any(self, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` for a reply from any child that has work; whether one is
        there (False at once when no child has any)."""
        busy = [w._stdout for w in self.workers if w.queued]
        return bool(busy) and _readable(busy, timeout_s)

    def close(self, wait: bool = True) -> None:
        """Stop every child: all are asked first, so that they exit side by side (waiting for
        15 children one after the other took a third of a 100k-kernel import on 16 cores).

        ``wait=False``: the children are waited for on a thread of their own, so that the
        import goes on while they exit (6-11 ms of a 100k-kernel import's 0.3 s on a 16-core
        H200, its 14 children unmapping their memory).
        """
        for w in self.workers:
            w.ask_to_stop()
        if wait:
            for w in self.workers:
                w.close()
            return
        import threading

        threading.Thread(
            target=_close_all, args=(list(self.workers),), name="gpuviz-import-reaper", daemon=True
        ).start()

    def kill(self) -> None:
        """Stop every child now."""
        for w in self.workers:
            w.kill()


def _close_all(workers: Sequence[Worker]) -> None:
    for w in workers:
        w.close()


class LocalDecoder(Decoder):
    """A decoder in the importer's own process, with a numbering of its own like a child's."""

    def __init__(self, compress: bool = False, drop: Sequence[str] = ()) -> None:
        super().__init__()
        self._state = ChunkDecoder(compress, drop)

    def decode(self, file: int, buf: bytes) -> dict[str, Any]:
        """Decode a chunk (a JSON array of events) of ``file`` now; the reply, as a child's."""
        return self._state.process(file, buf)

    def decode_file(
        self, file: int, path: str, cancelled: Callable[[], bool] | None = None
    ) -> dict[str, Any]:
        """Read and decode the whole of ``file`` now; the reply, as a child's (``cancelled``
        is polled between blocks)."""
        return self._state.read_file(file, path, cancelled)


def main(argv: list[str] | None = None) -> int:
    """A spawned child's loop (see :func:`serve`), on its standard input and output.

    ``argv``: the scratch files' descriptors, :data:`DEPTH` for chunks then as many for replies.
    """
    fds = [int(a) for a in (sys.argv[1:] if argv is None else argv)]
    return serve(sys.stdin.fileno(), sys.stdout.fileno(), fds[:DEPTH], fds[DEPTH:], ChunkDecoder())


__all__ = [
    "BYTES_PER_WORKER",
    "FILE_DEPTH",
    "MAX_WORKERS",
    "MIN_BYTES_DEFAULT",
    "SPAWNED_BYTES_PER_WORKER",
    "START_ENV",
    "WHOLE_FILE_MAX_BYTES",
    "Decoder",
    "LocalDecoder",
    "Worker",
    "WorkerPool",
    "estimated_bytes",
    "main",
    "serve",
    "start_method",
    "usable_cores",
    "whole_file_max_bytes",
    "worker_count",
]


if __name__ == "__main__":
    # Everything is handed over (replies are in the scratch files, acknowledged on the pipe):
    # skip the interpreter's teardown, which frees every module and object one by one.
    os._exit(main())
