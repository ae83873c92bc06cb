"""The import cache: hits, misses, stale files, versions, damaged entries, the cap, writers."""

from __future__ import annotations

import json
import logging
import mmap
import os
import shutil
import subprocess
import sys
import time
import zlib
from dataclasses import fields
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from subproc import gpuviz_env

from gpuviz import cli
from gpuviz.analysis.summary import summarize
from gpuviz.trace import cache as cache_mod
from gpuviz.trace import kineto
from gpuviz.trace.cache import TraceCache, from_cache, parse_bytes
from gpuviz.trace.cache_entry import MANIFEST, TABLES, entry_bytes
from gpuviz.trace.cache_key import CacheKey
from gpuviz.trace.errors import ImportCancelledError
from gpuviz.trace.kineto import import_trace, load_trace
from gpuviz.trace.model import Trace

DATA = Path(__file__).parents[1] / "data"
MEMORY_TIMELINE = "hta__memory_analysis__memory_timeline.raw.gz"
REAL_TRACES = sorted([p.name for p in DATA.glob("*.json.gz")] + ["ddp_2rank", "ddp_nccl_4rank"])
HOUR_AGO = time.time() - 3600
SMALL = "streams_overlap.json.gz"
MEDIUM = "hta__nccl_parser_config__nccl_data.json.gz"


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The cache on, in a folder of this test; returns the folder its entries go to."""
    monkeypatch.delenv("GPUVIZ_NO_CACHE", raising=False)
    monkeypatch.delenv("GPUVIZ_CACHE_MAX_BYTES", raising=False)
    monkeypatch.setenv("GPUVIZ_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "traces"


@pytest.fixture
def imports(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every real import load_trace makes (a cache hit makes none)."""
    seen: list[str] = []

    def counting(path: object, **kw: object) -> Trace:
        seen.append(str(path))
        return import_trace(path, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(kineto, "import_trace", counting)
    return seen


def settled_copy(name: str, dest: Path) -> Path:
    """A copy of tests/data/NAME whose files were last modified an hour ago (not "racy")."""
    src = DATA / name
    out = dest / name
    if src.is_dir():
        shutil.copytree(src, out)
        for f in out.iterdir():
            os.utime(f, (HOUR_AGO, HOUR_AGO))
    else:
        shutil.copyfile(src, out)
        os.utime(out, (HOUR_AGO, HOUR_AGO))
    return out


def entries(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if not p.name.startswith(".")) if root.exists() else []


def assert_same_trace(a: Trace, b: Trace) -> None:
    """Every column, string, arg and field of two traces is equal (ids included)."""
    for name in TABLES:
        ta, tb = getattr(a, name), getattr(b, name)
        for f in fields(ta):
            va, vb = getattr(ta, f.name), getattr(tb, f.name)
            assert va.dtype == vb.dtype, f"{name}.{f.name}"
            np.testing.assert_array_equal(va, vb, err_msg=f"{name}.{f.name}")
    assert a.symbols.strings == b.symbols.strings
    assert a.args.text.read(0, len(a.args.text)) == b.args.text.read(0, len(b.args.text))
    np.testing.assert_array_equal(a.args.offsets, b.args.offsets)
    assert [vars(r) for r in a.ranks] == [vars(r) for r in b.ranks]
    assert (a.zero_ns, a.event_count) == (b.zero_ns, b.event_count)
    assert (a.warnings.count, a.warnings.samples) == (b.warnings.count, b.warnings.samples)
    assert a.metadata_events == b.metadata_events


# -- hits and misses -----------------------------------------------------------------------


def test_first_load_imports_and_stores_the_next_maps_it(
    root: Path, imports: list[str], tmp_path: Path
) -> None:
    path = settled_copy(MEDIUM, tmp_path)
    first = load_trace(path)
    assert imports == [str(path)] and not from_cache(first)
    assert len(entries(root)) == 1
    again = load_trace(path)
    assert imports == [str(path)], "the second load imported the file again"
    assert from_cache(again)
    # Memory-mapped, read-only columns: nothing was parsed or copied.
    assert isinstance(again.slices.start_ns.base.obj, mmap.mmap)  # a memoryview of the map
    assert not again.slices.start_ns.flags.writeable
    assert_same_trace(again, first)
    assert again.args.get(int(again.slices.args.max())) == first.args.get(
        int(first.slices.args.max())
    )


@pytest.mark.parametrize("name", REAL_TRACES)
def test_a_cached_trace_gives_the_figures_of_a_fresh_import(
    name: str, root: Path, tmp_path: Path
) -> None:
    path = settled_copy(name, tmp_path)
    fresh = import_trace(path)
    load_trace(path)  # stores it
    cached = load_trace(path)
    assert from_cache(cached)
    assert_same_trace(cached, fresh)
    assert summarize(cached).to_json() == summarize(fresh).to_json()


def test_another_spelling_of_the_path_hits_and_names_the_file_as_given(
    root: Path, imports: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = settled_copy("ddp_2rank", tmp_path)
    load_trace(path)
    link = tmp_path / "link"
    link.symlink_to(path)
    monkeypatch.chdir(tmp_path)
    again = load_trace("link")
    assert from_cache(again) and len(imports) == 1
    assert again.sources == [str(Path("link") / f"rank-{i}.json.gz") for i in (0, 1)]
    assert summarize(again).to_json() == summarize(import_trace("link")).to_json()


def test_progress_and_cancel_on_a_hit(root: Path, tmp_path: Path) -> None:
    path = settled_copy(SMALL, tmp_path)
    load_trace(path)
    seen: list[float] = []
    assert from_cache(load_trace(path, progress=seen.append))
    assert seen == [1.0]
    with pytest.raises(ImportCancelledError):
        load_trace(path, cancelled=lambda: True)


# -- stale files, versions -----------------------------------------------------------------


def test_a_changed_size_is_a_miss_and_replaces_the_entry(
    root: Path, imports: list[str], tmp_path: Path
) -> None:
    path = tmp_path / "t.json"
    events = [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10, "dur": 5}]
    path.write_text(json.dumps({"traceEvents": events}))
    os.utime(path, (HOUR_AGO, HOUR_AGO))
    load_trace(path)
    old_entry = entries(root)
    events.append(dict(events[0], name="k2", ts=20))
    path.write_text(json.dumps({"traceEvents": events}))
    os.utime(path, (HOUR_AGO, HOUR_AGO))  # same mtime: the size alone tells
    trace = load_trace(path)
    assert len(imports) == 2 and not from_cache(trace)
    assert trace.symbols.lookup(trace.slices.name) == ["k", "k2"]
    assert len(entries(root)) == 1 and entries(root) != old_entry
    assert from_cache(load_trace(path))


def test_a_changed_mtime_is_a_miss(root: Path, imports: list[str], tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    text = '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "%s", "pid": 0, "tid": 7, "ts": 1, "dur": 2}]}'
    path.write_text(text % "a")
    os.utime(path, (HOUR_AGO, HOUR_AGO))
    first = load_trace(path)
    assert first.symbols.lookup(first.slices.name) == ["a"]
    path.write_text(text % "b")  # same size
    os.utime(path, (HOUR_AGO + 1, HOUR_AGO + 1))
    trace = load_trace(path)
    assert len(imports) == 2 and trace.symbols.lookup(trace.slices.name) == ["b"]
    assert len(entries(root)) == 1


def test_a_file_added_to_a_rank_folder_is_a_miss(
    root: Path, imports: list[str], tmp_path: Path
) -> None:
    path = settled_copy("ddp_nccl_4rank", tmp_path)
    shutil.move(path / "rank-3.json.gz", tmp_path / "rank-3.json.gz")
    assert load_trace(path).rank_values() == [0, 1, 2]
    shutil.move(tmp_path / "rank-3.json.gz", path / "rank-3.json.gz")
    trace = load_trace(path)
    assert trace.rank_values() == [0, 1, 2, 3] and len(imports) == 2


def test_a_file_written_just_now_is_not_cached_yet(root: Path, tmp_path: Path) -> None:
    path = tmp_path / SMALL
    shutil.copyfile(DATA / SMALL, path)  # mtime: now
    load_trace(path)
    assert entries(root) == []


@pytest.mark.parametrize("what", ["format", "gpuviz"])
def test_another_version_is_a_miss_and_replaces_the_entry(
    what: str, root: Path, imports: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = settled_copy(SMALL, tmp_path)
    load_trace(path)
    before = entries(root)
    if what == "format":
        monkeypatch.setattr(cache_mod, "FORMAT_VERSION", cache_mod.FORMAT_VERSION + 1)
    else:
        monkeypatch.setattr("gpuviz.__version__", "99.0")
    assert not from_cache(load_trace(path))
    assert len(imports) == 2
    after = entries(root)
    assert len(after) == 1 and after != before
    manifest = json.loads((after[0] / MANIFEST).read_bytes())
    assert CacheKey(*manifest["key"]).format == cache_mod.FORMAT_VERSION  # the key: an array
    assert from_cache(load_trace(path))


def _same_size_forged_mtime(path: Path, text: str, how: str, tmp_path: Path) -> None:
    """Give ``path`` new content of its size and mtime, as ``cp -p``/``rsync -t``/``tar`` do."""
    st = path.stat()
    if how == "replaced":  # a new file renamed over the old one: another inode
        other = tmp_path / f".new-{path.name}"
        other.write_text(text)
        os.utime(other, ns=(st.st_atime_ns, st.st_mtime_ns))
        os.replace(other, path)
    else:  # rewritten in place: the inode stays, only the ctime tells
        # Inode times come from the kernel's coarse clock (ticks up to 10 ms): a rewrite
        # within one tick of the last change keeps the ctime too (the racy case).
        time.sleep(0.05)
        path.write_text(text)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (st.st_size, st.st_mtime_ns), "not forged"


@pytest.mark.parametrize("how", ["replaced", "rewritten_in_place"])
@pytest.mark.parametrize("layout", ["file", "rank_folder"])
def test_another_file_of_the_same_size_and_mtime_is_a_miss(
    how: str, layout: str, root: Path, imports: list[str], tmp_path: Path
) -> None:
    text = '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "%s", "pid": 0, "tid": 7, "ts": 1, "dur": 2}]}'
    files = [tmp_path / "t.json"]
    if layout == "rank_folder":
        (tmp_path / "run").mkdir()
        files = [tmp_path / "run" / f"rank-{i}.json" for i in (0, 1)]
    for f in files:
        f.write_text(text % "a")
        os.utime(f, (HOUR_AGO, HOUR_AGO))
    path = files[0] if layout == "file" else tmp_path / "run"
    load_trace(path)
    first = load_trace(path)
    assert from_cache(first) and set(first.symbols.lookup(first.slices.name)) == {"a"}
    _same_size_forged_mtime(files[-1], text % "b", how, tmp_path)
    trace = load_trace(path)
    assert not from_cache(trace) and len(imports) == 2, "a stale entry was served"
    assert "b" in trace.symbols.lookup(trace.slices.name)
    assert len(entries(root)) == 1
    assert from_cache(load_trace(path))


# -- damaged entries -----------------------------------------------------------------------


def _truncate(entry: Path) -> None:
    f = entry / "slices.start_ns.npy"
    os.truncate(f, f.stat().st_size - 8)


def _wrong_dtype(entry: Path) -> None:
    # Same itemsize, so the file keeps its size: only the dtype check can tell.
    f = entry / "slices.start_ns.npy"
    np.save(f, np.load(f).astype(np.float64))


def _missing_file(entry: Path) -> None:
    (entry / "tracks.label.npy").unlink()


def _garbage_manifest(entry: Path) -> None:
    (entry / MANIFEST).write_bytes(b"\x00\x9fnot json{")


def _manifest_of_another_schema(entry: Path) -> None:
    (entry / MANIFEST).write_text('{"key": 1, "files": []}')


def _ids_out_of_range(entry: Path) -> None:
    f = entry / "slices.track.npy"
    track = np.load(f)
    track[-1] = 10**6
    np.save(f, track)


def _symbol_offsets_off(entry: Path) -> None:
    f = entry / "symbols.offsets.npy"
    o = np.load(f)
    o[-1] += 3
    np.save(f, o)


def _file_replaced_by_pickle(entry: Path) -> None:
    f = entry / "tracks.label.npy"
    np.save(f, np.array([{"a": 1}], dtype=object), allow_pickle=True)


def _empty_folder(entry: Path) -> None:
    for f in entry.iterdir():
        f.unlink()


DAMAGE = [
    _truncate,
    _wrong_dtype,
    _missing_file,
    _garbage_manifest,
    _manifest_of_another_schema,
    _ids_out_of_range,
    _symbol_offsets_off,
    _file_replaced_by_pickle,
    _empty_folder,
]


@pytest.mark.parametrize("damage", DAMAGE, ids=[d.__name__.strip("_") for d in DAMAGE])
def test_a_damaged_entry_is_imported_again_never_trusted(
    damage: object, root: Path, imports: list[str], tmp_path: Path
) -> None:
    path = settled_copy(MEDIUM, tmp_path)
    fresh = load_trace(path)
    (entry,) = entries(root)
    damage(entry)  # type: ignore[operator]
    trace = load_trace(path)
    assert not from_cache(trace) and len(imports) == 2
    assert_same_trace(trace, fresh)
    # The bad entry was replaced by a good one.
    assert from_cache(load_trace(path)) and len(imports) == 2


def _flip_offsets(path: Path) -> list[int]:
    """Where to flip a byte in a file: its first and last, and, for a column, its first value."""
    size = path.stat().st_size
    where = {0, size // 2, size - 1}
    if path.suffix == ".npy":
        where.add(size - np.load(path).nbytes)  # the first byte after numpy's header
    else:
        where.add(len('{"crc32":"'))  # the manifest's own CRC
    return sorted(w for w in where if 0 <= w < size)


def test_a_flipped_byte_in_any_file_of_an_entry_is_found(
    root: Path, imports: list[str], tmp_path: Path
) -> None:
    # Every file on disk in turn, not a list of names: tracks.rank, memory.rank and
    # memory.device_id were once left out of every check, and one flipped byte gave
    # "Steps: 525" instead of 10, or a memory row for "device 91", on every later open.
    path = settled_copy(SMALL, tmp_path)
    fresh = load_trace(path)
    (entry,) = entries(root)
    names = sorted(p.name for p in entry.iterdir())
    expected = {f"{t}.{f.name}.npy" for t, cls in TABLES.items() for f in fields(cls)}
    assert expected | {MANIFEST} <= set(names)
    missed = []
    for name in names:
        for offset in _flip_offsets(entry / name):
            (entry,) = entries(root)  # the last re-import wrote it again
            f = entry / name
            data = bytearray(f.read_bytes())
            data[offset] ^= 0x01
            f.write_bytes(bytes(data))
            n = len(imports)
            trace = load_trace(path)
            if from_cache(trace) or len(imports) != n + 1:
                missed.append(f"{name}@{offset}")
    assert missed == [], f"damage not found: {missed}"
    assert_same_trace(trace, fresh)
    assert from_cache(load_trace(path))


def test_a_header_numpy_cannot_parse_in_any_way_is_a_damaged_entry(
    root: Path, imports: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # On Python 3.12 a flipped byte that makes a control character in a .npy header makes
    # numpy's parser raise tokenize.TokenError (not a ValueError): the entry is imported
    # again, not an error out of load_trace.
    import tokenize

    from numpy.lib import format as npy

    path = settled_copy(SMALL, tmp_path)
    fresh = load_trace(path)
    assert len(imports) == 1

    def damaged(f: Any) -> Any:
        raise tokenize.TokenError("invalid non-printable character U+000B", (1, 118))

    with monkeypatch.context() as m:
        m.setattr(npy, "read_array_header_1_0", damaged)
        m.setattr(npy, "read_array_header_2_0", damaged)
        again = load_trace(path)
    assert len(imports) == 2 and not from_cache(again)
    assert_same_trace(again, fresh)


def test_every_block_of_a_file_is_checked_on_several_threads(
    root: Path, imports: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Blocks of 4 KiB: the columns span many, which several threads check. A flip in any
    # block, the last (short) one too, is found; so is a manifest with a CRC too few.
    from gpuviz.trace import cache_entry

    monkeypatch.setattr(cache_entry, "CRC_BLOCK", 4096)
    started: list[int] = []
    real_thread = cache_entry.threading.Thread

    def counting_thread(*a: Any, **kw: Any) -> Any:
        started.append(1)
        return real_thread(*a, **kw)

    monkeypatch.setattr(cache_entry.threading, "Thread", counting_thread)
    monkeypatch.setattr(cache_entry.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    path = settled_copy(MEDIUM, tmp_path)
    fresh = load_trace(path)
    (entry,) = entries(root)
    big = max(entry.glob("*.npy"), key=lambda f: f.stat().st_size)
    size = big.stat().st_size
    assert size > 3 * 4096
    started.clear()
    assert from_cache(load_trace(path)) and started, "no thread shared the check"
    for offset in (4096 + 17, (size // 4096) * 4096 - 1, size - 1):
        (entry,) = entries(root)
        big = entry / big.name  # the last re-import wrote the entry again
        data = bytearray(big.read_bytes())
        data[offset] ^= 0x40
        big.write_bytes(bytes(data))
        n = len(imports)
        again = load_trace(path)
        assert not from_cache(again) and len(imports) == n + 1, f"flip at {offset} not found"
    assert_same_trace(again, fresh)

    def rewrite(drop: int) -> None:  # the manifest written again, with its own CRC right
        (entry,) = entries(root)
        manifest = json.loads((entry / MANIFEST).read_bytes())
        crcs = manifest["files"][big.name[: -len(".npy")]][3]
        del crcs[len(crcs) - drop :]
        body = json.dumps(manifest, separators=(",", ":"))[len('{"crc32":"00000000",') :]
        crc = f"{zlib.crc32(body.encode()):08x}"
        (entry / MANIFEST).write_text(f'{{"crc32":"{crc}",{body}')

    rewrite(0)
    assert from_cache(load_trace(path)), "the rewritten manifest should still serve"
    rewrite(1)
    n = len(imports)
    assert not from_cache(load_trace(path)) and len(imports) == n + 1


# -- the cap, clearing ---------------------------------------------------------------------


def test_the_least_recently_used_entries_go_first(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = [SMALL, "worker_thread.json.gz", "tl__torch_compile_triton__trace.json.gz"]
    paths = [settled_copy(n, tmp_path) for n in names]
    cache = TraceCache(root)
    sizes = []
    for p in paths:
        load_trace(p)
        time.sleep(0.05)
    for e in cache.entries():
        sizes.append(e.size_bytes)
    assert len(sizes) == 3 and min(sizes) > 0
    cache.clear()
    # Room for the two largest entries, not for three.
    monkeypatch.setenv("GPUVIZ_CACHE_MAX_BYTES", str(sum(sorted(sizes)[1:]) + 1))
    a, b, c = paths
    load_trace(a)
    time.sleep(0.05)
    load_trace(b)
    time.sleep(0.05)
    assert from_cache(load_trace(a))  # a is now used more recently than b
    time.sleep(0.05)
    load_trace(c)
    assert from_cache(load_trace(a)) and from_cache(load_trace(c))
    assert not from_cache(load_trace(b)), "b, the least recently used, should have gone"
    total = sum(e.size_bytes for e in TraceCache(root).entries())
    assert total <= sum(sorted(sizes)[1:]) + 1


def test_a_trace_larger_than_the_cap_is_not_stored(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = settled_copy(SMALL, tmp_path)
    monkeypatch.setenv("GPUVIZ_CACHE_MAX_BYTES", str(entry_bytes(import_trace(path)) - 1))
    load_trace(path)
    assert entries(root) == []


def test_clear_deletes_every_entry_and_says_how_much(root: Path, tmp_path: Path) -> None:
    for name in (SMALL, MEDIUM):
        load_trace(settled_copy(name, tmp_path))
    on_disk = sum(f.stat().st_size for f in root.rglob("*") if f.is_file())
    assert on_disk > 0
    assert cache_mod.clear_cache() == on_disk
    assert entries(root) == [] and list(root.iterdir()) == []
    assert cache_mod.clear_cache() == 0
    assert TraceCache(tmp_path / "never-made").clear() == 0


@pytest.mark.parametrize(
    ("text", "value"),
    [("5000000000", 5 * 10**9), ("500M", 500 * 10**6), ("5 GB", 5 * 10**9),
     ("1GiB", 2**30), ("1.5k", 1500), ("0", 0)],
)  # fmt: skip
def test_sizes(text: str, value: int) -> None:
    assert parse_bytes(text) == value


@pytest.mark.parametrize("text", ["", "-1", "5 parsecs", "1e9", "G"])
def test_bad_sizes(text: str) -> None:
    with pytest.raises(ValueError, match="not a size"):
        parse_bytes(text)


def test_a_bad_cap_is_reported_and_the_default_used(
    root: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("GPUVIZ_CACHE_MAX_BYTES", "lots")
    with caplog.at_level(logging.WARNING):
        cache = TraceCache.default()
    assert cache is not None and cache.max_bytes == cache_mod.DEFAULT_MAX_BYTES
    assert "GPUVIZ_CACHE_MAX_BYTES" in caplog.text


def test_the_default_place_follows_xdg_cache_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("GPUVIZ_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    cache = TraceCache.default()
    assert cache is not None
    if sys.platform.startswith("linux"):
        assert cache.root == tmp_path / "xdg" / "gpuviz" / "traces"


# -- switches, unwritable caches -----------------------------------------------------------


def test_no_cache_env_and_flag(
    root: Path, imports: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    path = settled_copy(SMALL, tmp_path)
    monkeypatch.setenv("GPUVIZ_NO_CACHE", "1")
    load_trace(path)
    load_trace(path)
    assert len(imports) == 2 and entries(root) == []
    monkeypatch.setenv("GPUVIZ_NO_CACHE", "0")
    load_trace(path)
    assert len(entries(root)) == 1
    monkeypatch.delenv("GPUVIZ_NO_CACHE")
    assert cli.main(["summary", str(path), "--json", "--no-cache"]) == 0
    assert len(imports) == 4, "--no-cache used the cache"
    assert "GPUVIZ_NO_CACHE" not in os.environ, "--no-cache leaked out of the command"
    assert cli.main(["summary", str(path), "--json"]) == 0
    assert len(imports) == 4
    cached, fresh = (json.loads(x) for x in capsys.readouterr().out.splitlines())
    assert cached == fresh


def test_load_trace_with_cache_false_imports(
    root: Path, imports: list[str], tmp_path: Path
) -> None:
    path = settled_copy(SMALL, tmp_path)
    load_trace(path)
    assert not from_cache(load_trace(path, cache=False)) and len(imports) == 2


def test_an_unwritable_cache_only_costs_the_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, imports: list[str]
) -> None:
    monkeypatch.delenv("GPUVIZ_NO_CACHE", raising=False)
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("GPUVIZ_CACHE_DIR", str(blocker))  # a file where a folder should be
    path = settled_copy(SMALL, tmp_path)
    assert_same_trace(load_trace(path), load_trace(path))
    assert len(imports) == 2


def test_putting_a_key_twice_keeps_one_entry_and_no_temporary_folder(
    root: Path, tmp_path: Path
) -> None:
    path = settled_copy(SMALL, tmp_path)
    cache = TraceCache(root)
    key = cache.key(path, [path])
    trace = import_trace(path)
    first = cache.put(key, trace, [str(path)])
    second = cache.put(key, trace, [str(path)])
    assert first == second == cache.entry_path(key)
    assert list(root.iterdir()) == [first]
    got = cache.get(key, [str(path)])
    assert got is not None
    assert_same_trace(got, trace)


_WRITER = r"""
import os, sys, time
from pathlib import Path
go = Path(sys.argv[2])
while not go.exists():
    time.sleep(0.002)
from gpuviz.trace.kineto import load_trace
load_trace(sys.argv[1])
"""


def test_two_processes_importing_one_file_leave_one_whole_entry(root: Path, tmp_path: Path) -> None:
    path = settled_copy(MEDIUM, tmp_path)
    go = tmp_path / "go"
    env = gpuviz_env()
    procs = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(path), str(go)], env=env)
        for _ in range(2)
    ]
    time.sleep(1.0)  # both are waiting, with gpuviz not yet imported
    go.touch()
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    assert [p.name for p in root.iterdir()] == [p.name for p in entries(root)], "left temp"
    assert len(entries(root)) == 1
    cached = load_trace(path)
    assert from_cache(cached)
    assert_same_trace(cached, import_trace(path))
