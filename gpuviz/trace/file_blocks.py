"""Reading a trace file in blocks: uncompressed, or inflated on a thread of its own as it is
read (``.gz``, told by its content), and, for an uncompressed file, blocks left unread where
the reader needs only part of them (:class:`Unread`, :func:`read_span`).

:class:`gpuviz.trace.jsonscan.EventChunks` reads files through :func:`open_blocks`.
"""

from __future__ import annotations

import os
import queue
import threading
import zlib
from collections.abc import Callable, Iterator
from typing import Any

from gpuviz.trace.errors import TraceFormatError
from gpuviz.trace.kineto_wire import read_at

_READ_BYTES = 1 << 20
_GZIP_MAGIC = b"\x1f\x8b"


def is_gzip(path: str) -> bool:
    """Whether a file starts with gzip's magic bytes (False where it cannot be read)."""
    try:
        with open(path, "rb") as f:
            return f.read(2) == _GZIP_MAGIC
    except OSError:
        return False


def open_blocks(
    path: str,
    block_bytes: int,
    on_read: Callable[[int], None] | None = None,
    unread: Callable[[], bool] | None = None,
) -> Iterator[bytes | Unread]:
    """Yield the uncompressed bytes of a file in blocks; ``.gz`` is detected by its magic bytes.

    ``on_read(n)`` is told how many file bytes (compressed, for gzip) were read so far.
    ``unread``: asked before each block of an uncompressed file; where it says True, the
    block comes as an :class:`Unread` (where it stands), for the caller to read what it needs.
    Raises :class:`TraceFormatError` for a gzip stream that is corrupt or cut short.
    """
    with open(path, "rb") as f:
        head = f.read(2)
        f.seek(0)
        if head != _GZIP_MAGIC:
            done = 0
            size = os.fstat(f.fileno()).st_size
            while True:
                if unread is not None and done < size and unread():
                    n = min(block_bytes, size - done)
                    done += n
                    f.seek(done)
                    if on_read is not None:
                        on_read(done)
                    yield Unread(path, f.fileno(), done - n, n)
                    continue
                block = f.read(block_bytes)
                if not block:
                    return
                done += len(block)
                if on_read is not None:
                    on_read(done)
                yield block
        # Decompress in a thread of its own: zlib lets go of the GIL, so inflating the next
        # blocks overlaps the caller's decoding of this one.
        yield from _threaded(lambda report: _gunzip_blocks(f, path, block_bytes, report), on_read)


def _threaded(
    make: Callable[[Callable[[int], None]], Iterator[bytes]],
    on_read: Callable[[int], None] | None,
) -> Iterator[bytes]:
    """Run a block producer in a thread, two blocks ahead; progress and errors come through
    to the calling thread."""
    q: queue.Queue[tuple[Any, int]] = queue.Queue(maxsize=2)
    stop = threading.Event()
    done = [0]

    def put(item: tuple[Any, int]) -> bool:
        while not stop.is_set():
            try:
                q.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for block in make(lambda n: done.__setitem__(0, n)):
                if not put((block, done[0])):
                    return
            put((None, done[0]))
        except BaseException as e:  # handed to the consumer, which raises it
            put((e, done[0]))

    thread = threading.Thread(target=produce, name="gpuviz-gunzip", daemon=True)
    thread.start()
    try:
        while True:
            item, n = q.get()
            if item is None:
                return
            if isinstance(item, BaseException):
                raise item
            if on_read is not None:
                on_read(n)
            yield item
    finally:
        stop.set()
        thread.join()


def _gunzip_blocks(
    f: Any, path: str, block_bytes: int, on_read: Callable[[int], None] | None
) -> Iterator[bytes]:
    # zlib (not gzip.GzipFile) so that the output per step is bounded and errors carry offsets.
    d = zlib.decompressobj(wbits=31)
    fed = False  # the current decompressor has been given bytes of a member
    done = 0
    out: list[bytes] = []
    have = 0
    while True:
        data = f.read(_READ_BYTES)
        if not data:
            break
        done += len(data)
        while data:
            fed = True
            try:
                piece = d.decompress(data, block_bytes)
            except zlib.error as e:
                raise TraceFormatError(path, "", f"not a valid gzip stream ({e})") from None
            data = d.unconsumed_tail
            if on_read is not None:
                # The compressed bytes taken in so far: a megabyte of a file that inflates a
                # thousandfold (a gzip bomb's padding) is many blocks, each a step of progress.
                on_read(done - len(data))
            if piece:
                out.append(piece)
                have += len(piece)
                if have >= block_bytes:
                    yield b"".join(out)
                    out, have = [], 0
            if d.eof:
                # A file may hold several gzip members one after another (and zero padding).
                data = (d.unused_data + data).lstrip(b"\x00")
                d = zlib.decompressobj(wbits=31)
                fed = False
                if data and not data.startswith(_GZIP_MAGIC[: len(data)]):
                    raise TraceFormatError(
                        path, "", "not a valid gzip stream (garbage after the compressed data)"
                    )
    if fed:
        try:
            out.append(d.flush())
        except zlib.error as e:
            raise TraceFormatError(path, "", f"not a valid gzip stream ({e})") from None
    if out:
        yield b"".join(out)
    if fed and not d.eof:
        raise TraceFormatError(path, f"byte {done}", "the gzip data ends early (truncated file)")


class Unread:
    """A block of an uncompressed file that :func:`open_blocks` did not read: where it stands.

    Parameters
    ----------
    path : str
        The file.
    fd : int
        The file's descriptor, open while the block is the one handed out.
    offset, length : int
        The block's place in the file.
    """

    __slots__ = ("fd", "length", "offset", "path")

    def __init__(self, path: str, fd: int, offset: int, length: int) -> None:
        self.path, self.fd, self.offset, self.length = path, fd, offset, length

    def __len__(self) -> int:
        return self.length

    def read(self, offset: int = 0, length: int | None = None) -> bytes:
        """``length`` bytes of the block from ``offset`` in it (to its end by default)."""
        if length is None:
            length = self.length - offset
        return read_span(self.path, self.offset + offset, length, self.fd)


def read_span(path: str, offset: int, length: int, fd: int = -1) -> bytes:
    """``length`` bytes of the file ``path`` from ``offset`` (through ``fd`` where given).

    Raises :class:`TraceFormatError` where the file ends before them: it changed (was cut or
    rewritten) while it was read.
    """
    own = fd < 0
    if own:
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError as e:
            raise TraceFormatError(path, "", f"cannot be read again: {e.strerror or e}") from None
    try:
        return read_at(fd, length, offset)
    except EOFError:
        raise TraceFormatError(
            path, f"byte {offset + length}", "the file changed while it was read (it ends before)"
        ) from None
    finally:
        if own:
            os.close(fd)


__all__ = ["Unread", "is_gzip", "open_blocks", "read_span"]
