"""Inductor kernels by name: what ``triton_poi_fused__unsafe_view_mul_silu_2`` says it fuses.

The last resort of compiled-code attribution (see :mod:`gpuviz.analysis.compiled_regions`):
without Inductor's provenance files a kernel's name is all there is. Inductor names a fused
kernel ``<backend>_<kind>_fused_<ops>_<n>``: backend ``triton`` or ``cpp``, kind ``poi``
(pointwise), ``red`` (reduction), ``per`` (persistent reduction), ``tem`` (template, a GEMM)
or ``for`` (foreach); ``<ops>`` the names of the ATen ops it fuses (``config.triton.
descriptive_names = "original_aten"``, the default), sorted and joined by ``_``; ``n`` a
counter. Op names hold underscores themselves (``native_layer_norm_backward``,
``_unsafe_view``), so the ops are read greedily against :data:`KNOWN_OPS`, longest first; a
word that starts no known op stands for itself. The names say what ops, never which layer.
"""

from __future__ import annotations

import re

KERNEL_NAME = re.compile(
    r"^(?P<backend>triton|cpp)_(?:(?P<kind>poi|red|per|tem|for|spl|mix)_)?fused_(?P<ops>.*?)(?:_(?P<n>\d+))?$"
)
"""An Inductor fused kernel's name."""

KINDS = {
    "poi": "pointwise",
    "red": "reduction",
    "per": "persistent reduction",
    "tem": "template",
    "for": "foreach",
    "spl": "split scan",
    "mix": "mixed order reduction",
}

#: ATen op names seen in Inductor kernel names (``original_aten`` naming), those with an
#: underscore inside first of all: single words need no entry.
KNOWN_OPS = frozenset(
    {
        "_to_copy",
        "_unsafe_view",
        "_log_softmax",
        "_log_softmax_backward_data",
        "_softmax",
        "_softmax_backward_data",
        "_scaled_dot_product_efficient_attention",
        "_scaled_dot_product_flash_attention",
        "_scaled_dot_product_cudnn_attention",
        "_scaled_dot_product_efficient_attention_backward",
        "_scaled_dot_product_flash_attention_backward",
        "_unsafe_index",
        "_unsafe_index_put",
        "_foreach_add",
        "_foreach_mul",
        "_fused_adam",
        "native_layer_norm",
        "native_layer_norm_backward",
        "native_group_norm",
        "native_group_norm_backward",
        "native_batch_norm_backward",
        "native_dropout",
        "native_dropout_backward",
        "gelu_backward",
        "silu_backward",
        "sigmoid_backward",
        "tanh_backward",
        "threshold_backward",
        "embedding_dense_backward",
        "nll_loss_forward",
        "nll_loss_backward",
        "nll_loss2d_forward",
        "index_select",
        "index_put",
        "index_add",
        "scatter_add",
        "select_backward",
        "slice_backward",
        "masked_fill",
        "new_zeros",
        "new_ones",
        "new_empty",
        "full_like",
        "zeros_like",
        "ones_like",
        "empty_like",
        "clamp_min",
        "clamp_max",
        "max_pool2d_with_indices",
        "max_pool2d_with_indices_backward",
        "avg_pool2d",
        "avg_pool2d_backward",
        "adaptive_avg_pool2d",
        "upsample_nearest2d",
        "upsample_bilinear2d",
        "constant_pad_nd",
        "reflection_pad2d",
        "rand_like",
        "randn_like",
        "scalar_tensor",
        "lift_fresh",
        "squeeze_copy",
        "unsqueeze_copy",
        "var_mean",
        "logical_not",
        "logical_and",
        "logical_or",
        "bitwise_and",
        "bitwise_or",
        "bitwise_not",
        "where_self",
        "div_rn",
        "rms_norm",
        "fused_rms_norm",
        "fused_rms_norm_backward",
        "rsub",
    }
)
_PREFIXES = sorted(KNOWN_OPS, key=len, reverse=True)


def is_inductor_kernel(name: str) -> bool:
    """Whether ``name`` is an Inductor fused kernel's (``triton_poi_fused_…``, ``cpp_fused_…``)."""
    return KERNEL_NAME.match(name) is not None


def fused_ops(name: str) -> list[str] | None:
    """The ATen ops an Inductor kernel's name says it fuses, in the name's order.

    Parameters
    ----------
    name : str
        A kernel name, e.g. ``triton_poi_fused__unsafe_view_mul_silu_2``.

    Returns
    -------
    list of str or None
        ``["_unsafe_view", "mul", "silu"]``; None when ``name`` is not an Inductor kernel's.

    Examples
    --------
    >>> fused_ops("triton_per_fused__to_copy_add_native_layer_norm_backward_view_10")
    ['_to_copy', 'add', 'native_layer_norm_backward', 'view']
    """
    m = KERNEL_NAME.match(name)
    if m is None:
        return None
    rest = m.group("ops")
    ops: list[str] = []
    while rest:
        hit = next(
            (p for p in _PREFIXES if rest.startswith(p) and rest[len(p) : len(p) + 1] in ("", "_")),
            None,
        )
        if hit is None:
            # A leading underscore belongs to the op (``_foo``); otherwise one word.
            word, _, tail = rest[1:].partition("_") if rest.startswith("_") else rest.partition("_")
            hit = ("_" + word) if rest.startswith("_") else word
            rest = tail
        else:
            rest = rest[len(hit) + 1 :]
        if hit:
            ops.append(hit)
    return ops


def kernel_kind(name: str) -> str | None:
    """``"pointwise"``, ``"reduction"``, … for an Inductor kernel's name; None otherwise."""
    m = KERNEL_NAME.match(name)
    if m is None or m.group("kind") is None:
        return None
    return KINDS.get(m.group("kind"))
