"""Kernel-name fallback of compiled-code attribution: the ops an Inductor kernel's name says it
fuses, read by hand from the names Inductor wrote in the test traces."""

from __future__ import annotations

import pytest

from gpuviz.analysis.inductor_names import fused_ops, is_inductor_kernel, kernel_kind


@pytest.mark.parametrize(
    ("name", "ops", "kind"),
    [
        # MI300X trace (tl__torch_compile_triton__trace.json.gz)
        ("triton_poi_fused__unsafe_view_mul_silu_2", ["_unsafe_view", "mul", "silu"], "pointwise"),
        (
            "triton_red_fused_add_mean_mul_pow_rsqrt_0",
            ["add", "mean", "mul", "pow", "rsqrt"],
            "reduction",
        ),
        # H100 trace (attribution/gpt_compile.json.gz)
        (
            "triton_poi_fused_gelu_gelu_backward_view_7",
            ["gelu", "gelu_backward", "view"],
            "pointwise",
        ),
        (
            "triton_per_fused__to_copy_add_native_layer_norm_backward_view_10",
            ["_to_copy", "add", "native_layer_norm_backward", "view"],
            "persistent reduction",
        ),
        ("triton_poi_fused_embedding_0", ["embedding"], "pointwise"),
        # CPU (tests/data/compile/cpu_tiny): cpp kernels carry no kind
        (
            "cpp_fused_add_native_layer_norm_native_layer_norm_backward_view_5",
            ["add", "native_layer_norm", "native_layer_norm_backward", "view"],
            None,
        ),
        ("triton_tem_fused_mm_0", ["mm"], "template"),
    ],
)
def test_fused_ops_from_names(name: str, ops: list[str], kind: str | None) -> None:
    assert is_inductor_kernel(name)
    assert fused_ops(name) == ops
    assert kernel_kind(name) == kind


@pytest.mark.parametrize(
    "name",
    [
        "nvjet_sm90_tst_128x128_64x6_2x1_v_bz_NNT",
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>",
        "aten::mm",
        "triton_",  # no "fused_"
    ],
)
def test_other_kernels_are_not_inductor_kernels(name: str) -> None:
    assert not is_inductor_kernel(name)
    assert fused_ops(name) is None
