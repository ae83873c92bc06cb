"""One Kineto file, chunk by chunk, into column parts: the inner loop of the importer.

:class:`FileReader` takes the chunks of events that :mod:`gpuviz.trace.jsonscan` hands out,
decodes each with msgspec into small structs (:mod:`gpuviz.trace.kineto_events`) and turns them
into numpy column parts (:class:`~gpuviz.trace.kineto_columns.ColumnBuilder`). For a large
import, :mod:`gpuviz.trace.kineto_parallel` hands the chunks to decoders
(:mod:`gpuviz.trace.kineto_worker`) instead, and the reader merges their columns in file order.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec
import numpy as np
import numpy.typing as npt

from gpuviz.trace.args_text import TextWriter
from gpuviz.trace.errors import ImportWarnings
from gpuviz.trace.jsonscan import Chunk, EventChunks
from gpuviz.trace.kineto_columns import ColumnBuilder, Loose
from gpuviz.trace.kineto_events import (
    EVENTS,
    RAWS,
    STRING_CODE_BASE,
    Event,
    Interner,
    malformed,
    too_deep,
)
from gpuviz.trace.kineto_tracks import TrackTable
from gpuviz.trace.kineto_worker import Decoder
from gpuviz.trace.model import TrackKind

Array = npt.NDArray[Any]


@dataclass
class FileColumns:
    """Everything read from one file: column parts per table, not yet joined or aligned.

    Times are ns relative to the file's own zero (``baseTimeNanoseconds``, or 0 for absolute
    µs); track ids and args rows are the file's own. The args text is that of
    ``args_blob`` from ``args_start`` on, at ``args_offsets`` from there (the writer may be
    shared with the other files of the trace, which come before and after).
    """

    path: str
    metadata: dict[str, Any]
    event_count: int
    slices: dict[str, list[Array]]
    instants: dict[str, list[Array]]
    flows: dict[str, list[Array]]
    memory: dict[str, list[Array]]
    args_blob: TextWriter
    args_offsets: Array
    args_start: int
    tracks: TrackTable
    metadata_events: list[dict[str, Any]]
    warnings: ImportWarnings
    dropped_python: int = 0  # python_function slices left out (memory_budget)
    dropped_flows: int = 0  # launch flow events left out (the same)


class FileReader:
    """Reads one file into :class:`FileColumns`.

    :meth:`read` reads it all in this process. The parallel importer
    (:mod:`gpuviz.trace.kineto_parallel`) instead hands its chunks to decoders and feeds their
    replies in file order to :meth:`merge` (or :meth:`read_chunk` for a chunk no decoder took),
    then calls :meth:`finish`.

    Parameters
    ----------
    path : str
        The file.
    interner : Interner
        Shared with the other files of the trace.
    on_read, cancelled : callable, optional
        Progress (file bytes read so far) and cancellation, as for :class:`EventChunks`.
    blob : TextWriter, optional
        The args text of the trace's files, shared by files read one after another (each
        appends its own after the earlier files'), compressed as it comes. Default: the
        file's own.
    drop : sequence of str
        What the import leaves out to fit its memory limit (:mod:`gpuviz.trace.memory_budget`).
    """

    def __init__(
        self,
        path: str,
        interner: Interner,
        on_read: Callable[[int], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
        blob: TextWriter | None = None,
        drop: Sequence[str] = (),
    ) -> None:
        self.path = path
        self.on_read = on_read
        self.cancelled = cancelled
        self.writer = TextWriter() if blob is None else blob
        self.columns = ColumnBuilder(path, interner, self.writer, drop)

    def chunks(self, guess: bool = True, sparse: bool = False) -> EventChunks:
        """The file's chunks of events (see :class:`EventChunks`)."""
        return EventChunks(
            self.path, on_read=self.on_read, cancelled=self.cancelled, guess=guess, sparse=sparse
        )

    def restart(self) -> None:
        """Drop what was read so far (the file is read again from its start)."""
        c = self.columns
        del c.blob[len(c.blob) - sum(int(a.sum()) for a in c.arg_lengths) :]  # its args: last
        self.columns = ColumnBuilder(self.path, c.it, c.blob, c.drop)

    def read(self) -> FileColumns:
        """Read the whole file, in this process."""
        chunks = self.chunks(guess=True)
        for chunk in chunks:
            self.read_chunk(chunk, chunks, can_reject=True)
        return self.finish(chunks)

    def finish(self, chunks: EventChunks) -> FileColumns:
        """The file's columns, once every chunk of ``chunks`` is read or merged."""
        c = self.columns
        c.pair_begin_end()
        self.writer.seal()  # the next file's text starts a block: files can be reordered
        lengths = np.concatenate(c.arg_lengths) if c.arg_lengths else np.empty(0, np.int64)
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        return FileColumns(
            path=self.path, metadata=chunks.metadata, event_count=c.n_events,
            slices=c.slices, instants=c.instants, flows=c.flows, memory=c.memory,
            args_blob=self.writer, args_offsets=offsets,
            args_start=len(self.writer) - int(offsets[-1]),
            tracks=c.tracks,
            metadata_events=c.meta_events, warnings=c.warnings,
            dropped_python=c.dropped_python, dropped_flows=c.dropped_flows,
        )  # fmt: skip

    def merge(self, reply: dict[str, Any], w: Decoder, file: int) -> None:
        """Add a decoder's columns of a chunk of this file (``file``: its index in the
        import), renumbered into this reader's ids."""
        cb = self.columns
        names = cb.it.names
        if w.file != file:
            w.start_file(file)
        new = [names[s] for s in reply["symbols"]]
        if new:
            w.symbols = np.concatenate([w.symbols, np.asarray(new, dtype=np.int64)])
        sym = w.symbols

        def code(c: int) -> int:  # a pid/tid code: string codes name the decoder's symbols
            return STRING_CODE_BASE - int(sym[STRING_CODE_BASE - c]) if c <= STRING_CODE_BASE else c

        t = cb.tracks
        for pid, tid in reply["lanes"]:
            w.lanes.append(t.lanes.setdefault((code(pid), code(tid)), len(t.lanes)))
        for kind, a, b, pid, tid in reply["tracks"]:
            if kind >= TrackKind.CPU_THREAD:
                a = w.lanes[a]
            key = (kind, a, b)
            v = t.tracks.get(key)
            if v is None:
                v = t.tracks[key] = len(t.tracks)
                t.track_lane[v] = (code(pid), code(tid))
            w.tracks.append(v)
        for lane, track in reply["lane_gpu"]:
            t.lane_gpu.setdefault(w.lanes[lane], w.tracks[track])
        lanes = np.asarray(w.lanes, dtype=np.int32)
        tracks = np.asarray(w.tracks, dtype=np.int32)
        shift = cb.n_args
        for table_name, table in cb.tables:
            cols = reply["cols"].get(table_name)
            if not cols:
                continue
            for c, a in cols.items():
                view = False
                if not isinstance(a, np.ndarray):  # a child's: (dtype, bytes or a view)
                    view = isinstance(a[1], memoryview)  # of the whole reply's bytes
                    a = np.frombuffer(a[1], dtype=a[0])
                if c in ("name", "cat"):
                    a = sym[a].astype(np.int32)
                elif c == "track":
                    a = tracks[a]
                elif c == "lane":
                    a = lanes[a]
                elif c == "args" and shift:
                    a = np.where(a >= 0, a + shift, a).astype(np.int32)
                elif view:  # its own copy: a view would hold the whole reply, args text too
                    a = a.copy()
                table[c].append(a)
        lengths = reply["arg_lengths"]
        if not isinstance(lengths, np.ndarray):
            view = isinstance(lengths, memoryview)
            lengths = np.frombuffer(lengths, dtype=np.int64)
            lengths = lengths.copy() if view else lengths
        if len(lengths):
            blocks = reply.get("blocks")
            if blocks is not None and len(blocks) and isinstance(cb.blob, TextWriter):
                cb.blob.add_blocks(reply["blob"], np.frombuffer(blocks, np.int64))
            else:
                cb.blob += reply["blob"]
            cb.arg_lengths.append(lengths)
            cb.n_args += len(lengths)
        cb.meta_events.extend(reply.get("meta") or ())
        cb.n_events += int(reply["n"])
        cb.dropped_python += int(reply.get("dropped_python", 0))
        cb.dropped_flows += int(reply.get("dropped_flows", 0))

    def merge_file(self, reply: dict[str, Any], w: Decoder, file: int) -> FileColumns:
        """The file's columns from a decoder's reply for the whole of it (see
        :meth:`~gpuviz.trace.kineto_chunk_decoder.ChunkDecoder.read_file`): its chunks merged in
        order, those it did not take read here."""
        chunks = self.chunks(guess=False)
        chunks.is_list = bool(reply["is_list"])
        chunks.metadata = reply["metadata"]
        for part in reply["parts"]:
            if part["ok"]:
                self.merge(part, w, file)
            else:  # read here, where what is odd or wrong is reported, and where
                raw = part["raw"]
                chunk = Chunk([memoryview(raw)[1:-1]], int(part["offset"]))
                self.read_chunk(chunk, chunks, buf=raw)
        if self.on_read is not None:
            with contextlib.suppress(OSError):
                self.on_read(os.stat(self.path).st_size)
        return self.finish(chunks)

    # -- decoding

    def read_chunk(
        self, chunk: Chunk, chunks: EventChunks, buf: bytes | None = None, can_reject: bool = False
    ) -> None:
        """Decode a chunk in this process, into this reader's columns.

        ``can_reject``: the scanner has not moved past the chunk, so a guessed chunk that is
        not JSON is handed back to it (:meth:`EventChunks.reject`); otherwise that raises
        :class:`Restart`.
        """
        if buf is None:
            buf = chunk.json_array()
        c = self.columns
        loose: Loose | None = None
        try:
            try:
                events: list[Event] = EVENTS.decode(buf)
            except msgspec.ValidationError:
                raws = RAWS.decode(buf)  # a JSON error here outranks the odd value
                events, loose = c.decode_loose(raws, chunk.byte_offset, chunks.is_list)
        except (msgspec.DecodeError, UnicodeDecodeError) as e:
            if chunk.guessed:
                if not can_reject:
                    raise Restart from None
                chunks.reject()  # a wrong guess of the chunk's end: it is redone exactly
                return
            raise malformed(self.path, e, chunk.byte_offset) from None
        except RecursionError:
            # msgspec recurses once per level of nesting: 100k "[" would take a traceback.
            raise too_deep(self.path, buf, chunk.byte_offset - 1, chunks.level - 1) from None
        del buf
        base = c.n_events
        c.n_events += len(events) + (loose.skipped if loose else 0)
        if events:
            try:
                c.add(events, base, loose)
            except RecursionError:  # deep args, decoded for their fields
                raise too_deep(
                    self.path, chunk.json_array(), chunk.byte_offset - 1, chunks.level - 1
                ) from None


class Restart(Exception):
    """A guessed chunk end was wrong after the scanner had moved on: read the file again,
    finding every chunk end exactly."""


__all__ = ["FileColumns", "FileReader", "Restart"]
