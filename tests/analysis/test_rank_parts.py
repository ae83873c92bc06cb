"""A rank folder summarized a rank at a time (:mod:`gpuviz.analysis.rank_parts`) gives what the
folder read whole gives: the JSON and the text of ``gpuviz summary``, to the last digit."""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
from pathlib import Path

import pytest

from gpuviz.analysis.rank_parts import merge_parts, rank_part
from gpuviz.commands import summary as cmd
from gpuviz.trace.files import trace_files
from gpuviz.trace.kineto import import_trace, load_trace
from gpuviz.trace.one_job import NotOneJobError

DATA = Path(__file__).parent.parent / "data"
FOLDERS = ["ddp_2rank", "ddp_nccl_4rank", "gloo_2rank_h100", "gloo_4rank_cpu", "nccl_2rank_h200"]
ARGS = argparse.Namespace(peak_tflops=None, peak_bandwidth=None, json=True)


def _printed(summary, hw) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    out = summary.to_json()
    out["mfu"] = hw.mfu_json()
    text = cmd.format_summary(summary) + "\n" + "\n".join(cmd.format_mfu(hw))
    return json.dumps(out, sort_keys=True), text


def _whole(folder: Path) -> tuple[str, str]:
    summary, hw, _ = cmd._analyse(load_trace(folder, cache=False), ARGS)
    return _printed(summary, hw)


def _by_rank(folder: Path):  # type: ignore[no-untyped-def]
    return merge_parts([rank_part(import_trace(str(f)).prepare()) for f in trace_files(folder)])


@pytest.mark.parametrize("name", FOLDERS)
def test_the_merged_figures_are_the_whole_folders(name: str) -> None:
    merged = _by_rank(DATA / name)
    assert merged is not None
    got, want = _printed(*merged), _whole(DATA / name)
    figures = json.loads(got[0])
    assert len(figures["ranks"]) >= 2 and figures["mfu"]["steps"]
    assert bool(figures["streams"]) == ("cpu" not in name)
    assert got == want


def test_ranks_declared_against_file_order_and_one_declared_by_none(tmp_path: Path) -> None:
    """Files named in the reverse of their declared ranks (the trace orders by rank), and a
    folder where one file declares no rank (file order then, and a note among the warnings);
    a folder whose two files claim one rank is not one job: refused, as the import refuses it."""
    rev = tmp_path / "reversed"
    rev.mkdir()
    for i, f in enumerate(sorted(trace_files(DATA / "ddp_nccl_4rank"), reverse=True)):
        shutil.copy(f, rev / f"f{i}.json.gz")
    unranked = tmp_path / "unranked"
    unranked.mkdir()
    shutil.copy(DATA / "ddp_2rank" / "rank-0.json.gz", unranked / "a.json.gz")
    doc = json.loads(gzip.decompress((DATA / "ddp_2rank" / "rank-1.json.gz").read_bytes()))
    del doc["distributedInfo"]
    (unranked / "b.json").write_text(json.dumps(doc))
    for folder in (rev, unranked):
        merged = _by_rank(folder)
        assert merged is not None
        assert _printed(*merged) == _whole(folder), folder.name
    summary, _ = _by_rank(unranked)  # type: ignore[misc]
    assert summary.ranks == [0, 1] and "b.json declares no rank" in summary.warning_samples[0]
    summary, _ = _by_rank(rev)  # type: ignore[misc]
    assert summary.ranks == [0, 1, 2, 3] and summary.sources[0].endswith("f3.json.gz")
    twice = tmp_path / "twice"
    twice.mkdir()
    for n in ("a", "b"):
        shutil.copy(DATA / "ddp_2rank" / "rank-0.json.gz", twice / f"{n}.json.gz")
    with pytest.raises(NotOneJobError, match=r"a\.json\.gz and b\.json\.gz both declare rank 0"):
        _by_rank(twice)


def test_ranks_on_gpus_of_different_peaks_are_not_merged(tmp_path: Path) -> None:
    """An H100's file beside an H200's: not one job, refused (the parts were also counted
    against their own GPU's peaks, which the merge could not have put together)."""
    for n, src in (("a", "snap_train_profile.json.gz"), ("b", "streams_overlap.json.gz")):
        shutil.copy(DATA / src, tmp_path / f"{n}.json.gz")
    parts = [rank_part(import_trace(str(f)).prepare()) for f in trace_files(tmp_path)]
    assert parts[0].peaks != parts[1].peaks
    with pytest.raises(NotOneJobError, match=r"a\.json\.gz ran on .*, b\.json\.gz on NVIDIA H200"):
        merge_parts(parts)


def test_a_part_is_one_files_and_holds_no_memory_series() -> None:
    whole = load_trace(DATA / "ddp_nccl_4rank", cache=False)
    with pytest.raises(ValueError, match="one file"):
        rank_part(whole)
    part = rank_part(import_trace(str(trace_files(DATA / "ddp_nccl_4rank")[0])).prepare())
    assert part.memory and all(len(m.ts_ns) == 0 for m in part.memory)
    assert all(m.peak_allocated_bytes > 0 for m in part.memory)


def test_flop_warnings_of_the_ranks_are_counted_once_for_the_folder(tmp_path: Path) -> None:
    """A recorded FLOP count no op does on each of two ranks (tests/module_ranks.py): the
    folder's warning is one line counting both, as the folder read whole (or from its cache
    entry) says it, not each rank's line again."""
    from module_ranks import write_module_job

    def bad(rank: int, doc: dict[str, object]) -> None:
        events = doc["traceEvents"]
        assert isinstance(events, list)
        next(e for e in events if e.get("name") == "aten::mm")["args"]["flops"] = 1e300

    folder = write_module_job(tmp_path / "job", edit=bad)
    merged = _by_rank(folder)
    assert merged is not None
    _, whole_hw, _ = cmd._analyse(load_trace(folder, cache=False), ARGS)
    assert merged[1].warnings == whole_hw.warnings
    assert [w.split(" ", 1)[0] for w in whole_hw.warnings] == ["2"]
    assert _printed(*merged) == _printed(*cmd._analyse(load_trace(folder, cache=False), ARGS)[:2])
