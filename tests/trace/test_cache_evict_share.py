"""The import cache evicts once a process has written a share of its cap, not at every put
(issue 51): a rank folder's 1,000 entries, one per rank, cost an eviction scan of every entry
each, work quadratic in the ranks. The cap still holds, to within that share."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gpuviz.trace import cache as cache_mod
from gpuviz.trace.cache import TraceCache, load_cached
from gpuviz.trace.files import trace_files
from gpuviz.trace.kineto import import_trace

DATA = Path(__file__).parent.parent / "data"


@pytest.fixture(autouse=True)
def _cache_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GPUVIZ_NO_CACHE", raising=False)  # tests/trace turns it off


def _put_copies(tmp_path: Path, cache: TraceCache, n: int) -> None:
    for i in range(n):
        f = tmp_path / f"rank-{i}.json.gz"
        shutil.copy2(DATA / "worker_thread.json.gz", f)
        load_cached(f, trace_files(f), import_trace, cache=cache)


def _entry_size(tmp_path: Path) -> int:
    probe = TraceCache(tmp_path / "probe")
    _put_copies(tmp_path, probe, 1)
    (entry,) = probe.entries()
    return entry.size_bytes


def test_evictions_come_once_a_share_of_the_cap_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    one = _entry_size(tmp_path)
    monkeypatch.setattr(cache_mod, "EVICT_SHARE", 1 / 4)
    monkeypatch.setattr(cache_mod, "_UNEVICTED", {})
    cache = TraceCache(tmp_path / "c", max_bytes=8 * one + one // 2)  # room for 8 entries
    calls: list[int] = []
    real = TraceCache.evict
    monkeypatch.setattr(
        TraceCache, "evict", lambda self, keep=None: calls.append(1) or real(self, keep)
    )
    _put_copies(tmp_path, cache, 40)
    # A quarter of the cap is 2.125 entries: an eviction every third put (13), not 40.
    assert len(calls) == 40 // 3
    total = sum(e.size_bytes for e in cache.entries())
    assert total <= cache.max_bytes + 3 * one  # the cap, to within the share
    assert len(cache.entries()) >= 8  # the most recent ones kept


def test_a_put_as_large_as_the_share_evicts_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    one = _entry_size(tmp_path)
    monkeypatch.setattr(cache_mod, "_UNEVICTED", {})
    cache = TraceCache(tmp_path / "c", max_bytes=2 * one + one // 2)  # 16 x the share > one
    _put_copies(tmp_path, cache, 5)
    assert len(cache.entries()) == 2
