"""FLOPs and bytes of one op, from the shapes and types Kineto records (``record_shapes=True``).

An op's ``args`` hold ``Input Dims`` (one entry per input: a list of ints for a tensor, ``[]``
for a scalar, a missing optional or a 0-d tensor, a list of lists for a TensorList), ``Input
type`` (one string per input, see :mod:`gpuviz.analysis.dtypes`) and, since torch 2.2,
``Concrete Inputs`` (the scalar arguments as text: ``'True'``, ``'[2, 2]'``, ``'1'``, ``''``).

What is counted
---------------
FLOPs (a multiply and an add are two):

- GEMMs: ``mm`` 2·M·K·N; ``addmm``, ``_addmm_activation``, ``_scaled_mm``, ``_int_mm`` the same
  (the bias add is not counted); ``bmm``, ``baddbmm``, ``addbmm`` 2·B·M·K·N; ``mv``/``addmv``
  2·M·K; ``dot``/``vdot`` 2·K.
- Convolutions: 2·N·(output positions)·(weight elements), with the weight ``[C_out, C_in/groups,
  k…]``, so groups are in; a transposed convolution takes the input positions instead.
  ``convolution_backward`` counts the forward figure once for the input gradient and once for the
  weight gradient, each when its ``output_mask`` entry is true (both when not recorded).
- Scaled-dot-product attention: forward 2·B·H·Sq·Sk·(D + Dv), which is 4·B·H·Sq·Sk·D when the
  value's head size equals the query's; backward 2.5× the forward; both halved when causal
  (``is_causal``, or the efficient kernels' ``custom_mask_type``, read from ``Concrete Inputs``).
  Query heads count (grouped-query attention shares keys, not work). Variable-length batches
  (3-D, packed queries) are not counted: their lengths are not in the trace.
- torch 1.x's convolution backwards: ``cudnn_convolution_backward_input`` and ``_weight`` (and
  their miopen and mkldnn forms) the forward figure each; their parent
  ``cudnn_convolution_backward`` both, by its ``output_mask``, where no half ran inside it.
  torch 1.9 recorded no ``Concrete Inputs``: a forward convolution's output size (and a weight
  gradient's weight shape) then come from the backward of the same shapes in the trace
  (:class:`ConvHints`); with no backward (inference) they are unknown.
- ``aten::add`` and ``aten::mul``: one FLOP per output element, as torch's profiler counts
  them (``with_flops=True``); the output is the inputs' broadcast shape. torch counts no other
  elementwise op, nor the in-place forms: neither does gpuviz.
- Where Kineto wrote a ``flops`` arg (``with_flops=True``) on an op counted here, that value is
  used: it is torch's own formula for the same op.

Counted once: at the op that launches the work
----------------------------------------------
An aten op calls others: ``linear`` → ``addmm``; ``matmul`` → ``mm``/``bmm``; ``conv2d`` →
``convolution`` → ``_convolution`` → ``cudnn_convolution``; ``scaled_dot_product_attention`` →
``_scaled_dot_product_flash_attention`` → ``_flash_attention_forward``; ``layer_norm`` →
``native_layer_norm``; ``to`` → ``_to_copy`` → ``copy_``. The figure belongs to the innermost of
them, the one whose kernels run (its device *self* time is what the FLOPs are divided by), so
the rule is:

1. :func:`op_flops` and :func:`op_bytes` return None for the known parents
   (:data:`COMPOSITE_OPS`): summing an op tree then counts each GEMM once.
2. Where a trace still nests an op with a figure inside another op with a figure (a custom op
   or an unknown wrapper around ``aten::mm``), keep the innermost one and drop the outer.
3. A known parent with no descendant carrying a figure (a trace that lost its child ops) may use
   :func:`composite_flops`, the same formula applied at the parent. The op calls do so for
   :data:`~gpuviz.analysis.op_args.FORMER_LEAVES`: torch 2.11 runs cuDNN attention under
   ``_cudnn_attention_forward``/``_backward`` inside ``_scaled_dot_product_cudnn_attention``
   (``_backward``), earlier releases in the latter directly.

Bytes are a lower bound
-----------------------
:func:`op_bytes` counts each input tensor read once and each output written once, as if caches
were perfect and nothing were re-read: a kernel moves at least that much. Outputs are not in
the trace, so they are inferred: an elementwise op's output is as large as its largest input
(broadcasting gives no larger result), of the same element type (``bool`` for comparisons);
a reduction's output is left out (it is at most its input); a norm's output is its first input's
size (its saved mean and variance are left out). Ops of other kinds (indexing, cat, custom ops)
are None.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gpuviz.analysis.conv_hints import (
    ConvHints,
    backward_shapes,
    from_output,
    old_backward,
    old_half,
)
from gpuviz.analysis.dtypes import element_bytes
from gpuviz.analysis.op_args import (
    ATTENTION_LEAVES,
    ATTENTION_PARENTS,
    COMPARISONS,
    COMPOSITE_OPS,
    CONV_BACKWARDS,
    CONV_LEAVES,
    CONV_PARENTS,
    CONV_TRANSPOSE_PARENTS,
    ELEMENTWISE,
    ELEMENTWISE_FLOPS,
    GEMMS,
    MAX_CALL_FLOPS,
    MAX_ELEMENTS,
    OLD_CONV_BACKWARDS,
    OLD_CONV_HALVES,
    REDUCTIONS,
    WRITE_ONLY,
    AttentionArgs,
    Dims,
    as_ints,
    concrete,
    is_causal,
    numel,
    parse_concrete,
    shape_of,
)

__all__ = [
    "COMPOSITE_OPS",
    "ConvHints",
    "attention_flops",
    "backward_shapes",
    "composite_bytes",
    "composite_flops",
    "conv_flops",
    "matmul_flops",
    "op_bytes",
    "op_flops",
    "parse_concrete",
]


# -- FLOPs -----------------------------------------------------------------------------------


def _elementwise(dims: Dims, types: Sequence[Any]) -> int | None:
    """One FLOP per output element: the inputs' broadcast shape (a 0-d tensor is one)."""
    shapes: list[list[int]] = []
    for i, t in enumerate(types):
        if not isinstance(t, str) or element_bytes(t) is None or i >= len(dims):
            continue  # a Scalar, or a type not known to be a tensor
        s = [] if dims[i] in ([], ()) else shape_of(dims, i)  # [] here: a 0-d tensor
        if s is None:
            return None
        shapes.append(s)
    if not shapes:
        return None
    width = max(len(s) for s in shapes)
    out = []
    for k in range(1, width + 1):
        sizes = {s[-k] for s in shapes if k <= len(s)} - {1}
        if len(sizes) > 1:
            return None  # does not broadcast: bad shapes
        out.append(sizes.pop() if sizes else 1)
    return numel(out)


def _gemm(name: str, dims: Dims) -> int | None:
    left, right = GEMMS[name]
    a, b = shape_of(dims, left), shape_of(dims, right)
    if a is None or b is None:
        return None
    if len(a) == 1 and len(b) == 1:  # dot
        return 2 * a[0] if a[0] == b[0] else None
    if len(a) == 2 and len(b) == 1:  # mv
        return 2 * a[0] * a[1] if a[1] == b[0] else None
    if len(a) == 2 and len(b) == 2:
        return 2 * a[0] * a[1] * b[1] if a[1] == b[0] else None
    if len(a) == 3 and len(b) == 3:
        if a[0] != b[0] or a[2] != b[1]:
            return None
        return 2 * a[0] * a[1] * a[2] * b[2]
    return None


def matmul_flops(a: Sequence[int], b: Sequence[int]) -> int | None:
    """FLOPs of ``torch.matmul(a, b)`` for shapes ``a`` and ``b``, batch dims broadcast.

    Parameters
    ----------
    a, b : sequence of int
        The operands' shapes (1-D operands act as a row or column vector, as in torch).

    Returns
    -------
    int or None
        2 · batch · M · K · N; None if the inner sizes differ or the batches don't broadcast.
    """
    a, b = list(a), list(b)
    if not a or not b:
        return None
    if len(a) == 1:
        a = [1, a[0]]
    if len(b) == 1:
        b = [b[0], 1]
    if a[-1] != b[-2]:
        return None
    batch_a, batch_b = a[:-2], b[:-2]
    batch = []
    for i in range(1, max(len(batch_a), len(batch_b)) + 1):
        x = batch_a[-i] if i <= len(batch_a) else 1
        y = batch_b[-i] if i <= len(batch_b) else 1
        if x != y and 1 not in (x, y):
            return None
        batch.append(max(x, y))
    return 2 * numel(batch) * a[-2] * a[-1] * b[-1]


def _conv_output(
    spatial: Sequence[int],
    kernel: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
) -> list[int] | None:
    out = []
    for i, k, s, p, d in zip(spatial, kernel, stride, padding, dilation):
        if s <= 0:
            return None
        o = (i + 2 * p - d * (k - 1) - 1) // s + 1
        if o <= 0:
            return None
        out.append(o)
    return out


def conv_flops(
    input_shape: Sequence[int],
    weight_shape: Sequence[int],
    stride: Sequence[int] | int = 1,
    padding: Sequence[int] | int | str = 0,
    dilation: Sequence[int] | int = 1,
    transposed: bool = False,
) -> int | None:
    """FLOPs of one convolution's forward pass.

    Parameters
    ----------
    input_shape : sequence of int
        ``[N, C_in, *spatial]``.
    weight_shape : sequence of int
        ``[C_out, C_in / groups, *kernel]`` (transposed: ``[C_in, C_out / groups, *kernel]``).
    stride, padding, dilation : int or sequence of int
        As passed to the op; ``padding`` may be ``"same"`` or ``"valid"``.
    transposed : bool
        A transposed convolution: the work is 2 · N · (input positions) · (weight elements).

    Returns
    -------
    int or None
        2 · N · (output positions) · (weight elements); None for shapes that make no output.
    """
    if len(input_shape) < 3 or len(weight_shape) != len(input_shape):
        return None
    n, spatial, kernel = input_shape[0], list(input_shape[2:]), list(weight_shape[2:])
    w = numel(weight_shape)
    if transposed:
        return 2 * n * numel(spatial) * w
    dims = len(spatial)
    if padding == "same":
        out: list[int] | None = spatial
    else:
        pad = as_ints(0 if padding == "valid" else padding, dims, 0)
        st, dil = as_ints(stride, dims, 1), as_ints(dilation, dims, 1)
        if pad is None or st is None or dil is None:
            return None
        out = _conv_output(spatial, kernel, st, pad, dil)
    return None if out is None else 2 * n * numel(out) * w


def _conv_leaf(
    name: str, dims: Dims, args: dict[str, Any] | None, hints: ConvHints | None = None
) -> int | None:
    spec = CONV_LEAVES[name]
    x, w = shape_of(dims, 0), shape_of(dims, 1)
    if x is None or w is None:
        return None
    if spec == "transposed":
        return conv_flops(x, w, transposed=True)
    assert not isinstance(spec, str)
    stride_i, pad_i, dil_i = spec
    stride = concrete(args, stride_i) if stride_i is not None else 1
    padding = concrete(args, pad_i) if pad_i is not None else 0
    dilation = concrete(args, dil_i) if dil_i is not None else 1
    if stride is None or padding is None:  # not recorded: the output's size from a backward
        return from_output(x, w, hints.output_of(x, w)) if hints is not None else None
    return conv_flops(x, w, stride, padding, dilation)


def _conv_backward(dims: Dims, args: dict[str, Any] | None) -> int | None:
    grad_out, x, w = shape_of(dims, 0), shape_of(dims, 1), shape_of(dims, 2)
    if grad_out is None or x is None or w is None or len(w) < 3:
        return None
    transposed = concrete(args, 7) is True
    positions = numel(x[2:]) if transposed else numel(grad_out[2:])
    forward = 2 * x[0] * positions * numel(w)
    mask = concrete(args, 10)
    if not (isinstance(mask, list) and len(mask) >= 2 and all(isinstance(m, bool) for m in mask)):
        mask = [True, True]
    return forward * (int(mask[0]) + int(mask[1]))


def attention_flops(
    query: Sequence[int],
    key: Sequence[int],
    value: Sequence[int] | None = None,
    layout: str = "BHSD",
    causal: bool = False,
    backward: bool = False,
) -> int | None:
    """FLOPs of scaled-dot-product attention.

    Parameters
    ----------
    query, key, value : sequence of int
        4-D shapes; ``value`` defaults to ``key``'s shape.
    layout : {"BHSD", "BSHD"}
        ``torch.nn.functional.scaled_dot_product_attention`` and the ``_scaled_dot_product_*``
        ops take [batch, heads, seq, head_dim]; ``_flash_attention_*`` and
        ``_efficient_attention_*`` take [batch, seq, heads, head_dim].
    causal : bool
        Halves the figure (about half of the score matrix is computed).
    backward : bool
        2.5× the forward: the backward recomputes the scores (one product), and computes
        dV, dP, dQ and dK (four), against the forward's two.

    Returns
    -------
    int or None
        2 · B · H · Sq · Sk · (D + Dv) for the forward (4 · B · H · Sq · Sk · D when Dv = D).
    """
    value = key if value is None else value
    if len(query) != 4 or len(key) != 4 or len(value) != 4:
        return None
    if layout == "BHSD":
        b, h, sq, d = query
        sk, dv = key[2], value[3]
    elif layout == "BSHD":
        b, sq, h, d = query
        sk, dv = key[1], value[3]
    else:
        raise ValueError(f"layout must be BHSD or BSHD, not {layout!r}")
    flops = 2 * b * h * sq * sk * (d + dv)
    if backward:
        flops = flops * 5 // 2
    if causal:
        flops //= 2
    return flops


def _attention(spec: AttentionArgs, dims: Dims, args: dict[str, Any] | None) -> int | None:
    q, k, v = shape_of(dims, spec.q), shape_of(dims, spec.q + 1), shape_of(dims, spec.q + 2)
    if q is None or k is None:
        return None
    return attention_flops(q, k, v, spec.layout, is_causal(spec, args), spec.backward)


def _kineto_flops(args: dict[str, Any] | None) -> int | None:
    value = (args or {}).get("flops")
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        # past MAX_CALL_FLOPS (1e308 has been seen) it is no figure: the caller flags it
        return int(value) if value <= MAX_CALL_FLOPS else None
    return None


def kineto_flops_bad(args: dict[str, Any] | None) -> bool:
    """Whether Kineto's ``flops`` arg is a number no op call does (past
    :data:`~gpuviz.analysis.op_args.MAX_CALL_FLOPS`, or not finite)."""
    value = (args or {}).get("flops")
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    return not value <= MAX_CALL_FLOPS  # NaN and inf included


def op_flops(
    name: str,
    input_dims: Dims,
    input_types: Sequence[Any] = (),
    args: dict[str, Any] | None = None,
    hints: ConvHints | None = None,
) -> int | None:
    """FLOPs of one call of an op, or None where it is not counted.

    Parameters
    ----------
    name : str
        The op's name as in the trace (``"aten::mm"``).
    input_dims : list
        Its ``Input Dims``.
    input_types : list of str
        Its ``Input type``: ``add``/``mul`` tell a 0-d tensor from a scalar by it.
    args : dict, optional
        The op's whole ``args``: ``Concrete Inputs`` gives a convolution's stride, padding and
        dilation and attention's ``is_causal``; a Kineto ``flops`` entry is used as is.
    hints : ConvHints, optional
        The trace's convolution backwards, for traces with no ``Concrete Inputs``.

    Returns
    -------
    int or None
        None for ops not counted (elementwise ops but ``add``/``mul``, copies …), for the
        parents in
        :data:`COMPOSITE_OPS` (their child op is counted) and where the shapes are missing.
    """
    input_dims = input_dims or []  # an op recorded without shapes
    if name in GEMMS:
        own = _gemm(name, input_dims)
    elif name in CONV_LEAVES:
        own = _conv_leaf(name, input_dims, args, hints)
    elif name in OLD_CONV_HALVES:
        own = old_half(name, input_dims, hints)
    elif name in ELEMENTWISE_FLOPS:
        own = _elementwise(input_dims, input_types or [])
    elif name in CONV_BACKWARDS:
        own = _conv_backward(input_dims, args)
    elif name in ATTENTION_LEAVES:
        own = _attention(ATTENTION_LEAVES[name], input_dims, args)
    else:
        return None
    kineto = _kineto_flops(args)
    return kineto if kineto is not None else own


def composite_flops(
    name: str,
    input_dims: Dims,
    args: dict[str, Any] | None = None,
    hints: ConvHints | None = None,
) -> int | None:
    """The FLOPs of a parent op (``linear``, ``matmul``, ``conv2d``, ``convolution``,
    ``scaled_dot_product_attention`` …) computed at the parent, as its leaf would count them.

    Use it only where no descendant of the op has a figure (rule 3 in the module notes);
    otherwise the work is counted twice.

    Parameters
    ----------
    name : str
        The op's name.
    input_dims : list
        Its ``Input Dims``.
    args : dict, optional
        Its ``args`` (``Concrete Inputs``).
    hints : ConvHints, optional
        The trace's convolution backwards, for traces with no ``Concrete Inputs``.

    Returns
    -------
    int or None
        None for ops that are not parents of counted work, or when shapes are missing.
    """
    if name in OLD_CONV_BACKWARDS:
        return old_backward(name, input_dims, args)
    if name == "aten::linear":
        x, w = shape_of(input_dims, 0), shape_of(input_dims, 1)
        if x is None or w is None or len(w) != 2 or x[-1] != w[1]:
            return None
        return 2 * numel(x[:-1]) * w[1] * w[0]
    if name == "aten::matmul":
        a, b = shape_of(input_dims, 0), shape_of(input_dims, 1)
        return None if a is None or b is None else matmul_flops(a, b)
    if name in CONV_PARENTS or name in CONV_TRANSPOSE_PARENTS:
        x, w = shape_of(input_dims, 0), shape_of(input_dims, 1)
        if x is None or w is None:
            return None
        if name in CONV_TRANSPOSE_PARENTS:
            return conv_flops(x, w, transposed=True)
        stride_i, pad_i, dil_i, tr_i = CONV_PARENTS[name]
        if tr_i is not None and concrete(args, tr_i) is True:
            return conv_flops(x, w, transposed=True)
        stride, padding = concrete(args, stride_i), concrete(args, pad_i)
        if stride is None or padding is None:  # not recorded: the output's size from a backward
            return from_output(x, w, hints.output_of(x, w)) if hints is not None else None
        return conv_flops(x, w, stride, padding, concrete(args, dil_i))
    if name in ATTENTION_PARENTS:
        return _attention(ATTENTION_PARENTS[name], input_dims, args)
    return None


# -- bytes -----------------------------------------------------------------------------------


def _tensors(dims: Dims, types: Sequence[Any]) -> list[tuple[int, int]]:
    """(elements, element size) of each input tensor whose type is known."""
    out = []
    for i, t in enumerate(types):
        size = element_bytes(t) if isinstance(t, str) else None
        if size is None:
            continue
        shape = dims[i] if i < len(dims) else None
        if not isinstance(shape, list | tuple):
            continue
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in shape):
            continue
        n = numel(shape)
        if not 0 <= n <= MAX_ELEMENTS:  # no real tensor (10**200 elements): no byte count
            return []
        out.append((n, size))
    return out


def _attention_bytes(
    spec: AttentionArgs, dims: Dims, types: Sequence[Any], read: int
) -> int | None:
    qs, ks, vs = (shape_of(dims, spec.q + i) for i in range(3))
    if qs is None or ks is None or vs is None:
        return None
    size = element_bytes(str(types[spec.q])) or 0
    if spec.backward:  # writes dQ, dK, dV
        written = numel(qs) + numel(ks) + numel(vs)
    else:  # writes the output: the query's shape with the value's head size
        written = numel(qs[:-1]) * vs[-1]
    # the backward also reads out and grad_out; they are inputs, in `read` already
    return read + written * size


def composite_bytes(name: str, input_dims: Dims, input_types: Sequence[Any]) -> int | None:
    """The bytes of an attention parent op, counted at the parent as its leaf would count them
    (for :data:`~gpuviz.analysis.op_args.FORMER_LEAVES` where no leaf runs inside; see
    :func:`composite_flops`); None for other ops."""
    input_dims, input_types = input_dims or [], input_types or []
    tensors = _tensors(input_dims, input_types)
    if not tensors or name not in ATTENTION_PARENTS:
        return None
    read = sum(n * s for n, s in tensors)
    return _attention_bytes(ATTENTION_PARENTS[name], input_dims, input_types, read)


def _base(name: str) -> str:
    base = name.removeprefix("aten::")
    return base[:-1] if base.endswith("_") and not base.endswith("__") else base


def op_bytes(
    name: str,
    input_dims: Dims,
    input_types: Sequence[Any],
    args: dict[str, Any] | None = None,
) -> int | None:
    """A lower bound of the bytes one call of an op moves to and from device memory.

    Each input tensor is read once and each output written once; outputs are inferred as the
    module notes say. GEMMs, convolutions and attention are counted the same way (operands in,
    result out), which gives their arithmetic intensity.

    Parameters
    ----------
    name : str
        The op's name.
    input_dims : list
        Its ``Input Dims``.
    input_types : list of str
        Its ``Input type``: element sizes come from there.
    args : dict, optional
        Its ``args`` (a convolution's output size needs its stride and padding).

    Returns
    -------
    int or None
        None for ops of other kinds, parents in :data:`COMPOSITE_OPS`, and inputs of unknown
        type.
    """
    input_dims, input_types = input_dims or [], input_types or []  # recorded without shapes
    tensors = _tensors(input_dims, input_types)
    if not tensors or name in COMPOSITE_OPS:
        return None
    read = sum(n * s for n, s in tensors)
    if name in GEMMS:
        left, right = GEMMS[name]
        a, b = shape_of(input_dims, left), shape_of(input_dims, right)
        flops = _gemm(name, input_dims)
        if a is None or b is None or flops is None:
            return None
        k = a[-1]
        size = element_bytes(str(input_types[left])) or 0
        out = flops // (2 * k) if k else 0  # M·N (times B) elements
        return read + out * size
    if name in CONV_LEAVES:
        flops = _conv_leaf(name, input_dims, args)
        w = shape_of(input_dims, 1)
        if flops is None or w is None:
            return None
        # output elements = N · positions · C_out = flops / (2 · C_in/groups · kernel)
        per_output = 2 * numel(w[1:])
        out = flops // per_output if per_output and CONV_LEAVES[name] != "transposed" else 0
        return read + out * (element_bytes(str(input_types[0])) or 0)
    if name in CONV_BACKWARDS:
        mask = concrete(args, 10)
        if not (isinstance(mask, list) and len(mask) >= 2):
            mask = [True, True]
        x_bytes = tensors[1][0] * tensors[1][1] if len(tensors) > 1 else 0
        w_bytes = tensors[2][0] * tensors[2][1] if len(tensors) > 2 else 0
        return read + x_bytes * bool(mask[0]) + w_bytes * bool(mask[1])
    if name in ATTENTION_LEAVES:
        return _attention_bytes(ATTENTION_LEAVES[name], input_dims, input_types, read)
    base = _base(name)
    if base == "copy":  # copy_(dst, src): read src, write dst
        return read
    if base in WRITE_ONLY:
        n, s = tensors[0]
        return n * s
    if base in REDUCTIONS:
        return read
    if base in ELEMENTWISE or base in COMPARISONS:
        n, s = max(tensors, key=lambda t: t[0])
        if name.endswith("_") and not base.startswith("native"):  # in place: writes input 0
            n, s = tensors[0]
        return read + n * (1 if base in COMPARISONS else s)
    return None
