"""Attribution on GPU recordings (tests/data/attribution, see its README): the op table against
torch's own ``key_averages()`` of the same window, and modules, lines and compiled code."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gpuviz.analysis.attribution import attribute
from gpuviz.analysis.breakdown import breakdown
from gpuviz.analysis.breakdown_table import Breakdown
from gpuviz.analysis.source_lines import classify
from gpuviz.trace.kineto import load_trace
from gpuviz.trace.model import Trace

DATA = Path(__file__).parent.parent / "data" / "attribution"
TINY = DATA / "tinylm_train.json.gz"
TOL = 0.03
ABS_US = 1.0  # below a microsecond, rounding of the trace's µs text decides


@pytest.fixture(scope="module")
def tiny() -> Trace:
    return load_trace(TINY)


@pytest.fixture(scope="module")
def torch_rows() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / "tinylm_train.key_averages.json").read_text())
    return data


def _close(ours: float, theirs: float) -> bool:
    return abs(ours - theirs) <= max(TOL * abs(theirs), ABS_US)


def _cpu_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # key_averages also lists kernels and the GPU side of record_function ranges (CUDA rows),
    # runtime calls (cudaLaunchKernel...), and since torch 2.13 Python frames: no ops of ours.
    return [
        r
        for r in rows
        if r["device_type"] == "DeviceType.CPU"
        and not r["key"].startswith(("cuda", "cu", "nn.Module: ", "<"))
        and classify(r["key"]) is None
    ]


def _compare(
    ours: dict[Any, Any], theirs: list[tuple[Any, dict[str, Any]]], range_self: bool = True
) -> list[str]:
    bad = []
    for key, r in theirs:
        m = ours.get(key)
        if m is None:
            bad.append(f"{key}: missing")
            continue
        if m["calls"] != r["count"]:
            bad.append(f"{key}: calls {m['calls']} != {r['count']}")
        for mine, torch_key in (
            ("cpu_total_us", "cpu_time_total_us"),
            ("cpu_self_us", "self_cpu_time_total_us"),
            ("device_total_us", "device_time_total_us"),
            ("device_self_us", "self_device_time_total_us"),
        ):
            if mine == "cpu_self_us" and not range_self and r["is_user_annotation"]:
                continue
            if not _close(m[mine], r[torch_key]):
                bad.append(f"{key}: {mine} {m[mine]:.3f} != {r[torch_key]:.3f}")
    return bad


def op_table_mismatches(
    trace: Trace, torch_rows: dict[str, Any], range_self: bool = True
) -> list[str]:
    """Where the op table differs from torch's key_averages() rows (by name)."""
    table = breakdown(trace, "op")
    ours = {r.key: r.to_json("op") for r in table.rows}
    theirs = [(r["key"], r) for r in _cpu_rows(torch_rows["by_name"])]
    assert len(theirs) > 50
    return _compare(ours, theirs, range_self)


def test_op_table_matches_key_averages(tiny: Trace, torch_rows: dict[str, Any]) -> None:
    assert op_table_mismatches(tiny, torch_rows) == []


@pytest.mark.slow
@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_fresh_recording_matches_key_averages(device: str, tmp_path: Path) -> None:
    """Record the same tiny LM now, with this machine's torch, and compare again (the H100 data
    above is one torch version; this is whichever is installed)."""
    import subprocess
    import sys

    torch = pytest.importorskip("torch")
    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU: run with -m gpu on the device machine")
    script = Path(__file__).parents[2] / "scripts" / "gpu" / "record_attribution.py"
    small = ["--dim", "64", "--seq", "32", "--batch", "2"] if device == "cpu" else []
    subprocess.run(
        [sys.executable, str(script), str(tmp_path), "--device", device, *small],
        check=True,
        capture_output=True,
        timeout=600,
    )
    rows = json.loads((tmp_path / "tinylm_train.key_averages.json").read_text())
    trace = load_trace(tmp_path / "tinylm_train.json.gz")
    # torch 2.13 makes Python frames events of key_averages, children of the record_function
    # ranges around them: a range's self CPU time is then what no frame or op covers. Ops'
    # figures are the same either way (docs/attribution.md).
    version = tuple(int(x) for x in str(torch.__version__).split("+")[0].split(".")[:2])
    assert op_table_mismatches(trace, rows, range_self=version < (2, 13)) == []


def test_gemm_flops_match_torch(tiny: Trace, torch_rows: dict[str, Any]) -> None:
    # The trace holds no flops arg; the formulas must give torch's with_flops counts for the
    # GEMMs (elementwise ops, which torch counts too, have no formula here: None).
    ours = {r.key: r for r in breakdown(tiny, "op").rows}
    checked = 0
    for r in _cpu_rows(torch_rows["by_name"]):
        if r["key"] in ("aten::mm", "aten::addmm", "aten::bmm") and r["flops"]:
            assert ours[r["key"]].flops == r["flops"], r["key"]
            checked += 1
    assert checked >= 2


def _torch_shape(dims: Any) -> Any:
    # torch's key lists a TensorList input as [] where the trace has its tensors' shapes.
    if not isinstance(dims, list):
        return dims
    return [[] if d and isinstance(d[0], list) else d for d in dims]


def test_op_shape_table_matches_key_averages(tiny: Trace, torch_rows: dict[str, Any]) -> None:
    table = breakdown(tiny, "op-shape")
    merged: dict[Any, dict[str, Any]] = defaultdict(
        lambda: {
            "calls": 0,
            "cpu_total_us": 0.0,
            "cpu_self_us": 0.0,
            "device_total_us": 0.0,
            "device_self_us": 0.0,
        }
    )
    for r in table.rows:
        j = r.to_json("op-shape")
        m = merged[(r.key, json.dumps(_torch_shape(j["input_shapes"])))]
        for k in m:
            m[k] += j[k]
    theirs = [
        ((r["key"], json.dumps(r["input_shapes"])), r) for r in _cpu_rows(torch_rows["by_shape"])
    ]
    assert len(theirs) > 200
    assert _compare(merged, theirs) == []


def test_modules_forward_and_backward(tiny: Trace) -> None:
    table = breakdown(tiny, "module")
    rows = {r.key: r for r in table.rows}
    root = rows["TinyLM_0"]
    assert root.calls == 2  # two profiled steps
    for block in ("TinyLM_0.Block_0", "TinyLM_0.Block_1"):
        b = rows[block]
        assert b.forward_device_ns and b.backward_device_ns
        # Backward of a transformer block costs more than its forward.
        assert b.backward_device_ns > b.forward_device_ns
    assert rows["Optimizer.step#AdamW.step"].kind == "outside"
    assert rows["aten::cross_entropy_loss"].backward_device_ns
    # No backward kernel is left without its module or outside row.
    assert not any("Backward" in r.key for r in table.rows if r.kind == "outside")
    total = sum(r.device_self_ns for r in table.rows) + table.unattributed_device_ns
    assert total == pytest.approx(int(attribute(tiny).gpu_dur_ns.sum()), abs=len(table.rows))


def test_lines_of_a_user_script(tiny: Trace) -> None:
    lines = breakdown(tiny, "line")
    assert all(r.key.startswith("record_attribution.py:") for r in lines.rows[:5])
    assert lines.rows[0].backward_device_ns


@pytest.mark.parametrize("name", ["gpt_stack.json.gz", "gpt_compile.json.gz"])
def test_gpt_train_under_gpuviz_profile(name: str) -> None:
    trace = load_trace(DATA / name)
    modules = breakdown(trace, "module")
    gpt = next(r for r in modules.rows if r.key.endswith("GPT_0"))
    assert gpt.forward_device_ns and gpt.backward_device_ns
    lines = breakdown(trace, "line")
    top = lines.rows[0]
    assert top.key.startswith("gpt_train.py:")
    # gpuviz's own step hooks are never the line: the optimizer lands on the user's code.
    assert not any(r.key.startswith("gpuviz/") for r in lines.rows)


def test_compiled_triton_kernels_land_in_a_module_and_a_line() -> None:
    trace = load_trace(DATA / "gpt_compile.json.gz")
    att = attribute(trace)
    names = np.array(trace.symbols.lookup(trace.slices.name[att.gpu_rows]))
    triton = np.char.startswith(names.astype(str), "triton_")
    assert triton.sum() > 50
    modules = breakdown(trace, "module")
    rows: Breakdown = modules
    kinds = np.array([rows.rows[i].kind if i >= 0 else "" for i in rows.kernel_row])
    assert (kinds[triton] == "module").mean() > 0.95
    lines = breakdown(trace, "line")
    assert (lines.kernel_row[triton] >= 0).mean() > 0.95


def test_advisor_evidence_names_ops_modules_lines(tiny: Trace) -> None:
    from gpuviz.analysis.advisor import advise

    advice = advise(tiny)
    assert "where" not in advice.errors
    f = advice.finding("launch_bound")
    assert f is not None
    e = f.evidence[0]
    assert e.ops and e.modules and e.lines
    assert all(
        m.startswith("TinyLM_0") or m.startswith(("aten::", "Optimizer.")) for m in e.modules
    )
    assert all(x.startswith("record_attribution.py:") for x in e.lines)
    j = e.to_json()
    assert j["ops"] == list(e.ops) and len(j["modules"]) <= 3


def test_compare_has_op_and_module_deltas() -> None:
    from gpuviz.analysis.diff import trace_diff

    a = load_trace(DATA / "gpt_stack.json.gz")
    b = load_trace(DATA / "gpt_compile.json.gz")
    diff = trace_diff(a, b)
    whats = {d.what for d in diff}
    assert {"kernel", "op", "op_device", "module"} <= whats
    gpt = next(d for d in diff if d.what == "module" and d.name == "GPT_0")
    assert gpt.status == "gone" and gpt.count_a == 5  # compiled: OptimizedModule_0.GPT_0
    # A trace without stacks has unknown modules, not gone ones.
    ns = load_trace(DATA.parent / "streams_overlap.json.gz")
    assert not any(d.what == "module" for d in trace_diff(a, ns))
