"""Reading rank snapshots side by side: order, progress, cancel, errors, the common origin."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuviz.analysis.allocator_ranks import (
    RankTimelines,
    map_ranks,
    on_common_origin,
    rank_figures_of,
    rank_snapshot_files,
    worker_count,
)
from gpuviz.errors import BadInputError
from gpuviz.trace.errors import ImportCancelledError


@pytest.mark.parametrize("workers", [0, 2])
def test_results_in_file_order_with_progress(rank_snapshots: Path, workers: int) -> None:
    files = [f for _, f in rank_snapshot_files(rank_snapshots)]
    seen: list[float] = []
    got = map_ranks(rank_figures_of, files, progress=seen.append, workers=workers)
    assert [g.source for g in got] == [str(f) for f in files]
    assert seen == sorted(seen) and seen[-1] == 1.0


@pytest.mark.parametrize("workers", [0, 2])
def test_cancel_stops_the_read(rank_snapshots: Path, workers: int) -> None:
    files = [f for _, f in rank_snapshot_files(rank_snapshots)]
    with pytest.raises(ImportCancelledError):
        map_ranks(rank_figures_of, files, cancelled=lambda: True, workers=workers)


@pytest.mark.parametrize("workers", [0, 2])
def test_on_error_keeps_the_others(rank_snapshots: Path, workers: int) -> None:
    bad = rank_snapshots / "rank-3.memory.pickle"
    bad.write_bytes(b"\x80\x05junk")
    files = [f for _, f in rank_snapshot_files(rank_snapshots)]
    errors: list[str] = []
    got = map_ranks(rank_figures_of, files, workers=workers, on_error=errors.append)
    assert [g is None for g in got] == [False, False, False, True]
    assert len(errors) == 1 and errors[0].startswith(str(bad))
    with pytest.raises(BadInputError, match="rank-3"):
        map_ranks(rank_figures_of, files, workers=workers)


def test_file_names_and_worker_count(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("rank-10.memory.pickle", "rank-2.pickle.gz", "rank-x.pickle", "notes.pickle"):
        (tmp_path / name).write_bytes(b"")
    assert [r for r, _ in rank_snapshot_files(tmp_path)] == [2, 10]
    monkeypatch.setenv("GPUVIZ_SNAPSHOT_WORKERS", "3")
    assert worker_count(8) == 3 and worker_count(1) == 0
    monkeypatch.setenv("GPUVIZ_SNAPSHOT_WORKERS", "0")
    assert worker_count(8) == 0


def test_common_origin_only_for_clocks_that_agree(tmp_path: Path) -> None:
    from gpuviz.trace.synthetic_snapshot import make_snapshot, write_snapshot

    def timelines(shift_us: int):
        out = []
        for r in range(2):
            snap, _ = make_snapshot(1500, seed=r)
            for trace in snap["device_traces"]:
                for e in trace:
                    e["time_us"] += shift_us * r
            p = write_snapshot(tmp_path / f"s{shift_us}-{r}.pickle", snap)
            out += RankTimelines()(p)
        return out

    near = on_common_origin(timelines(2_000))
    assert near[0].origin_ns == near[1].origin_ns
    assert int(near[1].t_ns[0]) - int(near[0].t_ns[0]) >= 2_000_000
    # the shifted lane's pyramid answers on its new times
    cols = near[1].pyramid.columns(float(near[1].t_ns[0]), float(near[1].t_ns[-1]), 100)
    assert cols.shown.any()
    far = on_common_origin(timelines(120_000_000))  # two minutes apart: not one job's clock
    assert far[0].origin_ns != far[1].origin_ns and int(far[1].t_ns[0]) == 0
