"""The files of a trace, read in order, their chunks decoded on every core the import may use.

:func:`read_files` is what the importer calls. A small import is read in this process, file
by file (:meth:`FileReader.read`). A large one (:func:`~gpuviz.trace.kineto_worker.worker_count`)
goes through one pipeline for all its files: the scanner hands out chunks in file order; each
goes to the child with the fewest chunks waiting, or, when every child already has
:data:`~gpuviz.trace.kineto_wire.DEPTH` waiting, is decoded at once in this process
(:class:`~gpuviz.trace.kineto_worker.LocalDecoder`). In an import of several files, each file
up to :func:`~gpuviz.trace.kineto_worker.whole_file_max_bytes` is handed out whole instead: its
decoder scans it too, and the importer only merges it (:meth:`FileReader.merge_file`); the
last files that would not make a full round of the decoders go chunk by chunk instead
(:func:`chunked_tail`), and with more than :data:`READS_FILES_UP_TO` children the importer
waits for a child's room rather than read a whole file itself. Replies
are merged strictly in file order (:meth:`FileReader.merge`), so ids, warnings and errors are
those of a plain sequential read.

On a 16-core host (H100 machine, 64 rank files of 13 MB), the importer's own share was what
15 children waited for: scanning, shipping and merging 900 chunks, and waiting for the
children to exit one after the other. With whole files, each sent back in one reply, the
children stopped side by side and the args text compressed in the children, the folder
imports in 0.13-0.15x json.load's time with forked children (0.17-0.18x spawned, as before).

A single file of 100k kernels (166 MB) on that host, with 7 forked children: 0.55-0.72 s in
all (json.load: 2.9-3.5 s); the importer's own share is the assembly (0.14 s), the scan
(0.08 s), taking in and merging the replies (0.09 s) and the summary (0.07 s), and the
children answer from 30 ms on. Spawned children answered only from 0.34-0.6 s on, while the
importer decoded alone: 1.2-1.5 s in all. On a 16-core H200 (2026-11-29), with 14 children,
a scanner that reads only the ends of the file's blocks (the children read the chunks by
span) and an importer that waits for a child's room rather than decode a chunk itself, the
first 57 chunks are out within 3 ms of the children's start and the 14 stay 13 busy to the
end: the decoding takes 0.19-0.21 s (``benchmarks/startup_timeline.py``).

Where the time goes (cProfile, one process, the 100k-kernel synthetic trace of
``benchmarks/gen_trace.py``, 166 MB, 585k events, on a shared 2-core box): msgspec's decode
of the events and their args 29 %; the per-field passes (``np.fromiter`` over the structs)
28 %, the rest of the column building 14 %; joining chunk and args text 5 %; freeing the
chunks' structs 4 %; reading the file 2 %; assembling the Trace (joins, the slice sort,
stacking rows) 8 %; the summary 3 %. Everything but the scanning, the merge, the assembly and
the summary splits across processes. What stays in the importer, measured as its own CPU time
with one child (its own decoding left out): 0.45 s at 100k kernels (assembly 0.13, merging
replies 1 ms a chunk, summary 0.05, handing chunks out and reading them 0.1), 3.3 s for 64
ranks of 8000 kernels sent chunk by chunk (assembly 1.1, summary 0.45, merging 0.4; a rank
file's metadata chunks are no longer decoded again here). So with many cores the importer
is the bound: about a chunk a millisecond, enough for 11-15 children.
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from gpuviz.trace.args_text import TextWriter, compression_for
from gpuviz.trace.errors import ImportCancelledError, TraceFormatError
from gpuviz.trace.jsonscan import Chunk, EventChunks
from gpuviz.trace.kineto_decode import FileColumns, FileReader, Restart
from gpuviz.trace.kineto_events import Interner
from gpuviz.trace.kineto_worker import (
    FILE_DEPTH,
    Decoder,
    LocalDecoder,
    Worker,
    WorkerPool,
    estimated_bytes,
    whole_file_max_bytes,
    worker_count,
)

MAX_AHEAD = 6
"""Chunks decoded ahead of the oldest unmerged one, per decoder (bounds the memory they hold)."""
WAIT_S = 0.05
"""While waiting for a child's whole file, the import's cancel is polled this often."""
READS_FILES_UP_TO = 3
"""With at most this many children the importer reads whole files (and decodes chunks) too,
when every child has :data:`~gpuviz.trace.kineto_worker.FILE_DEPTH` files (or
:data:`~gpuviz.trace.kineto_wire.DEPTH` chunks) waiting (a quarter or more of the decoding).
With more it only hands files out and merges: on a 16-core H200, a file of a 64-rank folder
read here (1.4-2 s) kept the importer from handing out the next ones while 15 children ran
dry, twice an import (the decoding ended at 11.9 s, its children's last files at 9.5 s)."""


def read_files(
    paths: Sequence[str],
    interner: Interner,
    on_read: Sequence[Callable[[int], None] | None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    after_file: Callable[[], None] | None = None,
    drop: Sequence[str] = (),
    meanwhile: Sequence[Callable[[], object]] = (),
) -> list[FileColumns]:
    """Read the files of one trace, in order, decoding on as many cores as it pays to.

    Parameters
    ----------
    paths : sequence of str
        The files (one per rank in a folder).
    interner : Interner
        The trace's symbols.
    on_read : sequence of callable, optional
        Per file: told how many of its bytes were read so far.
    cancelled : callable, optional
        Polled between blocks (raises :class:`ImportCancelledError` when it returns True).
    after_file : callable, optional
        Called once each file is done (the importer gives freed memory back there).
    drop : sequence of str
        What to leave out to fit the memory limit (:mod:`gpuviz.trace.memory_budget`).
    meanwhile : sequence of callable, optional
        Pieces of the caller's own work, each run once while the children decode, where the
        importer would wait for them (see :class:`_Meanwhile`); never where there are none.

    Returns
    -------
    list of FileColumns
        One per file, in the order given.
    """
    reports = list(on_read) if on_read is not None else [None] * len(paths)
    sizes = [estimated_bytes(str(p)) for p in paths]
    workers = worker_count(sum(sizes))
    from gpuviz.trace import cluster

    on = cluster.active() if len(paths) > 1 else None
    # The args text of every file, one after another: never joined.
    blob = TextWriter(compress=compression_for(len(paths), workers if on is None else 2))
    readers = [
        FileReader(str(p), interner, r, cancelled, blob, drop) for p, r in zip(paths, reports)
    ]
    if on is not None:  # --cluster: each file decoded by a worker, merged here in order
        from gpuviz.trace.cluster_decode import read_on_cluster

        return read_on_cluster(on, readers, after_file)
    out: list[FileColumns | None] = [None] * len(readers)
    start = 0
    side = _Meanwhile(meanwhile)
    while start < len(readers):
        if workers:
            most = whole_file_max_bytes(sum(sizes), workers + 1)
            whole = [len(paths) > 1 and size <= most for size in sizes]
            whole = chunked_tail(whole, workers)
            start = _Pipeline(readers, out, workers, after_file, whole, side).run(start)
        else:
            out[start] = readers[start].read()
            if after_file is not None:
                after_file()
            start += 1
    return [c for c in out if c is not None]


def chunked_tail(whole: list[bool], workers: int) -> list[bool]:
    """``whole`` (per file: read whole by one decoder) with the last files that would not
    make a full round of the decoders read chunk by chunk instead, by all of them.

    64 files of the same size on 15 children: each child reads four, and the last four are
    shared by every child and the importer, where four children read a fifth each while the
    other eleven sat idle (on a 16-core H200 that tail was 2.4 s of a 12 s decode). Files
    that do not fill one round (8 files, 15 children) stay whole: chunking them costs the
    importer about a millisecond a MB of scanning and merging, as much as it saves.
    """
    decoders = workers + 1 if workers <= READS_FILES_UP_TO else workers
    n = sum(whole)
    tail = n % decoders if n > decoders else 0
    out = list(whole)
    for i in reversed(range(len(out))):
        if not tail:
            break
        if out[i]:
            out[i] = False
            tail -= 1
    return out


class _Meanwhile:
    """The caller's work for while the children decode (``read_files``'s ``meanwhile``): small
    pieces, each run once, in the importer's thread, where it would otherwise wait.

    A piece runs where the importer waits for a child's room (:meth:`_Pipeline._wait_for_room`):
    there every child holds all the chunks (:data:`~gpuviz.trace.kineto_wire.DEPTH`, about
    50 ms of work on an H200, against at most 8 ms a piece) or whole files it may, so none
    runs dry meanwhile. Once every chunk is handed out, pieces run between the merges of the
    replies that are in (:meth:`_Pipeline._drain`).

    A 100k-kernel file on a 16-core H200: 14 children, each with up to four chunks queued
    (about 55 ms of work) when the last is handed out; the summary's analysis modules take
    40 ms to import. Imported at once after the last hand-out, they held up the merges: 42-62
    replies came in meanwhile and were merged after, 20-40 ms past the children's last
    (2026-11-29). On a thread of its own instead, the import held the GIL for 5 ms at a time
    while the importer woke for each reply: the merges fell 30-40 ms behind the children
    (started earlier, it starved them of chunks instead). What a piece raises is dropped: the
    caller's own use of the same modules raises it again, where it is reported.
    """

    def __init__(self, work: Sequence[Callable[[], object]]) -> None:
        self.pieces: deque[Callable[[], object]] = deque(work)

    @property
    def pending(self) -> bool:
        """Whether a piece is left."""
        return bool(self.pieces)

    def step(self) -> None:
        """Run the next piece."""
        if self.pieces:
            with contextlib.suppress(Exception):
                self.pieces.popleft()()


@dataclass
class _Job:
    """A chunk handed to a decoder (``file`` is its index; ``chunk`` None marks a file's end),
    or a whole file (``chunks`` None)."""

    file: int
    chunks: EventChunks | None  # None: the whole file is the job
    chunk: Chunk | None = None
    worker: Worker | None = None  # the child it was sent to (None: decoded here)
    reply: dict[str, Any] | None = None


class _Pipeline:
    """One run of the pipeline over ``readers[start:]`` (see :func:`read_files`)."""

    def __init__(
        self,
        readers: list[FileReader],
        out: list[FileColumns | None],
        workers: int,
        after_file: Callable[[], None] | None,
        whole: list[bool],
        meanwhile: _Meanwhile | None = None,
    ) -> None:
        self.readers = readers
        self.meanwhile = meanwhile or _Meanwhile(())
        self.whole = whole  # per file: read whole by one decoder, not chunk by chunk
        self.out = out
        self.n_workers = workers
        self.after_file = after_file
        self.pool: WorkerPool | None = None
        self.compress = readers[0].writer.compress if readers else False
        self.drop = readers[0].columns.drop if readers else ()
        self.local = LocalDecoder(self.compress, self.drop)
        self.inflight: deque[_Job] = deque()  # in file order
        self.waiting: dict[Worker, deque[_Job]] = {}  # per child, the jobs it has not answered
        self.merging = -1  # the file of the job being merged

    def run(self, start: int) -> int:
        """Read files from ``start`` on; returns the index to go on from (all read: their count).

        When a child finds a guessed chunk end wrong after the scanner moved on, the pipeline
        stops: that file is read again here, exactly, and the caller goes on after it.
        """
        try:
            self.pool = WorkerPool(self.n_workers, self.compress, self.drop)
            self.waiting = {w: deque() for w in self.pool.workers}
        except OSError:  # children cannot be started here: decode in this process only
            self.pool = None
        try:
            for i in range(start, len(self.readers)):
                if self.whole[i] and self.pool is not None:
                    self._hand_out_file(i)
                    continue
                # The children read each chunk from the file (its span): the scanner reads
                # only what it needs to find the chunks' ends.
                chunks = self.readers[i].chunks(guess=True, sparse=True)
                scan = iter(chunks)
                while True:
                    try:
                        chunk = next(scan)
                    except StopIteration:
                        break
                    except TraceFormatError:
                        # The scanner may stand at a wrong place: behind a guessed chunk end
                        # that a child has yet to find wrong. That comes first (Restart).
                        self._drain()
                        raise
                    self._merge_done()
                    self._hand_out(i, chunk, chunks)
                self.inflight.append(_Job(i, chunks))
            self._drain()
        except Restart:
            i = self.merging
            self._close()
            self.inflight.clear()
            reader = self.readers[i]
            reader.restart()
            self.out[i] = reader.read()
            if self.after_file is not None:
                self.after_file()
            return i + 1
        except BaseException:  # cancelled, Ctrl-C, a bad file: the children's work is not wanted
            self._close(kill=True)
            raise
        finally:
            self._close()
        return len(self.readers)

    def _close(self, kill: bool = False) -> None:
        if self.pool is not None:
            if kill:
                self.pool.kill()
            else:
                # Not waited for: the children exit while the trace is assembled.
                self.pool.close(wait=False)
            self.pool = None
            self.waiting = {}

    def _hand_out(self, file: int, chunk: Chunk, chunks: EventChunks) -> None:
        """Give a chunk to a child, or decode it here (a wrong guess goes back to the scanner)."""
        job = _Job(file, chunks, chunk)
        w = self.pool.idlest() if self.pool is not None else None
        if w is not None and not w.can_take and self.n_workers > READS_FILES_UP_TO:
            # Many children: the importer's core does best taking in and merging replies,
            # and handing out the next chunks. Decoding one here took it away for 15-25 ms
            # while the 14 children of a 100k-kernel file ran out of work (16-core H200).
            w = self._wait_for_room(self.readers[file], whole=False)
        if w is not None and w.can_take:
            span = chunk.span
            if span is not None:
                path = self.readers[file].path
                self._send(job, w, lambda: w.send_span(file, path, *span))
            else:
                pieces = chunk.pieces or [chunk.text]  # no span: the text was read here
                self._send(job, w, lambda: w.send(file, pieces))
        if job.worker is None:
            while len(self.inflight) > MAX_AHEAD * (1 + self.n_workers):
                self._merge_oldest()  # bound what waits for a slow child
            job.reply = self.local.decode(file, chunk.json_array())
            if job.reply.get("why") == "decode" and chunk.guessed:
                # The scanner has not moved on, so it can redo the text exactly; unless an
                # earlier guess, sent to a child, was wrong too and left it at a wrong place:
                # the replies in flight tell first (Restart).
                self._drain()
                chunks.reject()
                return
        self.inflight.append(job)

    def _send(self, job: _Job, w: Worker, send: Callable[[], None]) -> None:
        """Hand ``job`` to child ``w`` by ``send``; if the child is gone, none is used again
        (``job.worker`` stays None, and it and the rest are decoded here)."""
        try:
            send()
        except OSError:
            self._close()
            return
        job.worker = w
        self.waiting[w].append(job)

    def _hand_out_file(self, file: int) -> None:
        """Give a whole file to a child, or, when every child has files waiting, read it here."""
        reader = self.readers[file]
        if reader.cancelled is not None and reader.cancelled():
            raise ImportCancelledError(reader.path)
        self._merge_done()
        job = _Job(file, None)
        w = self.pool.idlest() if self.pool is not None else None
        if w is not None and not w.can_take_file and self.n_workers > READS_FILES_UP_TO:
            w = self._wait_for_room(reader, whole=True)
        if w is not None and w.can_take_file:
            self._send(job, w, lambda: w.send_file(file, reader.path))
        if job.worker is None:
            # Bound what waits for a slow child, but loosely: with a bound of one file per
            # child, the importer waited for its one child's oldest file instead of decoding
            # (a 64-rank folder on 2 cores took 10.3 s, against 9.3 s chunk by chunk).
            while len(self.inflight) > self.n_workers + FILE_DEPTH + 1:
                self._merge_oldest()
            job.reply = self.local.decode_file(file, reader.path, reader.cancelled)
        self.inflight.append(job)

    def _wait_for_room(self, reader: FileReader, whole: bool) -> Worker | None:
        """The idlest child once it has room for a whole file (``whole``) or a chunk, merging
        what comes in meanwhile (the cancel polled); None when the children are gone."""
        while self.pool is not None:
            w = self.pool.idlest()
            if (w.can_take_file if whole else w.can_take) or not w.queued:
                return w
            if self.meanwhile.pending:
                self.meanwhile.step()  # every child is full: none runs dry meanwhile
            else:
                self.pool.wait_any(WAIT_S)
            if reader.cancelled is not None and reader.cancelled():
                raise ImportCancelledError(reader.path)
            self._merge_done()  # takes the replies in: their children have room again
        return None

    def _drain(self) -> None:
        """Merge every job in flight, waiting for the children's replies; the caller's
        ``meanwhile`` (:class:`_Meanwhile`) left over, a piece at a time while the oldest
        reply is not in yet."""
        while self.inflight:
            if self.pool is not None and self.meanwhile.pending:
                self._merge_done()
                if self.inflight:
                    self.meanwhile.step()
                continue
            self._merge_oldest()

    def _collect(self) -> None:
        """Take in every reply that is there, without waiting."""
        for w, jobs in self.waiting.items():
            while jobs and w.ready():
                if not self._receive(w):
                    return

    def _receive(self, w: Worker) -> bool:
        """The reply to ``w``'s oldest job (waits for it); False when the children are gone."""
        try:
            reply = w.receive()
        except (OSError, EOFError, msgspec.DecodeError):
            self._close()  # a child died: what the children held is decoded here
            return False
        self.waiting[w].popleft().reply = reply
        return True

    def _merge_done(self) -> None:
        """Merge, oldest first, the jobs whose replies are in, without waiting."""
        self._collect()
        while self.inflight:
            job = self.inflight[0]
            awaits_reply = job.chunk is not None or job.chunks is None  # not a file's end
            if awaits_reply and job.reply is None and self.pool is not None:
                return
            self._merge_oldest()

    def _merge_oldest(self) -> None:
        job = self.inflight.popleft()
        self.merging = job.file
        reader = self.readers[job.file]
        if job.chunks is None:
            self._merge_file(job)
            return
        if job.chunk is None:  # the file's end: every chunk of it is in
            self.out[job.file] = reader.finish(job.chunks)
            if self.after_file is not None:
                self.after_file()
            return
        if job.reply is None and job.worker is not None and self.pool is not None:
            self._receive(job.worker)  # the oldest job is its child's oldest too
        reply = job.reply
        decoder: Decoder = job.worker if job.worker is not None else self.local
        if reply is not None and reply.get("ok"):
            reader.merge(reply, decoder, job.file)
        elif reply is not None and reply.get("why") == "decode" and job.chunk.guessed:
            raise Restart
        else:  # odd, an error, or its child is gone: read here, where errors are reported
            reader.read_chunk(job.chunk, job.chunks)

    def _merge_file(self, job: _Job) -> None:
        """Merge a whole file's reply (waiting for it, the cancel polled), or read it here."""
        reader = self.readers[job.file]
        w = job.worker
        if job.reply is None and w is not None and self.pool is not None:
            while not w.wait(WAIT_S):
                if reader.cancelled is not None and reader.cancelled():
                    raise ImportCancelledError(reader.path)
            self._receive(w)
        reply = job.reply
        decoder: Decoder = w if w is not None else self.local
        if reply is not None and reply.get("reset"):  # it numbers afresh from here on
            decoder.forget()
        if reply is not None and reply.get("ok"):
            self.out[job.file] = reader.merge_file(reply, decoder, job.file)
        else:  # it could not: read here, where what is wrong is reported
            reader.restart()
            self.out[job.file] = reader.read()
        if self.after_file is not None:
            self.after_file()


__all__ = ["read_files"]
