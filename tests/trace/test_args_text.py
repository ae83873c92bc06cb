"""The args text as zlib blocks: against the raw text, across block ends, the LRU, the
importer's writer, imports with and without compression, a damaged cached block, export."""

from __future__ import annotations

import gzip
import random
import zlib
from pathlib import Path

import numpy as np
import pytest
from test_cache import entries, settled_copy
from test_kineto_parallel import _mixed_folders_merge, folder, parallel  # noqa: F401  (fixtures)

from gpuviz.trace import args_text
from gpuviz.trace.args_text import BlockText, CorruptTextError, PlainText, TextWriter
from gpuviz.trace.cache import from_cache
from gpuviz.trace.chrome_export import export_chrome, export_per_rank
from gpuviz.trace.kineto import load_trace
from gpuviz.trace.model import ArgsStore, Trace

DATA = Path(__file__).parents[1] / "data"


def rows_text(n: int, seed: int = 0) -> list[bytes]:
    """``n`` JSON objects of random sizes, every tenth one empty (``{}``)."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        if i % 10 == 3:
            out.append(b"{}")
        else:
            out.append(b'{"i":%d,"s":"%s"}' % (i, b"x" * rng.randrange(0, 90)))
    return out


def store_of(rows: list[bytes], writer: TextWriter) -> ArgsStore:
    for r in rows:
        writer += r
    offsets = np.zeros(len(rows) + 1, np.int64)
    np.cumsum([len(r) for r in rows], out=offsets[1:])
    return ArgsStore(offsets=offsets, text=writer.text())


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(args_text, "BLOCK_BYTES", 256)
    return 256


def test_blocks_give_back_every_row_across_block_ends(small_blocks: int) -> None:
    rows = rows_text(500)
    store = store_of(rows, TextWriter(compress=True))
    text = store.text
    assert isinstance(text, BlockText) and text.n_blocks > 50
    starts = text.starts
    ends = np.cumsum([len(r) for r in rows])
    spanning = sum(
        1
        for e, r in zip(ends.tolist(), rows)
        if np.searchsorted(starts, e - len(r), "right") < np.searchsorted(starts, e, "left")
    )
    assert spanning > 10, "no row crosses a block end: the test would prove nothing"
    for i, r in enumerate(rows):
        assert store.raw(i) == r
    assert [store.get(i).get("i") for i in range(len(rows))] == [
        i if r != b"{}" else None for i, r in enumerate(rows)
    ]
    assert store.get(-1) == {}
    assert len(store.text) == sum(map(len, rows))
    # Whole text: compressed blocks hold it, much smaller than it is.
    assert text.read(0, len(text)) == b"".join(rows)
    text.verify()


def test_plain_and_block_stores_read_alike(small_blocks: int) -> None:
    rows = rows_text(300, seed=1)
    plain = store_of(rows, TextWriter(compress=False))
    blocks = store_of(rows, TextWriter(compress=True))
    assert isinstance(plain.text, PlainText) and isinstance(blocks.text, BlockText)
    assert [plain.raw(i) for i in range(300)] == [blocks.raw(i) for i in range(300)]
    assert plain.span(5, 200) == blocks.span(5, 200)
    assert plain.span(5, 200)[0] == b"".join(rows[5:201])


def test_rows_in_order_cost_one_decompression_per_block(
    small_blocks: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = rows_text(400, seed=2)
    store = store_of(rows, TextWriter(compress=True))
    calls = []
    real = zlib.decompress

    def counting(data: bytes) -> bytes:
        calls.append(1)
        return real(data)

    monkeypatch.setattr(args_text.zlib, "decompress", counting)
    for i in range(len(rows)):
        store.raw(i)
    assert isinstance(store.text, BlockText)
    assert len(calls) == store.text.n_blocks


def test_the_lru_keeps_the_last_blocks_within_its_bytes(
    small_blocks: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(args_text, "LRU_BYTES", 3 * small_blocks)
    text = TextWriter(compress=True)
    text += bytes(range(256)) * 10  # ten full blocks
    blocks = text.text()
    assert isinstance(blocks, BlockText)
    for i in [0, 1, 2, 3, 1, 4]:
        assert blocks.block(i) == bytes(range(256))
    assert blocks.cached_blocks() == [3, 1, 4]  # 0 and 2 went, least recently used first


def test_a_block_that_does_not_decompress_is_an_error_and_an_empty_row(
    small_blocks: int,
) -> None:
    rows = rows_text(100, seed=3)
    store = store_of(rows, TextWriter(compress=True))
    text = store.text
    assert isinstance(text, BlockText)
    data = bytearray(text.data)
    data[int(text.zoffsets[1]) + 5] ^= 0xFF
    bad = BlockText(bytes(data), text.zoffsets, text.starts)
    with pytest.raises(CorruptTextError):
        bad.verify()
    store = ArgsStore(offsets=store.offsets, text=bad)
    in_bad = int(np.searchsorted(store.offsets, text.starts[1], "right"))
    assert store.raw(in_bad) == b"{}" and store.get(in_bad) == {}
    assert store.raw(0) == rows[0]


@pytest.mark.parametrize("compress", [True, False])
@pytest.mark.parametrize("cut", [0, 100, 256, 700, 1999])
def test_the_writer_takes_text_back_like_a_bytearray(
    small_blocks: int, compress: bool, cut: int
) -> None:
    raw = bytes(random.Random(4).randrange(256) for _ in range(1500))
    w, ref = TextWriter(compress=compress), bytearray()
    w += raw
    ref += raw
    del w[cut:]
    del ref[cut:]
    w += b"tail" * 100
    ref += b"tail" * 100
    assert len(w) == len(ref)
    text = w.text()
    assert text.read(0, len(text)) == bytes(ref)


@pytest.mark.parametrize("compress", [True, False])
def test_ranges_are_copied_aligned_or_not(small_blocks: int, compress: bool) -> None:
    src = TextWriter(compress=True)
    src += b"a" * 600
    src.seal()
    src += b"b" * 300
    out = TextWriter(compress=compress)
    out.append_range(src, 600, 900)  # whole blocks
    out.append_range(src, 10, 610)  # across blocks, not aligned
    text = out.text()
    assert text.read(0, len(text)) == b"b" * 300 + b"a" * 590 + b"b" * 10


def test_blocks_from_elsewhere_are_taken_as_they_are_or_decompressed() -> None:
    data, sizes = args_text.compress_blocks(b"hello " * 1000)
    on, off = TextWriter(compress=True), TextWriter(compress=False)
    for w in (on, off):
        w += b"head"
        w.add_blocks(data, sizes)
    a, b = on.text(), off.text()
    assert isinstance(a, BlockText) and a.n_blocks == 2  # "head" sealed, then the block
    assert a.read(0, len(a)) == b.read(0, len(b)) == b"head" + b"hello " * 1000


# -- imports


def _all_args(trace: Trace) -> list[bytes]:
    return [trace.args.raw(i) for i in range(len(trace.args))]


@pytest.mark.parametrize(
    "name",
    ["ddp_nccl_4rank", "hta__nccl_parser_config__nccl_data.json.gz", "streams_overlap.json.gz"],
)
def test_import_with_and_without_compression_reads_the_same_args(
    name: str, small_blocks: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPUVIZ_NO_CACHE", "1")
    monkeypatch.setenv("GPUVIZ_IMPORT_WORKERS", "0")
    monkeypatch.setenv(args_text.ENV, "0")
    plain = load_trace(DATA / name)
    monkeypatch.setenv(args_text.ENV, "1")
    packed = load_trace(DATA / name)
    assert isinstance(plain.args.text, PlainText) and isinstance(packed.args.text, BlockText)
    assert packed.args.text.n_blocks > 1
    assert len(plain.args) > 10
    assert _all_args(plain) == _all_args(packed)
    assert [plain.args.get(i) for i in range(len(plain.args))] == [
        packed.args.get(i) for i in range(len(packed.args))
    ]


@pytest.mark.parametrize("whole", [True, False])
def test_children_compress_and_the_importer_joins_their_blocks(
    whole: bool,
    folder: Path,  # noqa: F811
    parallel: pytest.MonkeyPatch,  # noqa: F811
) -> None:

    parallel.setenv("GPUVIZ_NO_CACHE", "1")
    if not whole:
        parallel.setenv("GPUVIZ_IMPORT_WHOLE_FILE_MAX_BYTES", "0")
    packed = load_trace(folder)
    parallel.setenv(args_text.ENV, "0")
    plain = load_trace(folder)
    assert isinstance(packed.args.text, BlockText) and isinstance(plain.args.text, PlainText)
    assert len(plain.args) > 100 and _all_args(plain) == _all_args(packed)


def test_by_default_a_rank_folder_compresses_a_single_file_does_not_unless_children_share_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPUVIZ_NO_CACHE", "1")
    monkeypatch.delenv(args_text.ENV, raising=False)
    assert isinstance(load_trace(DATA / "ddp_nccl_4rank").args.text, BlockText)
    one = tmp_path / "one"
    one.mkdir()
    (one / "rank-0.json.gz").write_bytes((DATA / "ddp_nccl_4rank" / "rank-0.json.gz").read_bytes())
    assert isinstance(load_trace(one).args.text, PlainText)
    assert isinstance(load_trace(DATA / "streams_overlap.json.gz").args.text, PlainText)
    monkeypatch.setenv("GPUVIZ_IMPORT_WORKER_MIN_BYTES", "0")
    monkeypatch.setenv("GPUVIZ_IMPORT_WORKERS", "1")  # the importer and one child: plain
    assert isinstance(load_trace(DATA / "streams_overlap.json.gz").args.text, PlainText)
    monkeypatch.setenv("GPUVIZ_IMPORT_WORKERS", "2")
    assert isinstance(load_trace(DATA / "streams_overlap.json.gz").args.text, BlockText)
    monkeypatch.setenv("GPUVIZ_IMPORT_WORKERS", "0")
    monkeypatch.setenv(args_text.ENV, "1")
    assert isinstance(load_trace(DATA / "streams_overlap.json.gz").args.text, BlockText)


# -- the cache, export


def test_a_damaged_block_in_a_cache_entry_is_imported_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GPUVIZ_NO_CACHE", raising=False)
    monkeypatch.setenv("GPUVIZ_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv(args_text.ENV, "1")
    path = settled_copy("hta__nccl_parser_config__nccl_data.json.gz", tmp_path)
    fresh = load_trace(path)
    assert isinstance(fresh.args.text, BlockText)
    (entry,) = entries(tmp_path / "cache" / "traces")
    hit = load_trace(path)
    assert from_cache(hit) and isinstance(hit.args.text, BlockText)
    assert _all_args(hit) == _all_args(fresh)
    f = entry / "args.blob.npy"
    blob = np.load(f)
    blob[len(blob) // 2] ^= 0x5A  # same size, same dtype: only the checksum can tell
    np.save(f, blob)
    again = load_trace(path)
    assert not from_cache(again) and _all_args(again) == _all_args(fresh)


@pytest.mark.parametrize("name", ["ddp_nccl_4rank", "hta__nccl_parser_config__nccl_data.json.gz"])
def test_export_is_byte_identical_with_and_without_compression(
    name: str, small_blocks: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPUVIZ_NO_CACHE", "1")
    monkeypatch.setenv("GPUVIZ_IMPORT_WORKERS", "0")
    out = {}
    for on in ("0", "1"):
        monkeypatch.setenv(args_text.ENV, on)
        trace = load_trace(DATA / name)
        export_chrome(trace, tmp_path / f"all{on}.json")
        export_per_rank(trace, tmp_path / f"ranks{on}")
        out[on] = [(tmp_path / f"all{on}.json").read_bytes()] + [
            gzip.decompress(p.read_bytes())  # the gzip header holds the time it was written
            for p in sorted((tmp_path / f"ranks{on}").iterdir())
        ]
    assert len(out["1"]) > 1 and out["0"] == out["1"]
    assert b'"args":{' in out["1"][0]
