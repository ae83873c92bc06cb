"""FLOPs and bytes of Inductor's generated kernels, from the FX nodes each one fuses (issue 49).

A ``torch.compile``'d step runs two kinds of kernels. Library ones (GEMMs, attention) are
called through ATen ops that the trace records with their shapes (``aten::mm``): they are
counted as an eager op is. Inductor's own (``triton_poi_fused_mul_silu_2``) are recorded
with no shapes: by the trace alone their FLOPs are unknown and a compiled step's FLOP
coverage falls below :data:`~gpuviz.analysis.step_flops.MIN_COVERAGE`. The compile-info
folder names the FX nodes each kernel call computes (:mod:`gpuviz.analysis.inductor_provenance`)
and their shapes (:mod:`gpuviz.analysis.inductor_graph`), so:

- **FLOPs** of a call: each fused node counted with the formula an eager op of that name and
  shapes gets (:func:`gpuviz.analysis.flops.op_flops`: ``aten.mul`` one per output element,
  ``aten.mm`` 2·M·K·N in a Triton template), summed. Nodes of ops with no formula
  (``erf``, ``rsqrt``, ``var_mean``, copies) add nothing, as the eager ops add nothing to a
  step's FLOPs. A call whose nodes are all known is *known* (its time counts in
  ``flops_coverage``), with 0 FLOPs where none of its nodes has a formula (a dtype cast);
  a node of a formula with no shape, or a call whose nodes the files do not describe, makes
  the call's FLOPs unknown (NaN), never 0.
- **Bytes** (a lower bound, as :func:`gpuviz.analysis.flops.op_bytes`): the fused group's
  inputs read once (the tensors its nodes take that no node of the group makes) and its
  outputs written once (the nodes of the group that a node outside it, or the graph's
  return, uses); intermediates stay in registers and are not counted. An embedding reads the
  rows it gathers (its output's size), not its whole table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gpuviz.analysis.dtypes import element_bytes, op_precision
from gpuviz.analysis.flops import op_flops
from gpuviz.analysis.inductor_graph import FxGraph, FxNode
from gpuviz.analysis.op_args import (
    ATTENTION_LEAVES,
    CONV_LEAVES,
    ELEMENTWISE_FLOPS,
    GEMMS,
    numel,
)

#: The ops a fused node's FLOPs are counted for (the others have no formula: 0).
FORMULA_OPS = frozenset(GEMMS) | frozenset(CONV_LEAVES) | frozenset(ATTENTION_LEAVES)
FORMULA_OPS = FORMULA_OPS | ELEMENTWISE_FLOPS

ZERO_WHY = "GEMM, convolution, attention, add, mul"

_VIEWS = frozenset({"view", "reshape", "_unsafe_view", "permute", "transpose", "t", "expand"})
_GATHERS = frozenset({"embedding"})


@dataclass(frozen=True)
class FusedFigures:
    """One kernel call's figures.

    Attributes
    ----------
    flops : float
        NaN where unknown (``note`` says why); 0.0 where every node is known and none has a
        FLOP formula.
    nbytes : float
        NaN where unknown.
    input_dims, input_types : list
        The group's inputs, as Kineto writes an op's (shapes; ``float``, ``c10::BFloat16``).
    precision : str
        The precision of the nodes doing most of the FLOPs (of the inputs where none).
    note : str or None
    """

    flops: float
    nbytes: float
    input_dims: list[list[int]]
    input_types: list[str]
    precision: str
    note: str | None = None


def op_name(target: str) -> str:
    """``aten.mul.Tensor`` -> ``aten::mul`` (the name the trace gives the eager op)."""
    parts = target.removeprefix("torch.ops.").split(".")
    return f"{parts[0]}::{parts[1]}" if len(parts) >= 2 else target


def node_flops(graph: FxGraph, node: FxNode) -> float | None:
    """One node's FLOPs by the eager formula of its op (0.0 for an op with none); None where
    its op has one but a shape it needs is unknown."""
    name = op_name(node.target)
    if name not in FORMULA_OPS:
        return 0.0
    dims: list[list[int]] = []
    types: list[str] = []
    for a in node.args:
        arg = graph.nodes.get(a) if a is not None else None
        if a is not None and (arg is None or arg.shape is None):
            dims, types = [], []
            break
        dims.append(list(arg.shape) if arg is not None and arg.shape is not None else [])
        types.append((arg.kineto_type or "") if arg is not None else "Scalar")
    if not dims and name in ELEMENTWISE_FLOPS and node.shape is not None:
        # One FLOP per output element: the output's shape is the inputs' broadcast shape.
        dims, types = [list(node.shape)], [node.kineto_type or "float"]
    got = op_flops(name, dims, types) if dims else None
    return None if got is None else float(got)


def fused_figures(
    graph: FxGraph,
    nodes: Sequence[str],
    fallback: Sequence[str] = (),
    counted: set[str] | None = None,
) -> FusedFigures:
    """The FLOPs and bytes of a kernel call that computes ``nodes`` of ``graph``.

    Parameters
    ----------
    graph : FxGraph
    nodes : sequence of str
        The call's post-grad nodes (names the files do not describe are left out, and said).
    fallback : sequence of str
        The nodes to count where the files describe none of ``nodes``: the kernel
        definition's post-grad nodes (a backward call is named by its source nodes,
        ``full_1``, which the definition maps to ``full_default_3``).
    counted : set of str, optional
        Nodes whose FLOPs an earlier call of the graph counted: they count 0 here, and this
        call's are added. A split reduction runs its nodes' work in two kernels (partial
        sums, then their sum) that both name them: the work is counted once.

    Returns
    -------
    FusedFigures
    """
    group = _described(graph, nodes)
    if not group and fallback:
        nodes, group = fallback, _described(graph, fallback)
    nan = float("nan")
    if not group:
        return FusedFigures(
            nan,
            nan,
            [],
            [],
            "other",
            "unknown (the compile-info files do not describe the FX nodes of this kernel)",
        )
    flops = 0.0
    by_type: dict[str, float] = {}
    note = None
    done = counted if counted is not None else set()
    shared = False
    for n in group:
        if n in done:
            shared = shared or bool(node_flops(graph, graph.nodes[n]))
            continue
        f = node_flops(graph, graph.nodes[n])
        if f is None:
            flops, note = nan, f"unknown (no shape recorded for FX node {n} or its inputs)"
            break
        flops += f
        if f > 0:
            t = graph.nodes[n].kineto_type or "float"
            by_type[t] = by_type.get(t, 0.0) + f
    if counted is not None and note is None:
        counted.update(group)
    inside = set(group)
    dims, types, nbytes = _inputs(graph, group, inside)
    written = _written(graph, group, inside)
    total = nan if nbytes is None or written is None else float(nbytes + written)
    if by_type:
        precision = op_precision([max(by_type, key=lambda t: by_type[t])])
    else:
        precision = op_precision(types) if types else "other"
    missing = len(set(nodes)) - len(group)
    if note is None and flops == 0 and shared:
        note = (
            "0: its nodes' FLOPs are counted at an earlier kernel of the graph (a split reduction)"
        )
    elif note is None and flops == 0:
        note = f"0: none of its fused FX nodes is an op with a FLOP formula ({ZERO_WHY})"
    elif note is None and missing:
        note = f"{missing} of its provenance's node names are not in the graph files (left out)"
    return FusedFigures(flops, total, dims, types, precision, note)


def _described(graph: FxGraph, nodes: Sequence[str]) -> list[str]:
    """The nodes of ``nodes`` that the graph's files describe (inputs left out), once each."""
    return [
        n
        for n in dict.fromkeys(nodes)
        if n in graph.nodes and graph.nodes[n].target != "placeholder"
    ]


def _inputs(
    graph: FxGraph, group: list[str], inside: set[str]
) -> tuple[list[list[int]], list[str], int | None]:
    """The tensors the group reads (each once): their shapes, types and bytes (None if a
    size is unknown)."""
    dims: list[list[int]] = []
    types: list[str] = []
    total: int | None = 0
    seen: set[str] = set()
    for n in group:
        node = graph.nodes[n]
        gather = op_name(node.target).split("::")[-1] in _GATHERS
        for i, r in enumerate(node.refs):
            if r in inside or r in seen:
                continue
            seen.add(r)
            src = graph.nodes.get(r)
            size = element_bytes(src.kineto_type or "") if src is not None else None
            shape = src.shape if src is not None else None
            if gather and i == 0 and node.shape is not None:
                shape = node.shape  # the rows it gathers, not the whole table
            if shape is None or size is None:
                total = None
                continue
            dims.append(list(shape))
            types.append(src.kineto_type if src is not None and src.kineto_type else "")
            if total is not None:
                total += numel(shape) * size
    return dims, types, total


def _written(graph: FxGraph, group: list[str], inside: set[str]) -> int | None:
    """The bytes of the group's outputs: its nodes used outside it (or returned)."""
    total = 0
    for n in group:
        users = graph.users(n)
        if n not in graph.outputs and not (users - inside):
            continue
        node = graph.nodes[n]
        if node.shape is None:
            # Several outputs (var_mean): its getitems are the tensors, counted as nodes
            # where they are in the group; one outside it is a read of this kernel's output.
            outs = [graph.nodes[u] for u in users - inside if graph.nodes[u].target == "getitem"]
            if outs and all(o.shape is not None for o in outs):
                for o in outs:
                    total += numel(o.shape or ()) * (element_bytes(o.kineto_type or "") or 0)
                continue
            return None
        size = element_bytes(node.kineto_type or "")
        if size is None:
            return None
        if op_name(node.target).split("::")[-1] in _VIEWS and _aliases_output(graph, node, inside):
            continue  # a view of a tensor the group already writes
        total += numel(node.shape) * size
    return total


def _aliases_output(graph: FxGraph, node: FxNode, inside: set[str]) -> bool:
    src = node.args[0] if node.args else None
    while src is not None and src in inside:
        s = graph.nodes[src]
        if op_name(s.target).split("::")[-1] not in _VIEWS:
            return src in graph.outputs or bool(graph.users(src) - inside)
        src = s.args[0] if s.args else None
    return False
