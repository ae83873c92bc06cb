"""A decoding child's own side: its loop on the pipes and scratch files, and its reads.

:func:`serve` is all a child runs, forked or spawned (:mod:`gpuviz.trace.kineto_worker`
starts it and holds the importer's side): a frame in, a chunk, a span of the trace file
(:class:`_SpanReader`) or a whole file (:func:`_read_whole_file`) decoded by its
:class:`~gpuviz.trace.kineto_chunk_decoder.ChunkDecoder`, the reply out. It is apart because it
is the other end of the wire (:mod:`gpuviz.trace.kineto_wire`): it shares nothing with the
importer's handles but the frames. It stays importable at module level, as a spawned child
imports it; :mod:`gpuviz.trace.kineto_worker` re-exports these names.
"""

from __future__ import annotations

import contextlib
import os
import signal
from typing import Any

import msgspec

from gpuviz.trace import gcpause
from gpuviz.trace.kineto_chunk_decoder import ChunkDecoder
from gpuviz.trace.kineto_wire import (
    REPLY,
    SEND,
    SPAN,
    SPAN_HEAD,
    WHOLE_FILE,
    RecordWriter,
    read_at,
    read_exact,
    to_wire,
    write_all,
    write_at,
)


def serve(
    stdin: int, stdout: int, chunks: list[int], replies: list[int], state: ChunkDecoder
) -> int:
    """The child's loop: a chunk in, its columns out, until a stop frame or end of input.

    Parameters
    ----------
    stdin, stdout : int
        The pipes' ends: frames from the importer, frames to it.
    chunks, replies : list of int
        The scratch files, :data:`~gpuviz.trace.kineto_wire.DEPTH` each: the importer's
        chunks, the replies.
    state : ChunkDecoder
        The decoder (its numbering lasts as long as the child).

    Returns
    -------
    int
        The exit status.
    """
    import gc

    gc.disable()  # as in the importer: many short-lived objects, no cycles
    # Ctrl-C reaches the whole process group: the importer decides, and stops us.
    with contextlib.suppress(ValueError):  # not the main thread (an embedding's fork)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    encoder = msgspec.msgpack.Encoder()
    spans = _SpanReader()
    try:
        while True:
            head = read_exact(stdin, SEND.size)
            if head is None:
                return 0
            n, file, slot, what = SEND.unpack(head)
            if not n:
                return 0
            data = read_at(chunks[slot], n)
            if what == WHOLE_FILE:
                size, state = _read_whole_file(
                    state, file, os.fsdecode(data), replies[slot], encoder
                )
            else:
                chunk = spans.read(data) if what == SPAN else data
                reply = (
                    to_wire(state.process(file, chunk))
                    if chunk is not None
                    else {"ok": False, "why": "error"}  # the importer reads it itself
                )
                size = write_at(replies[slot], [encoder.encode(reply)])
            write_all(stdout, REPLY.pack(size, slot))
    finally:
        spans.close()


class _SpanReader:
    """A child's reads of chunks from the trace file itself (:data:`SPAN` jobs)."""

    def __init__(self) -> None:
        self.path = b""
        self.fd = -1

    def read(self, job: bytes) -> bytearray | None:
        """The chunk a SPAN job names, as a JSON array; None if the file is shorter (it
        changed: the importer reads that chunk itself, from the text it scanned)."""
        offset, length = SPAN_HEAD.unpack_from(job)
        path = job[SPAN_HEAD.size :]
        try:
            if path != self.path:
                self.close()
                self.fd = os.open(path, os.O_RDONLY)
                self.path = path
            buf = bytearray(length + 2)
            buf[0], buf[-1] = ord("["), ord("]")
            view = memoryview(buf)[1:-1]
            done = 0
            while done < length:
                got = os.preadv(self.fd, [view[done:]], offset + done)
                if not got:
                    return None
                done += got
        except OSError:
            return None
        return buf

    def close(self) -> None:
        """Close the file (the child is done)."""
        if self.fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self.fd)
        self.fd = -1
        self.path = b""


def _read_whole_file(
    state: ChunkDecoder, file: int, path: str, fd: int, encoder: msgspec.msgpack.Encoder
) -> tuple[int, ChunkDecoder]:
    """A child's whole-file job: its records written to ``fd`` (see
    :func:`~gpuviz.trace.kineto_wire.read_records`) as they are made; their size, and the
    decoder to go on with."""
    out = RecordWriter(fd)

    def emit(part: dict[str, Any]) -> None:
        out.add(encoder.encode(to_wire(part) if part["ok"] else part))

    try:
        out.add(encoder.encode(state.read_file(file, path, emit=emit)))
    except (TypeError, OverflowError, ValueError):  # metadata msgpack cannot carry
        # What this child numbered for the file is lost with it: both sides start their
        # numbering afresh (``reset``), and the importer reads the file itself.
        state = ChunkDecoder(state.compress, state.drop)
        out.size = 0
        out.add(encoder.encode({"ok": False, "why": "error", "reset": True}))
    # A file's structs leave freed heap pages that glibc keeps: about 8 MB a child on a
    # 64-rank folder (13 MB files), held to the end of the import.
    gcpause.release_freed_memory()
    return out.size, state
