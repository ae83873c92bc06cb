"""Rank files on a Dask LocalCluster (:mod:`gpuviz.trace.cluster`, issue 51): results in file
order, a bad file named and the rest answered, a worker killed mid-task (its rank run again,
or reported past Dask's retries), the cancel, and the importer's whole-file route
(:mod:`gpuviz.trace.cluster_decode`) against the local import."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed", reason="the 'cluster' extra (dask) is missing")

from test_cache import assert_same_trace  # noqa: E402

from gpuviz.errors import BadInputError  # noqa: E402
from gpuviz.trace import cluster  # noqa: E402
from gpuviz.trace.errors import ImportCancelledError  # noqa: E402
from gpuviz.trace.files import trace_files  # noqa: E402

DATA = Path(__file__).parent.parent / "data"


@pytest.fixture(scope="module")
def local() -> Iterator[cluster.Cluster]:
    """Two worker processes, shared by this module's tests."""
    import cloudpickle

    # The helpers below travel by value: the workers need not import this test module.
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    with cluster.using("local:2") as c:
        assert c is not None
        yield c


def _size(path: str) -> int:
    return os.path.getsize(path)


def _dies_once(path: str, marker: str) -> str:
    # The worker process ends in the middle of its task, once: Dask runs it again elsewhere.
    if path.endswith("rank-1.json.gz") and not os.path.exists(marker):
        Path(marker).write_text(str(os.getpid()))
        os._exit(1)
    return os.path.basename(path)


def _sleeps(path: str) -> str:
    time.sleep(3)  # a running task is not interrupted: the cancel drops its result
    return path


def test_results_come_in_file_order_with_each_worker_counted(local: cluster.Cluster) -> None:
    files = [str(f) for f in trace_files(DATA / "gloo_4rank_cpu")]
    seen: list[cluster.Progress] = []
    got = cluster.map_files(local, _size, files, progress=seen.append)
    assert got == [os.path.getsize(f) for f in files]  # the files' own sizes, in order
    assert seen[-1].done == len(files) == seen[-1].total
    assert sum(seen[-1].per_worker.values()) == len(files)
    assert all(w.startswith("tcp://") for w in seen[-1].per_worker)


def test_a_missing_file_is_named_and_the_others_answered(local: cluster.Cluster) -> None:
    good = str(DATA / "ddp_2rank" / "rank-0.json.gz")
    errors: list[str] = []
    got = cluster.map_files(
        local, _size, [good, "/nonexistent/rank-9.json"], on_error=errors.append
    )
    assert got == [os.path.getsize(good), None]
    assert len(errors) == 1 and "/nonexistent/rank-9.json" in errors[0]
    with pytest.raises(BadInputError, match=r"rank-9\.json"):  # no on_error: as the local pool
        cluster.map_files(local, _size, [good, "/nonexistent/rank-9.json"])


def _logged(log: str, payload: bytes) -> _Logged:
    with open(log, "a") as f:  # one line each time the argument is unpickled (on a worker)
        f.write(f"{os.getpid()}\n")
    return _Logged(log, payload)


class _Logged:
    """An argument that says where and how often it is unpickled."""

    def __init__(self, log: str, payload: bytes) -> None:
        self.log = log
        self.payload = payload

    def __reduce__(self) -> tuple[object, tuple[str, bytes]]:
        return _logged, (self.log, self.payload)


def _size_plus(path: str, arg: _Logged) -> int:
    return os.path.getsize(path) + len(arg.payload)


def test_scattered_arguments_go_to_each_worker_once(local: cluster.Cluster, tmp_path: Path) -> None:
    good = [str(f) for f in trace_files(DATA / "gloo_4rank_cpu")] * 3
    files = [*good, "/nonexistent/rank-9.json"]
    want = [os.path.getsize(f) + 1000 for f in good] + [None]
    for scatter, log in ((False, tmp_path / "sent"), (True, tmp_path / "scattered")):
        errors: list[str] = []
        arg = _Logged(str(log), b"x" * 1000)
        got = cluster.map_files(
            local, _size_plus, files, arg, on_error=errors.append, scatter=scatter
        )
        assert got == want and len(errors) == 1 and "rank-9.json" in errors[0]
        unpickled = log.read_text().split()
        if scatter:  # once a worker (two), whatever the tasks
            assert 1 <= len(unpickled) <= 2 and len(set(unpickled)) == len(unpickled)
        else:  # with each task
            assert len(unpickled) >= len(files)


def _mapped(path: str) -> bool:
    from test_gcpause import mapped_on_its_own

    return mapped_on_its_own()


def test_a_task_has_the_heap_thresholds_the_nanny_fixed_raised(local: cluster.Cluster) -> None:
    from gpuviz.trace import gcpause

    if not sys.platform.startswith("linux") or not gcpause._libc():
        pytest.skip("glibc's malloc only")
    import cloudpickle
    import test_gcpause

    cloudpickle.register_pickle_by_value(test_gcpause)
    # The worker as Dask's nanny left it: a block of 1 MiB is mapped on its own each time
    assert local.client.submit(_mapped, "x", pure=False).result() is True
    # gpuviz's task: on the heap, as glibc's dynamic thresholds let it
    assert cluster.map_files(local, _mapped, ["x", "y"]) == [False, False]


@pytest.mark.slow
def test_a_worker_killed_mid_task_has_its_rank_run_again(
    local: cluster.Cluster, tmp_path: Path
) -> None:
    files = [str(f) for f in trace_files(DATA / "gloo_4rank_cpu")]
    marker = tmp_path / "died"
    got = cluster.map_files(local, _dies_once, files, str(marker))
    assert marker.exists()  # a worker process did end mid-task
    assert got == [os.path.basename(f) for f in files]  # and every rank was answered


@pytest.mark.slow
def test_a_rank_whose_workers_keep_dying_is_reported(tmp_path: Path) -> None:
    import cloudpickle
    import dask

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    files = [str(f) for f in trace_files(DATA / "gloo_4rank_cpu")]
    errors: list[str] = []
    # No retries: the first death is the rank's failure (Dask's KilledWorker).
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        with cluster.using("local:2") as c:
            assert c is not None
            got = cluster.map_files(
                c, _dies_once, files, str(tmp_path / "died"), on_error=errors.append
            )
    # Rank 1's worker died, and with it any task it held (rank 3, often): each is named, and
    # every other rank is answered.
    assert got[1] is None and any("rank-1.json.gz" in e and "worker died" in e for e in errors)
    for f, g in zip(files, got):
        named = [e for e in errors if os.path.basename(f) in e]
        assert (g == os.path.basename(f) and not named) or (g is None and len(named) == 1)


def test_cancel_stops_at_once(local: cluster.Cluster) -> None:
    files = [str(f) for f in trace_files(DATA / "gloo_4rank_cpu")]
    start = time.monotonic()
    with pytest.raises(ImportCancelledError):
        cluster.map_files(local, _sleeps, files, cancelled=lambda: time.monotonic() - start > 0.3)
    assert time.monotonic() - start < 2.5  # not the tasks' 3 s (each)


@pytest.mark.parametrize(
    "folder",
    ["ddp_2rank", "gloo_2rank_h100", "gloo_4rank_cpu", "nccl_2rank_h200", "ddp_nccl_4rank"],
)
def test_the_workers_decode_and_the_trace_is_the_local_imports(
    local: cluster.Cluster, folder: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from distributed import get_task_stream

    from gpuviz.trace.kineto import import_trace

    monkeypatch.setenv("GPUVIZ_IMPORT_WORKERS", "0")
    here = import_trace(DATA / folder)
    cluster._ACTIVE.append(local)
    try:
        with get_task_stream(client=local.client) as ts:
            there = import_trace(DATA / folder)
    finally:
        cluster._ACTIVE.remove(local)
    keys = [t["key"] for t in ts.data]
    assert len([k for k in keys if "decode_file" in str(k)]) == len(trace_files(DATA / folder))
    assert_same_trace(there, here)  # every column, string, arg and warning


def test_local_n_must_be_a_count() -> None:
    with pytest.raises(BadInputError, match="local:two"):
        cluster.local_workers("local:two")
    assert cluster.local_workers("local:3") == 3
    assert cluster.local_workers("tcp://h:8786") is None


def _mark() -> object:
    # What the worker's own gpuviz.trace.cluster holds: a forked worker has the client's.
    module = sys.modules.get("gpuviz.trace.cluster")
    return getattr(module, "test_mark", None)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers fork on Linux only")
def test_fork_makes_the_local_workers_copies_of_this_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    monkeypatch.delenv("GPUVIZ_IMPORT_START", raising=False)
    monkeypatch.setattr(cluster, "test_mark", 7, raising=False)
    with cluster.using("local:1", fork=True) as forked:
        assert forked is not None
        assert list(forked.client.run(_mark).values()) == [7]
    # Without it (the app's), Dask spawns them: fresh interpreters.
    with cluster.using("local:1") as spawned:
        assert spawned is not None
        assert list(spawned.client.run(_mark).values()) == [None]
    # GPUVIZ_IMPORT_START=spawn spawns them even so, as it does the import's children.
    monkeypatch.setenv("GPUVIZ_IMPORT_START", "spawn")
    with cluster.using("local:1", fork=True) as told:
        assert told is not None
        assert list(told.client.run(_mark).values()) == [None]
