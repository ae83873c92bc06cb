"""The scanner's sparse mode (``EventChunks(sparse=True)``): in an uncompressed file it reads
only the ends of blocks, and hands out the same chunks (offsets, text, spans) as a full read."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import Any

import msgspec
import pytest
from test_kineto import NESTED

from gpuviz.trace import file_blocks
from gpuviz.trace.errors import TraceFormatError
from gpuviz.trace.jsonscan import EventChunks

DATA = Path(__file__).parents[1] / "data"
SHARED = Path(__file__).parents[3] / "shared" / "traces"


def _op(i: int, **extra: Any) -> dict[str, Any]:
    return {"ph": "X", "cat": "cpu_op", "name": f"op{i}", "pid": 1, "tid": 1, "ts": i, "dur": 1,
            **extra}  # fmt: skip


def _scan(path: Path, block: int, sparse: bool, reject: int = -1) -> Any:
    """Every chunk's offset, text and span, then the metadata and the list flag (or the
    error), a guessed chunk that is not JSON handed back as the importer does. ``reject``:
    hand back every n-th guessed chunk too."""
    chunks = EventChunks(str(path), block_bytes=block, guess=True, sparse=sparse)
    out = []
    try:
        for k, c in enumerate(chunks):
            if c.guessed:
                try:
                    msgspec.json.decode(c.json_array())
                except msgspec.DecodeError:
                    chunks.reject()
                    continue
            if reject > 0 and c.guessed and k % reject == 0:
                chunks.reject()
                continue
            out.append((c.byte_offset, c.text, c.span))
    except TraceFormatError as e:
        return str(e)
    return out, chunks.metadata, chunks.is_list


def _unzipped(tmp_path: Path, source: Path) -> Path:
    out = tmp_path / source.name.removesuffix(".gz")
    out.write_bytes(gzip.decompress(source.read_bytes()))
    return out


def _odd_files(tmp_path: Path) -> list[Path]:
    """Files whose blocks hold no boundary in their last bytes, boundaries inside args,
    padding, a bare list, and lists of objects after the events."""
    files = {
        # Events of about 20 KB: a block's last 4 KB often hold no boundary.
        "large_args.json": {"traceEvents": [_op(i, args={"s": "x" * 20000}) for i in range(40)]},
        # Args that look like event boundaries: guessed ends inside them are wrong.
        "nested.json": {"traceEvents": [_op(i, args={"inputs": NESTED}) for i in range(400)]},
        "after.json": {
            "traceEvents": [_op(i) for i in range(500)],
            "deviceProperties": [{"id": i, "name": "GPU"} for i in range(300)],
        },
    }
    out = []
    for name, doc in files.items():
        p = tmp_path / name
        p.write_text(json.dumps(doc, indent=1))
        out.append(p)
    padded = tmp_path / "padded.json"
    parts = [json.dumps(_op(i)) for i in range(300)]
    padded.write_text('{"traceEvents": [' + (",\n" + " " * 9000).join(parts) + "]}")
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps([_op(i) for i in range(800)]))
    return [*out, padded, bare]


@pytest.mark.parametrize("block", [1 << 12, 1 << 14, 1 << 16])
def test_sparse_scanning_hands_out_the_chunks_of_a_full_read(tmp_path: Path, block: int) -> None:
    files = _odd_files(tmp_path)
    files += [_unzipped(tmp_path, DATA / n) for n in ("dataparallel_seed_2gpu.json.gz",
              "ddp_2rank/rank-1.json.gz")]  # fmt: skip
    files += [_unzipped(tmp_path, p) for p in sorted(SHARED.glob("external/tl__*.json.gz"))]
    for f in files:
        want = _scan(f, block, sparse=False)
        assert isinstance(want, tuple) and want[0], f
        assert _scan(f, block, sparse=True) == want, f


def test_a_rejected_sparse_chunk_is_redone_exactly(tmp_path: Path) -> None:
    for f in _odd_files(tmp_path):
        want = _scan(f, 1 << 13, sparse=False, reject=3)
        assert _scan(f, 1 << 13, sparse=True, reject=3) == want, f
        doc = json.loads(f.read_bytes())
        events = doc if isinstance(doc, list) else doc["traceEvents"]
        assert json.loads(b"[" + b",".join(t for _, t, _ in want[0]) + b"]") == events


def test_a_sparse_scan_reads_little_of_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    f = tmp_path / "t.json"
    f.write_text(json.dumps({"traceEvents": [_op(i, args={"i": i}) for i in range(20000)]}))
    size = f.stat().st_size
    read: list[int] = []
    pread = os.pread

    def counting(fd: int, n: int, offset: int) -> bytes:
        got = pread(fd, n, offset)
        read.append(len(got))
        return got

    monkeypatch.setattr(file_blocks.os, "pread", counting)
    chunks = list(EventChunks(str(f), block_bytes=1 << 16, sparse=True))
    lazy = [c for c in chunks if c.pieces is None]  # all but the head's and the tail's
    assert len(chunks) > 10 and len(lazy) >= len(chunks) - 3
    assert sum(read) < size // 8, (sum(read), size)
    assert sum(c.span[1] for c in chunks if c.span) > size * 0.9  # the spans cover the events


def test_a_file_changed_after_its_scan_is_an_error_naming_it(tmp_path: Path) -> None:
    f = tmp_path / "t.json"
    f.write_text(json.dumps({"traceEvents": [_op(i) for i in range(3000)]}))
    chunks = list(EventChunks(str(f), block_bytes=1 << 13, sparse=True))
    lazy = [c for c in chunks if c.pieces is None]
    assert lazy
    with open(f, "r+b") as fh:
        fh.truncate(lazy[-1].span[0] + 10)  # type: ignore[index]
    with pytest.raises(TraceFormatError, match="changed while it was read") as err:
        lazy[-1].json_array()
    assert str(f) in str(err.value)


def test_a_gzip_file_is_read_whole(tmp_path: Path) -> None:
    f = DATA / "dataparallel_seed_2gpu.json.gz"
    chunks = list(EventChunks(str(f), block_bytes=1 << 13, sparse=True))
    assert chunks and all(c.pieces is not None for c in chunks)
