"""Which aten ops do what work, and where each keeps its arguments.

The tables :mod:`gpuviz.analysis.flops` counts by: GEMMs and their operands, convolutions and
the ``Concrete Inputs`` index of their stride, padding and dilation, attention ops and the index
of their query and ``is_causal``, the parents that call them (:data:`COMPOSITE_OPS`), and the
elementwise, reduction and write-only ops whose bytes are counted. Indices follow torch's
``native_functions.yaml``; ``tests/analysis/test_flops.py`` checks them against the schemas of
the installed torch. Also the parsing of ``Input Dims`` entries and ``Concrete Inputs`` text.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

Dims = Sequence[Any]

# -- op tables -------------------------------------------------------------------------------

GEMMS: dict[str, tuple[int, int]] = {
    # name -> (index of the left operand, index of the right operand)
    "aten::mm": (0, 1),
    "aten::addmm": (1, 2),
    "aten::_addmm_activation": (1, 2),
    "aten::_scaled_mm": (0, 1),
    "aten::_int_mm": (0, 1),
    "aten::bmm": (0, 1),
    "aten::baddbmm": (1, 2),
    "aten::addbmm": (1, 2),
    "aten::mv": (0, 1),
    "aten::addmv": (1, 2),
    "aten::dot": (0, 1),
    "aten::vdot": (0, 1),
}

# Convolution ops that launch kernels: name -> (stride, padding, dilation) argument indices
# (None: not an argument, 1 everywhere), or "transposed" (positions come from the input).
CONV_LEAVES: dict[str, tuple[int | None, int | None, int | None] | str] = {
    "aten::cudnn_convolution": (3, 2, 4),
    "aten::cudnn_convolution_relu": (3, 4, 5),
    "aten::cudnn_convolution_add_relu": (5, 6, 7),
    "aten::cudnn_convolution_transpose": "transposed",
    "aten::miopen_convolution": (4, 3, 5),
    "aten::miopen_depthwise_convolution": (4, 3, 5),
    "aten::miopen_convolution_relu": (3, 4, 5),
    "aten::miopen_convolution_add_relu": (5, 6, 7),
    "aten::miopen_convolution_transpose": "transposed",
    "aten::mkldnn_convolution": (4, 3, 5),
    "aten::_mps_convolution": (4, 3, 5),
    "aten::_slow_conv2d_forward": (4, 5, None),
    "aten::slow_conv3d_forward": (4, 5, None),
    "aten::slow_conv_dilated2d": (4, 5, 6),
    "aten::slow_conv_dilated3d": (4, 5, 6),
    "aten::_conv_depthwise2d": (4, 5, 6),
    "aten::conv_depthwise3d": (4, 5, 6),
    "aten::_nnpack_spatial_convolution": (4, 3, None),
    "aten::slow_conv_transpose2d": "transposed",
    "aten::slow_conv_transpose3d": "transposed",
}

# The parents of those (counted by composite_flops only): (stride, padding, dilation, transposed).
CONV_PARENTS: dict[str, tuple[int, int, int, int | None]] = {
    "aten::conv1d": (3, 4, 5, None),
    "aten::conv2d": (3, 4, 5, None),
    "aten::conv3d": (3, 4, 5, None),
    "aten::convolution": (3, 4, 5, 6),
    "aten::_convolution": (3, 4, 5, 6),
    "aten::convolution_overrideable": (3, 4, 5, 6),
}
CONV_TRANSPOSE_PARENTS = frozenset(
    {"aten::conv_transpose1d", "aten::conv_transpose2d", "aten::conv_transpose3d"}
)

CONV_BACKWARDS = frozenset(
    {"aten::convolution_backward", "aten::convolution_backward_overrideable"}
)

# The convolution backwards of torch before 1.11 (``aten::convolution_backward`` came then):
# ``(self, grad_output, weight, …)`` -> the index of ``output_mask``. They call their halves
# below, which launch the kernels; a trace that lost the halves counts them here instead.
OLD_CONV_BACKWARDS: dict[str, int] = {
    "aten::cudnn_convolution_backward": 10,
    "aten::miopen_convolution_backward": 9,
    "aten::mkldnn_convolution_backward": 7,
}
# Their halves: ``(int[] self_size, grad_output, weight, …)`` for the input gradient,
# ``(int[] weight_size, grad_output, self, …)`` for the weight gradient (whose weight shape is
# not recorded: it comes from the parent's, see ``ConvHints``).
OLD_CONV_HALVES: dict[str, str] = {
    "aten::cudnn_convolution_backward_input": "input",
    "aten::cudnn_convolution_backward_weight": "weight",
    "aten::miopen_convolution_backward_input": "input",
    "aten::miopen_convolution_backward_weight": "weight",
    "aten::mkldnn_convolution_backward_input": "input",
    "aten::mkldnn_convolution_backward_weights": "weight",
}

ELEMENTWISE_FLOPS = frozenset({"aten::add", "aten::mul"})
"""The elementwise ops torch's profiler gives FLOPs (``with_flops=True``, ``key_averages``):
one per output element. In-place forms and other elementwise ops have none there, nor here."""

MAX_ELEMENTS = 2**40
"""More elements than any tensor of a real run holds (a 2**40-element bf16 tensor is 2 TiB):
a shape past it is bad data, and its call is skipped rather than counted (issue 47)."""

MAX_CALL_FLOPS = 2.0**60
"""More FLOPs than one op call does (about 10**18: 200 s of a 5 PFLOP/s device): a figure past
it (Kineto's ``flops``, or shapes near :data:`MAX_ELEMENTS`) is bad data."""


class AttentionArgs(NamedTuple):
    """Where an attention op keeps its query (key and value follow it) and causal flag."""

    q: int
    layout: str  # "BHSD" or "BSHD"
    causal: int  # index of is_causal, or of custom_mask_type
    backward: bool
    mask_type: bool = False  # causal is an int: 0 none, 1 or 2 causal


# The attention ops that launch kernels (argument indices from native_functions.yaml; a test
# checks them against torch's schemas where torch is installed).
ATTENTION_LEAVES: dict[str, AttentionArgs] = {
    "aten::_flash_attention_forward": AttentionArgs(0, "BSHD", 8, False),
    "aten::_flash_attention_backward": AttentionArgs(1, "BSHD", 11, True),
    "aten::_efficient_attention_forward": AttentionArgs(0, "BSHD", 9, False, mask_type=True),
    "aten::_efficient_attention_backward": AttentionArgs(1, "BSHD", 14, True, mask_type=True),
    "aten::_cudnn_attention_forward": AttentionArgs(0, "BHSD", 10, False),
    "aten::_cudnn_attention_backward": AttentionArgs(1, "BHSD", 14, True),
    "aten::_scaled_dot_product_flash_attention_for_cpu": AttentionArgs(0, "BHSD", 4, False),
    "aten::_scaled_dot_product_flash_attention_for_cpu_backward": AttentionArgs(1, "BHSD", 7, True),
    "aten::_scaled_dot_product_fused_attention_overrideable": AttentionArgs(0, "BHSD", 5, False),
    "aten::_scaled_dot_product_fused_attention_overrideable_backward": AttentionArgs(
        1, "BHSD", 13, True
    ),
    "aten::_scaled_dot_product_attention_math_for_mps": AttentionArgs(0, "BHSD", 5, False),
}

# Attention wrappers: they call one of the leaves above (flash and efficient through the
# dispatcher, so the leaf is recorded), or decompose into bmm/softmax (math).
ATTENTION_PARENTS: dict[str, AttentionArgs] = {
    "aten::scaled_dot_product_attention": AttentionArgs(0, "BHSD", 5, False),
    "aten::_scaled_dot_product_attention_math": AttentionArgs(0, "BHSD", 5, False),
    "aten::_scaled_dot_product_flash_attention": AttentionArgs(0, "BHSD", 4, False),
    "aten::_scaled_dot_product_flash_attention_backward": AttentionArgs(1, "BHSD", 11, True),
    "aten::_scaled_dot_product_efficient_attention": AttentionArgs(0, "BHSD", 6, False),
    "aten::_scaled_dot_product_efficient_attention_backward": AttentionArgs(1, "BHSD", 11, True),
    "aten::_scaled_dot_product_cudnn_attention": AttentionArgs(0, "BHSD", 6, False),
    "aten::_scaled_dot_product_cudnn_attention_backward": AttentionArgs(1, "BHSD", 14, True),
}

FORMER_LEAVES = frozenset(
    {
        "aten::_scaled_dot_product_cudnn_attention",
        "aten::_scaled_dot_product_cudnn_attention_backward",
        *OLD_CONV_BACKWARDS,
        *CONV_PARENTS,
        *CONV_TRANSPOSE_PARENTS,
    }
)
"""Parents that older torch launched kernels from: torch 2.11 launches cuDNN attention under
``aten::_cudnn_attention_forward``/``_backward``, which these call; earlier releases ran the
kernels in these directly. The convolution parents (``conv2d``, ``convolution``,
``_convolution``) and torch 1.x's ``cudnn_convolution_backward`` (and its miopen and mkldnn
forms) are here too: a trace whose leaf was not recorded, or has no figure (torch 1.9 wrote no
``Concrete Inputs``), is counted at the parent. The op calls count them with :func:`~gpuviz.analysis.flops.
composite_flops` and drop them wherever a counted op runs inside (rule 2 of the FLOP notes)."""

GEMM_PARENTS = frozenset({"aten::matmul", "aten::linear", "aten::einsum", "aten::tensordot"})

# Parents of the elementwise/norm/copy leaves (bytes).
BYTES_PARENTS = frozenset(
    {
        "aten::to",
        "aten::_to_copy",
        "aten::clone",
        "aten::contiguous",
        "aten::layer_norm",
        "aten::batch_norm",
        "aten::_batch_norm_impl_index",
        "aten::group_norm",
        "aten::instance_norm",
        "aten::rms_norm",
        "aten::softmax",
        "aten::log_softmax",
        "aten::dropout",
        "aten::feature_dropout",
    }
)

COMPOSITE_OPS: frozenset[str] = frozenset(
    set(OLD_CONV_BACKWARDS)
    | set(CONV_PARENTS)
    | set(CONV_TRANSPOSE_PARENTS)
    | set(ATTENTION_PARENTS)
    | set(GEMM_PARENTS)
    | set(BYTES_PARENTS)
)
"""Ops that call other aten ops to do their work: :func:`op_flops` and :func:`op_bytes` give
them None, so a sum over an op tree counts each piece of work once, at its innermost op."""

# Elementwise ops by their base name (no "aten::", no trailing "_"): read inputs, write one
# output the size of the largest input.
ELEMENTWISE = frozenset(
    """abs neg exp exp2 expm1 log log2 log10 log1p sqrt rsqrt sin cos tan tanh sigmoid relu gelu
    silu mish hardswish hardsigmoid hardtanh leaky_relu elu selu celu softplus erf erfc erfinv
    reciprocal sign sgn square floor ceil round trunc frac clamp clamp_min clamp_max nan_to_num
    logit bitwise_not logical_not threshold add sub rsub mul div true_divide floor_divide pow
    maximum minimum fmod remainder atan2 logical_and logical_or logical_xor bitwise_and
    bitwise_or bitwise_xor where masked_fill lerp addcmul addcdiv copysign hypot xlogy
    threshold_backward gelu_backward silu_backward sigmoid_backward tanh_backward
    hardswish_backward hardtanh_backward leaky_relu_backward elu_backward mish_backward
    softplus_backward native_dropout native_dropout_backward cumsum cumprod _softmax
    _log_softmax _softmax_backward_data _log_softmax_backward_data native_layer_norm
    native_layer_norm_backward native_batch_norm native_batch_norm_backward cudnn_batch_norm
    cudnn_batch_norm_backward miopen_batch_norm miopen_batch_norm_backward
    _batch_norm_with_update _batch_norm_no_update batch_norm_backward native_group_norm
    native_group_norm_backward _fused_rms_norm _fused_rms_norm_backward""".split()
)
COMPARISONS = frozenset("eq ne lt le gt ge isnan isinf isfinite".split())
# Ops that only write their first input (nothing is read).
WRITE_ONLY = frozenset(
    "fill zero normal uniform bernoulli exponential random geometric cauchy log_normal".split()
)
REDUCTIONS = frozenset(
    """sum mean amax amin max min prod var std var_mean std_mean norm linalg_vector_norm
    argmax argmin all any logsumexp count_nonzero nansum""".split()
)


# -- parsing ---------------------------------------------------------------------------------


def shape_of(dims: Dims, i: int) -> list[int] | None:
    """Input ``i``'s shape if it is a tensor of at least one dimension, else None (also for a
    shape of more than :data:`MAX_ELEMENTS` elements: bad data, see :func:`too_large`)."""
    if i >= len(dims):
        return None
    d = dims[i]
    if not isinstance(d, list | tuple) or not d:
        return None
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in d):
        return None
    if any(v > MAX_ELEMENTS for v in d) or math.prod(d) > MAX_ELEMENTS:
        return None
    return list(d)


def too_large(dims: Any) -> bool:
    """Whether any entry of ``Input Dims`` (a shape, or a TensorList's list of shapes) has a
    size or a product past :data:`MAX_ELEMENTS`: no real tensor, so the call is skipped."""
    if not isinstance(dims, list | tuple):
        return False
    for d in dims:
        if not isinstance(d, list | tuple):
            continue
        if d and isinstance(d[0], list | tuple):
            if too_large(d):
                return True
            continue
        sizes = [v for v in d if isinstance(v, int) and not isinstance(v, bool)]
        if any(abs(v) > MAX_ELEMENTS for v in sizes):
            return True
        if sizes and math.prod(abs(v) for v in sizes) > MAX_ELEMENTS:
            return True
    return False


def concrete(args: dict[str, Any] | None, i: int) -> Any:
    """Argument ``i`` of ``Concrete Inputs``, parsed (bool, int, float, list or str); None if
    absent or empty."""
    values = (args or {}).get("Concrete Inputs")
    if not isinstance(values, list) or i >= len(values):
        return None
    return parse_concrete(values[i])


def parse_concrete(text: Any) -> Any:
    """One ``Concrete Inputs`` entry as a Python value.

    ``'True'`` -> True, ``'2'`` -> 2, ``'0.'`` -> 0.0, ``'[2, 2]'`` -> [2, 2],
    ``'[True, False]'`` -> [True, False]; ``''`` -> None; other text stays a string
    (``'same'``).
    """
    if not isinstance(text, str):
        return text
    s = text.strip()
    if not s:
        return None
    if s.startswith("[") and s.endswith("]"):
        inner = s[1:-1].strip()
        if not inner:
            return []
        items = [parse_concrete(p) for p in inner.split(",")]
        return items
    if s in ("True", "False"):
        return s == "True"
    try:
        return int(s)
    except ValueError:
        pass
    try:
        return float(s)
    except ValueError:
        return s


def as_ints(value: Any, n: int, default: int) -> list[int] | None:
    """A stride/padding/dilation argument as ``n`` ints (a single int repeats)."""
    if value is None:
        return [default] * n
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return [value] * n
    if isinstance(value, list) and all(
        isinstance(v, int) and not isinstance(v, bool) for v in value
    ):
        if len(value) == 1:
            return value * n
        return value if len(value) == n else None
    return None


def numel(shape: Sequence[int]) -> int:
    """The number of elements of a shape."""
    return math.prod(shape)


def is_causal(spec: AttentionArgs, args: dict[str, Any] | None) -> bool:
    """Whether an attention op's recorded arguments say causal (False when not recorded)."""
    value = concrete(args, spec.causal)
    if spec.mask_type:
        return isinstance(value, int) and not isinstance(value, bool) and value != 0
    return value is True
