"""torch 1.x's convolution FLOPs: the backward halves, and the output sizes a trace without
``Concrete Inputs`` leaves out (torch 1.9 recorded shapes but no scalar arguments).

A gradient of a convolution's output has the output's shape, so a trace's backward calls say
what its forwards produced: :class:`ConvHints` gathers that, and
:mod:`gpuviz.analysis.flops` uses it where a forward's stride and padding are not recorded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from gpuviz.analysis.op_args import (
    CONV_BACKWARDS,
    OLD_CONV_BACKWARDS,
    OLD_CONV_HALVES,
    Dims,
    concrete,
    numel,
    shape_of,
)

Shape = tuple[int, ...]


@dataclass
class ConvHints:
    """What a trace's convolution backwards say about their forwards, for traces without
    ``Concrete Inputs`` (torch 1.9): a gradient of the output has the output's shape.

    Attributes
    ----------
    output : dict
        (input shape, weight shape) -> the output's shape; None where two backwards disagree.
    weight : dict
        (output shape, input shape) -> the weight's shape; None where two disagree.
    """

    output: dict[tuple[Shape, Shape], Shape | None] = field(default_factory=dict)
    weight: dict[tuple[Shape, Shape], Shape | None] = field(default_factory=dict)

    def add(self, x: Sequence[int], grad_out: Sequence[int], w: Sequence[int]) -> None:
        """Learn from one backward's input, output gradient and weight shapes."""
        xs, gs, ws = tuple(x), tuple(grad_out), tuple(w)
        for table, key, value in ((self.output, (xs, ws), gs), (self.weight, (gs, xs), ws)):
            if table.get(key, value) != value:
                table[key] = None  # two answers: neither is known
            else:
                table[key] = value

    def output_of(self, x: Sequence[int], w: Sequence[int]) -> Shape | None:
        """The output shape of a convolution of these input and weight shapes, if known."""
        return self.output.get((tuple(x), tuple(w)))

    def weight_of(self, grad_out: Sequence[int], x: Sequence[int]) -> Shape | None:
        """The weight shape of a convolution of this output and input, if known."""
        return self.weight.get((tuple(grad_out), tuple(x)))


def backward_shapes(name: str, dims: Dims) -> tuple[list[int], list[int], list[int]] | None:
    """(input, output gradient, weight) shapes of a convolution backward call, or None."""
    if name in CONV_BACKWARDS:
        order = (1, 0, 2)  # convolution_backward(grad_output, input, weight, ...)
    elif name in OLD_CONV_BACKWARDS:
        order = (0, 1, 2)  # cudnn_convolution_backward(self, grad_output, weight, ...)
    else:
        return None
    x, g, w = (shape_of(dims, i) for i in order)
    if x is None or g is None or w is None or len(x) < 3 or len(x) != len(g) != len(w):
        return None
    return x, g, w


def from_output(x: Sequence[int], w: Sequence[int], out: Sequence[int] | None) -> int | None:
    """A forward convolution's FLOPs from its output's shape: 2 · N · (output positions) · (weight elements), where the output is known and fits."""
    if out is None or len(out) != len(x) or out[0] != x[0] or out[1] != w[0]:
        return None
    return 2 * x[0] * numel(out[2:]) * numel(w)


def old_half(name: str, dims: Dims, hints: ConvHints | None) -> int | None:
    """A torch 1.x backward half (``cudnn_convolution_backward_input``/``_weight``): the
    forward's figure, 2 · N · (output positions) · (weight elements)."""
    g, other = shape_of(dims, 1), shape_of(dims, 2)
    if g is None or other is None or len(g) < 3:
        return None
    if OLD_CONV_HALVES[name] == "input":
        w = other
    else:  # the weight's shape is not recorded: the parent's says it
        found = hints.weight_of(g, other) if hints is not None else None
        if found is None:
            return None
        w = list(found)
    if len(w) != len(g) or w[0] != g[1]:
        return None
    return 2 * g[0] * numel(g[2:]) * numel(w)


def old_backward(name: str, dims: Dims, args: dict[str, Any] | None) -> int | None:
    """A torch 1.x ``cudnn_convolution_backward`` (miopen, mkldnn) counted whole: the forward's
    figure for each gradient its ``output_mask`` asks (both where it is not recorded)."""
    got = backward_shapes(name, dims)
    if got is None:
        return None
    x, g, w = got
    forward = from_output(x, w, g)
    if forward is None:
        return None
    mask = concrete(args, OLD_CONV_BACKWARDS[name])
    if not (isinstance(mask, list) and len(mask) >= 2 and all(isinstance(m, bool) for m in mask)):
        mask = [True, True]
    return forward * (int(mask[0]) + int(mask[1]))
