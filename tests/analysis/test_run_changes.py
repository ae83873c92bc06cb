"""What changed per step between two runs (issue 47, item 11).

A run whose input copy went from pinned to pageable memory and that gained a ``loss.item()``
each step was compared as "new findings: none", ops ranked by host time. The verdict now says
the GPU work is the same kernel for kernel and the host is slower, and the per-step counts of
syncs, copy kinds and op calls show why. The pairs: a synthetic CUDA pair written here (every
count known by construction), and a CPU pair recorded with torch
(``tests/data/changes/record_item_pair.py``: one ``loss.item()`` a step more).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from gpuviz.analysis.advisor import advise
from gpuviz.analysis.run_changes import PAGEABLE_READBACK
from gpuviz.analysis.run_compare import compare_runs
from gpuviz.cli import main
from gpuviz.trace.kineto import load_trace

DATA = Path(__file__).parent.parent / "data"
STEPS = 4
MIB4 = 4 << 20


def _ev(cat: str, name: str, ts: float, dur: float, tid: int = 1, **args: Any) -> dict[str, Any]:
    pid = 0 if cat in ("kernel", "gpu_memcpy") else 1
    e: dict[str, Any] = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts,
                         "dur": dur}  # fmt: skip
    if args:
        e["args"] = args
    return e


def _gpu(cat: str, name: str, ts: float, dur: float, corr: int, **args: Any) -> dict[str, Any]:
    return _ev(cat, name, ts, dur, tid=7, correlation=corr, device=0, stream=7, **args)


def _run(*, pageable: bool, item: bool, cpu_copy: bool = False, step_us: float) -> dict:
    """``STEPS`` steps of: an input copy (pinned or pageable), one GEMM; with ``item``, a
    ``loss.item()`` (a 4-byte copy into pageable memory, then a stream sync); with
    ``cpu_copy``, a ``.cpu()`` whose ``aten::copy_`` launches a copy and then waits."""
    events = []
    kind = "Pageable" if pageable else "Pinned"
    for i in range(STEPS):
        t, c = i * step_us, 1000 + 10 * i
        events += [
            _ev("user_annotation", f"ProfilerStep#{i}", t, step_us),
            _ev("cpu_op", "aten::copy_", t + 10, 100),
            _ev("cuda_runtime", "cudaMemcpyAsync", t + 20, 50, correlation=c),
            _gpu("gpu_memcpy", f"Memcpy HtoD ({kind} -> Device)", t + 30, 300, c, bytes=MIB4),
            _ev("cpu_op", "aten::mm", t + 200, 100),
            _ev("cuda_runtime", "cudaLaunchKernel", t + 210, 20, correlation=c + 1),
            _gpu("kernel", "sm90_gemm_kernel", t + 400, 2000, c + 1),
        ]
        if item:
            events += [
                _ev("cpu_op", "aten::item", t + 3000, 2500),
                _ev("cpu_op", "aten::_local_scalar_dense", t + 3010, 2480),
                _ev("cuda_runtime", "cudaMemcpyAsync", t + 3020, 2400, correlation=c + 2),
                _gpu("gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", t + 3030, 2, c + 2, bytes=4),
                _ev("cuda_runtime", "cudaStreamSynchronize", t + 5430, 10),
            ]
        if cpu_copy:
            events += [
                _ev("cpu_op", "aten::to", t + 6000, 600),
                _ev("cpu_op", "aten::copy_", t + 6010, 580),
                _ev("cuda_runtime", "cudaMemcpyAsync", t + 6020, 100, correlation=c + 3),
                _gpu(
                    "gpu_memcpy",
                    "Memcpy DtoH (Device -> Pageable)",
                    t + 6030,
                    20,
                    c + 3,
                    bytes=4096,
                ),
                _ev("cuda_runtime", "cudaStreamSynchronize", t + 6200, 300),
            ]
    return {"deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}], "traceEvents": events}


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path]:
    before, after = tmp_path / "pinned.json", tmp_path / "pageable_item.json"
    before.write_text(json.dumps(_run(pageable=False, item=False, step_us=10_000)))
    # 13% longer steps: the host waits on the .item() each step.
    after.write_text(json.dumps(_run(pageable=True, item=True, step_us=11_300)))
    return before, after


def _compare(a: Path, b: Path):  # type: ignore[no-untyped-def]
    return compare_runs(advise(load_trace(a, cache=False)), advise(load_trace(b, cache=False)))


def test_the_verdict_puts_the_gpu_work_first_then_the_host(pair: tuple[Path, Path]) -> None:
    ch = _compare(*pair).changes
    assert ch is not None
    assert ch.gpu_work_same and ch.a.kernel_calls == ch.b.kernel_calls == 1
    assert ch.kernels == []
    verdict = ch.verdict()
    assert verdict.startswith(
        "GPU work the same kernel for kernel (1 kernel a step, their time +0.0%); "
        "host 13.0% slower (mean step 10.000 -> 11.300 ms): host syncs a step 0 -> 1 (aten::item)"
    ), verdict
    assert verdict.endswith(
        "; HtoD copies pinned -> pageable; copies a step Memcpy DtoH (Device -> Pageable) 0 -> 1; "
        "2 ops called more or less often a step"
    ), verdict


def test_syncs_copies_and_op_calls_per_step_are_counted_by_hand(
    pair: tuple[Path, Path],
) -> None:
    ch = _compare(*pair).changes
    assert ch is not None
    # One .item() a step: one sync, named by its outermost op (its _local_scalar_dense,
    # D2H launch and stream sync are inside it).
    assert {s.name: (s.a, s.b) for s in ch.syncs} == {"aten::item": (0.0, 1.0)}
    copies = {c.name: (c.a, c.b, c.bytes_a, c.bytes_b) for c in ch.copies}
    assert copies == {
        "Memcpy HtoD (Pinned -> Device)": (1.0, 0.0, MIB4, 0.0),
        "Memcpy HtoD (Pageable -> Device)": (0.0, 1.0, 0.0, MIB4),
        "Memcpy DtoH (Device -> Pageable)": (0.0, 1.0, 0.0, 4.0),
    }
    assert {o.name: (o.a, o.b) for o in ch.ops} == {
        "aten::item": (0.0, 1.0),
        "aten::_local_scalar_dense": (0.0, 1.0),
    }
    assert ch.a.steps == ch.b.steps == STEPS


def test_a_cpu_copy_is_one_sync_and_a_pageable_readback_without_an_op_is_one(
    tmp_path: Path,
) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(_run(pageable=False, item=False, step_us=10_000)))
    doc = _run(pageable=False, item=False, cpu_copy=True, step_us=10_000)
    # One readback launched outside any op (a bare runtime call): blocking all the same.
    for i in range(STEPS):
        t, c = i * 10_000, 5000 + i
        doc["traceEvents"] += [
            _ev("cuda_runtime", "cudaMemcpyAsync", t + 8000, 50, correlation=c),
            _gpu("gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", t + 8010, 5, c, bytes=8),
        ]
    b.write_text(json.dumps(doc))
    ch = _compare(a, b).changes
    assert ch is not None
    assert {s.name: s.b for s in ch.syncs} == {
        f"aten::copy_ ({PAGEABLE_READBACK})": 1.0,  # .cpu(): its copy and its wait, one sync
        PAGEABLE_READBACK: 1.0,
    }
    assert ch.b.sync_count == 2.0 and ch.a.sync_count == 0.0


def test_check_prints_the_verdict_first_and_json_carries_the_changes(
    pair: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    before, after = pair
    rc = main(["check", str(after), "--against", str(before), "--no-cache"])
    out = capsys.readouterr().out
    assert rc == 1  # 13% over the 5% limit
    lines = out.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("verdict: "))
    assert first < next(i for i, line in enumerate(lines) if line.startswith("mean step:"))
    assert "  host syncs: 0 -> 1 (aten::item 0 -> 1)" in lines
    assert any(
        line.startswith("  copies: ")
        and "Memcpy HtoD (Pinned -> Device) 1 -> 0 (4 MiB -> 0 B)" in line
        for line in lines
    )
    assert main(["check", str(after), "--against", str(before), "--no-cache", "--json"]) == 1
    got = json.loads(capsys.readouterr().out)
    assert got["verdict"].startswith("GPU work the same kernel for kernel")
    ch = got["changes"]
    assert ch["gpu_work_same"] is True
    assert ch["host_syncs_per_step"] == {
        "baseline": 0.0,
        "new": 1.0,
        "by_name": [{"name": "aten::item", "baseline_per_step": 0.0, "new_per_step": 1.0}],
    }
    names = {c["name"]: c for c in ch["copies"]}
    assert names["Memcpy HtoD (Pageable -> Device)"]["new_bytes_per_step"] == MIB4
    assert {o["name"] for o in ch["op_calls"]} == {"aten::item", "aten::_local_scalar_dense"}


def test_a_recorded_cpu_pair_one_item_a_step_more() -> None:
    # Recorded with torch on the CPU: .item() of a CPU tensor waits for nothing, so it is a
    # value read to Python, not a sync; the loop reads one more a step (the script's count).
    ch = _compare(DATA / "changes" / "item_before.json.gz", DATA / "changes" / "item_after.json.gz")
    ch = ch.changes
    assert ch is not None
    assert ch.a.steps == ch.b.steps == 6
    assert ch.a.sync_count == ch.b.sync_count == 0
    assert {r.name: (r.a, r.b) for r in ch.reads} == {"aten::item": (0.0, 1.0)}
    assert {o.name: (o.a, o.b) for o in ch.ops} == {
        "aten::item": (0.0, 1.0),
        "aten::_local_scalar_dense": (0.0, 1.0),
    }
    assert "values read to Python (no GPU sync) a step 0 -> 1 (aten::item)" in ch.verdict()


def test_advise_against_opens_with_the_verdict(
    pair: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    before, after = pair
    assert main(["advise", str(before), "--against", str(after), "--no-cache"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[3].startswith("verdict: GPU work the same kernel for kernel")
    assert lines[4] == "per step (A -> B; 4 and 4 steps):"
    assert main(["advise", str(before), "--against", str(after), "--no-cache", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["verdict"] == lines[3].removeprefix("verdict: ")
    assert got["changes"]["host_syncs_per_step"]["new"] == 1.0


TRUTH = DATA / "truth"


@pytest.mark.skipif(
    not (TRUTH / "copy_pageable_item.json.gz").exists(),
    reason="the GPU pair of scripts/gpu/record_truth.py (copy_pinned, copy_pageable_item) is "
    "not in tests/data/truth yet",
)
def test_the_recorded_gpu_pair_pinned_to_pageable_and_an_item() -> None:
    # The script's step: x = host.to(dev, non_blocking=pinned) of a 64 MiB batch, the same
    # model and optimizer; the pageable run adds loss.item() each step.
    ch = _compare(TRUTH / "copy_pinned.json.gz", TRUTH / "copy_pageable_item.json.gz").changes
    assert ch is not None
    assert ch.gpu_work_same, [k.to_json() for k in ch.kernels]
    # Two syncs a step, not one: besides loss.item(), torch 2.11's copy from pageable memory
    # waits for its copy with cudaStreamSynchronize inside aten::copy_ (in the raw trace).
    assert ch.a.sync_count == 0 and ch.b.sync_count == 2
    assert {s.name for s in ch.syncs if s.b} == {
        "aten::item",
        "aten::copy_ (cudaStreamSynchronize)",
    }
    raw = json.loads(gzip.decompress((TRUTH / "copy_pageable_item.json.gz").read_bytes()))
    syncs = [e for e in raw["traceEvents"] if e.get("name") == "cudaStreamSynchronize"]
    assert len(syncs) == 2 * ch.b.steps
    copies = {c.name: c for c in ch.copies}
    pinned, pageable = (
        copies["Memcpy HtoD (Pinned -> Device)"],
        copies["Memcpy HtoD (Pageable -> Device)"],
    )
    assert (pinned.a, pinned.b, pageable.a, pageable.b) == (1, 0, 0, 1)
    assert pinned.bytes_a == pageable.bytes_b == 64 << 20
    assert "HtoD copies pinned -> pageable" in ch.verdict()
