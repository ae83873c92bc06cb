"""The parallel import: chunks of every file decoded by children and by the importer itself.

Each case compares with the plain one-process read of the same files (``_same`` checks every
column, the args and the counts), with blocks small enough that every file gives many chunks.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pytest
from test_kineto import NESTED, _same

from gpuviz.trace import (
    gcpause,
    jsonscan,
    kineto_chunk_decoder,
    kineto_decode,
    kineto_parallel,
    kineto_wire,
    kineto_worker,
    kineto_worker_sizing,
)
from gpuviz.trace.errors import ImportCancelledError, TraceFormatError
from gpuviz.trace.kineto import load_trace
from gpuviz.trace.model import Trace

DATA = Path(__file__).parents[1] / "data"


@pytest.fixture(autouse=True)
def _mixed_folders_merge(monkeypatch: pytest.MonkeyPatch) -> None:
    """These folders mix files of several recordings (to give the decoders tracks, lanes and
    args that differ file to file): what is tested is the decoding, so the folder rule
    (:mod:`gpuviz.trace.one_job`, tested in test_one_job.py) is set aside here."""
    from gpuviz.trace import kineto

    monkeypatch.setattr(kineto, "_check_one_job", lambda root, parts: None)


def serial(path: Path, monkeypatch: pytest.MonkeyPatch) -> Trace:
    with monkeypatch.context() as m:
        m.setenv("GPUVIZ_IMPORT_WORKERS", "0")
        return load_trace(path)


@pytest.fixture
def parallel(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """Children for any size of import, and small blocks: many chunks for every file."""
    monkeypatch.setenv("GPUVIZ_IMPORT_WORKER_MIN_BYTES", "0")
    monkeypatch.setenv("GPUVIZ_IMPORT_WORKERS", "2")
    monkeypatch.setattr(jsonscan, "BLOCK_BYTES", 1 << 13)
    return monkeypatch


@pytest.fixture(params=["chunks", "whole"])
def mode(request: pytest.FixtureRequest, parallel: pytest.MonkeyPatch) -> str:
    """How a folder's files go to the decoders: chunk by chunk, or each file whole."""
    if request.param == "chunks":
        parallel.setenv("GPUVIZ_IMPORT_WHOLE_FILE_MAX_BYTES", "0")
    return str(request.param)


@pytest.fixture
def folder(tmp_path: Path, _mixed_folders_merge: None) -> Path:
    """Three ranks whose lanes and tracks differ (a child renumbers them for each file)."""
    out = tmp_path / "ranks"
    out.mkdir()
    for i, name in enumerate(
        [
            "ddp_nccl_4rank/rank-0.json.gz",
            "dataparallel_seed_2gpu.json.gz",
            "ddp_2rank/rank-1.json.gz",
        ]
    ):
        shutil.copy(DATA / name, out / f"rank-{i}.json.gz")
    return out


def _count_chunks_read_here(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A list that gets an item for each chunk the importer decodes itself."""
    read: list[int] = []
    read_chunk = kineto_decode.FileReader.read_chunk

    def spy(self: kineto_decode.FileReader, *args: object, **kw: object) -> None:
        read.append(1)
        read_chunk(self, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(kineto_decode.FileReader, "read_chunk", spy)
    return read


def test_a_rank_folder_decoded_by_children_is_the_same_trace(
    parallel: pytest.MonkeyPatch, mode: str, folder: Path
) -> None:
    sent = _spy_sends(parallel, "send", "send_file")
    raw = _count_chunks_read_here(parallel)
    got = load_trace(folder)
    if mode == "chunks":
        assert set(sent["send"]) == {0, 1, 2} and not sent["send_file"]
    else:
        assert sorted(sent["send_file"]) == [0, 1, 2] and not sent["send"]
        # Metadata events come back with the children's columns: no chunk is read twice.
        # (Chunks a child does not take come back as text: test_a_bad_slice_in_a_whole_file.)
        assert not raw, "the importer read no chunk itself"
    want = serial(folder, parallel)
    _same(got, want)
    assert [r.rank for r in got.ranks] == [r.rank for r in want.ranks]
    assert got.warnings.count == want.warnings.count


def test_chunks_decoded_by_the_importer_itself_give_the_same_trace(
    parallel: pytest.MonkeyPatch, mode: str, folder: Path
) -> None:
    # Children that never take a chunk or a file: the importer's own decoder does them all,
    # with a numbering of its own that is merged like a child's.
    never = property(lambda self: False)
    parallel.setattr(kineto_worker.Worker, "can_take", never)
    parallel.setattr(kineto_worker.Worker, "can_take_file", never)
    decoded: list[int] = []
    name = "decode" if mode == "chunks" else "decode_file"
    decode = getattr(kineto_worker.LocalDecoder, name)

    def spy(self: kineto_worker.LocalDecoder, file: int, *args: object) -> dict[str, object]:
        decoded.append(file)
        return decode(self, file, *args)  # type: ignore[no-any-return]

    parallel.setattr(kineto_worker.LocalDecoder, name, spy)
    got = load_trace(folder)
    assert set(decoded) == {0, 1, 2}
    _same(got, serial(folder, parallel))


def test_a_file_its_decoder_gives_up_on_is_read_here_and_the_next_still_merge(
    parallel: pytest.MonkeyPatch, folder: Path
) -> None:
    # The importer's own decoder fails in the middle of the second file (after chunks of it
    # were numbered): that file is read here, both sides forget the decoder's numbering, and
    # the third file, decoded by the same decoder afresh, still merges right.
    never = property(lambda self: False)
    parallel.setattr(kineto_worker.Worker, "can_take_file", never)
    add = kineto_chunk_decoder.ChunkDecoder.add
    calls = {"file1": 0}

    def failing(
        self: kineto_chunk_decoder.ChunkDecoder, file: int, buf: bytes
    ) -> dict[str, object] | None:
        if file == 1:
            calls["file1"] += 1
            if calls["file1"] == 3:
                raise MemoryError("planted")
        return add(self, file, buf)

    parallel.setattr(kineto_chunk_decoder.ChunkDecoder, "add", failing)
    forgot: list[int] = []
    forget = kineto_worker.Decoder.forget

    def spy(self: kineto_worker.Decoder) -> None:
        forgot.append(1)
        forget(self)

    parallel.setattr(kineto_worker.Decoder, "forget", spy)
    got = load_trace(folder)
    assert calls["file1"] >= 3 and forgot == [1]
    _same(got, serial(folder, parallel))


def _nested_folder(tmp_path: Path) -> Path:
    """Two ranks; the first's 300 ops have nested args that look like event boundaries."""
    op = {"ph": "X", "cat": "cpu_op", "pid": 1, "tid": 1, "dur": 1}
    events = [
        dict(op, name=f"op{i}", ts=i * 2, args={"inputs": NESTED, "i": i}) for i in range(300)
    ]
    out = tmp_path / "ranks"
    out.mkdir()
    (out / "rank-0.json").write_text(json.dumps({"traceEvents": events}, indent=1))
    shutil.copy(DATA / "ddp_2rank/rank-1.json.gz", out / "rank-1.json.gz")
    return out


@pytest.mark.parametrize("alternate", [False, True], ids=["children", "children-and-here"])
def test_a_wrong_guess_found_by_a_child_reads_that_file_again(
    parallel: pytest.MonkeyPatch, tmp_path: Path, alternate: bool
) -> None:
    # Nested args that look like event boundaries: some guessed chunk ends fall inside them,
    # and a child finds out only after the scanner moved on. Alternately here: a wrong guess
    # found here, after one sent to a child, must not be redone from where that one left
    # the scanner.
    parallel.setenv("GPUVIZ_IMPORT_WHOLE_FILE_MAX_BYTES", "0")  # chunk by chunk
    if alternate:  # every other chunk here; children's replies only taken in when due
        turns = iter(range(1 << 30))
        parallel.setattr(kineto_worker.Worker, "can_take", property(lambda self: next(turns) % 2))
        parallel.setattr(kineto_worker.Worker, "ready", lambda self: False)
    out = _nested_folder(tmp_path)
    parallel.setattr(jsonscan, "BLOCK_BYTES", 211)
    restarts: list[int] = []
    run = kineto_parallel._Pipeline.run

    def spy(self: kineto_parallel._Pipeline, start: int) -> int:
        nxt = run(self, start)
        if nxt < len(self.readers):
            restarts.append(nxt - 1)
        return nxt

    parallel.setattr(kineto_parallel._Pipeline, "run", spy)
    want = serial(out, parallel)
    for _ in range(3):  # which chunk meets which decoder depends a little on timing
        got = load_trace(out)
        _same(got, want)
    assert restarts, "a child met a wrong guess"
    rows = got.slices.args[got.slices.track == got.slices.track[0]]
    assert sorted(got.args.get(int(r))["i"] for r in rows) == list(range(300))


def test_a_bad_gpu_slice_decoded_by_a_child_is_reported_as_in_one_process(
    parallel: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    ok = {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "dur": 1,
          "args": {"device": 0, "stream": 7}}  # fmt: skip
    events = [dict(ok, ts=i) for i in range(2000)]
    events[1500] = dict(ok, ts=1500, dur=-2)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"traceEvents": events}, indent=1))
    with pytest.raises(TraceFormatError) as forked:
        load_trace(path)
    parallel.setenv("GPUVIZ_IMPORT_WORKERS", "0")
    with pytest.raises(TraceFormatError) as plain:
        load_trace(path)
    assert str(forked.value) == str(plain.value)
    assert forked.value.where == "event 1500"


def test_a_wrong_guess_inside_a_whole_file_is_redone_by_its_child(
    parallel: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # As above, but each file goes to one child whole: the child's own scanner has not moved
    # on, so it redoes the chunk exactly, and the importer never reads the file again.
    out = _nested_folder(tmp_path)
    parallel.setattr(jsonscan, "BLOCK_BYTES", 211)
    parallel.setenv("GPUVIZ_IMPORT_WORKERS", "1")  # one child takes both files
    rejects: list[int] = []
    reject = jsonscan.EventChunks.reject

    def spy_reject(self: jsonscan.EventChunks) -> None:
        rejects.append(1)
        reject(self)

    parallel.setattr(jsonscan.EventChunks, "reject", spy_reject)  # in this process only
    reads = []
    read = kineto_decode.FileReader.read

    def spy_read(self: kineto_decode.FileReader) -> object:
        reads.append(self.path)
        return read(self)

    parallel.setattr(kineto_decode.FileReader, "read", spy_read)
    got = load_trace(out)
    assert not reads and not rejects, "the child redid its wrong guesses itself"
    want = serial(out, parallel)
    _same(got, want)
    rows = got.slices.args[got.slices.track == got.slices.track[0]]
    assert sorted(got.args.get(int(r))["i"] for r in rows) == list(range(300))


def test_a_bad_slice_in_a_whole_file_is_reported_as_in_one_process(
    parallel: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    ok = {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "dur": 1,
          "args": {"device": 0, "stream": 7}}  # fmt: skip
    out = tmp_path / "ranks"
    out.mkdir()
    for r in range(3):
        events = [dict(ok, ts=i) for i in range(2000)]
        if r == 1:
            events[1500] = dict(ok, ts=1500, dur=-2)
        (out / f"rank-{r}.json").write_text(json.dumps({"traceEvents": events}, indent=1))
    with pytest.raises(TraceFormatError) as forked:
        load_trace(out)
    parallel.setenv("GPUVIZ_IMPORT_WORKERS", "0")
    with pytest.raises(TraceFormatError) as plain:
        load_trace(out)
    assert str(forked.value) == str(plain.value)
    assert forked.value.where == "event 1500" and "rank-1.json" in str(forked.value)


def _spy_pools(monkeypatch: pytest.MonkeyPatch) -> list[kineto_worker.WorkerPool]:
    """A list that gets every pool of children the import starts."""
    pools: list[kineto_worker.WorkerPool] = []
    init = kineto_worker.WorkerPool.__init__

    def spy(self: kineto_worker.WorkerPool, n: int, *rest: bool) -> None:
        init(self, n, *rest)
        pools.append(self)

    monkeypatch.setattr(kineto_worker.WorkerPool, "__init__", spy)
    return pools


def test_cancelling_stops_every_child(
    parallel: pytest.MonkeyPatch, mode: str, folder: Path
) -> None:
    pools = _spy_pools(parallel)
    # The third poll cancels: whole files are polled as each is handed out (3 files here),
    # chunks at every block; a later poll might never come if the children are quick.
    polls = iter(range(1000))
    with pytest.raises(ImportCancelledError):
        load_trace(folder, cancelled=lambda: next(polls) > 1)
    assert pools and all(w.proc.returncode is not None for p in pools for w in p.workers)


@pytest.mark.parametrize(
    ("env", "cores", "load", "size", "want"),
    [
        ({}, 8, 0.0, 1 << 30, 7),  # idle: a child for each core but the importer's
        ({}, 8, 5.2, 1 << 30, 3),  # busy: only the idle cores
        ({}, 2, 6.0, 1 << 30, 0),  # every core busy: children would only add work
        ({}, 1, 0.0, 1 << 30, 0),
        ({}, 64, 0.0, 1 << 30, kineto_worker.MAX_WORKERS),
        ({}, 16, 0.0, 166 << 20, 14),  # one per BYTES_PER_WORKER (12 MB)
        ({}, 16, 0.0, 64 << 20, 6),
        ({"GPUVIZ_IMPORT_START": "spawn"}, 16, 0.0, 166 << 20, 3),  # spawned: one per 64 MB
        ({"GPUVIZ_IMPORT_START": "spawn"}, 16, 0.0, 64 << 20, 1),
        ({}, 8, 0.0, 1 << 20, 0),  # small: not worth starting a child
        ({"GPUVIZ_IMPORT_WORKERS": "2"}, 2, 6.0, 1 << 30, 2),
        ({"GPUVIZ_IMPORT_WORKERS": "3", "GPUVIZ_IMPORT_WORKER_MIN_BYTES": "0"}, 2, 0.0, 10, 3),
        ({"GPUVIZ_IMPORT_WORKERS": "x"}, 8, 0.0, 1 << 30, 0),
    ],
)
def test_worker_count(
    monkeypatch: pytest.MonkeyPatch,
    env: dict[str, str],
    cores: int,
    load: float,
    size: int,
    want: int,
) -> None:
    monkeypatch.delenv("GPUVIZ_IMPORT_WORKERS", raising=False)
    monkeypatch.delenv("GPUVIZ_IMPORT_WORKER_MIN_BYTES", raising=False)
    monkeypatch.setenv("GPUVIZ_IMPORT_START", "fork")
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    # The sizing lives in kineto_worker_sizing (re-exported by kineto_worker): patch it there.
    monkeypatch.setattr(kineto_worker_sizing, "usable_cores", lambda: cores)
    monkeypatch.setattr(kineto_worker_sizing, "_load_average", lambda: load)
    assert kineto_worker.worker_count(size) == want


@pytest.mark.parametrize(
    ("text", "average", "want"),
    [
        (b"5.10 4.00 3.00 1/345 999\n", 5.1, 0.0),  # only this process runs: the rest is past
        (b"5.10 4.00 3.00 4/345 999\n", 5.1, 3.0),
        (b"1.50 4.00 3.00 9/345 999\n", 1.5, 1.5),  # a moment's burst: the average holds
        (b"garbage", 2.5, 2.5),  # unreadable: the average alone
    ],
)
def test_busy_cores_are_those_running_now_when_fewer_than_the_load_average(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, text: bytes, average: float, want: float
) -> None:
    loadavg = tmp_path / "loadavg"
    loadavg.write_bytes(text)
    monkeypatch.setattr(kineto_worker_sizing, "_LOADAVG", str(loadavg))
    monkeypatch.setattr(kineto_worker.os, "getloadavg", lambda: (average, 0.0, 0.0))
    assert kineto_worker._load_average() == pytest.approx(want)


def test_busy_cores_without_a_loadavg_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(kineto_worker_sizing, "_LOADAVG", str(tmp_path / "missing"))
    monkeypatch.setattr(kineto_worker.os, "getloadavg", lambda: (3.25, 0.0, 0.0))
    assert kineto_worker._load_average() == pytest.approx(3.25)


def test_metadata_events_come_back_from_the_children(
    parallel: pytest.MonkeyPatch, folder: Path
) -> None:
    # Every file's first chunk holds its process and thread names: a child decodes it and
    # sends them back, where the importer used to decode the whole chunk again itself.
    parallel.setattr(jsonscan, "BLOCK_BYTES", 1 << 20)  # a file in one chunk, names and all
    again = _count_chunks_read_here(parallel)
    got = load_trace(folder)
    assert not again, "no chunk was decoded a second time in the importer"
    want = serial(folder, parallel)
    assert got.metadata_events == want.metadata_events
    assert any(d["name"] == "thread_name" for d in got.metadata_events)
    _same(got, want)
    labels = sorted(got.track_label(i) for i in range(len(got.tracks.kind)))
    assert labels == sorted(want.track_label(i) for i in range(len(want.tracks.kind)))


def test_a_child_starts_with_the_importers_modules_and_one_blas_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "8")  # the user's own setting is kept
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    env = kineto_worker._child_env()
    assert env["OPENBLAS_NUM_THREADS"] == "8"
    assert env["OMP_NUM_THREADS"] == "1"
    paths = env["PYTHONPATH"].split(os.pathsep)
    assert Path(paths[0], "gpuviz", "trace", "kineto_worker.py").is_file()
    # Started without the site module, it still imports what the importer imports.
    code = "import gpuviz.trace.kineto_worker, numpy, msgspec, sys; print(sys.flags.no_site)"
    out = subprocess.run(
        [sys.executable, "-S", "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "1"


def test_a_whole_file_reply_that_cannot_be_encoded_resets_the_child(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # In the child: a file whose metadata msgpack cannot carry. What it wrote for the file is
    # dropped, it numbers afresh, and it says so (``reset``), for the importer to do the same.
    real = msgspec.msgpack.Encoder()

    class Picky:
        def encode(self, obj: dict) -> bytes:
            if obj.get("whole"):
                raise TypeError("metadata msgpack cannot carry")
            return real.encode(obj)

    trims: list[int] = []
    monkeypatch.setattr(gcpause, "release_freed_memory", lambda: trims.append(1))
    state = kineto_chunk_decoder.ChunkDecoder()
    fd = kineto_wire.scratch()
    try:
        size, after = kineto_worker._read_whole_file(
            state,
            0,
            str(folder / "rank-0.json.gz"),
            fd,
            Picky(),  # type: ignore[arg-type]
        )
        assert kineto_wire.read_records(fd, size) == [{"ok": False, "why": "error", "reset": True}]
        assert after is not state and after.symbols == 0
        size, after = kineto_worker._read_whole_file(
            after, 1, str(folder / "rank-1.json.gz"), fd, real
        )
        *parts, head = kineto_wire.read_records(fd, size)
        assert head["ok"] and head["parts"] == len(parts) > 0
        assert trims == [1, 1]  # the heap's freed pages given back after each file
    finally:
        os.close(fd)


def test_a_whole_file_reply_gives_its_scratch_memory_back_once_read(folder: Path) -> None:
    # A memfd's pages are memory that no process's resident set shows: a slot must not keep
    # a whole file's reply (several MB) once the importer has read it.
    w = kineto_worker.Worker()
    try:
        sizes = []
        for i in range(3):
            w.send_file(i, str(folder / f"rank-{i}.json.gz"))
            slot = i % kineto_wire.DEPTH
            reply = w.receive()
            assert reply["ok"] and reply["parts"]
            sizes.append(os.fstat(w._out[slot]).st_size)
        assert sizes == [0, 0, 0]
        w.send(3, [b'{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 2}'])
        assert w.receive()["ok"]
        assert os.fstat(w._out[3 % kineto_wire.DEPTH]).st_size > 0  # chunk slots are reused
    finally:
        w.close()


def test_a_whole_file_comes_back_in_few_replies_around_a_chunk_it_gives_back(
    parallel: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # A child sends a whole file's chunks back together. A chunk it does not take (here one
    # with a CPU slice of negative duration: a warning, which the importer gives) splits them
    # in two: what that chunk added is taken back, the chunks before and after still merge,
    # in file order, and the trace and its warnings are the one-process read's. (Sent chunk
    # by chunk, the two files came back in 3 and 3 replies.)
    op = {"ph": "X", "cat": "cpu_op", "pid": 1, "tid": 1, "dur": 1, "args": {"External id": 1}}
    events = [dict(op, name=f"op{i % 7}", ts=i * 2, tid=1 + i % 3) for i in range(3000)]
    events[1700] = dict(events[1700], dur=-5)
    out = tmp_path / "ranks"
    out.mkdir()
    (out / "rank-0.json").write_text(json.dumps({"traceEvents": events}, indent=1))
    shutil.copy(DATA / "ddp_2rank/rank-1.json.gz", out / "rank-1.json.gz")
    parallel.setenv("GPUVIZ_IMPORT_WORKERS", "1")
    kinds: list[list[bool]] = []
    merge_file = kineto_decode.FileReader.merge_file

    def spy(self: kineto_decode.FileReader, reply: dict, w: object, file: int) -> object:
        kinds.append([bool(p["ok"]) for p in reply["parts"]])
        return merge_file(self, reply, w, file)  # type: ignore[arg-type]

    parallel.setattr(kineto_decode.FileReader, "merge_file", spy)
    got = load_trace(out)
    # Each file is several chunks to the child (its blocks are the default's, not 8 KiB).
    assert kinds == [[True, False, True], [True]], kinds
    want = serial(out, parallel)
    _same(got, want)
    assert got.warnings.count == want.warnings.count == 1
    assert got.warnings.samples == want.warnings.samples
    # The folder's rank note first (rank-0.json declares no rank), then the skipped event.
    assert "ranks taken from file order" in got.warnings.samples[0]
    assert "event 1700" in got.warnings.samples[1]


def _plain_copies(tmp_path: Path, names: list[str]) -> Path:
    """Uncompressed copies of traces, as rank files of one folder."""
    out = tmp_path / "plain"
    out.mkdir()
    for i, name in enumerate(names):
        (out / f"rank-{i}.json").write_bytes(gzip.decompress((DATA / name).read_bytes()))
    return out


PLAIN = [
    "hta__ns_resolution_trace__rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
    "ddp_nccl_4rank/rank-0.json.gz",
]


def _spy_sends(monkeypatch: pytest.MonkeyPatch, *names: str) -> dict[str, list[int]]:
    """Per way of handing work to a child (``Worker`` methods), the files of the work handed
    so (default: a chunk's text, or its span in the file)."""
    sent: dict[str, list[int]] = {name: [] for name in names or ("send", "send_span")}
    for name in sent:
        real = getattr(kineto_worker.Worker, name)

        def spy(self: kineto_worker.Worker, file: int, *args: object, real=real, name=name) -> None:
            sent[name].append(file)
            real(self, file, *args)

        monkeypatch.setattr(kineto_worker.Worker, name, spy)
    return sent


@pytest.mark.parametrize("single", [False, True], ids=["folder", "file"])
def test_chunks_of_plain_files_are_read_by_the_children_from_the_files(
    parallel: pytest.MonkeyPatch, tmp_path: Path, single: bool
) -> None:
    parallel.setenv("GPUVIZ_IMPORT_WHOLE_FILE_MAX_BYTES", "0")  # chunk by chunk
    out = _plain_copies(tmp_path, PLAIN)
    path = out / "rank-0.json" if single else out
    sent = _spy_sends(parallel)
    got = load_trace(path)
    # Only the chunks whose ends the scanner finds exactly (a file's first and last, a
    # wrong guess redone) go as text.
    assert len(sent["send_span"]) > 5 * len(sent["send"]) > 0
    _same(got, serial(path, parallel))


def test_gzip_chunks_go_to_the_children_as_text(
    parallel: pytest.MonkeyPatch, mode: str, folder: Path
) -> None:
    parallel.setenv("GPUVIZ_IMPORT_WHOLE_FILE_MAX_BYTES", "0")
    sent = _spy_sends(parallel)
    load_trace(folder)
    assert sent["send"] and not sent["send_span"]


def test_a_chunk_a_child_cannot_read_from_its_file_is_read_here(
    parallel: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = _plain_copies(tmp_path, PLAIN[:1]) / "rank-0.json"
    real = kineto_worker.Worker.send_span

    def past_the_end(self: kineto_worker.Worker, file: int, p: str, at: int, n: int) -> None:
        real(self, file, p, at + (1 << 40), n)  # as if the file had shrunk

    parallel.setattr(kineto_worker.Worker, "send_span", past_the_end)
    raw = _count_chunks_read_here(parallel)
    got = load_trace(path)
    assert raw
    _same(got, serial(path, parallel))


def test_a_span_reader_reads_what_the_file_holds(tmp_path: Path) -> None:
    f = tmp_path / "t.json"
    f.write_bytes(b"0123456789")
    reader = kineto_worker._SpanReader()

    def job(at: int, n: int, path: Path = f) -> bytes:
        return kineto_wire.SPAN_HEAD.pack(at, n) + os.fsencode(path)

    try:
        assert reader.read(job(2, 3)) == bytearray(b"[234]")
        assert reader.read(job(8, 5)) is None  # shorter than the span: it changed
        assert reader.read(job(0, 1, tmp_path / "missing.json")) is None
        assert reader.read(job(0, 10)) == bytearray(b"[0123456789]")
    finally:
        reader.close()


@pytest.mark.parametrize("start", ["fork", "spawn"])
def test_forked_and_spawned_children_give_the_same_trace(
    parallel: pytest.MonkeyPatch, mode: str, folder: Path, start: str
) -> None:
    parallel.setenv("GPUVIZ_IMPORT_START", start)
    made: list[type] = []
    init = kineto_worker.Worker.__init__

    def spy(self: kineto_worker.Worker, *args: object) -> None:
        init(self, *args)  # type: ignore[arg-type]
        made.append(type(self.proc))

    parallel.setattr(kineto_worker.Worker, "__init__", spy)
    got = load_trace(folder)
    want = kineto_worker._Forked if start == "fork" else subprocess.Popen
    assert made == [want, want]
    _same(got, serial(folder, parallel))


@pytest.mark.parametrize(
    ("env", "platform", "want"),
    [
        ("", "linux", "fork"),
        ("", "darwin", "spawn"),  # macOS's libraries are not safe to use after fork
        ("spawn", "linux", "spawn"),
        ("fork", "darwin", "fork"),
        ("bogus", "linux", "fork"),
    ],
)
def test_start_method(monkeypatch: pytest.MonkeyPatch, env: str, platform: str, want: str) -> None:
    monkeypatch.setenv(kineto_worker.START_ENV, env)
    monkeypatch.setattr(kineto_worker.sys, "platform", platform)
    assert kineto_worker.start_method() == want


def test_a_forked_child_holds_no_other_childs_pipes_or_scratch_files(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Were the third child to keep the first one's input pipe open, that one would not see
    # its input end if the importer died; and it would keep their scratch memory alive.
    monkeypatch.setenv(kineto_worker.START_ENV, "fork")
    pool = kineto_worker.WorkerPool(3)
    try:
        # A reply from each: it is serving, so it has closed what it was to close (a child
        # just forked may not have yet).
        event = b'{"ph": "X", "name": "k", "ts": 1, "dur": 1, "pid": 1, "tid": 1}'
        for w in pool.workers:
            w.send(0, [event])
            assert w.receive()["ok"]
        files = [{(os.fstat(fd).st_dev, os.fstat(fd).st_ino) for fd in w.fds} for w in pool.workers]
        for i, w in enumerate(pool.workers):
            held = set()
            fd_dir = f"/proc/{w.proc.pid}/fd"
            for name in os.listdir(fd_dir):
                with contextlib.suppress(OSError):
                    st = os.stat(os.path.join(fd_dir, name))
                    held.add((st.st_dev, st.st_ino))
            assert held & files[i], "it holds its own"
            for j, other in enumerate(files):
                if j != i:
                    assert not held & other, (i, j)
    finally:
        pool.close()
    assert all(w.proc.returncode == 0 for w in pool.workers)


def test_whole_files_up_to_half_a_decoders_share(monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder's file is read whole by one decoder when it is at most half a decoder's share
    of the bytes (or the fixed floor); the environment's setting wins."""
    monkeypatch.delenv("GPUVIZ_IMPORT_WHOLE_FILE_MAX_BYTES", raising=False)
    floor = kineto_worker.WHOLE_FILE_MAX_BYTES
    mb = 1 << 20
    assert kineto_worker.whole_file_max_bytes() == floor
    # 64 ranks of 166 MB on 16 decoders: whole (a share is 664 MB); on 2 decoders too.
    assert kineto_worker.whole_file_max_bytes(64 * 166 * mb, 16) == 64 * 166 * mb // 32
    assert kineto_worker.whole_file_max_bytes(64 * 166 * mb, 16) >= 166 * mb
    # Two files of 1 GB on 16 decoders: chunk by chunk, every decoder at work.
    assert kineto_worker.whole_file_max_bytes(2048 * mb, 16) == floor < 1024 * mb
    monkeypatch.setenv("GPUVIZ_IMPORT_WHOLE_FILE_MAX_BYTES", "0")
    assert kineto_worker.whole_file_max_bytes(64 * 166 * mb, 16) == 0


@pytest.mark.parametrize(
    ("whole", "workers", "chunked"),
    [
        ([True] * 64, 15, [60, 61, 62, 63]),  # four rounds of 15, and a tail of 4
        ([True] * 64, 16, []),  # four full rounds
        ([True] * 8, 15, []),  # less than one round: every file whole, side by side
        ([True] * 5, 1, [4]),  # one child and the importer: two decoders
        ([True] * 6, 4, [4, 5]),  # four children: the importer hands out and merges only
        # a file too large to be read whole is not counted, nor made whole
        ([True, True, False, True, True, True], 2, [4, 5]),  # 5 whole, 3 decoders
    ],
)
def test_the_files_short_of_a_full_round_are_read_chunk_by_chunk(
    whole: list[bool], workers: int, chunked: list[int]
) -> None:
    got = kineto_parallel.chunked_tail(whole, workers)
    assert [i for i, (w, g) in enumerate(zip(whole, got)) if w and not g] == chunked
    assert all(g <= w for w, g in zip(whole, got)), "no file made whole"


def _nine_ranks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Nine rank files for four children that take one whole file at a time."""
    out = tmp_path / "ranks"
    out.mkdir()
    names = ["ddp_nccl_4rank/rank-0.json.gz", "dataparallel_seed_2gpu.json.gz"]
    for i in range(9):
        shutil.copy(DATA / names[i % 2], out / f"rank-{i}.json.gz")
    monkeypatch.setenv("GPUVIZ_IMPORT_WORKERS", "4")
    monkeypatch.setattr(kineto_worker, "FILE_DEPTH", 1)
    return out


def test_with_many_children_the_importer_waits_for_room_rather_than_reading_a_file(
    parallel: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Four children, one file each at a time: the importer hands out the next file as a child
    answers, and reads no whole file itself; the last file (short of a round) goes in chunks."""
    out = _nine_ranks(tmp_path, parallel)
    waited = []
    wait_any = kineto_worker.WorkerPool.wait_any

    def spy_wait(self: kineto_worker.WorkerPool, timeout_s: float) -> bool:
        waited.append(timeout_s)
        return wait_any(self, timeout_s)

    parallel.setattr(kineto_worker.WorkerPool, "wait_any", spy_wait)
    local: list[int] = []
    decode_file = kineto_worker.LocalDecoder.decode_file

    def spy_local(self: kineto_worker.LocalDecoder, file: int, *args: object) -> dict[str, object]:
        local.append(file)
        return decode_file(self, file, *args)  # type: ignore[no-any-return, arg-type]

    parallel.setattr(kineto_worker.LocalDecoder, "decode_file", spy_local)
    sent = _spy_sends(parallel, "send_file", "send", "send_span")
    got = load_trace(out, cache=False)
    assert sorted(sent["send_file"]) == list(range(8)) and not local
    assert waited, "it waited for a child's room"
    assert set(sent["send"] + sent["send_span"]) <= {8}
    want = serial(out, parallel)
    _same(got, want)
    assert [r.rank for r in got.ranks] == [r.rank for r in want.ranks]


def test_cancelling_while_waiting_for_a_childs_room_stops_every_child(
    parallel: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    out = _nine_ranks(tmp_path, parallel)
    pools = _spy_pools(parallel)
    waiting = []
    wait_any = kineto_worker.WorkerPool.wait_any

    def spy_wait(self: kineto_worker.WorkerPool, timeout_s: float) -> bool:
        waiting.append(1)
        return wait_any(self, timeout_s)

    parallel.setattr(kineto_worker.WorkerPool, "wait_any", spy_wait)
    with pytest.raises(ImportCancelledError):  # cancelled once it waits for room
        load_trace(out, cache=False, cancelled=lambda: bool(waiting))
    assert waiting
    assert pools and all(w.proc.returncode is not None for p in pools for w in p.workers)


def test_meanwhile_runs_each_piece_once_in_order_when_the_importer_also_decodes(
    parallel: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Two children: the importer decodes chunks itself when they are busy, so it never
    waits for room; the pieces run once the last chunk is handed out, each once, in order.
    (Slow decoders, so that the importer has replies to wait for then: with every reply in
    already, it has no wait to fill, and the pieces are left to the caller.)"""
    f = tmp_path / "t.json"
    shutil.copyfileobj(gzip.open(DATA / "dataparallel_seed_2gpu.json.gz"), f.open("wb"))
    process = kineto_chunk_decoder.ChunkDecoder.process

    def slow(self: kineto_chunk_decoder.ChunkDecoder, *args: Any) -> dict[str, Any]:
        time.sleep(0.01)  # the children are forked after this is set: theirs are slow too
        return process(self, *args)

    parallel.setattr(kineto_chunk_decoder.ChunkDecoder, "process", slow)
    sent = _spy_sends(parallel)
    ran: list[tuple[int, int]] = []
    pieces = [lambda k=k: ran.append((k, len(sent["send_span"]))) for k in range(5)]

    got = load_trace(f, cache=False, meanwhile=pieces)
    assert [k for k, _ in ran] == list(range(5))
    assert all(n == len(sent["send_span"]) > 10 for _, n in ran)  # all handed out
    _same(got, serial(f, parallel))


def test_with_many_children_meanwhile_fills_the_waits_for_room(
    parallel: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Many children: a piece runs where the importer would wait for a child's room, where
    every child has all the chunks it may hold in hand, so that none runs dry meanwhile."""
    n = kineto_parallel.READS_FILES_UP_TO + 1
    parallel.setenv("GPUVIZ_IMPORT_WORKERS", str(n))
    f = tmp_path / "t.json"
    shutil.copyfileobj(gzip.open(DATA / "dataparallel_seed_2gpu.json.gz"), f.open("wb"))
    pools = _spy_pools(parallel)
    sent = _spy_sends(parallel, "send_span")
    ran: list[tuple[int, int]] = []  # per piece: chunks sent so far, the fewest any child has

    def piece() -> None:
        ran.append((len(sent["send_span"]), min(w.queued for w in pools[-1].workers)))

    got = load_trace(f, cache=False, meanwhile=[piece] * 40)
    total = len(sent["send_span"])
    assert len(ran) == 40 and total > 4 * n * kineto_worker.DEPTH
    early = [fewest for at, fewest in ran if at < total]
    assert early, "no piece ran before the last chunk was handed out"
    assert min(early) == kineto_wire.DEPTH
    _same(got, serial(f, parallel))


def test_meanwhile_does_not_run_without_children(
    monkeypatch: pytest.MonkeyPatch, folder: Path
) -> None:
    monkeypatch.setenv("GPUVIZ_IMPORT_WORKERS", "0")
    ran: list[int] = []
    load_trace(folder, cache=False, meanwhile=[lambda: ran.append(1)])
    assert ran == []


def test_what_meanwhile_raises_does_not_stop_the_import(
    parallel: pytest.MonkeyPatch, folder: Path
) -> None:
    ran: list[int] = []

    def work() -> None:
        ran.append(1)
        raise ImportError("no such module")

    got = load_trace(folder, cache=False, meanwhile=[work, work])
    assert ran == [1, 1], "the next piece runs all the same"
    _same(got, serial(folder, parallel))


def test_with_many_children_the_importer_waits_for_room_rather_than_decode(
    parallel: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    parallel.setenv("GPUVIZ_IMPORT_WORKERS", str(kineto_parallel.READS_FILES_UP_TO + 1))
    f = tmp_path / "t.json"
    shutil.copyfileobj(gzip.open(DATA / "dataparallel_seed_2gpu.json.gz"), f.open("wb"))
    here: list[int] = []
    decode = kineto_worker.LocalDecoder.decode

    def spy(self: kineto_worker.LocalDecoder, file: int, *args: object) -> dict[str, object]:
        here.append(file)
        return decode(self, file, *args)  # type: ignore[arg-type]

    parallel.setattr(kineto_worker.LocalDecoder, "decode", spy)
    sent = _spy_sends(parallel, "send_span")
    got = load_trace(f, cache=False)
    assert not here and len(sent["send_span"]) > 4 * kineto_worker.DEPTH
    _same(got, serial(f, parallel))


@pytest.mark.parametrize(
    "name",
    [
        "dataparallel_4gpu.json.gz",  # memory events, several GPUs
        "hta__critical_path__alexnet__benchmark_result_2869224_1695835535_trace.json.gz",
        "tl__torch_compile_triton__trace.json.gz",
        "streams_overlap.json.gz",  # concurrent kernels: rows redone by the greedy loop
    ],
)
def test_a_single_files_columns_joined_on_threads_are_those_joined_one_at_a_time(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a many-core host a single file's columns join and reorder on threads, and its
    stacking rows are made track range by track range: the same Trace as one at a time."""
    from gpuviz.trace import kineto

    used: list[int] = []
    real = kineto.assembly_threads

    def spy(*args: object) -> int:
        used.append(real(*args))  # type: ignore[arg-type]
        return used[-1]

    monkeypatch.setattr(kineto, "assembly_threads", spy)
    monkeypatch.setattr(kineto, "ASSEMBLY_THREADS_MIN_ROWS", 0)  # small files take the path
    monkeypatch.setattr(kineto_worker, "usable_cores", lambda: 2)
    one_at_a_time = serial(DATA / name, monkeypatch)
    monkeypatch.setattr(kineto_worker, "usable_cores", lambda: 16)
    threaded = serial(DATA / name, monkeypatch)
    assert used == [0, kineto.ASSEMBLY_THREADS]
    _same(one_at_a_time, threaded)
    np.testing.assert_array_equal(one_at_a_time.slices.depth, threaded.slices.depth)
    np.testing.assert_array_equal(one_at_a_time.memory.rank, threaded.memory.rank)


def test_children_are_waited_for_on_a_thread_when_the_import_does_not_wait() -> None:
    """``close(wait=False)`` returns at once; a thread of its own waits for every child,
    which exits cleanly."""
    pool = kineto_worker.WorkerPool(3)
    event = b'{"ph": "X", "name": "k", "ts": 1, "dur": 1, "pid": 1, "tid": 1}'
    for w in pool.workers:
        w.send(0, [event])
        assert w.receive()["ok"]
    pool.close(wait=False)
    reapers = [t for t in threading.enumerate() if t.name == "gpuviz-import-reaper"]
    assert reapers
    for t in reapers:
        t.join(timeout=10)
    assert all(w.proc.returncode == 0 for w in pool.workers)
