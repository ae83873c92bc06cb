"""A rank folder reduced in the local pool or on a LocalCluster (issue 51): the same Ranks view
as the folder read whole, a bad rank named and left out, cancel, and each rank's cache entry
left for the drill-down."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from gpuviz.analysis import rank_reduction_map as rmap
from gpuviz.analysis.ranks import MEASURES, rank_analysis
from gpuviz.trace.cache import from_cache
from gpuviz.trace.errors import ImportCancelledError
from gpuviz.trace.kineto import import_trace, load_trace

DATA = Path(__file__).parent.parent / "data"


def _same_view(got, whole) -> None:
    for m in MEASURES:
        np.testing.assert_array_equal(got.matrix.measure(m), whole.matrix.measure(m), err_msg=m)
    np.testing.assert_array_equal(got.collectives.wait_ns, whole.collectives.wait_ns)
    assert (got.straggler is None) == (whole.straggler is None)
    if whole.straggler is not None:
        assert got.straggler.rank == whole.straggler.rank


@pytest.mark.parametrize("workers", [0, 2])
def test_pool_gives_the_whole_folders_view(workers: int) -> None:
    folder = DATA / "ddp_nccl_4rank"
    seen: list[str] = []
    got = rmap.reduce_folder(folder, lambda f, what: seen.append(what), workers=workers)
    _same_view(got.analysis, rank_analysis(import_trace(str(folder)).prepare()))
    assert got.failed == [] and sorted(got.sources) == [0, 1, 2, 3]
    assert seen[-1] == "ranks reduced: 4 of 4"


def test_a_bad_rank_is_named_and_the_others_stand(tmp_path: Path) -> None:
    folder = tmp_path / "job"
    shutil.copytree(DATA / "gloo_4rank_cpu", folder)
    (folder / "rank-4.json").write_text("{not json")
    got = rmap.reduce_folder(folder, workers=0)
    assert len(got.failed) == 1 and "rank-4.json" in got.failed[0]
    assert sorted(got.sources) == [0, 1, 2, 3]
    assert got.analysis.straggler is not None and got.analysis.straggler.rank == 2


def test_cancel_stops_the_ranks() -> None:
    with pytest.raises(ImportCancelledError):
        rmap.reduce_folder(DATA / "gloo_4rank_cpu", cancelled=lambda: True, workers=2)


def test_each_rank_is_left_in_the_cache_for_the_drill_down(tmp_path: Path) -> None:
    folder = tmp_path / "job"
    shutil.copytree(DATA / "nccl_2rank_h200", folder)  # files no other test has cached
    got = rmap.reduce_folder(folder, workers=0)
    one = load_trace(got.sources[1])
    assert from_cache(one)
    assert [r.rank for r in one.ranks] == [1]


def test_which_folders_open_reduced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = DATA / "gloo_4rank_cpu"
    monkeypatch.delenv(rmap.ENV, raising=False)
    assert not rmap.wants_reduction(folder)  # 4 ranks: read whole
    assert rmap.wants_reduction(folder, asked=True)
    assert not rmap.wants_reduction(DATA / "gloo_4rank_cpu" / "rank-0.json.gz", asked=True)
    monkeypatch.setattr(rmap, "REDUCE_AT", 4)
    assert rmap.wants_reduction(folder)
    monkeypatch.setenv(rmap.ENV, "0")
    assert not rmap.wants_reduction(folder)
    assert rmap.wants_reduction(folder, asked=True)
    monkeypatch.setattr(rmap, "REDUCE_AT", 64)
    monkeypatch.setenv(rmap.ENV, "1")
    assert rmap.wants_reduction(folder)


def test_on_a_local_cluster_the_view_is_the_pools() -> None:
    pytest.importorskip("distributed", reason="the 'cluster' extra (dask) is missing")
    from gpuviz.trace import cluster

    folder = DATA / "gloo_4rank_cpu"
    lines: list[str] = []
    with cluster.using("local:2"):
        got = rmap.reduce_folder(folder, lambda f, what: lines.append(what))
    _same_view(got.analysis, rmap.reduce_folder(folder, workers=0).analysis)
    assert lines[-1].startswith("4/4 ranks done")


def test_files_without_ranks_are_ranked_by_file_order_as_read_whole(tmp_path: Path) -> None:
    import gzip
    import json

    folder = tmp_path / "job"
    folder.mkdir()
    # The ranks' files with no distributedInfo, named against their rank order: a is rank 3.
    for name, r in (("a", 3), ("b", 0), ("c", 2), ("d", 1)):
        with gzip.open(DATA / "gloo_4rank_cpu" / f"rank-{r}.json.gz", "rt") as f:
            data = json.load(f)
        del data["distributedInfo"]
        (folder / f"{name}.json").write_text(json.dumps(data))
    whole = rank_analysis(import_trace(str(folder)).prepare())
    got = rmap.reduce_folder(folder, workers=0)
    assert sorted(got.sources) == [0, 1, 2, 3] and got.sources[0].endswith("a.json")
    np.testing.assert_array_equal(got.analysis.matrix.ranks, whole.matrix.ranks)
    _same_view(got.analysis, whole)
    assert whole.straggler is not None and whole.straggler.rank == 2  # c: rank 2's file


def test_a_folder_that_is_not_one_job_is_refused(tmp_path: Path) -> None:
    from gpuviz.trace.one_job import NotOneJobError

    folder = tmp_path / "two-jobs"
    folder.mkdir()
    shutil.copy2(DATA / "gloo_4rank_cpu" / "rank-0.json.gz", folder / "rank-0.json.gz")
    shutil.copy2(DATA / "nccl_2rank_h200" / "rank-1.json.gz", folder / "rank-1.json.gz")
    with pytest.raises(NotOneJobError):
        import_trace(str(folder))  # the whole load refuses it: so must the reductions
    with pytest.raises(NotOneJobError):
        rmap.reduce_folder(folder, workers=0)
