"""advise of a rank folder from its files, each imported alone (issue 51): exactly the
advice of the folder read whole (its JSON, field for field), or a decline that says why.

The truth is ``advise`` of the folder read whole, a separate path (one assembled trace, the
rules over all ranks at once). The replay runs only on folders within its limits, which every
folder here is; the tests lower the limits (``replay.MAX_SLICES``, for the folder read whole
and the by-rank gate alike) rather than generating 17 ranks.
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable
from pathlib import Path

import pytest

import gpuviz.analysis.advisor.by_rank as by_rank
from gpuviz.analysis.advisor import advise
from gpuviz.analysis.advisor import replay as replay_mod
from gpuviz.analysis.advisor.by_rank import advise_by_rank
from gpuviz.trace.files import trace_files
from gpuviz.trace.kineto import load_trace
from gpuviz.trace.model import Trace
from gpuviz.trace.one_job import NotOneJobError
from tests.analysis.advisor.rank_jobs import (
    DATA,
    RANK_FOLDERS,
    copies_job,
    make_job,
    read,
    warned_job,
    write,
)

ADV = DATA / "advisor"


@pytest.fixture
def no_replay(monkeypatch: pytest.MonkeyPatch) -> None:
    """The replay's limits below every folder's size: off read whole, gate open by rank."""
    monkeypatch.setattr(replay_mod, "MAX_SLICES", -1)


def _ranks(folder: Path) -> list:
    return [load_trace(str(f)) for f in trace_files(folder)]


def _whole(folder: Path) -> dict:
    return advise(load_trace(str(folder))).to_json()


def _by_rank(folder: Path) -> dict | None:
    got = advise_by_rank(_ranks(folder))
    return None if got.advice is None else got.advice.to_json()


@pytest.mark.usefixtures("no_replay")
@pytest.mark.parametrize("name", RANK_FOLDERS)
def test_rank_folder_as_read_whole(name: str) -> None:
    whole = _whole(DATA / name)
    got = advise_by_rank(_ranks(DATA / name))
    assert got.declined is None and got.advice is not None
    assert whole["findings"], "a folder with nothing to compare proves nothing"
    assert got.advice.to_json() == whole


def test_offsets_are_the_folder_clock() -> None:
    # nccl_2rank_h200's rank 1 starts 10.9 ms after rank 0 (measured in
    # /work/wt/advsurvey's report): a file alone's zero less the folder's, read whole
    folder = DATA / "nccl_2rank_h200"
    got = advise_by_rank(_ranks(folder), max_ranks=1)
    zero = load_trace(str(folder)).zero_ns
    alone = {t.ranks[0].rank: t.zero_ns - zero for t in _ranks(folder)}
    assert got.offset_ns == alone and got.offset_ns[1] == 10_869_728


BREAKS = {
    # the evidence left on its rank's clock (rank 1 starts 10.9 ms after rank 0)
    "no shift": ("nccl_2rank_h200", "_shifted", lambda f, offset_ns: f),
    # exposed_comm takes out the time a rank waited for the last one: the collectives must
    # be on the clock of the rank whose file runs the rule
    "collectives on the folder clock": ("nccl_2rank_h200", "on_rank_clock", lambda ra, o: ra),
    # "the worst of 3 of 4 ranks": the job's ranks, not the worst rank's own
    "own affected ranks": ("ddp_nccl_4rank", "_Merged.affected", lambda self, k, r: r),
}


@pytest.mark.usefixtures("no_replay")
@pytest.mark.parametrize("why", sorted(BREAKS))
def test_a_broken_phase_two_differs(monkeypatch: pytest.MonkeyPatch, why: str) -> None:
    # The equality above can fail: each piece of phase 2 broken makes a folder's advice differ.
    name, attr, broken = BREAKS[why]
    whole = _whole(DATA / name)
    assert _by_rank(DATA / name) == whole
    owner, _, field = attr.rpartition(".")
    monkeypatch.setattr(by_rank._Merged if owner else by_rank, field, broken)
    assert _by_rank(DATA / name) != whole


@pytest.mark.usefixtures("no_replay")
def test_files_without_ranks_take_their_folder_rank(tmp_path: Path) -> None:
    # No file declares a rank: the folder numbers them in name order (0, 1), a file alone
    # says none (-1); the advice must name ranks 0 and 1 as the folder read whole does.
    src = trace_files(DATA / "ddp_2rank")
    for i, f in enumerate(src):
        doc = read(f)
        doc["distributedInfo"].pop("rank")
        write(doc, tmp_path / f"r{i}.json.gz")
    whole = _whole(tmp_path)
    ranks = {e["rank"] for f in whole["findings"] for e in f["evidence"]}
    assert ranks and ranks <= {0, 1}
    assert _by_rank(tmp_path) == whole


@pytest.mark.usefixtures("no_replay")
@pytest.mark.parametrize(
    "kind",
    [
        "launch_bound",
        "host_sync",
        "fp32_matmul",
        "copy_not_overlapped",
        "low_occupancy",
        "gpu_starved",
        "pageable_copy",
    ],
)
def test_planted_rank_as_read_whole(tmp_path: Path, kind: str) -> None:
    # rank 0 clean, rank 1 with the problem and starting 3 ms later: the finding is rank 1's
    # (the README of tests/data/advisor says what each recording plants).
    folder = make_job(
        tmp_path, [ADV / "adv_clean.json.gz", ADV / f"adv_{kind}.json.gz"], [0, 3_000_000]
    )
    whole = _whole(folder)
    mine = [f for f in whole["findings"] if f["kind"] == kind]
    assert mine and {e["rank"] for e in mine[0]["evidence"]} == {1}
    assert _by_rank(folder) == whole


@pytest.mark.parametrize("name", ["nccl_2rank_h200", "ddp_2rank"])
def test_past_the_replay_limits_as_read_whole(tmp_path: Path, name: str) -> None:
    # 18 ranks, past replay.MAX_RANKS (16) as they are: no limit lowered, read whole or by rank
    assert replay_mod.MAX_RANKS < 18
    folder = copies_job(tmp_path, trace_files(DATA / name), 18)
    whole = _whole(folder)
    assert whole["findings"]
    got = advise_by_rank(_ranks(folder))
    assert got.advice is not None and got.advice.to_json() == whole


class _OneAtATime:
    """A folder's files, each imported on access; says how many earlier ones still live."""

    def __init__(self, folder: Path) -> None:
        self.files = trace_files(folder)
        self.alive: list[weakref.ref] = []
        self.most_alive = 0
        self.loads = 0

    def __len__(self) -> int:
        return len(self.files)

    def __getitem__(self, i: int) -> Trace:
        gc.collect()
        self.most_alive = max(self.most_alive, sum(r() is not None for r in self.alive))
        t = load_trace(str(self.files[i]))
        self.alive.append(weakref.ref(t))
        self.loads += 1
        return t


@pytest.mark.usefixtures("no_replay")
def test_holds_one_rank_at_a_time() -> None:
    ranks = _OneAtATime(DATA / "ddp_nccl_4rank")
    got = advise_by_rank(ranks)  # type: ignore[arg-type]
    assert got.advice is not None and got.advice.to_json() == _whole(DATA / "ddp_nccl_4rank")
    assert ranks.most_alive == 0  # no earlier rank's trace is alive when the next is read
    assert ranks.loads == 4 + 4 + 1  # facts, phase 1, phase 2 on launch_bound's worst rank


def test_declines_within_the_replay_limits() -> None:
    got = advise_by_rank(_ranks(DATA / "ddp_2rank"))
    assert got.advice is None
    assert got.declined is not None and "within the replay's limits" in got.declined
    # the limits are a parameter: 2 ranks are past a limit of 1
    assert advise_by_rank(_ranks(DATA / "ddp_2rank"), max_ranks=1).advice is not None


@pytest.mark.usefixtures("no_replay")
def test_pageable_copies_against_the_best_pinned_of_all_ranks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # rank 0 copies 384 MiB from pinned memory, rank 1 from pageable memory: read whole,
    # rank 1's copies are held against rank 0's pinned bandwidth, not the 20 GB/s default
    pair = [ADV / "adv_copy_not_overlapped.json.gz", ADV / "adv_pageable_copy.json.gz"]
    pinned = [
        e["args"]["bytes"] / (e["dur"] * 1000)
        for e in read(pair[0])["traceEvents"]
        if "Pinned" in e.get("name", "") and e.get("args", {}).get("bytes", 0) >= 1 << 20
    ]
    folder = make_job(tmp_path, pair, [0, 3_000_000])
    whole = _whole(folder)
    f = next(f for f in whole["findings"] if f["kind"] == "pageable_copy")
    assert f"at {max(pinned):.0f} GB/s" in f["detail"] and max(pinned) > 50
    assert {e["rank"] for e in f["evidence"]} == {1}
    assert _by_rank(folder) == whole
    monkeypatch.setattr(by_rank, "best_pinned", lambda per_rank: None)
    assert _by_rank(folder) != whole


@pytest.mark.usefixtures("no_replay")
def test_declines_several_gpus_a_rank(tmp_path: Path) -> None:
    dp = DATA / "dataparallel_4gpu.json.gz"
    folder = make_job(tmp_path, [dp, dp], [0, 1000])
    got = advise_by_rank(_ranks(folder))
    assert got.declined is not None and "several GPUs" in got.declined


def _declined_with_rank1(tmp_path: Path, edit: Callable[[dict], None]) -> str:
    """Why a job of adv_clean (rank 0) and adv_fp32_matmul (rank 1, ``edit``-ed) declines."""
    pair = [ADV / "adv_clean.json.gz", ADV / "adv_fp32_matmul.json.gz"]
    folder = make_job(tmp_path, pair, [0, 1000])
    doc = read(folder / "rank1.json.gz")
    edit(doc)
    write(doc, folder / "rank1.json.gz")
    got = advise_by_rank(_ranks(folder))
    assert got.advice is None and got.declined is not None
    return got.declined


def _add_python_frame(doc: dict) -> None:
    op = next(e for e in doc["traceEvents"] if e.get("cat") == "cpu_op")
    doc["traceEvents"].append(dict(op, cat="python_function", name="train.py(10): s", args={}))


@pytest.mark.usefixtures("no_replay")
def test_declines_mixed_stacks(tmp_path: Path) -> None:
    # with_code finds modules and lines where the job has Python frames: per rank, not so
    assert "Python stacks" in _declined_with_rank1(tmp_path, _add_python_frame)


def _warned_job(tmp_path: Path, bad: list[int], names: list[str] | None = None) -> Path:
    return warned_job(tmp_path / "job", bad, names)


def _as_read_whole_with_warnings(folder: Path) -> list[str]:
    """The folder advised rank by rank (not declined) equals it read whole; its warnings."""
    whole = _whole(folder)
    got = advise_by_rank(_ranks(folder))
    assert got.declined is None, got.declined
    assert got.advice is not None and got.advice.to_json() == whole
    return whole["import_warnings"]


@pytest.mark.usefixtures("no_replay")
def test_import_warnings_as_read_whole(tmp_path: Path) -> None:
    # one skipped event in rank 1's file: the folder's list is that file's
    warned = _as_read_whole_with_warnings(_warned_job(tmp_path, [0, 1]))
    assert len(warned) == 1 and "event" in warned[0] and "skipped" in warned[0]


@pytest.mark.usefixtures("no_replay")
def test_import_warnings_capped_in_rank_order(tmp_path: Path) -> None:
    # 15 + 15 skipped events: read whole keeps 20 (the cap), rank 0's file's 15 first
    warned = _as_read_whole_with_warnings(_warned_job(tmp_path, [15, 15]))
    assert len(warned) == 20
    assert len(load_trace(str(tmp_path / "job" / "rank0.json.gz")).warnings.samples) == 15
    own = [load_trace(str(tmp_path / "job" / f"rank{i}.json.gz")).warnings.samples for i in (0, 1)]
    assert warned == (own[0] + own[1])[:20]


@pytest.mark.usefixtures("no_replay")
def test_import_warnings_in_rank_order_not_file_order(tmp_path: Path) -> None:
    # rank 1's file is first by name: read whole, the import assembles (and warns) by rank
    folder = _warned_job(tmp_path, [12, 12], ["b_rank0.json.gz", "a_rank1.json.gz"])
    warned = _as_read_whole_with_warnings(folder)
    own = [
        load_trace(str(folder / n)).warnings.samples for n in ("b_rank0.json.gz", "a_rank1.json.gz")
    ]
    assert warned == (own[0] + own[1])[:20]


@pytest.mark.usefixtures("no_replay")
def test_a_broken_warnings_merge_differs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the same job with the files' warnings merged in file order, or uncapped: not the whole's
    folder = _warned_job(tmp_path, [12, 12], ["b_rank0.json.gz", "a_rank1.json.gz"])
    whole = _whole(folder)
    real = by_rank.folder_warnings

    def file_order(files, codes, note):  # type: ignore[no-untyped-def]
        return real(files, sorted(codes), note)

    monkeypatch.setattr(by_rank, "folder_warnings", file_order)
    got = advise_by_rank(_ranks(folder)).advice
    assert got is not None and got.to_json() != whole

    def uncapped(files, codes, note):  # type: ignore[no-untyped-def]
        out = real(files, codes, note)
        out.samples = [w for f in files for w in f.warnings.samples]
        return out

    monkeypatch.setattr(by_rank, "folder_warnings", uncapped)
    got = advise_by_rank(_ranks(folder)).advice
    assert got is not None and len(got.warning_samples) == 24 and got.to_json() != whole


@pytest.mark.usefixtures("no_replay")
def test_ranks_numbered_by_file_order_as_read_whole(tmp_path: Path) -> None:
    # rank 1's file declares no rank: the folder numbers the files by name and says so first
    folder = _warned_job(tmp_path, [0, 3])
    doc = read(folder / "rank1.json.gz")
    del doc["distributedInfo"]["rank"]
    write(doc, folder / "rank1.json.gz")
    warned = _as_read_whole_with_warnings(folder)
    assert warned[0].startswith("distributedInfo.rank ignored") and len(warned) == 4


@pytest.mark.usefixtures("no_replay")
def test_declines_files_not_of_one_job(tmp_path: Path) -> None:
    # recorded 2 minutes apart: the folder read whole refuses them (one_job.CLOSE_NS, 1 min)
    pair = [ADV / "adv_clean.json.gz", ADV / "adv_fp32_matmul.json.gz"]
    folder = make_job(tmp_path, pair, [0, 120 * 10**9])
    with pytest.raises(NotOneJobError):
        load_trace(str(folder))
    got = advise_by_rank(_ranks(folder))
    assert got.declined is not None and got.declined.startswith("the files are not one job")


def test_one_file_trace_only() -> None:
    with pytest.raises(ValueError):
        advise_by_rank([load_trace(str(DATA / "ddp_2rank"))])
    with pytest.raises(ValueError):
        advise_by_rank([])


def test_phase_two_refuses_a_rank_without_its_saving() -> None:
    hook = by_rank._Merged({"launch_bound": ({1: 5.0, 2: 1.0}, {1: 10.0, 2: 10.0})})
    assert hook.worst("launch_bound", {1: 5.0}, {1: 10.0}) == (1, 0.5)
    assert hook.affected("launch_bound", [1]) == [1, 2]
    with pytest.raises(RuntimeError):
        hook.worst("launch_bound", {2: 1.0}, {2: 10.0})


def _open_range_rank(path: Path, left_open: bool) -> Path:
    """3 steps of 20 ms on the CPU, each with an ``Optimizer.step`` of 5 ms; with
    ``left_open`` the last one's exit is lost and it runs to the trace's end (100 ms)."""

    def x(cat: str, name: str, ts: float, dur: float) -> dict:
        return {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur, "pid": 1, "tid": 1}

    events = []
    for n in range(3):
        t = n * 20_000.0
        events.append(x("user_annotation", f"ProfilerStep#{n}", t, 20_000))
        opt_dur = 100_000 - (t + 15_000) if left_open and n == 2 else 5_000
        events.append(x("user_annotation", "Optimizer.step#SGD.step", t + 15_000, opt_dur))
    events += [x("cpu_op", "aten::copy_", 60_000 + i * 10_000, 10_000) for i in range(4)]
    return write({"schemaVersion": 1, "traceEvents": events}, path)


@pytest.mark.usefixtures("no_replay")
def test_declines_ranges_left_open(tmp_path: Path) -> None:
    # read whole (as the commands read it), one warning counts and names the clipped ranges
    # over all ranks, and joins the import's
    from gpuviz.analysis.open_ranges import open_ranges

    src = [_open_range_rank(tmp_path / f"src{i}.json.gz", i == 1) for i in range(2)]
    folder = make_job(tmp_path / "job", src, [0, 1000])
    trace = load_trace(str(folder))
    assert open_ranges(trace).message is not None
    assert "left open" in advise(trace).to_json()["import_warnings"][0]
    got = advise_by_rank(_ranks(folder))
    assert got.advice is None and got.declined is not None and "left open" in got.declined
