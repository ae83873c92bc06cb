"""A folder is merged as ranks only when its files are one job (issue 47, item 6).

18 unrelated traces in ``tests/data`` were merged as ranks 0-17 of a "job" that spanned years;
``gpuviz check X --against tests/data`` passed. The real rank folders of the tests, and files
recorded together without ``distributedInfo``, must keep opening.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from gpuviz.analysis.rank_parts import merge_parts, rank_part
from gpuviz.cli import main
from gpuviz.trace.errors import TraceFormatError
from gpuviz.trace.kineto import import_trace
from gpuviz.trace.one_job import FileFacts, NotOneJobError, check_one_job, describe_gap

DATA = Path(__file__).parent.parent / "data"
JOBS = {  # folder -> its ranks, as the files declare them
    "ddp_2rank": [0, 1],
    "ddp_nccl_4rank": [0, 1, 2, 3],
    "gloo_2rank_h100": [0, 1],
    "gloo_4rank_cpu": [0, 1, 2, 3],
    "nccl_2rank_h200": [0, 1],
}
S = 10**9


@pytest.mark.parametrize("folder", sorted(JOBS))
def test_the_real_rank_folders_are_one_job(folder: str) -> None:
    trace = import_trace(DATA / folder)
    assert trace.rank_values() == JOBS[folder]


def _write(path: Path, doc: dict[str, Any]) -> None:
    path.write_text(json.dumps(doc))


def _doc(ts: float, rank: int | None = None, world: int | None = None,
         gpu: str | None = None, base: int | None = None) -> dict[str, Any]:  # fmt: skip
    d: dict[str, Any] = {
        "traceEvents": [
            {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": ts, "dur": 5},
            {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": ts,
             "dur": 3},
        ]
    }  # fmt: skip
    if rank is not None or world is not None:
        d["distributedInfo"] = {"rank": rank, "world_size": world}
    if gpu is not None:
        d["deviceProperties"] = [{"id": 0, "name": gpu}]
    if base is not None:
        d["baseTimeNanoseconds"] = base
    return d


def test_files_without_distributed_info_recorded_together_open(tmp_path: Path) -> None:
    # Two files that state nothing but lie 2 ms apart: one job, ranks by file order.
    _write(tmp_path / "a.json", _doc(1_000.0))
    _write(tmp_path / "b.json", _doc(3_000.0))
    assert import_trace(tmp_path).rank_values() == [0, 1]


def test_a_file_without_rank_beside_ranked_ones_opens_with_a_note(tmp_path: Path) -> None:
    _write(tmp_path / "a.json", _doc(1_000.0, rank=0, world=2))
    _write(tmp_path / "b.json", _doc(1_500.0))
    trace = import_trace(tmp_path)
    assert trace.rank_values() == [0, 1]
    assert "b.json declares no rank" in trace.warnings.samples[0]


@pytest.mark.parametrize(
    ("a", "b", "said"),
    [
        (dict(rank=0, world=2), dict(rank=1, world=4), "a.json has world size 2, b.json 4"),
        (dict(rank=0, world=2), dict(rank=0, world=2), "a.json and b.json both declare rank 0"),
        (dict(gpu="NVIDIA A100-SXM4-80GB"), dict(gpu="NVIDIA H100 80GB HBM3"),
         "a.json ran on NVIDIA A100-SXM4-80GB, b.json on NVIDIA H100 80GB HBM3"),
        # 3 hours apart in absolute time (µs since the epoch): two runs, not two ranks.
        (dict(base=1_790_000_000 * S), dict(base=1_790_010_800 * S),
         "a.json and b.json were recorded 3.0 h apart"),
    ],
    ids=["world-size", "same-rank", "devices", "clock"],
)  # fmt: skip
def test_files_that_disagree_are_refused_naming_them(
    tmp_path: Path, a: dict[str, Any], b: dict[str, Any], said: str
) -> None:
    _write(tmp_path / "a.json", _doc(1_000.0, **a))
    _write(tmp_path / "b.json", _doc(1_000.0, **b))
    with pytest.raises(NotOneJobError) as err:
        import_trace(tmp_path)
    assert isinstance(err.value, TraceFormatError)  # exit 2 in every command
    assert said in str(err.value), str(err.value)
    assert str(err.value).startswith(f"{tmp_path}: its files are not one job")
    assert "\n" not in str(err.value)
    assert err.value.files == [str(tmp_path / "a.json"), str(tmp_path / "b.json")]


def test_the_clock_rule_joins_overlapping_and_close_spans() -> None:
    def f(name: str, first_s: float, end_s: float) -> FileFacts:
        return FileFacts(name, None, None, (), int(first_s * S), int(end_s * S))

    # Chained overlaps, then a start 50 s after the latest end: one job.
    check_one_job("/j", [f("a", 0, 10), f("b", 5, 20), f("c", 70, 75)])
    # A metadata-only file (no times) agrees with any.
    check_one_job("/j", [f("a", 0, 10), FileFacts("m", None, None, (), None, None)])
    # 61 s after the latest end of the others, with spans of 10 s: apart.
    with pytest.raises(NotOneJobError, match="b and c were recorded 61 s apart"):
        check_one_job("/j", [f("a", 0, 10), f("b", 5, 20), f("c", 81, 82)])
    # A long recording (an hour) lets another start within its own length of it.
    check_one_job("/j", [f("a", 0, 3600), f("b", 3600 + 1800, 3600 + 1900)])


def test_describe_gap() -> None:
    assert describe_gap(90 * S) == "90 s"
    assert describe_gap(150 * S) == "2.5 min"
    assert describe_gap(5 * S) == "5 s"
    assert describe_gap(int(5.5 * 365.25 * 86400) * S) == "5.5 years"


def test_the_repro_check_against_the_test_data_folder_exits_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # The command: 18 unrelated traces as the baseline. A copy of a few of them keeps
    # the test short; every one of them differs from the others in device or clock.
    folder = tmp_path / "data"
    folder.mkdir()
    for name in (
        "streams_overlap.json.gz",  # an H200, 2026
        "hta__critical_path__alexnet__benchmark_result_2869224_1695835535_trace.json.gz",  # A100
        "kineto__tb_plugin__resnet50_num_workers_4__worker0.pt.trace.json.gz",  # V100, 2021
    ):
        shutil.copy(DATA / name, folder / name)
    new = DATA / "attribution" / "tinylm_train.json.gz"
    rc = main(["check", str(new), "--against", str(folder), "--no-cache"])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert err.startswith(f"gpuviz check: {folder}: its files are not one job")
    assert "ran on NVIDIA A100-PG509-200, kineto__tb_plugin__resnet50_num_workers_4__worker0" in err
    assert "on Tesla V100-DGXS-32GB" in err
    assert "were recorded" in err and "years apart" in err


@pytest.mark.parametrize("command", [["summary"], ["summary", "--json"], ["breakdown"],
                                     ["advise"], ["export", "-o", "OUT"]])  # fmt: skip
def test_every_command_refuses_the_folder(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "two"
    folder.mkdir()
    for i in (0, 1):  # one DDP rank file twice: both declare rank 0
        shutil.copy(DATA / "ddp_2rank" / "rank-0.json.gz", folder / f"copy{i}.json.gz")
    argv = [str(tmp_path / "out.json") if a == "OUT" else a for a in command[1:]]
    assert main([command[0], str(folder), *argv, "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert "copy0.json.gz and copy1.json.gz both declare rank 0" in err, err


def test_the_summary_by_rank_refuses_as_the_import_does(tmp_path: Path) -> None:
    # gpuviz summary of a folder without the cache reads a rank at a time: the same rule.
    a = rank_part(import_trace(DATA / "ddp_2rank" / "rank-0.json.gz").prepare())
    b = rank_part(import_trace(DATA / "gloo_2rank_h100" / "rank-1.json.gz").prepare())
    with pytest.raises(NotOneJobError, match=r"ran on NVIDIA H200, .* on NVIDIA H100 80GB HBM3"):
        merge_parts([a, b])
