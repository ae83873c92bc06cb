"""Streaming reader of a JSON trace file: the events array in chunks, the rest as metadata.

A Kineto trace is one JSON object whose ``traceEvents`` array holds almost all of its bytes
(or, rarely, a bare JSON array of events). Parsing it whole builds a Python object per event
and costs several times the file's size in memory. :class:`EventChunks` instead reads the file
in blocks (decompressing ``.gz`` on the fly) and hands out runs of complete elements of the
array, which the caller decodes with msgspec one chunk at a time. The top-level fields other
than ``traceEvents`` are kept and decoded at the end.

Where a chunk ends is found in one of two ways:

- quickly, by guessing: the last ``}, {"ph"``-like boundary in the block (a regular
  expression over its last 4 KiB, widened until it finds one; in the import's pipeline,
  only those bytes of an uncompressed file's block are read: ``sparse``). The caller's JSON
  decode of the chunk proves the guess right, since a wrong one leaves a bracket or a string
  open; when it fails the caller calls :meth:`EventChunks.reject` and the same text is
  handed out again, split exactly;
- exactly, with vectorized numpy over the bytes: quote parity (escaped quotes handled) tells
  what is inside strings, and a cumulative sum of the brackets outside them gives the depth.
  This runs on the file's first and last blocks and wherever a guess failed.

Only JSON text is read: nothing in a file is ever evaluated or unpickled. Both ways of
finding an element's end are :mod:`gpuviz.trace.json_boundaries`'s.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import msgspec
import numpy as np

from gpuviz.trace.errors import ImportCancelledError, TraceFormatError
from gpuviz.trace.file_blocks import Unread, is_gzip, open_blocks, read_span
from gpuviz.trace.json_boundaries import (
    deep_nesting,
    guess_split,
    string_state,
    structural_brackets,
    text_reader,
)

BLOCK_BYTES = 1 << 20
"""Uncompressed bytes handed to the scanner at a time (bounds the reader's own memory).

It also bounds how long one msgspec decode holds the GIL, which the app's GUI thread needs
while a trace loads in a worker thread: measured on a 2-core box loading a 100k-kernel trace,
4 MiB blocks left the GUI thread blocked 38-44 ms at the 99th percentile, 1 MiB 16 ms; the
import took no longer (within the noise of a shared box)."""


MAX_EVENT_BYTES = 256 << 20
"""An element of the events array larger than this is refused (real events are at most a few
MB; the text of an unfinished one is carried from block to block, so this bounds the memory that
padding inside one can take)."""
_WS = b" \t\r\n"

_EVENTS_KEY = re.compile(rb'"traceEvents"\s*:\s*$')
_DECODE_BYTE = re.compile(r"\(byte (\d+)\)")


@dataclass
class Chunk:
    """A run of complete elements of the events array, as one or more pieces of text.

    Attributes
    ----------
    pieces : list of bytes-like
        The elements and the commas between them (no enclosing brackets), in pieces that are
        joined only once, by :meth:`json_array`.
    byte_offset : int
        Offset of the text in the (uncompressed) file, for error messages.
    guessed : bool
        Its end was found by a quick guess: if it does not decode as JSON, call
        :meth:`EventChunks.reject` and the scanner hands out the same events exactly.
    span : tuple of int, optional
        ``(offset, length)``: the text is exactly these bytes of the file (an uncompressed
        file), so another process may read it from there instead of being handed it.
    path : str, optional
        With ``pieces`` None: the file the text is read from (its ``span``), when asked for.
    """

    pieces: list[Any] | None
    byte_offset: int
    guessed: bool = False
    span: tuple[int, int] | None = None
    path: str | None = None

    def _pieces(self) -> list[Any]:
        if self.pieces is not None:
            return self.pieces
        assert self.path is not None and self.span is not None
        return [read_span(self.path, *self.span)]

    @property
    def text(self) -> bytes:
        """The elements' text."""
        return b"".join(self._pieces())

    def json_array(self) -> bytes:
        """The elements as one JSON array (one copy of the text)."""
        return b"".join([b"[", *self._pieces(), b"]"])


class EventChunks:
    """Iterate over the events of one trace file in chunks; then read :attr:`metadata`.

    Parameters
    ----------
    path : str
        The file (``.json`` or ``.json.gz``).
    block_bytes : int, optional
        Uncompressed bytes scanned at a time (default :data:`BLOCK_BYTES`, read when called).
    on_read : callable, optional
        Told the count of file bytes read so far (for progress).
    cancelled : callable, optional
        Polled between blocks; when it returns True, :class:`ImportCancelledError` is raised.
    guess : bool
        Find chunk ends by the quick guess (default); False: always exactly.
    sparse : bool
        With ``guess``, in an uncompressed file: read only the last bytes of each block
        where they hold a guessed chunk end, and hand out chunks whose text is read from the
        file when asked for (their ``span``). For the import's pipeline, whose children read
        the chunks themselves: reading every block here took 0.056 s of a 100k-kernel
        import's 0.2 s on a 16-core host, in the process that hands the chunks out.

    Attributes
    ----------
    is_list : bool
        The file is a bare JSON array of events.
    metadata : dict
        After iteration: the top-level fields other than ``traceEvents`` (``{}`` for a list).
    """

    def __init__(
        self,
        path: str,
        block_bytes: int | None = None,
        on_read: Callable[[int], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
        guess: bool = True,
        sparse: bool = False,
    ) -> None:
        self.path = str(path)
        self.guess = guess
        self.sparse = sparse and guess
        self.block_bytes = block_bytes or BLOCK_BYTES
        self.on_read = on_read
        self.cancelled = cancelled
        self.is_list = False
        self.metadata: dict[str, Any] = {}
        self.total_bytes = 0

    # Scanner state (carried from block to block).
    _in_string: int
    _escape_next: bool
    _depth: int

    @property
    def level(self) -> int:
        """The nesting depth of the events array's elements: 1 in a bare list, else 2."""
        return 1 if self.is_list else 2

    def reject(self) -> None:
        """Tell the scanner that the last chunk, a guessed one, did not decode as JSON.

        The scanner then finds that text's element boundaries exactly and hands them out
        again, as unguessed chunks.
        """
        self._rejected = True

    def __iter__(self) -> Iterator[Chunk]:
        path = self.path
        self._in_string = 0
        self._escape_next = False
        self._depth = 0
        self._rejected = False
        phase = "start"  # start -> before (object, key not seen) -> events -> after
        level = 0  # depth of the events array's elements
        meta: list[bytes] = []
        meta_at: list[int] = []  # the file offset of each piece of meta (for error messages)
        pending = b""  # unfinished elements carried to the next block
        pending_offset = 0
        lazy_end = -1  # >= 0: the pending text is the file's up to here, not read (sparse)
        need_sep = False  # a ',' must come before the next element
        prev_tail = b""
        after = (0, False)  # after the events array: inside a string? escaped next byte?
        base = 0
        plain = not is_gzip(path)  # file offsets are text offsets: chunks have spans

        def unread() -> bool:
            # In the events array, where nothing is carried but the text of the next chunk.
            return phase == "events" and not need_sep

        sparse = unread if self.sparse and plain else None
        for item in _head_first(open_blocks(path, self.block_bytes, self.on_read, sparse)):
            if self.cancelled is not None and self.cancelled():
                raise ImportCancelledError(path)
            n = len(item)
            # Only the events array's blocks are left unread (see ``unread``).
            skipped: Unread | None = None
            if isinstance(item, Unread):
                skipped = item if phase == "events" else None
                block = b"" if phase == "events" else item.read()
            else:
                block = item
            if phase == "events":
                exact = False  # the guess was rejected: find this text's boundaries exactly
                if skipped is not None:
                    split = guess_split(n, skipped.read, whole=False)
                    if split is not None:
                        span = (pending_offset, base + split[0] - pending_offset)
                        self._rejected = False
                        yield Chunk(None, pending_offset, True, span, path)
                        if not self._rejected:
                            pending, lazy_end = b"", base + n
                            pending_offset = base + split[1]
                            base += n
                            continue
                        exact = True
                    block = skipped.read()
                if lazy_end >= 0:
                    pending = read_span(path, pending_offset, lazy_end - pending_offset)
                    lazy_end = -1
                if not pending and _blank(block):
                    # Padding between events (a gzip bomb's gigabytes of spaces): skipped,
                    # never carried, so memory and time do not grow with it.
                    pending_offset = base + n
                    base += n
                    continue
                if need_sep:
                    pending, pending_offset, skip, need_sep = self._separator(
                        pending, pending_offset, block
                    )
                    if skip:
                        block = block[skip:]
                        pending_offset = base + skip
                        if not block:
                            base += n
                            continue
                # Fast path: guess the last element boundary in the block; the consumer's
                # JSON decode of the guessed chunk proves it right (a wrong guess leaves a
                # bracket or string open, so the decode fails and the text is redone exactly).
                guessed = None
                if self.guess and not exact:
                    guessed = guess_split(len(block), text_reader(block))
                if guessed is not None:
                    end, nxt = guessed
                    view = memoryview(block)[:end]
                    chunk = Chunk([pending, view] if pending else [view], pending_offset, True)
                    if plain:  # pending is the file's text up to this block, then the view
                        chunk.span = (pending_offset, len(pending) + len(view))
                    self._rejected = False
                    yield chunk
                    if not self._rejected:
                        pending = block[nxt:]
                        pending_offset = base + (n - len(block)) + nxt
                        base += n
                        continue
                text = pending + block
                pending, pending_offset, phase, rest, need_sep = yield from self._exact(
                    text, pending_offset, level
                )
                if phase == "after":
                    meta.append(rest)
                    meta_at.append(pending_offset)
                    after = string_state(rest, after)
                base += n
                continue
            if phase == "after":
                # Padding outside strings after the events array stands as one space.
                blank = not after[0] and _blank(block)
                meta.append(b" " if blank else block)
                meta_at.append(base)
                if not blank:
                    after = string_state(block, after)
                base += n
                continue
            if phase == "before" and not self._in_string and _blank(block):
                meta.append(b" ")  # padding before the events array, as above
                meta_at.append(base)
                base += n
                continue
            if base == 0 and block.startswith(b"\xef\xbb\xbf"):
                block = b"   " + block[3:]
            pos, delta, depth_after = self._structure(block)
            cursor = 0  # bytes of this block before it are already handled
            if phase == "start":
                stripped = block.lstrip(_WS)
                if not stripped:
                    base += n
                    continue
                first = len(block) - len(stripped)
                c = block[first : first + 1]
                if c == b"[":
                    self.is_list = True
                    phase, level = "events", 1
                    cursor = first + 1
                elif c == b"{":
                    phase = "before"
                else:
                    raise self._not_a_trace(block, first)
            if phase == "before":
                depth_before = depth_after - delta
                opens = np.flatnonzero((delta > 0) & (depth_before == 1))
                start = -1
                for k in opens.tolist():
                    p = int(pos[k])
                    if block[p] != ord("["):
                        continue
                    # The key may stand far before the bracket, past any amount of padding.
                    near = block[max(0, p - 256) : p].rstrip(_WS)
                    if not near and p > 256:
                        near = block[:p].rstrip(_WS)
                    if _EVENTS_KEY.search((prev_tail + near[-300:])[-300:]):
                        start = p
                        break
                if start < 0:
                    meta.append(block[cursor:])
                    meta_at.append(base + cursor)
                    prev_tail = (prev_tail + block).rstrip(_WS)[-300:]
                    base += n
                    continue
                meta.extend((block[cursor:start], b"[]"))
                meta_at.extend((base + cursor, base + start))
                phase, level = "events", 2
                cursor = start + 1
            if phase == "events":
                # The rest of this block, exactly (its structure is already in hand).
                pending, pending_offset, phase, rest, need_sep = yield from self._exact(
                    block[cursor:], base + cursor, level
                )
                if phase == "after":
                    meta.append(rest)
                    meta_at.append(pending_offset)
                    after = string_state(rest, after)
            base += n
        if lazy_end >= 0:
            pending = read_span(path, pending_offset, lazy_end - pending_offset)
        if phase == "events" and pending:
            if need_sep:
                pending, pending_offset, _, need_sep = self._separator(pending, pending_offset, b"")
            if not need_sep:
                pending, pending_offset, phase, rest, need_sep = yield from self._exact(
                    pending, pending_offset, level
                )
            if phase == "after":
                meta.append(rest)
                meta_at.append(pending_offset)
        self.total_bytes = base
        if phase == "start":
            raise TraceFormatError(path, "", "empty file")
        if phase == "events" or (phase == "before" and (self._in_string or self._depth > 0)):
            where = "inside the event list" if phase == "events" else "early"
            raise TraceFormatError(
                path, f"byte {base}", f"the JSON text ends {where} (truncated file?)"
            )
        self._finish_metadata(meta, meta_at, phase)

    def _exact(
        self, text: bytes, offset: int, level: int
    ) -> Generator[Chunk, None, tuple[bytes, int, str, bytes, bool]]:
        """Hand out the complete elements of ``text``, which starts at an element (or at the
        whitespace before one).

        Returns the unfinished rest and its offset, the phase (``"after"`` once the events
        array closed), the text after the array, and whether the rest must begin with ``,``.
        """
        self._in_string, self._escape_next, self._depth = 0, False, level
        pos, delta, depth_after = self._structure(text)
        closes = np.flatnonzero((delta < 0) & (depth_after <= level))
        end_array = -1
        last_close = -1
        if closes.size:
            below = closes[depth_after[closes] < level]
            if below.size:
                end_array = int(pos[below[0]])
                in_array = closes[closes < below[0]]
            else:
                in_array = closes
            if in_array.size:
                last_close = int(pos[in_array[-1]])
        if end_array >= 0:
            chunk = self._chunk(text[:end_array], offset)
            if chunk is not None:
                yield chunk
            return b"", offset + end_array + 1, "after", text[end_array + 1 :], False
        if last_close >= 0:
            chunk = self._chunk(text[: last_close + 1], offset)
            if chunk is not None:
                yield chunk
            return text[last_close + 1 :], offset + last_close + 1, "events", b"", True
        # No element ends in the text: it is carried to the next block, without the padding
        # before the element (which would otherwise grow with every block of it).
        lead = _WS_RUN.match(text).end()  # type: ignore[union-attr]
        if lead:
            text, offset = text[lead:], offset + lead
        if len(text) > MAX_EVENT_BYTES:
            raise TraceFormatError(
                self.path, f"byte {offset}", f"an event larger than {MAX_EVENT_BYTES >> 20} MiB"
            )
        return text, offset, "events", b"", False

    def _not_a_trace(self, block: bytes, offset: int) -> TraceFormatError:
        """The error for a file whose first value is neither an object nor a list."""
        head = block[offset:].strip(_WS)
        kind = None
        if len(block) < self.block_bytes:  # the whole file is in hand: is it JSON at all?
            try:
                value = msgspec.json.decode(block)
                kind = {bool: "true/false", type(None): "null", str: "string"}.get(
                    type(value), "number"
                )
            except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
                pass
        if kind is not None:
            return TraceFormatError(
                self.path,
                "",
                f"not a trace: the file holds a JSON {kind}, not an object "
                "with traceEvents or a list of events",
            )
        return TraceFormatError(
            self.path,
            f"byte {offset}",
            f"not a JSON trace: expected a JSON object or list, found {_snippet(head[:20])}",
        )

    def _separator(self, pending: bytes, offset: int, block: bytes) -> tuple[bytes, int, int, bool]:
        """Skip the ``,`` that must come before the next element.

        Returns the pending text after it and its offset, how many bytes of ``block`` to skip,
        and whether the comma is still to come (only whitespace seen so far).
        """
        m = _always(_SEPARATOR.match(pending))
        if m.end() < len(pending) or m.group(1):
            if not m.group(1) and pending[m.end() : m.end() + 1] == b"]":
                return pending, offset, 0, False  # the array ends: no separator
            if not m.group(1):
                raise TraceFormatError(
                    self.path,
                    f"byte {offset + m.end()}",
                    "malformed JSON: expected ',' between events",
                )
            return pending[m.end() :], offset + m.end(), 0, False
        offset += len(pending)
        m = _always(_SEPARATOR.match(block))
        if m.end() < len(block) or m.group(1):
            if not m.group(1) and block[m.end() : m.end() + 1] == b"]":
                return b"", offset, 0, False  # the array ends: no separator
            if not m.group(1):
                raise TraceFormatError(
                    self.path,
                    f"byte {offset + m.end()}",
                    "malformed JSON: expected ',' between events",
                )
            return b"", offset + m.end(), m.end(), False
        return b"", offset + len(block), len(block), True

    def _chunk(self, text: bytes, offset: int) -> Chunk | None:
        """The elements of ``text`` without the whitespace around them (None when empty)."""
        start = _WS_RUN.match(text).end()  # type: ignore[union-attr]
        stop = len(text)
        while stop > start and text[stop - 1] in _WS:
            stop -= 1
        if stop == start:
            return None
        return Chunk([memoryview(text)[start:stop]], offset + start)

    def _finish_metadata(self, meta: list[bytes], meta_at: list[int], phase: str) -> None:
        text = b"".join(meta)
        if self.is_list:
            if text.strip(_WS):
                raise TraceFormatError(
                    self.path, "", "malformed JSON: unexpected text after the event list"
                )
            self.metadata = {}
            return
        try:
            value = msgspec.json.decode(text)
        except (msgspec.DecodeError, UnicodeDecodeError) as e:
            raise TraceFormatError(
                self.path, "", f"malformed JSON outside the event list ({e})"
            ) from None
        except RecursionError:
            # The text is the file's pieces outside the events array: find the place in them.
            pos, what = deep_nesting(text)
            starts = np.cumsum([0] + [len(m) for m in meta])
            i = max(int(np.searchsorted(starts, pos, side="right")) - 1, 0)
            raise TraceFormatError(
                self.path, f"byte {meta_at[i] + pos - int(starts[i])}", what
            ) from None
        if not isinstance(value, dict) or "traceEvents" not in value:
            raise TraceFormatError(
                self.path, "", "not a Kineto trace: a JSON object without a traceEvents list"
            )
        if phase != "after":  # the key was there, but its value was no array
            raise TraceFormatError(
                self.path, "", "not a Kineto trace: traceEvents is not a list of events"
            )
        value.pop("traceEvents", None)
        self.metadata = value

    def _structure(self, block: bytes) -> tuple[Any, Any, Any]:
        """Positions of the structural brackets of a block, their +-1, and the depth after each."""
        brackets, delta, depth_after, self._in_string, self._escape_next = structural_brackets(
            block, self._in_string, self._escape_next, self._depth
        )
        if depth_after.size:
            if depth_after.min() < 0:
                bad = int(brackets[np.flatnonzero(depth_after < 0)[0]])
                raise TraceFormatError(
                    self.path, f"byte {bad}", "malformed JSON: unbalanced closing bracket"
                )
            self._depth = int(depth_after[-1])
        return brackets, delta, depth_after


_HEAD_BYTES = 1 << 16
_SEPARATOR = re.compile(rb"[ \t\r\n]*(,?)[ \t\r\n]*")
_WS_RUN = re.compile(rb"[ \t\r\n]*")


def _always(m: re.Match[bytes] | None) -> re.Match[bytes]:
    # For patterns that match the empty string: they always match.
    assert m is not None
    return m


def _head_first(blocks: Iterable[bytes | Unread]) -> Iterator[bytes | Unread]:
    """The first block's head on its own, so that finding the events array scans little."""
    first = True
    for block in blocks:
        if first and isinstance(block, bytes) and len(block) > 2 * _HEAD_BYTES:
            yield block[:_HEAD_BYTES]
            block = block[_HEAD_BYTES:]
        first = False
        yield block


def _blank(block: bytes) -> bool:
    """Whether ``block`` is all JSON whitespace (bytes.isspace also takes \\v and \\f)."""
    return block.isspace() and b"\x0b" not in block and b"\x0c" not in block


def _snippet(b: bytes) -> str:
    return repr(b.decode("utf-8", "replace"))


def decode_error_offset(err: Exception, chunk_offset: int, prefix: int = 1) -> str:
    """``"byte N"`` for a msgspec decode error of ``b"[" + chunk + b"]"``, or ``""``."""
    m = _DECODE_BYTE.search(str(err))
    if not m:
        return ""
    return f"byte {max(chunk_offset + int(m.group(1)) - prefix, chunk_offset)}"
