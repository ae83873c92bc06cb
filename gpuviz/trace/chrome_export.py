"""Write a Trace as Chrome-trace JSON: one file for Perfetto, or one file per rank for HTA.

Events are written in chunks straight from the columns (no list of event dicts), so a trace of
a million kernels exports in seconds and in little memory. Each event's ``args`` is copied as
the raw JSON text the importer kept (:class:`~gpuviz.trace.model.ArgsStore`). Categories are
today's Kineto names (``Kernel`` -> ``kernel``, ``Runtime`` -> ``cuda_runtime`` ...).

Timestamps are written as microseconds with exactly three decimals, relative to
``baseTimeNanoseconds``, which is set to the trace's zero. An absolute microsecond time with
nanosecond digits has 19 significant digits, more than a double holds; relative ones stay exact,
so re-importing a file gives back the same nanoseconds (and the same figures).

Layouts:

- :func:`export_chrome`: one file. With one rank, pids and tids are those of the trace, so the
  file re-imports to the same figures. With several ranks, each rank's processes get pids of
  their own (``(rank index + 1) * 1_000_000 + n``) and ``process_name`` metadata that starts
  with ``rank N``, so viewers show each rank as its own group of processes.
- :func:`export_per_rank`: ``rank-N.json.gz`` per rank, the layout HTA reads. HTA finds a file's
  rank with the regex ``"rank":\\s+(\\d+)``, so the header (``distributedInfo`` first) is written
  by :func:`json.dumps`, which puts a space after each colon; the events by orjson.

Neither writes over the trace's own input (:class:`OwnInputError`, before any file is opened:
``gpuviz export X -o X`` truncated X): the same file by device and inode, so a symlink or a
hard link to it is refused too.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import numpy as np
import numpy.typing as npt
import orjson

# Pids/tids that were strings in the file are stored as codes at or below this (kineto.py).
from gpuviz.trace.kineto import STRING_CODE_BASE, is_string_code
from gpuviz.trace.model import KIND_CATEGORIES, NONE, Kind, Trace, TrackKind, rank_code

CHUNK_EVENTS = 1 << 16
"""Events formatted and written at a time."""

GZIP_LEVEL = 3
"""zlib level: level 9 (gzip's default) is several times slower for a few percent less."""

RANK_PID_STRIDE = 1_000_000
"""Pid block of each rank in a merged multi-rank file."""

Progress = Callable[[int, int], None]


class OwnInputError(ValueError):
    """The output would be one of the trace's own input files (writing would destroy it).

    Parameters
    ----------
    target : Path
        The file that would be written.
    source : str
        The input file it is.
    """

    def __init__(self, target: Path, source: str) -> None:
        self.target = target
        self.source = source
        same = "" if str(target) == source else f" (the same file as {source})"
        super().__init__(f"{target}: is the trace's own input{same}; writing it would destroy it")


def own_input(trace: Trace, target: str | Path) -> str | None:
    """The input file of ``trace`` that ``target`` is (device and inode), or None."""
    try:
        st = os.stat(target)
    except OSError:  # not there (or not reachable): nothing to overwrite
        return None
    for src in trace.sources:
        try:
            if src and os.path.samestat(st, os.stat(src)):
                return src
        except OSError:
            continue
    return None


def _refuse_own_input(trace: Trace, targets: list[Path]) -> None:
    for target in targets:
        src = own_input(trace, target)
        if src is not None:
            raise OwnInputError(target, src)


def export_chrome(trace: Trace, path: str | Path, progress: Progress | None = None) -> Path:
    """Write ``trace`` as one Chrome-trace file (``.json``, or gzip when ``.gz``).

    Parameters
    ----------
    trace : Trace
        The trace (one or several ranks).
    path : str or Path
        The output file.
    progress : callable, optional
        Called as ``progress(events_done, events_total)`` after each chunk.

    Returns
    -------
    Path
        The file written.

    Raises
    ------
    OwnInputError
        ``path`` is one of the trace's input files (nothing is written).
    """
    path = Path(path)
    _refuse_own_input(trace, [path])
    ranks = list(trace.ranks)
    merged = len(ranks) > 1
    header: dict[str, Any]
    if merged:
        first = ranks[0].metadata if ranks else {}
        header = {k: first[k] for k in ("schemaVersion", "deviceProperties") if k in first}
        header["displayTimeUnit"] = "ms"
    else:
        header = _rank_header(ranks[0]) if ranks else {}
    writer = _EventWriter(trace, progress, sum(_count(trace, r.rank) for r in ranks))
    header["baseTimeNanoseconds"] = writer.base_ns
    with _open(path) as f:
        f.write(_header_bytes(header))
        writer.start_file()
        for i, info in enumerate(ranks):
            pid_map = _PidMap(trace, info.rank, base=(i + 1) * RANK_PID_STRIDE if merged else None)
            writer.write_rank(f, info.rank, pid_map)
        f.write(b"\n]}\n")
    return path


def export_per_rank(
    trace: Trace, folder: str | Path, progress: Progress | None = None
) -> list[Path]:
    """Write one ``rank-N.json.gz`` per rank into ``folder`` (created if needed), HTA's layout.

    A lone file's rank (None) is written as rank 0, since HTA needs a rank.

    Parameters
    ----------
    trace : Trace
        The trace.
    folder : str or Path
        The output folder.
    progress : callable, optional
        Called as ``progress(events_done, events_total)`` after each chunk.

    Returns
    -------
    list of Path
        The files written, in rank order.

    Raises
    ------
    OwnInputError
        One of the files would be one of the trace's inputs (nothing is written).
    """
    folder = Path(folder)
    paths = [folder / f"rank-{0 if r.rank is None else int(r.rank)}.json.gz" for r in trace.ranks]
    _refuse_own_input(trace, paths)
    folder.mkdir(parents=True, exist_ok=True)
    writer = _EventWriter(trace, progress, sum(_count(trace, r.rank) for r in trace.ranks))
    out = []
    for info, path in zip(trace.ranks, paths, strict=True):
        rank = 0 if info.rank is None else int(info.rank)
        header = _rank_header(info)
        header["distributedInfo"] = {**header.get("distributedInfo", {}), "rank": rank}
        header = {"distributedInfo": header.pop("distributedInfo"), **header}
        header["baseTimeNanoseconds"] = writer.base_ns
        with _open(path) as f:
            f.write(_header_bytes(header))
            writer.start_file()
            writer.write_rank(f, info.rank, _PidMap(trace, info.rank, base=None))
            f.write(b"\n]}\n")
        out.append(path)
    return out


def _rank_header(info: Any) -> dict[str, Any]:
    """A rank's top-level fields for its output header (its own, bar timing and events)."""
    meta = {
        k: v
        for k, v in (info.metadata or {}).items()
        if k not in ("traceEvents", "baseTimeNanoseconds")
    }
    if info.rank is not None:
        meta["distributedInfo"] = {**(meta.get("distributedInfo") or {}), "rank": int(info.rank)}
        meta = {"distributedInfo": meta.pop("distributedInfo"), **meta}
    else:
        meta.pop("distributedInfo", None)
    meta.setdefault("schemaVersion", 1)
    return meta


def _header_bytes(header: dict[str, Any]) -> bytes:
    # json.dumps (not orjson) for the header: HTA's rank regex wants '"rank": N' with a space.
    text = json.dumps(header, default=str)
    return (text[:-1] + (", " if header else "") + '"traceEvents": [\n').encode()


def _open(path: Path) -> IO[bytes]:
    if path.name.endswith(".gz"):
        return gzip.open(path, "wb", compresslevel=GZIP_LEVEL)  # type: ignore[return-value]
    return open(path, "wb")


def _count(trace: Trace, rank: int | None) -> int:
    code = rank_code(rank)
    t = trace.tracks
    on_rank = t.rank == code
    return int(
        on_rank[trace.slices.track].sum()
        + on_rank[trace.flows.track].sum()
        + on_rank[trace.instants.track].sum()
        + (trace.memory.rank == code).sum()
    )


def _us(ns: npt.NDArray[np.int64]) -> tuple[list[int], list[int]]:
    """Non-negative nanoseconds as (whole µs, remaining ns), to print as ``b"%d.%03d"``."""
    q, r = np.divmod(ns.astype(np.int64), 1000)
    return q.tolist(), r.tolist()


def _min_time(trace: Trace) -> int:
    """The earliest time of any event (relative to the trace zero; 0 when there is none)."""
    lows = [
        int(a.min())
        for a in (
            trace.slices.start_ns,
            trace.flows.ts_ns,
            trace.instants.ts_ns,
            trace.memory.ts_ns,
        )
        if len(a)
    ]
    return min(lows) if lows else 0


def _json_id(value: int, trace: Trace) -> bytes:
    """A pid/tid/flow id as JSON: the number, or the string the file had (see kineto)."""
    value = int(value)
    if is_string_code(value):
        return orjson.dumps(trace.symbols[STRING_CODE_BASE - value])
    return str(value).encode()


class _PidMap:
    """Output pid and tid (JSON text) of each track of one rank, and its metadata events."""

    def __init__(self, trace: Trace, rank: int | None, base: int | None) -> None:
        t = trace.tracks
        code = rank_code(rank)
        self.tracks = np.flatnonzero(t.rank == code)
        self.pid: dict[int, bytes] = {}
        self.tid: dict[int, bytes] = {}
        names = _process_names(trace, code)
        prefix = "" if rank is None else f"rank {rank} "
        processes: dict[bytes, tuple[str, int, bool]] = {}
        next_pid = base
        remap: dict[tuple[bool, int], int] = {}
        for tr in self.tracks.tolist():
            gpu = int(t.kind[tr]) in (TrackKind.GPU_STREAM, TrackKind.GPU_ANNOTATION)
            # GPU lanes are written as Kineto writes them: pid = device, tid = stream.
            pid = int(t.device[tr]) if gpu else int(t.pid[tr])
            tid = int(t.stream[tr]) if gpu else int(t.tid[tr])
            if next_pid is not None:
                key = (gpu, pid)
                if key not in remap:
                    remap[key] = next_pid
                    next_pid += 1
                out_pid = remap[key]
            else:
                out_pid = pid
            pj = _json_id(out_pid, trace)
            self.pid[tr] = pj
            self.tid[tr] = _json_id(tid, trace)
            if pj not in processes:
                if gpu:
                    pname = f"GPU {pid}"
                elif is_string_code(pid):
                    pname = trace.symbols[STRING_CODE_BASE - pid] or "global"
                elif pid in names:
                    pname = f"{names[pid]} (pid {pid})"
                else:
                    pname = f"pid {pid}"
                pname = prefix + pname
                processes[pj] = (pname, pid, gpu)
        self.metadata: list[bytes] = []
        for pj, (pname, pid, gpu) in processes.items():
            sort = pid + (5_000_000 if gpu else 0)
            self.metadata.append(
                b'{"ph":"M","name":"process_name","pid":%s,"tid":0,"args":%s}'
                % (pj, orjson.dumps({"name": pname}))
            )
            self.metadata.append(
                b'{"ph":"M","name":"process_sort_index","pid":%s,"tid":0,"args":%s}'
                % (pj, orjson.dumps({"sort_index": sort}))
            )
            if gpu:
                self.metadata.append(
                    b'{"ph":"M","name":"process_labels","pid":%s,"tid":0,"args":%s}'
                    % (pj, orjson.dumps({"labels": f"GPU {pid}"}))
                )
        seen: set[tuple[bytes, bytes]] = set()
        for tr in self.tracks.tolist():
            lane = (self.pid[tr], self.tid[tr])
            if lane in seen:
                continue
            seen.add(lane)
            name = trace.track_label(tr)
            self.metadata.append(
                b'{"ph":"M","name":"thread_name","pid":%s,"tid":%s,"args":%s}'
                % (lane[0], lane[1], orjson.dumps({"name": name}))
            )


def _process_names(trace: Trace, code: int) -> dict[int, str]:
    """``process_name`` metadata of one rank, by pid."""
    out = {}
    for m in trace.metadata_events:
        if m.get("name") != "process_name" or m.get("rank", NONE) not in (
            code,
            None if code == NONE else code,
        ):
            continue
        pid, args = m.get("pid"), m.get("args") or {}
        if isinstance(pid, int) and isinstance(args.get("name"), str):
            out[pid] = args["name"]
    return out


class _EventWriter:
    """Formats one rank's events chunk by chunk into an open file."""

    def __init__(self, trace: Trace, progress: Progress | None, total: int) -> None:
        self.trace = trace
        self.progress = progress
        self.total = total
        self.done = 0
        sym = trace.symbols.strings
        self._sym_json: list[bytes | None] = [None] * len(sym)
        self._first = True
        # Times are written relative to base_ns, which is at or before every event, so that
        # they are never negative (the importer's zero is already the earliest event).
        self.shift_ns = -min(0, _min_time(trace))
        self.base_ns = int(trace.zero_ns) - self.shift_ns

    def _sym(self, i: int) -> bytes:
        v = self._sym_json[i]
        if v is None:
            v = self._sym_json[i] = orjson.dumps(self.trace.symbols[i])
        return v

    def _emit(self, f: IO[bytes], lines: list[bytes]) -> None:
        if not lines:
            return
        sep = b",\n"
        if not self._first:
            f.write(sep)
        self._first = False
        f.write(sep.join(lines))

    def _tick(self, n: int) -> None:
        self.done += n
        if self.progress is not None:
            self.progress(self.done, self.total)

    def start_file(self) -> None:
        """The next event is the first of a file's array (no comma before it)."""
        self._first = True

    def write_rank(self, f: IO[bytes], rank: int | None, pids: _PidMap) -> None:
        self._emit(f, pids.metadata)
        track_ok = np.zeros(len(self.trace.tracks), dtype=bool)
        track_ok[pids.tracks] = True
        for chunk in self._slices(track_ok, pids):
            self._emit(f, chunk)
        for chunk in self._flows(track_ok, pids):
            self._emit(f, chunk)
        for chunk in self._instants(track_ok, pids):
            self._emit(f, chunk)
        for chunk in self._memory(rank, pids):
            self._emit(f, chunk)

    def _cat_json(self, kind: int, cat: int) -> bytes:
        name = KIND_CATEGORIES.get(Kind(kind)) if kind in Kind._value2member_map_ else None
        return orjson.dumps(name) if name is not None else self._sym(cat)

    def _slices(self, track_ok: npt.NDArray[np.bool_], pids: _PidMap) -> Iterator[list[bytes]]:
        s = self.trace.slices
        rows = np.flatnonzero(track_ok[s.track])
        # The args text these rows point into, decompressed once (a rank's rows are one run
        # of args rows), not a block per slice.
        used = s.args[rows]
        used = used[used >= 0]
        blob, base = (
            self.trace.args.span(int(used.min()), int(used.max())) if len(used) else (b"", 0)
        )
        offs = self.trace.args.offsets
        # '{"ph":"X","cat":..,"name":..,"pid":..,"tid":..,' per (track, name, kind, cat)
        prefixes: dict[tuple[int, int, int, int], bytes] = {}
        for a in range(0, len(rows), CHUNK_EVENTS):
            r = rows[a : a + CHUNK_EVENTS]
            tq, tr = _us(s.start_ns[r] + self.shift_ns)
            dq, dr = _us(s.dur_ns[r])
            arg = s.args[r].astype(np.int64)
            has = arg >= 0
            a0 = np.where(has, offs[np.maximum(arg, 0)] - base, 0).tolist()
            a1 = np.where(has, offs[np.maximum(arg, 0) + 1] - base, 0).tolist()
            lines = []
            for track, name, kind, cat, t1, t2, d1, d2, x0, x1 in zip(
                s.track[r].tolist(),
                s.name[r].tolist(),
                s.kind[r].tolist(),
                s.cat[r].tolist(),
                tq,
                tr,
                dq,
                dr,
                a0,
                a1,
            ):
                key = (track, name, kind, cat)
                pre = prefixes.get(key)
                if pre is None:
                    pre = prefixes[key] = b'{"ph":"X","cat":%s,"name":%s,"pid":%s,"tid":%s,' % (
                        self._cat_json(kind, cat),
                        self._sym(name),
                        pids.pid[track],
                        pids.tid[track],
                    )
                if x1 > x0:
                    lines.append(
                        b'%s"ts":%d.%03d,"dur":%d.%03d,"args":%s}'
                        % (pre, t1, t2, d1, d2, blob[x0:x1])
                    )
                else:
                    lines.append(b'%s"ts":%d.%03d,"dur":%d.%03d}' % (pre, t1, t2, d1, d2))
            yield lines
            self._tick(len(r))

    def _flows(self, track_ok: npt.NDArray[np.bool_], pids: _PidMap) -> Iterator[list[bytes]]:
        fl = self.trace.flows
        rows = np.flatnonzero(track_ok[fl.track])
        for a in range(0, len(rows), CHUNK_EVENTS):
            r = rows[a : a + CHUNK_EVENTS]
            tq, tr = _us(fl.ts_ns[r] + self.shift_ns)
            lines = []
            for i, (fid, ph, track, name, cat, enc) in enumerate(
                zip(
                    fl.flow_id[r].tolist(),
                    fl.phase[r].tolist(),
                    fl.track[r].tolist(),
                    fl.name[r].tolist(),
                    fl.cat[r].tolist(),
                    fl.enclosing[r].tolist(),
                )
            ):
                lines.append(
                    b'{"ph":"%s","id":%s,"pid":%s,"tid":%s,"ts":%d.%03d,"cat":%s,"name":%s%s}'
                    % (
                        chr(ph).encode(),
                        _json_id(fid, self.trace),
                        pids.pid[track],
                        pids.tid[track],
                        tq[i],
                        tr[i],
                        self._sym(cat),
                        self._sym(name),
                        b',"bp":"e"' if enc else b"",
                    )
                )
            yield lines
            self._tick(len(r))

    def _instants(self, track_ok: npt.NDArray[np.bool_], pids: _PidMap) -> Iterator[list[bytes]]:
        ins = self.trace.instants
        rows = np.flatnonzero(track_ok[ins.track])
        args = self.trace.args
        for a in range(0, len(rows), CHUNK_EVENTS):
            r = rows[a : a + CHUNK_EVENTS]
            tq, tr = _us(ins.ts_ns[r] + self.shift_ns)
            lines = []
            for i, (ph, track, name, cat, arg) in enumerate(
                zip(
                    ins.phase[r].tolist(),
                    ins.track[r].tolist(),
                    ins.name[r].tolist(),
                    ins.cat[r].tolist(),
                    ins.args[r].tolist(),
                )
            ):
                line = b'{"ph":"%s","cat":%s,"name":%s,"pid":%s,"tid":%s,"ts":%d.%03d' % (
                    chr(ph).encode(),
                    self._sym(cat),
                    self._sym(name),
                    pids.pid[track],
                    pids.tid[track],
                    tq[i],
                    tr[i],
                )
                if chr(ph) in "iI":
                    line += b',"s":"t"'
                if arg >= 0:
                    line += b',"args":' + args.raw(arg)
                lines.append(line + b"}")
            yield lines
            self._tick(len(r))

    def _memory(self, rank: int | None, pids: _PidMap) -> Iterator[list[bytes]]:
        m = self.trace.memory
        rows = np.flatnonzero(m.rank == rank_code(rank))
        for a in range(0, len(rows), CHUNK_EVENTS):
            r = rows[a : a + CHUNK_EVENTS]
            tq, tr = _us(m.ts_ns[r] + self.shift_ns)
            lines = []
            for i, (track, dtype, dev, addr, nbytes, total, reserved) in enumerate(
                zip(
                    m.track[r].tolist(),
                    m.device_type[r].tolist(),
                    m.device_id[r].tolist(),
                    m.addr[r].tolist(),
                    m.bytes[r].tolist(),
                    m.total_allocated[r].tolist(),
                    m.total_reserved[r].tolist(),
                )
            ):
                args: dict[str, int] = {
                    "Device Type": dtype,
                    "Device Id": dev,
                    "Addr": addr,
                    "Bytes": nbytes,
                }
                if total >= 0:
                    args["Total Allocated"] = total
                if reserved >= 0:
                    args["Total Reserved"] = reserved
                pid = pids.pid.get(track, b"0")
                tid = pids.tid.get(track, b"0")
                lines.append(
                    b'{"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]",'
                    b'"pid":%s,"tid":%s,"ts":%d.%03d,"args":%s}'
                    % (pid, tid, tq[i], tr[i], orjson.dumps(args))
                )
            yield lines
            self._tick(len(r))
