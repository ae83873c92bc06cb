"""``benchmarks/cupti_window.py``: CUPTI attached with no ``torch.profiler``, then detached as
Kineto's teardown does, so that a profiler window after it still records the GPU."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.test_bench_stats import bench_module
from tests.test_cli_profile import ROOT, _env

CODE = textwrap.dedent(
    """
    import json, sys, torch
    sys.path.insert(0, {bench!r})
    from cupti_window import close_window, open_window

    x = torch.randn(4096, device="cuda")
    torch.cuda.synchronize()
    win = open_window()
    for _ in range(20):
        x = torch.sin(x)
    torch.cuda.synchronize()
    close_window(win)
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        for _ in range(3):
            x = torch.cos(x)
        torch.cuda.synchronize()
    prof.export_chrome_trace({trace!r})
    print(json.dumps({{"bytes": win.recorded_bytes, "finalized": win.finalized, "via": win.via}}))
    """
)


@pytest.mark.gpu
def test_a_cupti_window_records_detaches_and_leaves_the_profiler_working(tmp_path: Path) -> None:
    trace = tmp_path / "after.json"
    code = CODE.format(bench=str(ROOT / "benchmarks"), trace=str(trace))
    r = subprocess.run(
        [sys.executable, "-c", code], env=_env(), capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    # 20 kernels and their launches at least: each record is tens of bytes.
    assert out["bytes"] > 20 * 32 and out["finalized"], out
    kernels = [e for e in json.loads(trace.read_text())["traceEvents"] if e.get("cat") == "kernel"]
    assert len(kernels) >= 3, out  # CUPTI attached again for torch's own window


@pytest.mark.parametrize("push", [True, False])
def test_the_op_mode_pushes_and_pops_an_id_around_every_op(push: bool) -> None:
    # cupti-xcorr's mode, against a stand-in for libcupti that records the calls: each op of
    # a forward and backward is wrapped by one push before it and one pop after, ids unique,
    # the stack back to empty; cupti-mode's (push=False) passes the ops on and calls nothing.
    import torch

    cw = bench_module("cupti_window")
    calls: list[tuple[str, int]] = []

    def push_id(kind: int, ext: int) -> int:
        calls.append(("push", ext))
        return 0

    def pop_id(kind: int, last: object) -> int:
        calls.append(("pop", 0))
        return 0

    lib = type("Lib", (), {})()
    lib.cuptiActivityPushExternalCorrelationId = push_id
    lib.cuptiActivityPopExternalCorrelationId = pop_id
    mode = cw.op_mode(cw.Window(lib, ()), push=push)
    w = torch.randn(8, 8, requires_grad=True)
    with mode:
        (torch.randn(4, 8) @ w).sin().sum().backward()
    ops = sum(mode.threads.values())
    assert ops >= 4 and mode.failed == 0  # matmul, sin, sum and their backward at least
    if not push:
        assert calls == []
        return
    assert [c for c, _ in calls].count("push") == ops == [c for c, _ in calls].count("pop")
    depth = 0
    for what, _ in calls:  # balanced: never popped below empty, empty at the end
        depth += 1 if what == "push" else -1
        assert depth >= 0
    assert depth == 0
    pushed = [ext for c, ext in calls if c == "push"]
    assert len(set(pushed)) == len(pushed)


@pytest.mark.parametrize("kineto", [True, False])
def test_a_kineto_like_window_sets_cupti_up_as_kineto_does(
    monkeypatch: pytest.MonkeyPatch, kineto: bool
) -> None:
    # cupti-kineto's window, against a stand-in for libcupti that records the calls: overhead
    # records on, Kineto's frequent API calls' records off, and at the close the driver's
    # callbacks enabled beside the runtime's, CUPTI finalized at the runtime call's exit.
    # cupti-raw's (kineto=False) does none of those.
    import ctypes

    cw = bench_module("cupti_window")
    calls: list[tuple[object, ...]] = []
    held: list[object] = []
    exit_site = ctypes.c_int(cw.API_EXIT)

    class Lib:
        def __getattr__(self, name: str) -> object:
            def call(*args: object) -> int:
                calls.append((name, *(a for a in args if isinstance(a, int))))
                if name == "cuptiSubscribe":
                    held.append(args[1])
                return 0

            return call

    monkeypatch.setattr(cw, "find_cupti", lambda: "libcupti-stand-in.so")
    monkeypatch.setattr(cw.ctypes, "CDLL", lambda path: Lib())
    monkeypatch.setattr(
        cw,
        "runtime_version_call",
        lambda: lambda: held[0](None, cw.DOMAIN_RUNTIME_API, 2, ctypes.addressof(exit_site)),
    )
    win = cw.close_window(cw.open_window(kineto=kineto))
    enabled = {c[1] for c in calls if c[0] == "cuptiActivityEnable"}
    quiet = {(c[0], c[1], c[2]) for c in calls if c[0].endswith("Api")}
    domains = [c[2] for c in calls if c[0] == "cuptiEnableDomain"]
    assert {cw.KINDS[k] for k in cw.CUDA_WINDOW} <= enabled
    assert (cw.KINDS["overhead"] in enabled) is kineto
    if kineto:
        assert quiet == {
            ("cuptiActivityEnableRuntimeApi", c, 0) for c in cw.KINETO_QUIET_RUNTIME
        } | {("cuptiActivityEnableDriverApi", c, 0) for c in cw.KINETO_QUIET_DRIVER}
        assert domains == [cw.DOMAIN_RUNTIME_API, cw.DOMAIN_DRIVER_API]
    else:
        assert quiet == set() and domains == [cw.DOMAIN_RUNTIME_API]
    names = [c[0] for c in calls]
    assert names.index("cuptiActivityFlushAll") < names.index("cuptiFinalize")
    assert win.finalized and win.via == "at a runtime call's exit"
    assert {c[1] for c in calls if c[0] == "cuptiActivityDisable"} == enabled


@pytest.mark.gpu
def test_a_correlating_cupti_window_sees_both_threads_and_detaches(tmp_path: Path) -> None:
    # On a GPU the backward runs on autograd's device thread: the mode, and with it the
    # pushes, must reach it, as Kineto's do; CUPTI accepts every push and is finalized.
    code = textwrap.dedent(
        f"""
        import json, sys, torch
        sys.path.insert(0, {str(ROOT / "benchmarks")!r})
        from cupti_window import close_window, op_mode, open_window

        w = torch.randn(256, 256, device="cuda", requires_grad=True)
        torch.cuda.synchronize()
        win = open_window(correlate=True)
        mode = op_mode(win, push=True)
        with mode:
            for _ in range(3):
                (torch.randn(64, 256, device="cuda") @ w).sin().sum().backward()
        torch.cuda.synchronize()
        close_window(win)
        print(json.dumps({{"threads": len(mode.threads), "ops": sum(mode.threads.values()),
                          "failed": mode.failed, "bytes": win.recorded_bytes,
                          "finalized": win.finalized}}))
        """
    )
    r = subprocess.run(
        [sys.executable, "-c", code], env=_env(), capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["threads"] >= 2 and out["ops"] >= 12 and out["failed"] == 0, out
    assert out["finalized"] and out["bytes"] > 0, out
