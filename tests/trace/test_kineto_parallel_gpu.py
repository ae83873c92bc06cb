"""Import children forked from a process that runs CUDA, as under ``gpuviz profile``.

The forked child runs numpy and msgspec only; the parent has the CUDA driver's threads, torch's
thread pool and a thread launching kernels while the children fork. Runs on a GPU machine
(``pytest -m gpu``).
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from test_kineto import _same
from test_kineto_parallel import (  # noqa: F401  (_mixed_folders_merge: a fixture, autouse)
    PLAIN,
    _mixed_folders_merge,
    _plain_copies,
    serial,
)

from gpuviz.trace import jsonscan, kineto_worker
from gpuviz.trace.kineto import load_trace

pytestmark = pytest.mark.gpu


def test_children_forked_beside_cuda_work_give_the_same_trace(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    x = torch.randn(2048, 2048, device="cuda")
    torch.set_num_threads(4)
    (torch.randn(512, 512) @ torch.randn(512, 512)).sum().item()  # the CPU pool's threads
    stop = threading.Event()
    launched = []

    def busy() -> None:
        while not stop.is_set():
            (x @ x).sum().item()
            launched.append(1)

    worker = threading.Thread(target=busy, daemon=True)
    worker.start()
    path = _plain_copies(tmp_path, PLAIN)
    monkeypatch.setenv(kineto_worker.START_ENV, "fork")
    monkeypatch.setenv("GPUVIZ_IMPORT_WORKER_MIN_BYTES", "0")
    monkeypatch.setenv("GPUVIZ_IMPORT_WORKERS", "3")
    monkeypatch.setattr(jsonscan, "BLOCK_BYTES", 1 << 13)
    forked: list[int] = []
    init = kineto_worker._Forked.__init__

    def spy(self: kineto_worker._Forked, *args: object) -> None:
        init(self, *args)  # type: ignore[arg-type]
        forked.append(self.pid)

    monkeypatch.setattr(kineto_worker._Forked, "__init__", spy)
    try:
        got = [load_trace(path, cache=False) for _ in range(3)]
    finally:
        stop.set()
        worker.join(timeout=30)
    assert len(forked) == 9 and launched
    want = serial(path, monkeypatch)
    for g in got:
        _same(g, want)
