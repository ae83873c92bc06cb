"""The files' parts of an import joined table by table: dtypes, args, tracks and their labels.

:func:`gpuviz.trace.kineto._assemble` joins the column parts of every file into the model's
tables; these are the pieces of that join that each touch one table: the width a narrowed
column takes (:func:`_narrowed_dtype`), the one args store of every file (:func:`_join_args`)
and a file's track rows with their thread labels (:func:`_track_rows`). They are apart from
:mod:`gpuviz.trace.kineto`, which keeps the order of the assembly (and its threads), because
each is a self-contained rule about one table that the assembly only calls.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from gpuviz.trace.args_text import TextWriter
from gpuviz.trace.kineto_events import STRING_CODE_BASE, is_string_code
from gpuviz.trace.model import NONE, ArgsStore, SymbolTable, TrackKind

if TYPE_CHECKING:  # the reading machinery is imported by an import, not by a cache hit
    from gpuviz.trace.kineto_decode import Array, FileColumns


def _narrowed_dtype(parts: list[FileColumns], table: str, col: str) -> type[np.signedinteger[Any]]:
    """int32 where every value of the column ``col`` of ``table`` fits it, else int64
    (:data:`~gpuviz.trace.model.NARROWED_COLUMNS`).

    Correlation and external ids count up from about 1 in each process, so they nearly always
    fit: 8 bytes a slice less each, 333 MB of the 64-rank folder's 20.8M slices (a tenth of
    ``gpuviz summary``'s peak there); copies' byte counts 83 MB more, flow ids 54 MB.
    """
    lo = hi = 0
    for p in parts:
        for a in getattr(p, table)[col]:
            if a.size:
                lo, hi = min(lo, int(a.min())), max(hi, int(a.max()))
    i32 = np.iinfo(np.int32)
    return np.int32 if i32.min <= lo and hi <= i32.max else np.int64


def _join_args(parts: list[FileColumns]) -> tuple[ArgsStore, list[int]]:
    """One store of every file's args, and each file's row shift.

    Files read one after another share one writer (:func:`read_files`), their args text in
    file order: when the parts come in that order, nothing is copied. Otherwise (ranks
    declared in another order than the files') the text is copied part by part, in order,
    into a new writer: whole compressed blocks as they are (each file's text starts a block).
    """
    writer = parts[0].args_blob
    shifts = []
    rows = 0
    for p in parts:
        shifts.append(rows)
        rows += len(p.args_offsets) - 1
    ends = [p.args_start + int(p.args_offsets[-1]) for p in parts]
    in_place = all(p.args_blob is writer for p in parts) and all(
        p.args_start == end for p, end in zip(parts[1:], ends)
    )
    offsets = [parts[0].args_offsets + (parts[0].args_start if in_place else 0)]
    if in_place:
        offsets += [p.args_offsets[1:] + p.args_start for p in parts[1:]]
    else:
        writer = TextWriter(compress=writer.compress)
        writer.append_range(parts[0].args_blob, parts[0].args_start, ends[0])
        for p, end in zip(parts[1:], ends[1:]):
            offsets.append(p.args_offsets[1:] + len(writer))
            writer.append_range(p.args_blob, p.args_start, end)
            if all(q.args_blob is not p.args_blob for q in parts if q is not p):
                p.args_blob = TextWriter()  # a file's own: released once copied
    for p in parts:
        p.args_blob = TextWriter()
    joined = offsets[0] if len(offsets) == 1 else np.concatenate(offsets)
    return ArgsStore(offsets=joined, text=writer.text()), shifts


def _track_rows(p: FileColumns, rank: int, symbols: SymbolTable) -> dict[str, Array]:
    """The model's track columns of one file's track table."""
    table = p.tracks
    lanes = {v: k for k, v in table.lanes.items()}
    names = _thread_names(p.metadata_events, symbols)
    n = len(table.tracks)
    out: dict[str, Array] = {
        "kind": np.empty(n, np.uint8), "rank": np.full(n, rank, np.int32),
        "device": np.full(n, NONE, np.int32), "stream": np.full(n, NONE, np.int64),
        "pid": np.full(n, NONE, np.int64), "tid": np.full(n, NONE, np.int64),
        "label": np.empty(n, np.int32),
    }  # fmt: skip
    for (tk, a, b), i in table.tracks.items():
        out["kind"][i] = tk
        if tk in (TrackKind.GPU_STREAM, TrackKind.GPU_ANNOTATION):
            out["device"][i] = a
            out["stream"][i] = b
            pid, tid = table.track_lane.get(i, (NONE, NONE))
            label = f"stream {b}" if b != NONE else "stream ?"
            if tk == TrackKind.GPU_ANNOTATION:
                label += " annotations"
        else:
            pid, tid = lanes[a]
            label = _thread_label(pid, tid, names, symbols)
            if tk == TrackKind.CPU_ANNOTATION:
                label += " annotations"
        out["pid"][i] = pid
        out["tid"][i] = tid
        out["label"][i] = symbols.intern(label)
    return out


def _thread_names(meta: list[dict[str, Any]], symbols: SymbolTable) -> dict[tuple[int, int], str]:
    from gpuviz.trace.kineto_events import id_code

    names: dict[tuple[int, int], str] = {}
    for d in meta:
        if d.get("name") == "thread_name":
            args = d.get("args")
            if isinstance(args, dict) and isinstance(args.get("name"), str):
                key = (id_code(d.get("pid", ""), symbols), id_code(d.get("tid", ""), symbols))
                names[key] = args["name"].strip()
    return names


def _thread_label(
    pid: int, tid: int, names: dict[tuple[int, int], str], symbols: SymbolTable
) -> str:
    name = names.get((pid, tid))
    if name:
        return name
    pid_s = symbols[STRING_CODE_BASE - pid] if is_string_code(pid) else str(pid)
    tid_s = symbols[STRING_CODE_BASE - tid] if is_string_code(tid) else f"thread {tid}"
    if is_string_code(pid):
        # Kineto's own lanes ("Spans"/"PyTorch Profiler", "Traces"/…, ""/""): name both parts.
        return " / ".join(x for x in (pid_s, tid_s) if x) or "(unnamed)"
    return tid_s or "(unnamed)"
