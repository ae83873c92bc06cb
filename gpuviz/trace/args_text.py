"""The events' args text, kept as zlib-compressed blocks (or plain, for small stores).

Most of what an imported Trace holds is its events' ``args`` JSON text: on a 64-rank folder
it is twice all the numeric columns together. zlib at level 1 (stdlib) shrinks it about 10x
at about 240 MB/s and gives it back at about 300 MB/s, and it is read rarely: a hover, the
kernel table, an export. So the importer compresses the text where it is made (in its
children and in its own reads), a block of about :data:`BLOCK_BYTES` at a time, and readers
decompress the block a row lies in, keeping the last few in a small LRU so that reading rows
in order costs one decompression per block.

:class:`BlockText` holds the blocks: one buffer of compressed bytes (which the import cache
memory-maps), the blocks' compressed offsets into it and their uncompressed starts.
:class:`PlainText` holds uncompressed text behind the same API (synthetic traces, tests, and
imports made with compression off). :class:`TextWriter` is what the importer appends to.
"""

from __future__ import annotations

import os
import threading
import zlib
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

I64 = npt.NDArray[np.int64]

#: Uncompressed bytes per block: what a row in a block not yet read costs to decompress
#: (about 0.07 ms). zlib's window is 32 KiB, so larger blocks compress little better (on a
#: rank's args: 32 KiB 9.2x, 1 MiB 10.1x; 16 KiB 8.4x and 20% slower), while such a row costs
#: 32x more at 1 MiB: the collectives of a 64-rank folder read 32 rows a rank, each in a block
#: of its own (0.5 s of decompression with 1 MiB blocks, 0.3 s with 64 KiB).
BLOCK_BYTES = 32 << 10
#: zlib level: 1 compresses JSON args about 10x at ~240 MB/s; higher levels gain little.
LEVEL = 1
#: Decompressed bytes the LRU of a :class:`BlockText` keeps.
LRU_BYTES = 8 << 20
#: ``1`` compresses the args text of every import, ``0`` of none; unset, see compression_for.
ENV = "GPUVIZ_ARGS_ZLIB"


def compression_for(n_files: int, workers: int = 0) -> bool:
    """Whether an import of ``n_files`` files, by ``workers`` children, compresses its args
    text.

    Where it pays, measured (ratios to ``json.load``):

    - A 64-rank folder, 2-core VM (1 child): memory 0.23x -> 0.13x (the importer's peak 558 ->
      313 MB), at the same time or less (the children's replies are 10x smaller). 8 ranks:
      0.41x -> 0.33x. On a 16-core host (13 children): 0.41x -> 0.31x as a sum of resident
      sets, 0.32x -> 0.22x as PSS, time 0.19x -> 0.17x (medians).
    - A single file on a 16-core host, where the children compress in parallel and the
      importer copies 10x less of their replies: 1M kernels (15 children) 0.196x -> 0.164x in
      time, memory 0.26x -> 0.17x; 100k kernels (3 children) the same time (medians 0.53x),
      memory 0.43x -> 0.36x.
    - A single 100k-kernel file on the 2-core VM (1 child, which the importer matches chunk
      for chunk): 14% more time (0.34x -> 0.39x), memory 0.22x -> 0.16x. There the time goal
      (0.2x) is the one missed and memory is within its goal (0.3x).

    So by default a rank folder compresses, and a single file does where at least two children
    share it; ``GPUVIZ_ARGS_ZLIB`` decides otherwise.
    """
    value = os.environ.get(ENV, "")
    if value in ("0", "1"):
        return value == "1"
    return n_files > 1 or workers >= 2


def compression_on() -> bool:
    """Whether the args text is compressed where nothing says how many files are imported (a
    child is told by its importer, through ``GPUVIZ_ARGS_ZLIB``)."""
    return compression_for(1)


class CorruptTextError(ValueError):
    """A compressed block that does not decompress to its recorded size."""


def compress_blocks(text: bytes | bytearray | memoryview) -> tuple[bytes, I64]:
    """``text`` as blocks of :data:`BLOCK_BYTES`: their compressed bytes, and ``sizes``
    (int64: the blocks' uncompressed sizes, then their compressed sizes)."""
    view = memoryview(text)
    pieces = [
        zlib.compress(view[a : a + BLOCK_BYTES], LEVEL) for a in range(0, len(view), BLOCK_BYTES)
    ]
    raw = [min(BLOCK_BYTES, len(view) - a) for a in range(0, len(view), BLOCK_BYTES)]
    sizes = np.asarray(raw + [len(p) for p in pieces], dtype=np.int64)
    return b"".join(pieces), sizes


class PlainText:
    """Uncompressed text behind the :class:`BlockText` API.

    Parameters
    ----------
    blob : bytes, bytearray or memoryview
        The text (the cache gives a memoryview of a memory-mapped file).
    """

    __slots__ = ("blob",)

    compressed = False

    def __init__(self, blob: bytes | bytearray | memoryview = b"") -> None:
        self.blob = blob

    def __len__(self) -> int:
        return len(self.blob)

    def read(self, a: int, b: int) -> bytes:
        """The text from ``a`` to ``b``."""
        return bytes(self.blob[a:b])


class BlockText:
    """Text kept as zlib blocks, decompressed on demand through a small LRU.

    Parameters
    ----------
    data : bytes, bytearray or memoryview
        The blocks' compressed bytes, one after another.
    zoffsets : int64 array
        ``n + 1`` offsets of the blocks into ``data``.
    starts : int64 array
        ``n + 1`` uncompressed starts of the blocks (the last: the text's length).
    """

    __slots__ = ("_lock", "_lru", "_lru_bytes", "data", "starts", "zoffsets")

    compressed = True

    def __init__(self, data: bytes | bytearray | memoryview, zoffsets: I64, starts: I64) -> None:
        self.data = data
        self.zoffsets = zoffsets
        self.starts = starts
        self._lru: OrderedDict[int, bytes] = OrderedDict()
        self._lru_bytes = 0
        self._lock = threading.Lock()  # the GUI's details panel and analyses may both read

    def __len__(self) -> int:
        return int(self.starts[-1]) if len(self.starts) else 0

    @property
    def n_blocks(self) -> int:
        """How many blocks."""
        return max(len(self.starts) - 1, 0)

    def block(self, i: int) -> bytes:
        """Block ``i``, decompressed (from the LRU when it is there).

        Raises
        ------
        CorruptTextError
            Its bytes do not decompress (zlib checks their Adler-32) to its recorded size.
        """
        with self._lock:
            hit = self._lru.get(i)
            if hit is not None:
                self._lru.move_to_end(i)
                return hit
        z, s = self.zoffsets, self.starts
        try:
            text = zlib.decompress(self.data[int(z[i]) : int(z[i + 1])])
        except zlib.error as e:
            raise CorruptTextError(f"args block {i}: {e}") from None
        if len(text) != int(s[i + 1]) - int(s[i]):
            raise CorruptTextError(
                f"args block {i}: {len(text)} bytes, {int(s[i + 1] - s[i])} expected"
            )
        with self._lock:
            if i not in self._lru:
                self._lru[i] = text
                self._lru_bytes += len(text)
            while self._lru_bytes > LRU_BYTES and len(self._lru) > 1:
                _, old = self._lru.popitem(last=False)
                self._lru_bytes -= len(old)
        return text

    def cached_blocks(self) -> list[int]:
        """The blocks in the LRU, least recently used first."""
        with self._lock:
            return list(self._lru)

    def read(self, a: int, b: int) -> bytes:
        """The text from ``a`` to ``b`` (it may span blocks)."""
        if b <= a:
            return b""
        s = self.starts
        i = int(np.searchsorted(s, a, side="right")) - 1
        first = self.block(i)
        lo = a - int(s[i])
        if b <= int(s[i + 1]):
            return first[lo : b - int(s[i])]
        out = [first[lo:]]
        i += 1
        while int(s[i]) < b:
            out.append(self.block(i)[: b - int(s[i])])
            i += 1
        return b"".join(out)

    def verify(self) -> None:
        """Decompress every block (without the LRU); :class:`CorruptTextError` if one is bad."""
        z, s = self.zoffsets.tolist(), self.starts.tolist()
        for i in range(self.n_blocks):
            try:
                n = len(zlib.decompress(self.data[z[i] : z[i + 1]]))
            except zlib.error as e:
                raise CorruptTextError(f"args block {i}: {e}") from None
            if n != s[i + 1] - s[i]:
                raise CorruptTextError(f"args block {i}: {n} bytes, {s[i + 1] - s[i]} expected")


ArgsText = PlainText | BlockText


class TextWriter:
    """The importer's args text: appended as raw bytes, compressed a block at a time.

    It stands where the importer kept a bytearray (``+=``, ``len``, ``del w[a:]``), and takes
    blocks compressed elsewhere (a child's) with :meth:`add_blocks`. :meth:`text` is the
    finished text.

    Parameters
    ----------
    compress : bool, optional
        Default: :func:`compression_on`. Off, the text stays one plain bytearray.
    """

    def __init__(self, compress: bool | None = None) -> None:
        self.compress = compression_on() if compress is None else compress
        self.pending = bytearray()  # text not yet in a block (all of it when not compressing)
        self.data = bytearray()  # the blocks' compressed bytes
        self.sizes: list[int] = []  # per block: uncompressed
        self.zsizes: list[int] = []  # per block: compressed
        self.done = 0  # uncompressed bytes in blocks

    def __len__(self) -> int:
        return self.done + len(self.pending)

    def __iadd__(self, text: Any) -> TextWriter:
        self.extend(text)
        return self

    def extend(self, text: Any) -> None:
        """Append ``text`` (bytes-like), compressing every full block."""
        self.pending += text
        if self.compress and len(self.pending) >= BLOCK_BYTES:
            self._pack(len(self.pending) // BLOCK_BYTES * BLOCK_BYTES)

    def _pack(self, n: int) -> None:
        """Compress the first ``n`` pending bytes into blocks."""
        view = memoryview(self.pending)
        for a in range(0, n, BLOCK_BYTES):
            z = zlib.compress(view[a : min(a + BLOCK_BYTES, n)], LEVEL)
            self.data += z
            self.sizes.append(min(BLOCK_BYTES, n - a))
            self.zsizes.append(len(z))
        view.release()  # the bytearray cannot shrink while a view of it is held
        del self.pending[:n]
        self.done += n

    def seal(self) -> None:
        """Compress what is pending into a last, shorter block (the next text starts a block)."""
        if self.compress and self.pending:
            self._pack(len(self.pending))

    def add_blocks(self, data: Any, sizes: Sequence[int] | I64) -> None:
        """Append blocks compressed elsewhere: ``data`` and ``sizes`` as
        :func:`compress_blocks` makes them."""
        sizes = np.asarray(sizes, dtype=np.int64)
        n = len(sizes) // 2
        if not n:
            return
        if not self.compress:  # an import that keeps its text plain
            at = 0
            view = memoryview(data)
            for z in sizes[n:].tolist():
                self.pending += zlib.decompress(view[at : at + z])
                at += z
            return
        self.seal()
        self.data += data
        self.sizes += sizes[:n].tolist()
        self.zsizes += sizes[n:].tolist()
        self.done += int(sizes[:n].sum())

    def __delitem__(self, key: slice) -> None:
        """``del w[a:]``: take back the text from ``a`` on (a chunk or file read again)."""
        a = key.start or 0
        if key.stop is not None or key.step is not None:
            raise ValueError("only del w[a:] is supported")
        if a >= self.done:
            del self.pending[a - self.done :]
            return
        # Drop the blocks from the one holding ``a``; its text before ``a`` becomes pending.
        starts = np.concatenate([[0], np.cumsum(self.sizes, dtype=np.int64)])
        i = int(np.searchsorted(starts, a, side="right")) - 1
        zstart = sum(self.zsizes[:i])
        head = zlib.decompress(self.data[zstart : zstart + self.zsizes[i]])[: a - int(starts[i])]
        del self.data[zstart:]
        del self.sizes[i:], self.zsizes[i:]
        self.done = int(starts[i])
        self.pending = bytearray(head)

    def starts(self) -> I64:
        """The blocks' uncompressed starts (``n + 1``)."""
        out = np.zeros(len(self.sizes) + 1, dtype=np.int64)
        np.cumsum(self.sizes, out=out[1:])
        return out

    def append_range(self, src: TextWriter, a: int, b: int) -> None:
        """Append ``src``'s text from ``a`` to ``b``: whole blocks are copied as they are."""
        src.seal()
        if b <= a:
            return
        if not src.compress:
            self += memoryview(src.pending)[a:b]
            return
        starts = src.starts()
        i, j = np.searchsorted(starts, [a, b])
        if self.compress and starts[i] == a and j < len(starts) and starts[j] == b:
            z = np.concatenate([[0], np.cumsum(src.zsizes, dtype=np.int64)])
            self.seal()
            self.data += memoryview(src.data)[int(z[i]) : int(z[j])]
            self.sizes += src.sizes[i:j]
            self.zsizes += src.zsizes[i:j]
            self.done += b - a
        else:
            self += src.text().read(a, b)

    def text(self) -> ArgsText:
        """The text so far (what is pending is sealed into a block first)."""
        if not self.compress:
            return PlainText(self.pending)
        self.seal()
        z = np.zeros(len(self.zsizes) + 1, dtype=np.int64)
        np.cumsum(self.zsizes, out=z[1:])
        return BlockText(self.data, z, self.starts())


__all__ = [
    "BLOCK_BYTES",
    "ArgsText",
    "BlockText",
    "CorruptTextError",
    "PlainText",
    "TextWriter",
    "compress_blocks",
    "compression_on",
]
