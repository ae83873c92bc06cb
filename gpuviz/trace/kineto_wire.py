"""What passes between the importer and an import child: frames, scratch files, replies.

The pipes carry only small frames (:data:`SEND` to the child, :data:`REPLY` back) saying which
file and slot; the data go through scratch files (:func:`scratch`, memory-backed where Linux
allows), :data:`DEPTH` slots each way, so that neither side ever waits for the other to drain
a pipe. A chunk's reply is one msgpack map of plain values and raw array bytes
(:func:`to_wire`), read back without copying its bytes (:class:`Reply`); a whole file's reply
is length-prefixed records, one per part (:class:`RecordWriter`, :func:`read_records`).
Nothing is pickled, and no code travels. :mod:`gpuviz.trace.kineto_worker` holds both sides'
loops.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Sequence
from typing import Any

import msgspec
import numpy as np

# Control frames on the pipes; the chunks and replies themselves go through scratch files.
SEND = struct.Struct("<QIIB")  # bytes, file index, slot, what (0 bytes: stop)
REPLY = struct.Struct("<QI")  # reply bytes, slot
CHUNK, WHOLE_FILE, SPAN = 0, 1, 2
"""What a frame hands over: a chunk's text, a file's path (the child reads all of it), or
where a chunk's text stands in a file (the child reads it from there)."""
SPAN_HEAD = struct.Struct("<QQ")  # a SPAN job's offset and length, then the file's path
DEPTH = 4
"""Chunks handed to a child ahead of its replies (1 MiB each): it never waits for the importer."""


def scratch() -> int:
    """A file descriptor of an unnamed scratch file (memory-backed where Linux allows)."""
    if hasattr(os, "memfd_create"):
        return os.memfd_create("gpuviz-import", os.MFD_CLOEXEC)
    import tempfile

    f = tempfile.TemporaryFile()
    fd = os.dup(f.fileno())
    f.close()
    return fd


def write_at(fd: int, pieces: Sequence[Any], at: int = 0) -> int:
    """Write ``pieces`` into a scratch file from offset ``at``; their length."""
    views = [memoryview(p).cast("B") for p in pieces]
    n = sum(len(v) for v in views)
    done = 0
    while done < n:  # a regular file takes it all at once; loop all the same
        skip = done
        rest = []
        for v in views:
            if skip >= len(v):
                skip -= len(v)
                continue
            rest.append(v[skip:])
            skip = 0
        done += os.pwritev(fd, rest, at + done)
    return n


def read_at(fd: int, n: int, at: int = 0) -> bytes:
    """``n`` bytes of a file (a scratch file, a trace), from offset ``at``; EOFError where it
    ends before them."""
    data = os.pread(fd, n, at)
    if len(data) < n:
        parts = [data]
        got = len(data)
        while got < n:
            more = os.pread(fd, n - got, at + got)
            if not more:
                raise EOFError("a scratch file ends early")
            parts.append(more)
            got += len(more)
        data = b"".join(parts)
    return data


def read_exact(fd: int, n: int) -> bytes | None:
    """``n`` bytes from a pipe; None at its end before any byte."""
    data = os.read(fd, n)
    if not data:
        return None
    while len(data) < n:
        more = os.read(fd, n - len(data))
        if not more:
            raise EOFError("the pipe closed inside a frame")
        data += more
    return data


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to a pipe."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class Reply(msgspec.Struct):
    """A child's reply as the importer reads it: its raw bytes stay where they came in.

    The args text and the arrays are views of the reply's bytes (msgpack ``bin``, decoded
    without a copy): the args text is copied once, into the file's store, not first into a
    bytes object of its own.
    """

    ok: bool = False
    why: str = ""
    n: int = 0
    symbols: list[str] = []
    lanes: list[list[int]] = []
    tracks: list[list[int]] = []
    lane_gpu: list[list[int]] = []
    cols: dict[str, dict[str, tuple[str, memoryview]]] = {}
    blob: memoryview = memoryview(b"")
    blocks: memoryview = memoryview(b"")
    arg_lengths: memoryview = memoryview(b"")
    meta: list[dict[str, Any]] = []
    dropped_python: int = 0  # python_function slices left out (gpuviz.trace.memory_budget)
    dropped_flows: int = 0  # launch flow events left out (the same)


REPLY_DECODER = msgspec.msgpack.Decoder(Reply)


def to_wire(reply: dict[str, Any]) -> dict[str, Any]:
    """A reply with its arrays as ``[dtype, bytes]``, for msgpack."""
    if not reply.get("ok"):
        return reply
    cols = {
        name: {c: [str(a.dtype), np.ascontiguousarray(a).data.cast("B")]
               for c, a in table.items()}
        for name, table in reply["cols"].items()
    }  # fmt: skip
    lengths = np.ascontiguousarray(reply["arg_lengths"]).data.cast("B")
    blocks = np.ascontiguousarray(reply["blocks"]).data.cast("B")
    return dict(reply, cols=cols, arg_lengths=lengths, blocks=blocks)


RECORD = struct.Struct("<Q")


class RecordWriter:
    """Length-prefixed msgpack records, written one after the other into a scratch file."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.size = 0

    def add(self, record: bytes) -> None:
        self.size += write_at(self.fd, [RECORD.pack(len(record)), record], self.size)


def read_records(fd: int, size: int) -> list[Any]:
    """The decoded records of a whole-file reply: its chunks' replies, then its head."""
    out = []
    at = 0
    while at < size:
        (n,) = RECORD.unpack(os.pread(fd, RECORD.size, at))
        at += RECORD.size
        out.append(msgspec.msgpack.decode(read_at(fd, n, at)))
        at += n
    return out
