"""``--cluster`` on summary, advise, breakdown and check (issue 51), against a LocalCluster of
two worker processes: the output is the local path's byte for byte on every rank folder of
tests/data, the workers did the work (each rank's cache entry written by them), a bad rank
file is named and the rest answered (marked incomplete), and an unreachable scheduler exits 2
with one line."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("distributed", reason="the 'cluster' extra (dask) is missing")

from subproc import gpuviz_env

from gpuviz.cli import main
from gpuviz.trace import cluster, cluster_decode
from gpuviz.trace.cache import TraceCache
from gpuviz.trace.files import trace_files

DATA = Path(__file__).parent / "data"
FOLDERS = ["ddp_2rank", "gloo_2rank_h100", "gloo_4rank_cpu", "nccl_2rank_h200", "ddp_nccl_4rank"]


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    """A LocalCluster's scheduler address (two worker processes), shared by this module."""
    import logging

    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2, threads_per_worker=1, dashboard_address=":0", silence_logs=logging.CRITICAL
    ) as c:
        yield c.scheduler_address


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(cluster.ENV, raising=False)
    monkeypatch.setenv("GPUVIZ_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("GPUVIZ_IMPORT_WORKERS", "0")


@pytest.fixture
def whole_trace(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the times the client assembles a folder from the workers' decoding."""
    used: list[int] = []
    real = cluster_decode.read_on_cluster

    def counted(*args: object, **kw: object) -> object:
        used.append(1)
        return real(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(cluster_decode, "read_on_cluster", counted)
    return used


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = main(list(args))
    out = capsys.readouterr()
    return rc, out.out, out.err


COMMANDS = [
    ["summary", "--json"],
    ["summary"],
    ["advise", "--json"],
    ["breakdown", "--json", "--by", "op"],
    ["breakdown", "--json", "--by", "step"],
]


@pytest.mark.parametrize("folder", FOLDERS)
def test_every_command_prints_what_the_local_path_prints(
    capsys: pytest.CaptureFixture[str], scheduler: str, folder: str
) -> None:
    path = str(DATA / folder)
    for command in COMMANDS:
        here = _run(capsys, *command, path, "--no-cache")
        there = _run(capsys, *command, path, "--no-cache", "--cluster", scheduler)
        assert here[0] == there[0] == 0, (command, here[2], there[2])
        assert there[1] == here[1], command  # byte for byte
    base = _run(capsys, "check", path, "--against", path, "--json", "--no-cache")
    got = _run(capsys, "check", path, "--against", path, "--json", "--cluster", scheduler)
    assert got[0] == base[0] and got[1] == base[1]


def test_the_workers_write_each_ranks_cache_entry_and_a_later_summary_reads_them(
    capsys: pytest.CaptureFixture[str], scheduler: str, tmp_path: Path
) -> None:
    folder = tmp_path / "job"
    shutil.copytree(DATA / "ddp_nccl_4rank", folder)
    shared = tmp_path / "shared-cache"
    rc, out, err = _run(
        capsys, "summary", str(folder), "--json", "--cluster", scheduler, "--cache-dir", str(shared)
    )
    assert rc == 0 and "4/4 ranks done" in err
    store = TraceCache(shared / "traces")
    files = trace_files(folder)
    # Each rank file has its own entry, written there by a worker (this process imported none).
    assert all(store.holds(store.key(f, [f])) for f in files)
    local = _run(capsys, "summary", str(folder), "--json", "--no-cache")
    assert json.loads(out) == json.loads(local[1])


def test_a_bad_rank_file_is_named_and_the_others_answered(
    capsys: pytest.CaptureFixture[str], scheduler: str, tmp_path: Path
) -> None:
    folder = tmp_path / "job"
    shutil.copytree(DATA / "ddp_nccl_4rank", folder)
    bad = folder / "rank-2.json.gz"
    bad.write_bytes(gzip.compress(b'{"traceEvents": [')[:-9])  # truncated gzip
    rc, out, err = _run(
        capsys, "summary", str(folder), "--json", "--no-cache", "--cluster", scheduler
    )
    assert rc == 0, err
    got = json.loads(out)
    assert got["incomplete"]["ranks_failed"] == 1 and got["incomplete"]["of"] == 4
    assert "rank-2.json.gz" in got["incomplete"]["failed"][0]
    assert "rank skipped" in err and "rank-2.json.gz" in err
    # The other three ranks' figures are those of a folder holding only their files.
    three = tmp_path / "three"
    three.mkdir()
    for f in ("rank-0.json.gz", "rank-1.json.gz", "rank-3.json.gz"):
        shutil.copy(folder / f, three / f)
    ref = json.loads(_run(capsys, "summary", str(three), "--json", "--no-cache")[1])
    assert got["ranks"] == [0, 1, 3] == ref["ranks"]
    for key in ("streams", "devices", "top_kernels", "memory", "overlap", "events", "span_us"):
        assert got[key] == ref[key], key
    # Without --cluster the bad file is bad input, as before (exit 2, named).
    rc, _, err = _run(capsys, "summary", str(folder), "--json", "--no-cache")
    assert rc == 2 and "rank-2.json.gz" in err


def bad_rank_job(tmp_path: Path) -> tuple[Path, Path]:
    """ddp_nccl_4rank with rank 2's file truncated (``job``), and its three other files alone
    (``three``): what the answer without rank 2 is checked against."""
    folder = tmp_path / "job"
    shutil.copytree(DATA / "ddp_nccl_4rank", folder)
    (folder / "rank-2.json.gz").write_bytes(gzip.compress(b'{"traceEvents": [')[:-9])
    three = tmp_path / "three"
    three.mkdir()
    for f in ("rank-0.json.gz", "rank-1.json.gz", "rank-3.json.gz"):
        shutil.copy(folder / f, three / f)
    return folder, three


@pytest.mark.parametrize("how", ["option", "env"])
def test_an_unreachable_scheduler_exits_2_with_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    monkeypatch.setattr(cluster, "CONNECT_S", 1.0)
    address = "127.0.0.1:9"  # discard: nothing answers
    extra = ["--cluster", address] if how == "option" else []
    if how == "env":
        monkeypatch.setenv(cluster.ENV, address)
    rc, out, err = _run(capsys, "summary", str(DATA / "ddp_2rank"), "--json", *extra)
    assert rc == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and address in lines[0] and "cannot reach the scheduler" in lines[0]


def test_a_malformed_local_count_is_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    rc, _, err = _run(capsys, "advise", str(DATA / "ddp_2rank"), "--cluster", "local:zero")
    assert rc == 2 and "local:zero" in err and len(err.strip().splitlines()) == 1


def test_a_cluster_that_cannot_start_fails_the_work_and_is_checks_internal_failure(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpuviz.errors import WorkFailedError

    def refuse(address: str, **_: object) -> None:
        raise WorkFailedError(f"--cluster {address}: the LocalCluster did not start (test)")

    monkeypatch.setattr(cluster, "connect", refuse)
    path = str(DATA / "ddp_2rank")
    rc, _, err = _run(capsys, "summary", path, "--cluster", "local:2")
    assert rc == 1 and "did not start" in err
    # check's 1 is a regression: a gate must not read the failure as one.
    rc, _, err = _run(capsys, "check", path, "--against", path, "--cluster", "local:2")
    assert rc == 3 and "did not start" in err


def test_the_clis_local_cluster_is_asked_to_fork_its_workers(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[tuple[str, bool]] = []

    def refuse(address: str, *, fork: bool = False) -> None:
        from gpuviz.errors import WorkFailedError

        asked.append((address, fork))
        raise WorkFailedError("test")

    monkeypatch.setattr(cluster, "connect", refuse)
    _run(capsys, "summary", str(DATA / "ddp_2rank"), "--cluster", "local:2")
    assert asked == [("local:2", True)]


def test_a_folder_the_cache_holds_is_mapped_here_not_sent_to_the_cluster(
    capsys: pytest.CaptureFixture[str], scheduler: str, tmp_path: Path
) -> None:
    folder = tmp_path / "job"
    shutil.copytree(DATA / "gloo_4rank_cpu", folder)
    for f in folder.iterdir():  # settled: files written just now are not cached (racy)
        os.utime(f, (f.stat().st_atime - 60, f.stat().st_mtime - 60))
    assert _run(capsys, "breakdown", str(folder), "--json")[0] == 0  # stores the folder's entry
    rc, out, err = _run(capsys, "summary", str(folder), "--json", "--cluster", scheduler)
    assert rc == 0 and "ranks done" not in err
    assert out == _run(capsys, "summary", str(folder), "--json", "--no-cache")[1]


def test_on_a_terminal_the_bar_says_ranks_done_per_worker(
    capsys: pytest.CaptureFixture[str], scheduler: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typing import Any

    from rich.progress import Progress

    from gpuviz.commands import reading

    monkeypatch.setattr(reading, "_stderr_is_terminal", lambda: True)
    seen: list[Any] = []
    real_update = Progress.update

    def update(self: Progress, task: Any, **kw: Any) -> None:
        seen.append(kw.get("left"))
        real_update(self, task, **kw)

    monkeypatch.setattr(Progress, "update", update)
    rc, _, _ = _run(
        capsys,
        "summary",
        str(DATA / "gloo_4rank_cpu"),
        "--json",
        "--no-cache",
        "--cluster",
        scheduler,
    )
    assert rc == 0
    texts = [t for t in seen if t and "ranks done" in t]
    assert texts and "4/4 ranks done; by worker: tcp://" in texts[-1]


def test_op_shape_on_a_local_cluster_of_two_is_the_local_paths(tmp_path: Path) -> None:
    """``breakdown --by op-shape --cluster local:2`` as a user runs it (its own LocalCluster,
    forked workers, in a process of its own): the JSON and the text of a folder whose GEMMs
    have shapes on both ranks are the local path's, byte for byte, and carry the roofline."""
    path = str(DATA / "whatif" / "gpu" / "gloo_even")
    env = gpuviz_env(GPUVIZ_CACHE_DIR=str(tmp_path / "cache"), GPUVIZ_IMPORT_WORKERS="0")
    env.pop(cluster.ENV, None)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "gpuviz", "breakdown", path, "--by", "op-shape", *args]
        return subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)

    outs = []
    for fmt in (["--json"], []):
        here, there = run(*fmt, "--no-cache"), run(*fmt, "--no-cache", "--cluster", "local:2")
        assert here.returncode == there.returncode == 0, there.stderr
        assert there.stdout == here.stdout, fmt
        assert "2/2 ranks done" in there.stderr
        outs.append(there.stdout)
    (mm,) = [r for r in json.loads(outs[0])["rows"] if r["key"] == "aten::mm"]
    assert mm["flops"] == mm["calls"] * 2 * 2048**3 and mm["bound"] == "compute"
