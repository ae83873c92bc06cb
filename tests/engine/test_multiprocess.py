"""Multi-process runs: ranks through torch.multiprocessing, JSON-line events, faults, no orphans.

The runs use ``ddp`` on gloo with 2 CPU ranks and tiny steps. Starting a rank costs a Python
and torch import, so the successful run is shared by the tests that read it.
"""

from __future__ import annotations

import faulthandler
import gzip
import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from gpuviz.engine.events import (
    Failed,
    Finished,
    Progress,
    Started,
    StepTimed,
    TraceReady,
)
from gpuviz.engine.multiprocess import (
    NVLINK_MULTICAST_OFF,
    rank_env,
)
from gpuviz.engine.multiprocess_faults import main_frames
from gpuviz.engine.runner import Runner, RunRequest


def live_children() -> list[psutil.Process]:
    """Our descendants still running, less multiprocessing's resource tracker (a helper of
    the spawn start method that lives as long as this process, by design)."""
    out = []
    for p in psutil.Process().children(recursive=True):
        try:
            if p.status() == psutil.STATUS_ZOMBIE:
                continue
            if "resource_tracker" in " ".join(p.cmdline()):
                continue
            out.append(p)
        except psutil.NoSuchProcess:
            continue
    return out


def run_ddp(tmp_path: Path, params: dict[str, Any], **kw: Any) -> tuple[list[Any], float]:
    req = RunRequest("ddp", {"batch": 4, **params}, device="cpu", out=str(tmp_path / "run"), **kw)
    t0 = time.monotonic()
    events = list(Runner(req))
    return events, time.monotonic() - t0


@pytest.fixture(scope="module")
def good_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Any], Path]:
    from gpuviz.engine import multiprocess

    tmp = tmp_path_factory.mktemp("ddp")
    with pytest.MonkeyPatch.context() as mp:
        # As on a machine with 4 GPUs: the ranks must get NVLink multicast switched off.
        mp.setattr(multiprocess, "_visible_gpus", lambda: 4)
        for k in NVLINK_MULTICAST_OFF:
            mp.delenv(k, raising=False)
        events, _ = run_ddp(tmp, {}, steps=2)
    return events, tmp / "run"


def test_two_gloo_ranks_stream_events(good_run: tuple[list[Any], Path]) -> None:
    events, folder = good_run
    assert isinstance(events[0], Started) and events[0].devices == ["cpu", "cpu"]
    assert isinstance(events[-1], Finished), events[-1]
    steps = [e for e in events if isinstance(e, StepTimed)]
    # Each rank: 2 profiled + 2 timed steps, labelled with its rank.
    for r in (0, 1):
        mine = [s for s in steps if s.label == f"rank{r}:ddp"]
        assert [s.profiled for s in mine] == [True, True, False, False]
        assert [s.step for s in mine] == [0, 1, 2, 3]
    progress = [e for e in events if isinstance(e, Progress)]
    assert progress and progress[-1].step == progress[-1].total == 8
    ready = [e for e in events if isinstance(e, TraceReady)]
    assert [Path(e.path) for e in ready] == [folder]
    result = events[-1].result
    assert result["world_size"] == 2 and result["backend"] == "gloo"
    assert [r["rank"] for r in result["ranks"]] == [0, 1]
    for r in result["ranks"]:
        assert r["median_wall_ms"] > 0 and r["timed_steps"] == 2
        assert r["env"] == NVLINK_MULTICAST_OFF  # as each rank saw its environment
    assert live_children() == []


def test_each_rank_writes_its_trace_with_distributed_info(good_run: tuple[list[Any], Path]) -> None:
    _, folder = good_run
    assert sorted(p.name for p in folder.iterdir()) == ["rank-0.json.gz", "rank-1.json.gz"]
    for r in (0, 1):
        with gzip.open(folder / f"rank-{r}.json.gz", "rt") as f:
            doc = json.load(f)
        info = doc["distributedInfo"]
        assert info["rank"] == r and info["world_size"] == 2 and info["backend"] == "gloo"


def test_summary_of_the_folder_reports_both_ranks(good_run: tuple[list[Any], Path]) -> None:
    _, folder = good_run
    out = subprocess.run(
        [sys.executable, "-m", "gpuviz", "summary", str(folder), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(out.stdout)["ranks"] == [0, 1]


def _union_us(intervals: list[tuple[float, float]]) -> float:
    total, end = 0.0, None
    start = 0.0
    for s, e in sorted(intervals):
        if end is None or s > end:
            if end is not None:
                total += end - start
            start, end = s, e
        else:
            end = max(end, e)
    if end is not None:
        total += end - start
    return total


def test_comm_cpu_time_matches_the_trace(good_run: tuple[list[Any], Path]) -> None:
    events, folder = good_run
    by_rank = {r["rank"]: r for r in events[-1].result["ranks"]}
    for r in (0, 1):
        with gzip.open(folder / f"rank-{r}.json.gz", "rt") as f:
            doc = json.load(f)
        ivs = [
            (float(e["ts"]), float(e["ts"]) + float(e["dur"]))
            for e in doc["traceEvents"]
            if e.get("ph") == "X"
            and e.get("cat") in ("cpu_op", "user_annotation")
            and e.get("name", "").startswith(("c10d::", "gloo:", "nccl:", "record_param_comms"))
        ]
        names = {e["name"] for e in doc["traceEvents"] if e.get("ph") == "X"}
        assert {"c10d::allreduce_", "gloo:all_reduce"} <= names  # DDP's gradient all-reduce
        assert by_rank[r]["comm_cpu_us"] == pytest.approx(_union_us(ivs), rel=1e-3, abs=0.01)
        assert by_rank[r]["nccl_us"] == 0 and by_rank[r]["nccl_kernels"] == 0  # gloo: no kernels


def test_a_failing_rank_is_named_and_the_others_stopped(tmp_path: Path) -> None:
    events, took = run_ddp(tmp_path, {"fail_rank": 1, "fault_step": 1}, steps=1)
    end = events[-1]
    assert isinstance(end, Failed), end
    assert end.error.startswith("rank 1 failed") and "injected failure on rank 1" in end.error
    assert "RuntimeError" in end.traceback
    assert live_children() == []
    assert took < 120


def test_a_rank_that_dies_is_named(tmp_path: Path) -> None:
    events, _ = run_ddp(tmp_path, {"fail_rank": 0, "fail_how": "exit", "fault_step": 1}, steps=1)
    end = events[-1]
    assert isinstance(end, Failed), end
    assert "rank 0 exited with code 3" in end.error
    assert live_children() == []


def test_a_hung_rank_is_named_after_the_timeout(tmp_path: Path) -> None:
    # Rank 0 sleeps in its step; rank 1 then waits for it in the gradients' all-reduce.
    events, took = run_ddp(tmp_path, {"hang_rank": 0, "fault_step": 3}, steps=2, rank_timeout_s=4.0)
    end = events[-1]
    assert isinstance(end, Failed), end
    assert end.error.startswith("rank 0 hung: no event for")
    assert "rank 1 hung" not in end.error and "rank 1 waits" in end.error
    assert "_hang_forever" in end.traceback  # the hung rank's stack
    assert live_children() == []
    assert took < 120


def test_rank_env_keeps_the_callers_values() -> None:
    assert rank_env({}, 1) == {}
    assert rank_env({}, 8) == NVLINK_MULTICAST_OFF
    mine = {"NCCL_NVLS_ENABLE": "0", "NVSHMEM_DISABLE_NVLS": "1"}
    assert rank_env(mine, 2) == {"TORCH_SYMM_MEM_DISABLE_MULTICAST": "1"}


def test_main_thread_frames_from_a_faulthandler_dump(tmp_path: Path) -> None:
    path = tmp_path / "stack.txt"
    with open(path, "w") as f:
        f.write(f"main 0x{threading.main_thread().ident:016x}\n")
        f.flush()
        ready = threading.Event()
        stop = threading.Event()

        def other() -> None:
            ready.set()
            stop.wait(5)

        t = threading.Thread(target=other)
        t.start()
        ready.wait(5)
        faulthandler.dump_traceback(file=f, all_threads=True)
        stop.set()
        t.join()
    frames = main_frames(path)
    assert frames and "test_main_thread_frames_from_a_faulthandler_dump" in "\n".join(frames)
    assert not any(" in other" in fr for fr in frames)  # the other thread's frames are left out


def test_cancel_stops_every_rank(tmp_path: Path) -> None:
    from gpuviz.engine.events import Cancelled

    req = RunRequest("ddp", {"batch": 4}, device="cpu", steps=100_000, out=str(tmp_path / "run"))
    runner = Runner(req)
    events = []
    seen = 0
    for event in runner:
        events.append(event)
        if isinstance(event, StepTimed) and not event.profiled:
            seen += 1
            if seen == 4:
                t0 = time.monotonic()
                runner.cancel()
    end = events[-1]
    assert isinstance(end, Cancelled), end
    assert time.monotonic() - t0 < 30
    # The profiled steps ran before the timed ones: both rank traces are kept.
    assert end.partial_trace_path == str(tmp_path / "run")
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == [
        "rank-0.json.gz",
        "rank-1.json.gz",
    ]
    assert live_children() == []


def test_ranks_end_when_their_parent_is_killed(tmp_path: Path) -> None:
    # A parent killed outright cannot stop its ranks: they notice and end on their own.
    code = (
        "from gpuviz.engine.runner import Runner, RunRequest\n"
        "if __name__ == '__main__':\n"
        "    req = RunRequest('ddp', {'hang_rank': 0, 'fault_step': 0}, device='cpu',\n"
        "                     profile=False, rank_timeout_s=600)\n"
        "    for e in Runner(req):\n"
        "        print(type(e).__name__, flush=True)\n"
    )
    script = tmp_path / "parent.py"
    script.write_text(code)
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None and parent.stdout.readline().strip() == "Started"
        me = psutil.Process(parent.pid)
        deadline = time.monotonic() + 60
        ranks: list[psutil.Process] = []
        while time.monotonic() < deadline and len(ranks) < 2:
            ranks = [
                p
                for p in me.children(recursive=True)
                if "resource_tracker" not in " ".join(p.cmdline())
            ]
            time.sleep(0.2)
        assert len(ranks) == 2

        # A rank opens its events file, then starts watching its parent; before that it is
        # still importing torch, which can take many seconds on a loaded machine.
        def events_open(p: psutil.Process) -> bool:
            try:
                return any("events-" in f.path for f in p.open_files())
            except psutil.Error:
                return False

        wait_until = time.monotonic() + 180
        while time.monotonic() < wait_until and not all(events_open(p) for p in ranks):
            time.sleep(0.2)
        assert all(events_open(p) for p in ranks), "the ranks never started"
        time.sleep(0.5)
    finally:
        parent.kill()
        parent.wait()
    _gone, alive = psutil.wait_procs(ranks, timeout=10)
    pids = [p.pid for p in alive]
    for p in alive:  # never leave them behind, even when the test fails
        p.kill()
    assert pids == [], f"ranks outlived their parent: {pids}"
