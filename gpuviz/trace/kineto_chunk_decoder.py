"""The decoding an import child does: a chunk of Kineto events in, its columns out.

:class:`ChunkDecoder` numbers symbols, lanes and tracks its own way and says, with each reply,
what it numbered anew; the importer renumbers them into its own ids
(:meth:`gpuviz.trace.kineto_decode.FileReader.merge`). It takes only clean chunks: anything
odd (values of the wrong type, skipped events, errors, ``B``/``E`` events) is answered "not
done", and the importer reads that chunk itself. It runs in a child process
(:mod:`gpuviz.trace.kineto_worker`), or in the importer's own
(:class:`~gpuviz.trace.kineto_worker.LocalDecoder`); it knows nothing of either.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import msgspec
import numpy as np

from gpuviz.trace import args_text, memory_budget
from gpuviz.trace.errors import ImportCancelledError
from gpuviz.trace.jsonscan import EventChunks
from gpuviz.trace.kineto_columns import ColumnBuilder
from gpuviz.trace.kineto_events import EVENTS, Interner
from gpuviz.trace.kineto_tracks import TrackTable
from gpuviz.trace.model import SymbolTable

WHOLE_FILE_REPLY_BYTES = 32 << 20
"""A child reading a whole file sends back the columns of this many bytes of it at a time
(one reply per file of a 64-rank folder, instead of one per 1 MiB chunk, each of which the
importer merged with a pass over every column)."""


class ChunkDecoder:
    """A chunk of events in, its columns and what it numbered anew out (a child's work)."""

    def __init__(self, compress: bool | None = None, drop: Sequence[str] | None = None) -> None:
        # Its replies' args text as zlib blocks (a child: as its importer says, in its env).
        self.compress = args_text.compression_on() if compress is None else compress
        # What the import leaves out to fit its memory limit (a spawned child: from its env).
        self.drop = memory_budget.drop_from_env() if drop is None else tuple(drop)
        self.columns = ColumnBuilder("<import worker>", Interner(SymbolTable()), drop=self.drop)
        self.symbols = 0
        self.file = -1
        self.lanes = 0
        self.tracks = 0
        self.lane_gpu: set[int] = set()

    def process(self, file: int, buf: bytes | bytearray) -> dict[str, Any]:
        """Decode ``buf``, a JSON array of events of ``file``: the reply (arrays as arrays)."""
        self.columns.clear_parts()
        failed = self.add(file, buf)
        return failed if failed is not None else self.reply()

    def add(self, file: int, buf: bytes | bytearray) -> dict[str, Any] | None:
        """Decode ``buf`` (a JSON array of events of ``file``) into the columns since the last
        :meth:`reply`: None, or the reply that says why the chunk was not taken (what it
        added is then taken back, and the columns before it stay)."""
        r = self.columns
        if file != self.file:  # lanes and tracks are a file's own: number them afresh
            self.file = file
            r.tracks = TrackTable()
            self.lanes = self.tracks = 0
            self.lane_gpu = set()
        mark = r.mark()
        try:
            events = EVENTS.decode(buf)
        except (msgspec.DecodeError, UnicodeDecodeError):
            return {"ok": False, "why": "decode"}
        except msgspec.ValidationError:
            return {"ok": False, "why": "odd"}
        except RecursionError:  # nested too deeply: the importer reads it and says where
            return {"ok": False, "why": "error"}
        try:
            r.add(events, r.n_events, None)
        except Exception:  # the importer reads this chunk itself, and reports what is wrong
            r.rollback(mark)
            return {"ok": False, "why": "error"}
        if r.warnings.count or r.warnings.samples or r.begin_end:
            r.rollback(mark)
            return {"ok": False, "why": "odd"}
        meta = r.meta_events[mark.meta_events :]  # a file's first chunk has them: sent, not
        if meta:  # decoded again
            try:
                msgspec.msgpack.encode(meta)
            except (TypeError, OverflowError, ValueError):  # args msgpack cannot carry
                r.rollback(mark)
                return {"ok": False, "why": "odd"}
        r.n_events += len(events)
        return None

    def reply(self) -> dict[str, Any]:
        """The columns added since the last reply, and what they numbered anew; the columns
        are then cleared."""
        r = self.columns
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
            name: {c: parts[0] if len(parts) == 1 else np.concatenate(parts)
                   for c, parts in table.items() if parts}
            for name, table in r.tables
        }  # fmt: skip
        lengths = np.concatenate(r.arg_lengths) if r.arg_lengths else np.empty(0, np.int64)
        blob: Any = r.blob
        blocks = np.empty(0, np.int64)
        if blob and self.compress:  # here, in parallel: the importer only appends blocks
            blob, blocks = args_text.compress_blocks(blob)
        out = {
            "ok": True, "n": r.n_events, "symbols": symbols, "lanes": [list(k) for k in lanes],
            "tracks": tracks, "lane_gpu": new_gpu, "cols": cols, "blob": blob, "blocks": blocks,
            "arg_lengths": lengths.astype(np.int64, copy=False), "meta": list(r.meta_events),
            "dropped_python": r.dropped_python, "dropped_flows": r.dropped_flows,
        }  # fmt: skip
        r.clear_parts()
        return out

    def read_file(
        self,
        file: int,
        path: str,
        cancelled: Callable[[], bool] | None = None,
        emit: Callable[[dict[str, Any]], None] | None = None,
    ) -> dict[str, Any]:
        """Scan and decode all of ``path`` (``file``): the replies of its chunks, in order.

        A chunk that :meth:`process` does not take is sent back as text (``raw``, with its
        ``offset``), for the importer to read itself; a wrong guess of a chunk's end is redone
        here, exactly, as the importer's own reading would. Anything else wrong with the file
        (it cannot be read, it is not a trace) is the importer's to report: ``ok`` False, and
        ``reset`` (this decoder numbers afresh, and the importer forgets its numbering).

        With ``emit``, each chunk's reply goes there as soon as it is made (a child writes it
        out at once, holding one chunk's columns at a time), and ``parts`` is their count.
        """
        chunks = EventChunks(path, guess=True, cancelled=cancelled)
        parts: list[dict[str, Any]] = []
        add = parts.append if emit is None else emit
        count = 0
        pending = 0  # bytes of the chunks in the columns, not yet in a reply

        def flush() -> None:
            nonlocal count, pending
            if pending:
                add(self.reply())
                count += 1
                pending = 0

        try:
            self.columns.clear_parts()
            for chunk in chunks:
                buf = chunk.json_array()
                failed = self.add(file, buf)
                if failed is None:
                    # The chunks go back together, a reply per WHOLE_FILE_REPLY_BYTES: the
                    # importer merges each reply with a pass over every column (about a ms).
                    pending += len(buf)
                    if pending >= WHOLE_FILE_REPLY_BYTES:
                        flush()
                elif failed["why"] == "decode" and chunk.guessed:
                    chunks.reject()
                else:
                    flush()  # the replies stay in file order
                    add({"ok": False, "raw": buf, "offset": chunk.byte_offset})
                    count += 1
            flush()
        except ImportCancelledError:
            raise
        except Exception:  # the importer reads the file itself and says what is wrong
            # The numbering of the chunks done is lost with them: start afresh, both sides.
            self.__init__(self.compress, self.drop)  # type: ignore[misc]
            return {"ok": False, "why": "error", "reset": True}
        return {
            "ok": True, "whole": True, "parts": parts if emit is None else count,
            "is_list": chunks.is_list, "metadata": chunks.metadata,
        }  # fmt: skip
