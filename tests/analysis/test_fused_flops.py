"""FLOPs and bytes of Inductor's generated kernels from the FX nodes they fuse (issue 49).

The truths are hand counts: a fused mm + bias add + gelu of known shapes, and the CPU
compile-info folder's gelu kernel (tests/data/compile/cpu_tiny).
"""

from __future__ import annotations

import math
from pathlib import Path

from gpuviz.analysis.fused_flops import fused_figures, node_flops
from gpuviz.analysis.inductor_graph import parse_annotation, read_fx_graph
from gpuviz.analysis.inductor_provenance import read_compile_info

DATA = Path(__file__).resolve().parents[1] / "data" / "compile"

# A Triton template kernel fusing mm + bias add + gelu (tanh-free: x/2 · (1 + erf(x/√2))),
# in the readable graph's form: x f16[128, 64] @ w f16[64, 32] + b f16[32].
READABLE = """class GraphModule(torch.nn.Module):
    def forward(self, x: "f16[128, 64]", w: "f16[64, 32]", b: "f16[32]"):
        # File: /m.py:3 in forward, code: y = gelu(x @ w + b)
        mm: "f16[128, 32]" = torch.ops.aten.mm.default(x, w);  x = w = None
        add: "f16[128, 32]" = torch.ops.aten.add.Tensor(mm, b);  mm = b = None
        mul: "f16[128, 32]" = torch.ops.aten.mul.Tensor(add, 0.5)
        mul_1: "f16[128, 32]" = torch.ops.aten.mul.Tensor(add, 0.7071067811865476);  add = None
        erf: "f16[128, 32]" = torch.ops.aten.erf.default(mul_1);  mul_1 = None
        add_1: "f16[128, 32]" = torch.ops.aten.add.Tensor(erf, 1);  erf = None
        mul_2: "f16[128, 32]" = torch.ops.aten.mul.Tensor(mul, add_1);  mul = add_1 = None
        return (mul_2,)
"""
GROUP = ("mm", "add", "mul", "mul_1", "erf", "add_1", "mul_2")
# By hand: mm 2·128·64·32; add, mul, mul_1, add_1, mul_2 one each per output element
# (128·32; erf has no formula, as an eager aten::erf has none).
HAND_FLOPS = 2 * 128 * 64 * 32 + 5 * 128 * 32
# Read x, w and b once, write mul_2 once (2 bytes an element); intermediates not counted.
HAND_BYTES = 2 * (128 * 64 + 64 * 32 + 32) + 2 * 128 * 32


def test_hand_counted_fused_mm_add_gelu() -> None:
    graph = read_fx_graph(READABLE, None, None)
    got = fused_figures(graph, GROUP)
    assert got.flops == HAND_FLOPS == 544768
    assert got.nbytes == HAND_BYTES == 28736
    assert got.precision == "fp16"
    assert got.input_dims == [[128, 64], [64, 32], [32]]
    assert got.note is None


def test_the_same_group_from_graph_fragments() -> None:
    # output_code.py's "# Graph fragment:" form (torch 2.10+): strides, %names, PlaceHolders.
    code = "\n".join(
        [
            "# Graph fragment:",
            '#   %x : Tensor "f16[128, 64][64, 1]cuda:0" = PlaceHolder[target=x]',
            '#   %w : Tensor "f16[64, 32][32, 1]cuda:0" = PlaceHolder[target=w]',
            '#   %b : Tensor "f16[32][1]cuda:0" = PlaceHolder[target=b]',
            '#   %mm : Tensor "f16[128, 32][32, 1]cuda:0"[num_users=1] = call_function['
            "target=torch.ops.aten.mm.default](args = (%x, %w), kwargs = {})",
            '#   %add : Tensor "f16[128, 32][32, 1]cuda:0"[num_users=2] = call_function['
            "target=torch.ops.aten.add.Tensor](args = (%mm, %b), kwargs = {})",
            '#   %mul : Tensor "f16[128, 32][32, 1]cuda:0"[num_users=1] = call_function['
            "target=torch.ops.aten.mul.Tensor](args = (%add, 0.5), kwargs = {})",
            '#   %mul_1 : Tensor "f16[128, 32][32, 1]cuda:0"[num_users=1] = call_function['
            "target=torch.ops.aten.mul.Tensor](args = (%add, 0.7071067811865476), kwargs = {})",
            '#   %erf : Tensor "f16[128, 32][32, 1]cuda:0"[num_users=1] = call_function['
            "target=torch.ops.aten.erf.default](args = (%mul_1,), kwargs = {})",
            '#   %add_1 : Tensor "f16[128, 32][32, 1]cuda:0"[num_users=1] = call_function['
            "target=torch.ops.aten.add.Tensor](args = (%erf, 1), kwargs = {})",
            '#   %mul_2 : Tensor "f16[128, 32][32, 1]cuda:0"[num_users=1] = call_function['
            "target=torch.ops.aten.mul.Tensor](args = (%mul, %add_1), kwargs = {})",
            "#   return %mul_2",
        ]
    )
    # The fragment alone: its PlaceHolders are what is read, its return what is written.
    graph = read_fx_graph(None, code, None)
    got = fused_figures(graph, GROUP)
    assert (got.flops, got.nbytes) == (HAND_FLOPS, HAND_BYTES)


def test_a_missing_shape_is_unknown_not_zero() -> None:
    # mul's and mul_2's annotations lost: mul_2's FLOPs (one per output element) cannot be
    # counted, from its inputs or its output.
    text = READABLE.replace('mul_2: "f16[128, 32]" = ', "mul_2 = ")
    text = text.replace('mul: "f16[128, 32]" = ', "mul = ")
    got = fused_figures(read_fx_graph(text, None, None), GROUP)
    assert math.isnan(got.flops) and got.flops != 0
    assert got.note is not None and "mul_2" in got.note
    # An input of unknown size: the bytes are unknown too.
    text = READABLE.replace('w: "f16[64, 32]"', "w")
    got = fused_figures(read_fx_graph(text, None, None), GROUP)
    assert math.isnan(got.flops) and math.isnan(got.nbytes)


def test_nodes_the_files_do_not_describe() -> None:
    graph = read_fx_graph(READABLE, None, None)
    got = fused_figures(graph, ("not_a_node", "neither"))
    assert math.isnan(got.flops) and math.isnan(got.nbytes)
    assert got.note is not None and got.note.startswith("unknown")
    # A name among known ones is left out, and said.
    got = fused_figures(graph, (*GROUP, "linear_14"))
    assert got.flops == HAND_FLOPS
    assert got.note is not None and "1 of" in got.note


def test_a_cast_only_kernel_has_zero_known_flops() -> None:
    text = """class GraphModule(torch.nn.Module):
    def forward(self, p: "f32[256, 256]"):
        c: "bf16[256, 256]" = torch.ops.prims.convert_element_type.default(p, torch.bfloat16)
        return (c,)
"""
    got = fused_figures(read_fx_graph(text, None, None), ("c",))
    # Known: every node is described, and none has a FLOP formula (an eager copy has none).
    assert got.flops == 0.0
    assert got.nbytes == 256 * 256 * (4 + 2)


def test_an_embedding_reads_the_rows_it_gathers() -> None:
    text = """class GraphModule(torch.nn.Module):
    def forward(self, table: "f32[50000, 256]", idx: "i64[8, 128]"):
        embedding: "f32[8, 128, 256]" = torch.ops.aten.embedding.default(table, idx)
        return (embedding,)
"""
    got = fused_figures(read_fx_graph(text, None, None), ("embedding",))
    rows = 8 * 128 * 256 * 4
    assert got.nbytes == rows + 8 * 128 * 8 + rows  # gathered rows, indices, output


def test_annotations() -> None:
    assert parse_annotation("bf16[1024, 768][768, 1]cuda:0") == ((1024, 768), "bf16")
    assert parse_annotation("f32[]") == ((), "f32")
    assert parse_annotation("f32[s0, 256]") == (None, "f32")


def test_node_flops_needs_the_args_shapes_for_a_gemm() -> None:
    graph = read_fx_graph(READABLE, None, None)
    assert node_flops(graph, graph.nodes["mm"]) == 2 * 128 * 64 * 32
    assert node_flops(graph, graph.nodes["erf"]) == 0.0
    text = READABLE.replace('x: "f16[128, 64]"', "x")
    graph = read_fx_graph(text, None, None)
    assert node_flops(graph, graph.nodes["mm"]) is None


def test_cpu_tiny_gelu_kernel_by_hand() -> None:
    # scripts/compile_info_cpu.py: Mlp(fc 32 -> 128, gelu, proj) on x [4, 16, 32], fp32. The
    # gelu kernel fuses view_1, mul_2, mul_3, erf, add_2, mul_4 over [4, 16, 128]: four nodes
    # with a formula (3 mul, 1 add), one FLOP an element each; it reads addmm ([64, 128])
    # and writes mul_4 (its user view_2 is outside it).
    info = read_compile_info(DATA / "cpu_tiny")
    fwd = next(g for g in info.graphs if not g.backward)
    calls = [c for c in fwd.calls if c.name == "cpp_fused_gelu_view_1"]
    assert len(calls) == 2  # one per block
    n = 4 * 16 * 128
    for call in calls:
        got = fused_figures(fwd.fx, call.nodes)
        assert got.flops == 4 * n
        assert got.nbytes == 2 * n * 4
    # Every generated kernel of both graphs is known (the folder describes all their nodes).
    for g in info.graphs:
        for call in g.calls:
            if not call.extern:
                assert not math.isnan(fused_figures(g.fx, call.nodes).flops), call.name


def test_a_split_reduction_counts_its_nodes_once() -> None:
    # Inductor splits a large reduction in two kernels (partial sums, then their sum) and
    # names the same nodes for both: mul's 1024·256 FLOPs belong to the graph's run once.
    text = """class GraphModule(torch.nn.Module):
    def forward(self, a: "f32[1024, 256]", b: "f32[1024, 256]"):
        mul: "f32[1024, 256]" = torch.ops.aten.mul.Tensor(a, b)
        sum_1: "f32[256]" = torch.ops.aten.sum.dim_IntList(mul, [0])
        return (sum_1,)
"""
    graph = read_fx_graph(text, None, None)
    counted: set[str] = set()
    first = fused_figures(graph, ("mul", "sum_1"), counted=counted)
    second = fused_figures(graph, ("mul", "sum_1"), counted=counted)
    assert first.flops == 1024 * 256
    assert second.flops == 0.0
    assert second.note is not None and "split reduction" in second.note
    # Without the graph's tally each call counts its nodes (what a lone call does).
    assert fused_figures(graph, ("mul", "sum_1")).flops == 1024 * 256
