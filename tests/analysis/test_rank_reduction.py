"""The Ranks view from per-rank reductions equals the folder read whole (issue 51).

The reference is :func:`gpuviz.analysis.ranks.rank_analysis` of the folder imported whole (one
trace, one clock): a different path from the reductions (each file imported alone, on its own
zero, then shifted and aligned from its parts only). Every figure the Ranks view draws is
compared, cell by cell.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest

from gpuviz.analysis.rank_reduction import combine_reductions, rank_reduction
from gpuviz.analysis.ranks import MEASURES, rank_analysis
from gpuviz.trace.files import trace_files
from gpuviz.trace.kineto import import_trace

DATA = Path(__file__).parent.parent / "data"
FOLDERS = ["gloo_4rank_cpu", "ddp_nccl_4rank", "nccl_2rank_h200"]
TABLE_FIELDS = (
    "ranks",
    "seq",
    "present",
    "arrival_ns",
    "end_ns",
    "step",
    "wait_ns",
    "last_arrival_ns",
    "last_rank",
    "delay_ns",
    "total_wait_ns",
)


def _reduced(folder: Path):
    reds = [rank_reduction(import_trace(str(f)).prepare()) for f in trace_files(folder)]
    return reds, combine_reductions(reds[::-1])  # any order


@pytest.mark.parametrize("name", FOLDERS)
def test_reductions_give_the_whole_folders_ranks_view(name: str) -> None:
    folder = DATA / name
    whole = rank_analysis(import_trace(str(folder)).prepare())
    _, reduced = _reduced(folder)
    got = reduced.analysis
    m0, m1 = whole.matrix, got.matrix
    np.testing.assert_array_equal(m1.ranks, m0.ranks)
    np.testing.assert_array_equal(m1.steps, m0.steps)
    np.testing.assert_array_equal(m1.present, m0.present)
    np.testing.assert_array_equal(m1.start_ns, m0.start_ns)
    for measure in MEASURES:
        np.testing.assert_array_equal(m1.measure(measure), m0.measure(measure), err_msg=measure)
    t0, t1 = whole.collectives, got.collectives
    assert len(t0) > 0
    assert (t1.group, t1.name, t1.matched_by) == (t0.group, t0.name, t0.matched_by)
    for key in TABLE_FIELDS:
        np.testing.assert_array_equal(getattr(t1, key), getattr(t0, key), err_msg=key)
    if whole.straggler is None:
        assert got.straggler is None
    else:
        assert got.straggler is not None
        for key in ("rank", "measure", "rank_ns", "median_ns", "last", "delay_ns"):
            assert getattr(got.straggler, key) == getattr(whole.straggler, key), key
        np.testing.assert_array_equal(got.straggler.collectives, whole.straggler.collectives)
    # The heatmap is not uniform: a broken shift would not hide behind equal zeros.
    assert np.ptp(m0.step_ns[m0.present]) > 0


def test_gloo_folder_names_its_straggler_from_reductions() -> None:
    # scripts/record_collectives.py planted it: rank 2 computes 20 ms longer per step.
    _, reduced = _reduced(DATA / "gloo_4rank_cpu")
    assert reduced.analysis.straggler is not None
    assert reduced.analysis.straggler.rank == 2
    assert reduced.analysis.straggler.measure == "compute"


@pytest.mark.parametrize("name", FOLDERS)
def test_a_part_points_into_its_ranks_own_trace(name: str) -> None:
    """A collective's cell names a slice of the rank's own file, on that file's clock: what a
    drill-down (the rank opened alone) selects and shows."""
    folder = DATA / name
    reds, reduced = _reduced(folder)
    table = reduced.analysis.collectives
    for red in reds:
        own = import_trace(red.source).prepare()
        col = table.column(red.rank)
        rows = np.flatnonzero(table.present[:, col])
        assert len(rows)
        for c in rows[:5].tolist():
            r = int(table.slice_row[c, col])
            local = int(table.arrival_ns[c, col]) - reduced.offset_ns[red.rank]
            assert int(own.slices.start_ns[r]) == local
            assert table.name[c].lower().replace("_", "") in own.name_of(r).lower().replace("_", "")


def test_reduction_is_small() -> None:
    reds, reduced = _reduced(DATA / "ddp_nccl_4rank")
    for red in reds:
        whole = Path(red.source).stat().st_size
        assert len(pickle.dumps(red)) < whole / 4
    assert sorted(reduced.sources) == [0, 1, 2, 3]


def test_two_files_of_one_rank_are_refused() -> None:
    reds, _ = _reduced(DATA / "nccl_2rank_h200")
    with pytest.raises(ValueError, match="one rank"):
        combine_reductions([reds[0], reds[0]])
    with pytest.raises(ValueError, match="no rank"):
        combine_reductions([])


def test_64_ranks_with_late_files_and_a_straggler(tmp_path: Path) -> None:
    """64 generated ranks, rank 5 planted 1.3x slower, ranks 10, 20 and 30 starting one or two
    collectives late: matched by order with shifts from the parts alone, as the whole load."""
    import importlib.util
    import sys

    root = Path(__file__).parent.parent.parent
    spec = importlib.util.spec_from_file_location("gen_trace", root / "benchmarks" / "gen_trace.py")
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gen_trace", gen)
    spec.loader.exec_module(gen)
    late = {10: 1, 20: 1, 30: 2}
    for r in range(64):
        with open(tmp_path / f"rank-{r}.json", "w", encoding="utf-8") as f:
            gen.write_trace(
                f, 100, 1, 3, rank=r, world=64, collective_every=25, straggler=5,
                skip_collectives=late.get(r, 0),
            )  # fmt: skip
    whole = rank_analysis(import_trace(str(tmp_path)).prepare())
    _, reduced = _reduced(tmp_path)
    got = reduced.analysis
    assert got.collectives.matched_by == "order+shift"
    assert {k[1]: v for k, v in got.collectives.shift.items() if v} == {10: -1, 20: -1, 30: -2}
    for key in TABLE_FIELDS:
        np.testing.assert_array_equal(
            getattr(got.collectives, key), getattr(whole.collectives, key)
        )
    for measure in MEASURES:
        np.testing.assert_array_equal(got.matrix.measure(measure), whole.matrix.measure(measure))
    assert got.straggler is not None and (got.straggler.rank, got.straggler.measure) == (
        5,
        "compute",
    )
