"""Compiled kernels to the modules and lines that wrote them (issue 49): a hand-made compiled
graph (tests/analysis/compiled_case.py, kernel times set by hand), and the kernel-name
fallback on the two real compiled traces."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from gpuviz.analysis.attribution import attribute
from gpuviz.analysis.breakdown import breakdown
from gpuviz.analysis.breakdown_table import Breakdown, BreakdownRow
from gpuviz.analysis.compiled_regions import (
    attach_compile_info,
    compiled_origins,
)
from gpuviz.analysis.inductor_provenance import read_compile_info
from gpuviz.trace.kineto import load_trace
from tests.analysis import compiled_case as case
from tests.analysis.synthetic_trace import kineto_trace

DATA = Path(__file__).resolve().parents[1] / "data"
US = 1000
TOP = "OptimizedModule_0.Tiny_0"


def row(table: Breakdown, key: str) -> BreakdownRow:
    hits = [r for r in table.rows if r.key == key]
    assert len(hits) == 1, [r.key for r in table.rows]
    return hits[0]


@pytest.fixture
def compiled(tmp_path: Path):  # type: ignore[no-untyped-def]
    trace = kineto_trace(case.events(), tmp_path)
    attach_compile_info(trace, read_compile_info(case.write_compile_info(tmp_path / "ci")))
    return trace


def test_modules_from_compile_info(compiled) -> None:  # type: ignore[no-untyped-def]
    t = breakdown(compiled, "module")
    d = case.DUR
    b0, b1 = f"{TOP}.Block_0", f"{TOP}.Block_1"
    assert row(t, b0).device_total_ns == (d["gelu0"] + d["mm0"]) * US
    assert row(t, b1).device_total_ns == (d["gelu1"] + d["mm1"]) * US
    assert row(t, f"{b0}.Mlp_0").device_self_ns == d["gelu0"] * US
    assert row(t, f"{b0}.Mlp_0.Linear_0").device_self_ns == d["mm0"] * US
    assert row(t, f"{b1}.Mlp_1.Linear_1").device_self_ns == d["mm1"] * US
    # The compiled module keeps its total and gives its self time away.
    top = row(t, TOP)
    assert top.device_total_ns == sum(d.values()) * US
    assert top.device_self_ns == 0
    # Each kernel now counts in its block's row; host time there is unknown, not 0.
    j = row(t, f"{b1}.Mlp_1").to_json("module")
    assert j["cpu_self_us"] is None and j["cpu_total_us"] is None
    assert j["attribution_source"] == "compile-info" and j["calls"] == 1
    # forward/backward are totals: the Mlp holds its Linear.
    assert j["forward_device_us"] == d["gelu1"] + d["mm1"] and j["backward_device_us"] == 0
    per_row = {t.rows[i].key: int(t.kernels_of(i).size) for i in range(len(t.rows))}
    assert per_row[f"{b0}.Mlp_0"] == 1 and per_row[f"{b1}.Mlp_1.Linear_1"] == 1


def test_lines_from_compile_info(compiled) -> None:  # type: ignore[no-untyped-def]
    t = breakdown(compiled, "line")
    d = case.DUR
    assert row(t, f"{case.MODEL}:6").device_self_ns == (d["gelu0"] + d["gelu1"]) * US
    assert row(t, f"{case.MODEL}:5").device_self_ns == (d["mm0"] + d["mm1"]) * US
    call = row(t, "train.py:10")
    assert (call.device_self_ns, call.device_total_ns) == (0, sum(d.values()) * US)


def test_op_and_kernel_rows_name_their_fused_nodes(compiled) -> None:  # type: ignore[no-untyped-def]
    ops = breakdown(compiled, "op")
    g = row(ops, case.GELU).to_json("op")
    assert g["attribution_source"] == "compile-info"
    assert g["fused_nodes"] == ["erf", "erf_1", "mul", "mul_3"]
    assert g["fused_ops"] == ["erf", "mul"]
    assert g["modules"] == ["Block_0.Mlp_0", "Block_1.Mlp_1"]
    assert g["flops"] == 2 * case.GELU_FLOPS  # from its fused nodes (issue 49), by hand
    mm = row(ops, "aten::mm").to_json("op")
    assert mm["modules"] == ["Block_0.Mlp_0.Linear_0", "Block_1.Mlp_1.Linear_1"]
    k = row(breakdown(compiled, "kernel"), case.GELU).to_json("kernel")
    assert k["attribution_source"] == "compile-info"


def test_without_compile_info_names_only(tmp_path: Path) -> None:
    trace = kineto_trace(case.events(), tmp_path)
    t = breakdown(trace, "module")
    assert row(t, TOP).device_self_ns == sum(case.DUR.values()) * US
    assert not any(r.key.startswith(f"{TOP}.") for r in t.rows)
    g = row(breakdown(trace, "op"), case.GELU).to_json("op")
    assert (g["attribution_source"], g["fused_ops"]) == ("kernel-name", ["gelu"])
    assert "fused_nodes" not in g


def test_graph_told_by_kernel_names_when_hashes_differ(tmp_path: Path) -> None:
    # A compile-info folder from a rebuild (other hashes) still matches by kernel names.
    ev = case.events()
    for e in ev:
        if e.get("args", {}).get("kernel_hash"):
            e["args"]["kernel_hash"] = "cotherhash"
    trace = kineto_trace(ev, tmp_path)
    attach_compile_info(trace, read_compile_info(case.write_compile_info(tmp_path / "ci")))
    t = breakdown(trace, "module")
    assert row(t, f"{TOP}.Block_1").device_total_ns == (case.DUR["gelu1"] + case.DUR["mm1"]) * US


def _triton_time_us(path: Path) -> float:
    with gzip.open(path, "rt") as f:
        events = json.load(f)["traceEvents"]
    return sum(
        e["dur"] for e in events if e.get("cat") == "kernel" and e["name"].startswith("triton_")
    )


@pytest.mark.parametrize(
    "name", ["attribution/gpt_compile.json.gz", "tl__torch_compile_triton__trace.json.gz"]
)
def test_kernel_name_fallback_on_real_traces(name: str) -> None:
    path = DATA / name
    trace = load_trace(path)
    att = attribute(trace)
    origins = compiled_origins(att)
    # Every Triton kernel of the file (counted from its JSON) is known as compiled code, by name.
    named = origins.source == 3
    got_us = float(att.gpu_dur_ns[named].sum()) / US
    assert got_us == pytest.approx(_triton_time_us(path), rel=1e-6)
    assert origins.matched_share(att.gpu_dur_ns) == 0.0
    table = breakdown(trace, "kernel")
    for r in table.rows:
        j = r.to_json("kernel")
        assert (j.get("attribution_source") == "kernel-name") == r.key.startswith("triton_")


def test_kernel_name_fallback_ops_on_mi300x_trace() -> None:
    trace = load_trace(DATA / "tl__torch_compile_triton__trace.json.gz")
    ops = {r.key: r.to_json("op") for r in breakdown(trace, "op").rows}
    assert ops["triton_poi_fused__unsafe_view_mul_silu_2"]["fused_ops"] == [
        "_unsafe_view",
        "mul",
        "silu",
    ]
    # Extern GEMMs in the compiled region keep their shapes' FLOPs.
    assert ops["aten::mm"]["flops"] and ops["aten::mm"]["flops"] > 0


def test_timeline_details_and_advisor_evidence_name_the_block(compiled) -> None:  # type: ignore[no-untyped-def]
    from gpuviz.analysis.advisor.findings import Evidence, Finding
    from gpuviz.analysis.advisor.where import with_code
    from gpuviz.analysis.origin import kernel_origins

    att = attribute(compiled)
    names = compiled.symbols.lookup(compiled.slices.name[att.gpu_rows])
    mm1 = [int(att.gpu_rows[i]) for i, n in enumerate(names) if n == "nvjet_gemm"][1]
    got = kernel_origins(compiled, [mm1])[0]
    assert got is not None
    assert got.module == f"{TOP}.Block_1.Mlp_1.Linear_1"
    assert got.line == f"{case.MODEL}:5" and not got.outside
    # Evidence over the time of block 1's GEMM names its module and line.
    start = int(compiled.slices.start_ns[mm1])
    ev = Evidence(rank=None, device=0, start_ns=start, end_ns=start + 1)
    f = Finding("gemm", "info", "t", "d", "f", 0, "", 0.0, evidence=(ev,))
    filled = with_code(compiled, [f])[0].evidence[0]
    assert filled.modules == (f"{TOP}.Block_1.Mlp_1.Linear_1",)
    assert filled.lines == (f"{case.MODEL}:5",)


def test_module_flops_of_compiled_rows(compiled) -> None:  # type: ignore[no-untyped-def]
    from gpuviz.analysis.hardware import hardware
    from gpuviz.analysis.module_flops import annotate_modules

    t = breakdown(compiled, "module")
    annotate_modules(t, hardware(compiled), attribute(compiled))
    # Each Linear holds its one GEMM; the Mlp and Block above it that and their gelu kernel's
    # FLOPs (from the FX nodes it fuses); the compiled module all of them.
    for key in ("Block_0.Mlp_0.Linear_0", "Block_1.Mlp_1.Linear_1"):
        assert row(t, f"{TOP}.{key}").extra["flops"] == case.MM_FLOPS, key
    for key in ("Block_0.Mlp_0", "Block_0", "Block_1"):
        assert row(t, f"{TOP}.{key}").extra["flops"] == case.MM_FLOPS + case.GELU_FLOPS, key
    assert row(t, TOP).extra["flops"] == 2 * (case.MM_FLOPS + case.GELU_FLOPS)


def test_compiled_row_without_counted_calls_has_unknown_flops(tmp_path: Path) -> None:
    from gpuviz.analysis.hardware import hardware
    from gpuviz.analysis.module_flops import NO_COMPILED_FLOPS, annotate_modules

    ev = case.events()
    mms = [e for e in ev if e["name"] == "aten::mm"]
    mms[1]["args"] = {}  # block 1's GEMM recorded without shapes
    trace = kineto_trace(ev, tmp_path)
    folder = case.write_compile_info(tmp_path / "ci")
    # ... and its gelu kernel's mul node without one: no call of block 1 has known FLOPs.
    nodes_file = next(folder.rglob("gpuviz_nodes.json"))
    got = json.loads(nodes_file.read_text())
    got["nodes"]["mul_3"]["shape"] = None
    nodes_file.write_text(json.dumps(got))
    attach_compile_info(trace, read_compile_info(folder))
    t = breakdown(trace, "module")
    annotate_modules(t, hardware(trace), attribute(trace))
    b1 = row(t, f"{TOP}.Block_1").extra
    assert b1["flops"] is None and b1["mfu_note"] == NO_COMPILED_FLOPS
    assert row(t, f"{TOP}.Block_0").extra["flops"] == case.MM_FLOPS + case.GELU_FLOPS


def test_a_call_missing_from_the_trace_leaves_the_others_in_place(tmp_path: Path) -> None:
    # The profiler lost block 0's gelu op (and its kernel): the rest still match in order.
    ev = [e for e in case.events() if not (e["name"] == case.GELU and e["ts"] in (50, 350))]
    trace = kineto_trace(ev, tmp_path)
    attach_compile_info(trace, read_compile_info(case.write_compile_info(tmp_path / "ci")))
    t = breakdown(trace, "module")
    d = case.DUR
    assert row(t, f"{TOP}.Block_0").device_total_ns == d["mm0"] * US
    assert row(t, f"{TOP}.Block_1.Mlp_1").device_self_ns == d["gelu1"] * US
    assert row(t, f"{TOP}.Block_1.Mlp_1.Linear_1").device_self_ns == d["mm1"] * US


def test_step_flops_count_generated_kernels(tmp_path: Path) -> None:
    # Issue 49: the gelu kernels' FLOPs come from the FX nodes they fuse (one mul of 64 x 64
    # each, by hand), and their device time then counts as known in the step's coverage.
    from gpuviz.analysis.hardware import hardware

    trace = kineto_trace(case.events(), tmp_path)
    d = case.DUR
    (bare,) = hardware(trace).steps
    assert bare.flops == 2 * case.MM_FLOPS
    assert bare.coverage == pytest.approx((d["mm0"] + d["mm1"]) / sum(d.values()))
    attach_compile_info(trace, read_compile_info(case.write_compile_info(tmp_path / "ci")))
    (step,) = hardware(trace).steps
    assert step.flops == 2 * (case.MM_FLOPS + case.GELU_FLOPS)
    assert step.coverage == 1.0
    assert step.precisions == ["bf16"]


def test_op_rows_of_generated_kernels_carry_their_fused_flops(tmp_path: Path) -> None:
    trace = kineto_trace(case.events(), tmp_path)
    bare = row(breakdown(trace, "op"), case.GELU)
    assert bare.flops is None and "--compile-info" in bare.extra["flops_note"]
    attach_compile_info(trace, read_compile_info(case.write_compile_info(tmp_path / "ci")))
    got = row(breakdown(trace, "op"), case.GELU)
    assert got.calls == 2 and got.flops == 2 * case.GELU_FLOPS  # two calls, by hand


def test_hardware_knows_where_compile_info_is_kept() -> None:
    from gpuviz.analysis import compiled_regions, hardware

    assert hardware.COMPILE_INFO_KEY == compiled_regions.COMPILE_INFO_KEY
