"""``advise DIR --cluster`` rank by rank (issue 51), against a LocalCluster of two worker
processes: the JSON and text are the local path's byte for byte (the folder read whole and
advised here, a separate route), made without the client assembling the whole trace (the
whole-trace route on the cluster fails the test if it is taken); a folder the by-rank passes
decline goes that route and is still the local path's; ``GPUVIZ_ADVISE_BY_RANK=0`` forces it;
a bad rank file is named, skipped and the advice of the others marked incomplete.

The folders of tests/data are within the replay's limits, where the by-rank passes decline (read
whole, the rules replay steps over all ranks at once): the tests lower the limit in this
process, where the folder read whole is advised and the gate is decided (the workers' rules
never replay on this route), or copy a folder's ranks past it (18 ranks).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("distributed", reason="the 'cluster' extra (dask) is missing")

import test_cli_cluster as base

from gpuviz.analysis.advisor import replay as replay_mod
from gpuviz.commands import advise_ranks
from gpuviz.trace.files import trace_files
from tests.analysis.advisor.rank_jobs import copies_job, make_job, warned_job

# That module's fixtures (a LocalCluster of two worker processes, each test's environment).
scheduler = base.scheduler
_env = base._env
_run = base._run
whole_trace = base.whole_trace

DATA = Path(__file__).parent / "data"
ADV = DATA / "advisor"
FOLDERS = ["ddp_2rank", "nccl_2rank_h200", "ddp_nccl_4rank", "gloo_2rank_straggler_h100"]


@pytest.fixture
def no_replay(monkeypatch: pytest.MonkeyPatch) -> None:
    """The replay's limits below every folder's size: off read whole, the by-rank gate open."""
    monkeypatch.setattr(replay_mod, "MAX_SLICES", -1)


def _both(
    capsys: pytest.CaptureFixture[str], scheduler: str, path: Path, *command: str
) -> tuple[tuple[int, str, str], tuple[int, str, str]]:
    here = _run(capsys, "advise", str(path), *command, "--no-cache")
    there = _run(capsys, "advise", str(path), *command, "--no-cache", "--cluster", scheduler)
    assert here[0] == there[0] == 0, (command, here[2], there[2])
    return here, there


@pytest.mark.usefixtures("no_replay")
@pytest.mark.parametrize("folder", FOLDERS)
def test_json_and_text_are_the_local_paths_without_the_whole_trace(
    capsys: pytest.CaptureFixture[str],
    scheduler: str,
    folder: str,
    whole_trace: list[int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from gpuviz.commands import reading

    read: list[str] = []
    real = reading.read_trace

    def counted(path: str, *args: object, **kw: object) -> object:
        read.append(path)
        return real(path, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(reading, "read_trace", counted)
    path = DATA / folder
    ranks = len(trace_files(path))
    for command in (["--json"], []):
        here, there = _both(capsys, scheduler, path, *command)
        assert len(read) == 1 and read.pop() == str(path)  # the local run's read alone
        assert there[1] == here[1], command  # byte for byte
        if command:
            assert json.loads(here[1])["findings"], "a folder without findings proves little"
        # pass 0 and phase 1 on every rank, phase 2 on the worst ranks' files
        done = [line for line in there[2].splitlines() if "ranks done" in line]
        assert len(done) == 3 and all(f"{ranks}/{ranks} ranks done" in d for d in done[:2])
    assert not whole_trace  # the client never assembled the folder


@pytest.mark.parametrize("name", ["ddp_2rank"])
def test_past_the_replay_limits_as_they_are(
    capsys: pytest.CaptureFixture[str],
    scheduler: str,
    tmp_path: Path,
    name: str,
    whole_trace: list[int],
) -> None:
    # 18 ranks, past replay.MAX_RANKS (16) with no limit lowered anywhere
    assert replay_mod.MAX_RANKS < 18
    folder = copies_job(tmp_path / "job", trace_files(DATA / name), 18)
    here, there = _both(capsys, scheduler, folder, "--json")
    assert there[1] == here[1] and json.loads(here[1])["findings"]
    assert "18/18 ranks done" in there[2] and not whole_trace


@pytest.mark.usefixtures("no_replay")
def test_a_planted_rank_is_found_on_its_worker(
    capsys: pytest.CaptureFixture[str], scheduler: str, tmp_path: Path, whole_trace: list[int]
) -> None:
    # rank 1 launch-bound, starting 3 ms after the clean rank 0: its evidence on the folder's clock
    pair = [ADV / "adv_clean.json.gz", ADV / "adv_launch_bound.json.gz"]
    folder = make_job(tmp_path / "job", pair, [0, 3_000_000])
    here, there = _both(capsys, scheduler, folder, "--json")
    assert there[1] == here[1]
    found = [f for f in json.loads(there[1])["findings"] if f["kind"] == "launch_bound"]
    assert found and {e["rank"] for e in found[0]["evidence"]} == {1}
    assert not whole_trace


def test_a_folder_within_the_replays_limits_is_read_whole_as_before(
    capsys: pytest.CaptureFixture[str], scheduler: str, whole_trace: list[int]
) -> None:
    here, there = _both(capsys, scheduler, DATA / "nccl_2rank_h200", "--json")
    assert there[1] == here[1] and whole_trace == [1]
    # decided from the files' count and text: no pass 0 on the workers before the whole read
    assert "ranks done" not in there[2]


def test_a_folder_within_the_limits_but_not_shown_so_pays_pass_zero_and_is_the_same(
    capsys: pytest.CaptureFixture[str],
    scheduler: str,
    whole_trace: list[int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the text bound says nothing (as for a folder of large files): pass 0 declines instead
    monkeypatch.setattr(advise_ranks, "_within_replay_limits", lambda files: False)
    here, there = _both(capsys, scheduler, DATA / "nccl_2rank_h200", "--json")
    assert there[1] == here[1] and whole_trace == [1]
    assert sum("ranks done" in line for line in there[2].splitlines()) == 1  # pass 0 only


@pytest.mark.usefixtures("no_replay")
def test_a_folder_declined_after_phase_one_is_read_whole_and_the_same(
    capsys: pytest.CaptureFixture[str], scheduler: str, tmp_path: Path, whole_trace: list[int]
) -> None:
    # each rank's steps span several GPUs: idle_devices weighs all ranks' steps at once
    dp = DATA / "dataparallel_4gpu.json.gz"
    folder = make_job(tmp_path / "job", [dp, dp], [0, 1000])
    for command in (["--json"], []):
        here, there = _both(capsys, scheduler, folder, *command)
        assert there[1] == here[1], command
    assert whole_trace == [1, 1]
    assert sum("2/2 ranks done" in line for line in there[2].splitlines()) == 2


@pytest.mark.usefixtures("no_replay")
def test_import_warnings_rank_by_rank_as_the_local_path(
    capsys: pytest.CaptureFixture[str], scheduler: str, tmp_path: Path, whole_trace: list[int]
) -> None:
    # 12 skipped entries in each file, rank 1's file first by name: read whole, the import
    # keeps 20 of the 24 warnings, rank 0's 12 first; rank by rank, the same list
    folder = warned_job(tmp_path / "job", [12, 12], ["b_rank0.json.gz", "a_rank1.json.gz"])
    here_json = ""
    for command in (["--json"], []):
        here, there = _both(capsys, scheduler, folder, *command)
        assert there[1] == here[1], command  # byte for byte, the warnings included
        here_json = here[1] if command else here_json
        # pass 0 and phase 1 on both ranks (then phase 2 on the worst ranks' files)
        assert sum("2/2 ranks done" in line for line in there[2].splitlines()) >= 2
        if command:
            warned = json.loads(there[1])["import_warnings"]
            assert len(warned) == 20 and all(w.endswith("skipped") for w in warned)
        else:  # the text lists the first five under the trace line
            assert sum(line.startswith("  warning: event ") for line in there[1].splitlines()) == 5
    shared = tmp_path / "shared-cache"
    for _ in range(2):  # the second run reads each rank's warnings back from its cache entry
        rc, out, err = _run(
            capsys,
            "advise",
            str(folder),
            "--json",
            "--cluster",
            scheduler,
            "--cache-dir",
            str(shared),
        )
        assert rc == 0 and out == here_json and err.count("2/2 ranks done") >= 2
    assert not whole_trace  # the by-rank route, not the whole trace


@pytest.mark.usefixtures("no_replay")
def test_the_env_switch_reads_the_folder_whole(
    capsys: pytest.CaptureFixture[str],
    scheduler: str,
    monkeypatch: pytest.MonkeyPatch,
    whole_trace: list[int],
) -> None:
    monkeypatch.setenv(advise_ranks.ENV, "0")
    here, there = _both(capsys, scheduler, DATA / "ddp_2rank", "--json")
    assert there[1] == here[1] and whole_trace == [1]
    assert "ranks done" not in there[2]


@pytest.mark.usefixtures("no_replay")
def test_a_bad_rank_file_is_named_skipped_and_the_advice_marked_incomplete(
    capsys: pytest.CaptureFixture[str], scheduler: str, tmp_path: Path, whole_trace: list[int]
) -> None:
    folder, three = base.bad_rank_job(tmp_path)
    rc, out, err = _run(
        capsys, "advise", str(folder), "--json", "--no-cache", "--cluster", scheduler
    )
    assert rc == 0, err
    got = json.loads(out)
    assert got.pop("incomplete") == {"ranks_failed": 1, "of": 4, "failed": [_failed_line(err)]}
    assert "rank skipped" in err and "rank-2.json.gz" in err
    # The others' advice is that of a folder holding only their files, read whole here.
    ref = _run(capsys, "advise", str(three), "--json", "--no-cache")
    assert ref[0] == 0
    assert got == json.loads(ref[1].replace(str(three), str(folder)))
    assert {e["rank"] for f in got["findings"] for e in f["evidence"]} <= {0, 1, 3}
    rc, text, _ = _run(capsys, "advise", str(folder), "--no-cache", "--cluster", scheduler)
    assert rc == 0 and "incomplete: 1 of 4 rank files failed" in text.splitlines()[1]
    assert not whole_trace
    # Without --cluster the bad file is bad input, as before (exit 2, named).
    rc, _, err = _run(capsys, "advise", str(folder), "--json", "--no-cache")
    assert rc == 2 and "rank-2.json.gz" in err


def _failed_line(err: str) -> str:
    """The failed rank's line as stderr names it."""
    line = next(x for x in err.splitlines() if "rank skipped" in x)
    return line.split("rank skipped: ", 1)[1]


@pytest.mark.usefixtures("no_replay")
def test_the_workers_write_each_ranks_entry_and_the_passes_read_them(
    capsys: pytest.CaptureFixture[str], scheduler: str, tmp_path: Path, whole_trace: list[int]
) -> None:
    from gpuviz.trace.cache import TraceCache

    folder = tmp_path / "job"
    shutil.copytree(DATA / "ddp_nccl_4rank", folder)
    shared = tmp_path / "shared-cache"
    local = _run(capsys, "advise", str(folder), "--json", "--no-cache")
    for _ in range(2):  # the second run's passes all read the entries the first wrote
        rc, out, err = _run(
            capsys,
            "advise",
            str(folder),
            "--json",
            "--cluster",
            scheduler,
            "--cache-dir",
            str(shared),
        )
        assert rc == 0 and out == local[1] and err.count("4/4 ranks done") == 2
    store = TraceCache(shared / "traces")
    files = trace_files(folder)
    assert all(store.holds(store.key(f, [f])) for f in files)  # written by the workers
    assert not store.holds(store.key(folder, files))  # no whole folder's entry: never assembled
    assert not whole_trace
