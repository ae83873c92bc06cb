"""FLOPs and bytes of ops from their recorded shapes: hand counts, real traces, torch's formula."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from gpuviz.analysis.dtypes import element_bytes, op_precision, precision_of_type
from gpuviz.analysis.flops import (
    COMPOSITE_OPS,
    attention_flops,
    composite_flops,
    conv_flops,
    matmul_flops,
    op_bytes,
    op_flops,
    parse_concrete,
)
from gpuviz.analysis.op_args import ATTENTION_LEAVES, ATTENTION_PARENTS, CONV_LEAVES

DATA = Path(__file__).parent.parent / "data"
BF, F32 = "c10::BFloat16", "float"


def _ci(*values: str) -> dict[str, list[str]]:
    return {"Concrete Inputs": list(values)}


# -- GEMMs -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "dims", "expected"),
    [
        ("aten::mm", [[64, 32], [32, 48]], 2 * 64 * 32 * 48),
        ("aten::addmm", [[48], [64, 32], [32, 48], [], []], 2 * 64 * 32 * 48),
        ("aten::addmm", [[768], [788, 768], [768, 768], [], []], 2 * 788 * 768 * 768),
        ("aten::_addmm_activation", [[48], [64, 32], [32, 48], [], [], []], 2 * 64 * 32 * 48),
        ("aten::bmm", [[4, 64, 32], [4, 32, 48]], 2 * 4 * 64 * 32 * 48),
        ("aten::baddbmm", [[4, 64, 48], [4, 64, 32], [4, 32, 48], [], []], 2 * 4 * 64 * 32 * 48),
        ("aten::addbmm", [[64, 48], [4, 64, 32], [4, 32, 48], [], []], 2 * 4 * 64 * 32 * 48),
        ("aten::mv", [[64, 32], [32]], 2 * 64 * 32),
        ("aten::addmv", [[64], [64, 32], [32], [], []], 2 * 64 * 32),
        ("aten::dot", [[100], [100]], 200),
        ("aten::_scaled_mm", [[128, 256], [256, 512], [], [], [], [], [], []], 2 * 128 * 256 * 512),
        ("aten::_int_mm", [[32, 64], [64, 16]], 2 * 32 * 64 * 16),
    ],
)
def test_gemm_hand_counts(name: str, dims: list, expected: int) -> None:
    assert op_flops(name, dims, [BF] * len(dims)) == expected


@pytest.mark.parametrize(
    ("name", "dims"),
    [
        ("aten::mm", [[64, 32], [31, 48]]),  # inner sizes differ
        ("aten::mm", [[64, 32], []]),  # a scalar
        ("aten::bmm", [[4, 64, 32], [3, 32, 48]]),  # batches differ
        ("aten::mm", []),  # no shapes recorded
    ],
)
def test_gemm_bad_shapes_are_none(name: str, dims: list) -> None:
    assert op_flops(name, dims, []) is None


def test_parents_count_nothing_and_composite_flops_counts_them() -> None:
    # linear -> addmm, matmul -> mm: a sum over the op tree must count the GEMM once.
    linear = [[4, 197, 768], [3072, 768], [3072]]
    assert op_flops("aten::linear", linear, [BF] * 3) is None
    assert composite_flops("aten::linear", linear) == 2 * 4 * 197 * 768 * 3072
    assert op_flops("aten::matmul", [[4, 64, 32], [32, 48]], [F32] * 2) is None
    assert composite_flops("aten::matmul", [[4, 64, 32], [32, 48]]) == 2 * 4 * 64 * 32 * 48
    assert "aten::linear" in COMPOSITE_OPS and "aten::mm" not in COMPOSITE_OPS


def test_matmul_broadcasts() -> None:
    assert matmul_flops([2, 1, 8, 16], [3, 16, 4]) == 2 * 6 * 8 * 16 * 4
    assert matmul_flops([16], [16, 4]) == 2 * 16 * 4
    assert matmul_flops([2, 8, 16], [3, 16, 4]) is None
    assert matmul_flops([8, 16], [15, 4]) is None


def test_kineto_flops_arg_is_used_on_counted_ops_only() -> None:
    dims = [[64, 32], [32, 48]]
    assert op_flops("aten::mm", dims, [F32] * 2, {"flops": 12345}) == 12345
    # on an elementwise op torch gives none (relu) or a parent, Kineto's count would add to
    # its children's; aten::mul is counted as torch counts it (one per output element)
    assert op_flops("aten::relu", [[64, 32]], [F32], {"flops": 2048}) is None
    assert op_flops("aten::mul", [[64, 32], [64, 32]], [F32] * 2, {"flops": 2048}) == 2048
    assert op_flops("aten::conv2d", [[1, 3, 8, 8], [4, 3, 3, 3]], [F32] * 2, {"flops": 9}) is None


# -- convolutions ----------------------------------------------------------------------------


def test_conv_hand_counts() -> None:
    # 2 · N · output positions · weight elements; output 8x8 for 16x16, stride 2, padding 1
    assert conv_flops([2, 3, 16, 16], [8, 3, 3, 3], 2, 1, 1) == 2 * 2 * 64 * (8 * 3 * 9)
    # groups are in the weight: [C_out, C_in/groups, k, k]
    assert conv_flops([2, 8, 10, 10], [8, 2, 3, 3]) == 2 * 2 * 64 * (8 * 2 * 9)
    # dilation 2: a 3x3 kernel spans 5
    assert conv_flops([1, 1, 9, 9], [1, 1, 3, 3], 1, 0, 2) == 2 * 25 * 9
    assert conv_flops([1, 4, 9, 9], [4, 4, 3, 3], 1, "same") == 2 * 81 * 144
    assert conv_flops([1, 4, 9, 9], [4, 4, 3, 3], 1, "valid") == 2 * 49 * 144
    # transposed: the input positions
    assert conv_flops([2, 8, 5, 5], [8, 4, 3, 3], transposed=True) == 2 * 2 * 25 * 288
    assert conv_flops([1, 1, 2, 2], [1, 1, 3, 3]) is None  # no output


def test_conv_leaves_read_their_own_argument_order() -> None:
    x, w = [4, 3, 224, 224], [768, 3, 16, 16]  # a ViT patch embedding (real trace)
    vit = 2 * 4 * 14 * 14 * 768 * 3 * 16 * 16
    # cudnn_convolution(input, weight, padding, stride, dilation, groups, …)
    cudnn = _ci("", "", "[0, 0]", "[16, 16]", "[1, 1]", "1", "False", "False", "True")
    assert (
        op_flops("aten::cudnn_convolution", [x, w, [], [], [], [], [], [], []], [BF] * 2, cudnn)
        == vit
    )
    # mkldnn_convolution(input, weight, bias, padding, stride, dilation, groups)
    mkl = _ci("", "", "", "[0, 0]", "[16, 16]", "[1, 1]", "1")
    assert op_flops("aten::mkldnn_convolution", [x, w, [768], [], [], [], []], [BF] * 3, mkl) == vit
    # the parents: none, but composite_flops gives the same figure
    conv2d = _ci("", "", "", "[16, 16]", "[0, 0]", "[1, 1]", "1")
    assert op_flops("aten::conv2d", [x, w, [768]], [BF] * 3, conv2d) is None
    assert composite_flops("aten::conv2d", [x, w, [768]], conv2d) == vit
    # without Concrete Inputs the output size is unknown
    assert op_flops("aten::cudnn_convolution", [x, w], [BF] * 2) is None


def test_conv_backward_counts_the_gradients_asked_for() -> None:
    dims = [[2, 8, 8, 8], [2, 3, 16, 16], [8, 3, 3, 3]]
    forward = 2 * 2 * 64 * (8 * 3 * 9)
    both = _ci(
        "",
        "",
        "",
        "[0]",
        "[2, 2]",
        "[1, 1]",
        "[1, 1]",
        "False",
        "[0, 0]",
        "1",
        "[True, True, False]",
    )
    weight_only = dict(
        both, **{"Concrete Inputs": [*both["Concrete Inputs"][:10], "[False, True, True]"]}
    )
    assert op_flops("aten::convolution_backward", dims, [F32] * 3, both) == 2 * forward
    assert op_flops("aten::convolution_backward", dims, [F32] * 3, weight_only) == forward
    assert op_flops("aten::convolution_backward", dims, [F32] * 3) == 2 * forward  # no mask: both


# -- attention -------------------------------------------------------------------------------


def test_attention_hand_counts() -> None:
    b, h, s, d = 8, 16, 2048, 128
    q = [b, h, s, d]
    forward = 4 * b * h * s * s * d
    assert attention_flops(q, q) == forward
    assert attention_flops(q, q, causal=True) == forward // 2
    assert attention_flops(q, q, backward=True) == forward * 5 // 2
    assert attention_flops(q, q, backward=True, causal=True) == forward * 5 // 4
    # cross attention, a value head size of its own, and the [B, S, H, D] layout
    assert (
        attention_flops([2, 4, 10, 64], [2, 4, 30, 64], [2, 4, 30, 32]) == 2 * 2 * 4 * 10 * 30 * 96
    )
    assert (
        attention_flops([2, 10, 4, 64], [2, 30, 4, 64], layout="BSHD") == 4 * 2 * 4 * 10 * 30 * 64
    )
    # grouped-query attention: query heads count
    assert attention_flops([1, 32, 16, 64], [1, 8, 16, 64]) == 4 * 32 * 16 * 16 * 64
    assert attention_flops([100, 4, 64], [100, 4, 64], layout="BSHD") is None  # varlen: packed


def test_attention_ops_read_is_causal_where_each_keeps_it() -> None:
    q_bhsd, q_bshd = [4, 12, 197, 64], [4, 197, 12, 64]
    full = 4 * 4 * 12 * 197 * 197 * 64
    # real Concrete Inputs (TraceLens' H100 ViT trace): flash forward, not causal
    flash = _ci("", "", "", "", "", "197", "197", "0.", "False", "False", "0.125", "", "", "", "")
    assert op_flops("aten::_flash_attention_forward", [q_bshd] * 3, [BF] * 3, flash) == full
    causal = dict(
        flash,
        **{
            "Concrete Inputs": [
                *flash["Concrete Inputs"][:8],
                "True",
                *flash["Concrete Inputs"][9:],
            ]
        },
    )
    assert op_flops("aten::_flash_attention_forward", [q_bshd] * 3, [BF] * 3, causal) == full // 2
    # the wrapper around it counts nothing (its child does)
    wrapper = _ci("", "", "", "0.", "True", "False", "0.125")
    assert (
        op_flops("aten::_scaled_dot_product_flash_attention", [q_bhsd] * 3, [BF] * 3, wrapper)
        is None
    )
    assert (
        composite_flops("aten::_scaled_dot_product_flash_attention", [q_bhsd] * 3, wrapper)
        == full // 2
    )
    # efficient attention: custom_mask_type 1 (causal from the top left)
    eff = ["", "", "", "", "", "", "", "", "0.", "1", "False", "", "", ""]
    assert (
        op_flops("aten::_efficient_attention_forward", [q_bshd] * 3, [BF] * 3, _ci(*eff))
        == full // 2
    )
    eff[9] = "0"
    assert op_flops("aten::_efficient_attention_forward", [q_bshd] * 3, [BF] * 3, _ci(*eff)) == full
    # backward: q at index 1, 2.5x
    bwd = [""] * 17
    bwd[11] = "False"
    dims = [q_bshd] * 6
    assert op_flops("aten::_flash_attention_backward", dims, [BF] * 6, _ci(*bwd)) == full * 5 // 2
    # cuDNN (real Concrete Inputs of tests/data/attribution/tinylm_train, torch 2.11): the
    # kernels run under _cudnn_attention_forward/backward; the _scaled_dot_product_ op around
    # each counts only at the parent (composite_flops), for older torch that had no leaf
    cudnn_fwd = _ci("", "", "", "", "", "", "197", "197", "True", "0.", "True", "False", "")
    assert (
        op_flops("aten::_cudnn_attention_forward", [q_bhsd] * 3, [BF] * 3, cudnn_fwd) == full // 2
    )
    cudnn_fwd["Concrete Inputs"][10] = "False"
    assert op_flops("aten::_cudnn_attention_forward", [q_bhsd] * 3, [BF] * 3, cudnn_fwd) == full
    cudnn_bwd = _ci(*[""] * 11, "197", "197", "0.", "True", "")
    bwd6 = [q_bhsd] * 5 + [[4, 12, 197, 1]]
    assert op_flops("aten::_cudnn_attention_backward", bwd6, [BF] * 6, cudnn_bwd) == full * 5 // 4
    outer_bwd = "aten::_scaled_dot_product_cudnn_attention_backward"
    assert op_flops(outer_bwd, bwd6, [BF] * 6, cudnn_bwd) is None
    assert composite_flops(outer_bwd, bwd6, cudnn_bwd) == full * 5 // 4
    outer_fwd = _ci("", "", "", "", "True", "0.", "True", "False", "")
    assert op_flops("aten::_scaled_dot_product_cudnn_attention", [q_bhsd] * 3, [BF] * 3) is None
    assert (
        composite_flops("aten::_scaled_dot_product_cudnn_attention", [q_bhsd] * 3, outer_fwd)
        == full // 2
    )
    # sdpa and the math path decompose into their children
    assert op_flops("aten::scaled_dot_product_attention", [q_bhsd] * 3, [BF] * 3) is None
    assert op_flops("aten::_scaled_dot_product_attention_math", [q_bhsd] * 3, [BF] * 3) is None


def test_argument_positions_match_torch_schemas() -> None:
    """The tables' argument indices, against the schemas of the torch installed here."""
    torch = pytest.importorskip("torch")
    checked = 0

    def schema_args(name: str) -> list[str] | None:
        try:
            packet = getattr(torch.ops.aten, name.removeprefix("aten::"))
        except (AttributeError, RuntimeError):
            return None
        return [a.name for a in packet.default._schema.arguments]

    for name, spec in {**ATTENTION_LEAVES, **ATTENTION_PARENTS}.items():
        names = schema_args(name)
        if names is None:
            continue
        assert names[spec.q] in ("query", "q"), name
        assert names[spec.q + 1] in ("key", "k"), name
        assert names[spec.causal] == ("custom_mask_type" if spec.mask_type else "is_causal"), name
        checked += 1
    for name, conv in CONV_LEAVES.items():
        names = schema_args(name)
        if names is None or conv == "transposed":
            continue
        for index, arg in zip(conv, ("stride", "padding", "dilation")):
            if index is not None:
                assert names[index] == arg, (name, index, names)
        checked += 1
    names = schema_args("aten::convolution_backward")
    if names is not None:
        assert (names[7], names[10]) == ("transposed", "output_mask")
    assert checked >= 10


# -- types and bytes -------------------------------------------------------------------------


def test_element_sizes_and_precision_classes() -> None:
    assert element_bytes("c10::BFloat16") == 2
    assert element_bytes("float") == 4
    assert element_bytes("c10::Float8_e4m3fn") == 1
    assert element_bytes("long int") == 8
    assert element_bytes("Scalar") is None and element_bytes("") is None
    assert precision_of_type("c10::Half") == "fp16"
    assert precision_of_type("long int") == "other"
    assert precision_of_type("TensorList") is None
    assert op_precision([BF, BF, BF, "Scalar", "Scalar"]) == "bf16"
    assert op_precision(["float", "float"]) == "fp32"
    # fp32 with a TF32 kernel: cuBLAS/CUTLASS names say so
    assert op_precision(["float", "float"], ["sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n"]) == "tf32"
    # an fp8 GEMM with an fp32 scale: the operands decide
    assert op_precision(["c10::Float8_e4m3fn", "c10::Float8_e4m3fn", "float", "float"]) == "fp8"
    assert op_precision(["long int", "Scalar"]) == "other"
    assert op_precision([[BF, BF], "Scalar"]) == "other"  # a TensorList's types are not strings


def test_parse_concrete() -> None:
    assert parse_concrete("True") is True
    assert parse_concrete("0.") == 0.0
    assert parse_concrete("[2, 2]") == [2, 2]
    assert parse_concrete("[True, True, False]") == [True, True, False]
    assert parse_concrete("") is None
    assert parse_concrete("same") == "same"


def test_bytes_lower_bounds() -> None:
    # elementwise: inputs read, an output the size of the largest input written
    assert (
        op_bytes("aten::add", [[4, 197, 768], [1, 197, 768], []], [BF, BF, "Scalar"])
        == ((4 * 197 * 768 + 197 * 768) + 4 * 197 * 768) * 2
    )
    # in place: writes its first input
    assert (
        op_bytes("aten::add_", [[4, 768, 14, 14], [1, 768, 1, 1], []], [BF, BF, "Scalar"])
        == (2 * 4 * 768 * 196 + 768) * 2
    )
    # comparisons write bools
    assert op_bytes("aten::eq", [[1, 141], []], ["long int", "Scalar"]) == 141 * 8 + 141
    # copy_(dst, src): src read, dst written; bf16 from fp32
    assert op_bytes("aten::copy_", [[256, 10], [256, 10], []], [BF, F32, "Scalar"]) == 2560 * 6
    assert op_bytes("aten::fill_", [[256, 10], []], [F32, "Scalar"]) == 2560 * 4
    # reduction: the input read (the output, at most as large, is left out)
    assert (
        op_bytes("aten::sum", [[256, 10], [], [], []], [F32, "ScalarList", "Scalar", ""])
        == 2560 * 4
    )
    # a norm: input, weight, bias read; output of the input's size written
    ln = [[4, 197, 768], [], [768], [768], []]
    assert (
        op_bytes("aten::native_layer_norm", ln, [BF, "ScalarList", BF, BF, "Scalar"])
        == (2 * 4 * 197 * 768 + 2 * 768) * 2
    )
    # GEMM: operands in, product out
    assert op_bytes("aten::mm", [[64, 32], [32, 48]], [BF, BF]) == (64 * 32 + 32 * 48 + 64 * 48) * 2
    # parents and unknown ops: None
    assert op_bytes("aten::layer_norm", ln, [BF, "ScalarList", BF, BF, "Scalar"]) is None
    assert op_bytes("aten::_to_copy", [[256, 10], [], []], [F32, "Scalar", "Scalar"]) is None
    assert (
        op_bytes("aten::index_select", [[30522, 512], [], [141]], [BF, "Scalar", "long int"])
        is None
    )
    assert op_bytes("aten::add", [[4, 4]], ["TensorList"]) is None


def test_attention_and_conv_bytes() -> None:
    q = [1, 2, 16, 8]
    ci = _ci("", "", "", "0.", "True", "", "")
    assert (
        op_bytes("aten::_scaled_dot_product_flash_attention_for_cpu", [q] * 3, [F32] * 3, ci)
        == 4 * 256 * 4
    )
    x, w = [2, 3, 16, 16], [8, 3, 3, 3]
    mkl = _ci("", "", "", "[1, 1]", "[2, 2]", "[1, 1]", "1")
    assert (
        op_bytes("aten::mkldnn_convolution", [x, w, []], [F32, F32, ""], mkl)
        == (2 * 3 * 256 + 8 * 27 + 2 * 8 * 64) * 4
    )


# -- real traces -----------------------------------------------------------------------------


def test_real_trace_shapes_give_figures() -> None:
    """Every op of TraceLens' H100 ViT trace: the GEMMs, convolution and attention counted at
    their leaf, once: linear/conv2d/sdpa parents give None."""
    with gzip.open(DATA / "tl__h100__Falconsai_nsfw_image_detection__1016002.json.gz", "rt") as f:
        events = json.load(f)["traceEvents"]
    counted: dict[str, int] = {}
    for e in events:
        a = e.get("args", {})
        if e.get("cat") == "cpu_op" and "Input Dims" in a:
            n = op_flops(e["name"], a["Input Dims"], a["Input type"], a)
            if n is not None:
                counted[e["name"]] = counted.get(e["name"], 0) + 1
    assert set(counted) == {
        "aten::addmm",
        "aten::cudnn_convolution",
        "aten::_flash_attention_forward",
        "aten::add",  # one FLOP an output element, as torch's profiler counts it
    }


# -- issue 47: add/mul as torch counts them, torch 1.x convolutions, bad shapes ----------------


def test_add_and_mul_one_flop_an_output_element_as_torch() -> None:
    # torch's key_averages (with_flops) gave 512 for each of these on a [32, 16] tensor
    assert op_flops("aten::add", [[32, 16], [32, 16], []], [F32, F32, "Scalar"]) == 512
    assert op_flops("aten::mul", [[32, 16], []], [F32, "Scalar"]) == 512
    # the output is the broadcast shape, whichever input is larger
    assert op_flops("aten::add", [[16], [8, 32, 16], []], [F32, F32, "Scalar"]) == 8 * 32 * 16
    assert op_flops("aten::add", [[], [], []], ["long int", "long int", "Scalar"]) == 1  # 0-d
    assert op_flops("aten::add", [[3, 4], [5, 4], []], [F32, F32, "Scalar"]) is None
    assert op_flops("aten::add_", [[32, 16], [32, 16], []], [F32, F32, "Scalar"]) is None


def test_torch_1_9_convolutions_by_hand() -> None:
    """cudnn_convolution_backward_input/_weight are the forward figure each; with no Concrete
    Inputs the forward's output comes from a backward of the same shapes."""
    from gpuviz.analysis.flops import ConvHints

    x, w, out = [32, 64, 56, 56], [64, 64, 3, 3], [32, 64, 56, 56]
    forward = 2 * 32 * 56 * 56 * 64 * 64 * 9
    dims_in = [[], out, w, [], [], [], [], [], [], []]
    assert op_flops("aten::cudnn_convolution_backward_input", dims_in, []) == forward
    hints = ConvHints()
    hints.add(x, out, w)
    dims_w = [[], out, x, [], [], [], [], [], [], []]
    assert op_flops("aten::cudnn_convolution_backward_weight", dims_w, []) is None
    assert op_flops("aten::cudnn_convolution_backward_weight", dims_w, [], hints=hints) == forward
    fwd = [x, w, [], [], [], [], [], [], []]
    assert op_flops("aten::cudnn_convolution", fwd, []) is None  # stride, padding unknown
    assert op_flops("aten::cudnn_convolution", fwd, [], hints=hints) == forward
    # a 1x1 of the same input and output shapes: the forward (its weight recorded) is still
    # known, a weight-gradient half is not (op_calls then reads its own parent's weight)
    hints.add(x, out, [64, 64, 1, 1])
    assert op_flops("aten::cudnn_convolution", fwd, [], hints=hints) == forward
    assert op_flops("aten::cudnn_convolution_backward_weight", dims_w, [], hints=hints) is None


def test_shapes_past_any_tensor_give_no_figures() -> None:
    huge = [[10**200, 10**200], [10**200, 10**200]]
    assert op_flops("aten::mm", huge, [F32] * 2) is None
    assert op_bytes("aten::mm", huge, [F32] * 2) is None
    assert op_bytes("aten::add", [[10**200], [10**200], []], [F32, F32, "Scalar"]) is None
