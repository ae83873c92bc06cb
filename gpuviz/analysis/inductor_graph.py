"""The FX nodes of one compiled graph, with their shapes, dtypes and arguments, read from the
text of Inductor's compile-info files (issue 49): what the FLOPs and bytes of a generated
kernel are counted from (:mod:`gpuviz.analysis.fused_flops`).

Three files describe the nodes, each in part:

- ``fx_graph_readable.py``: the graph Inductor was handed, one node a line, annotated with its
  output's dtype and shape (``mm: "bf16[1024, 768]" = torch.ops.aten.mm.default(view, t)``),
  its inputs in the signature (``primals_3: "f32[4, 16, 32]"``) and its outputs in the
  ``return (...)`` line. A node of several outputs (``var_mean``) has no annotation; its
  ``getitem`` nodes have;
- ``output_code.py``'s ``# Graph fragment:`` comment above each Triton kernel (torch 2.10 and
  later): the post-grad nodes the kernel computes, each with its dtype, shape and arguments,
  and the tensors it reads (``PlaceHolder``). Post-grad passes rename and add nodes
  (``permute_36``), so these are surer than the readable graph's, and win where both name a
  node;
- ``gpuviz_nodes.json`` (:mod:`gpuviz.engine.compile_info`): each post-grad node's target,
  shape and dtype (no arguments); it fills in nodes that neither of the others has.

Nothing here runs code from the files: they are read as text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

#: Inductor's short dtype names (``f32``) -> Kineto's ``Input type`` strings, which
#: :mod:`gpuviz.analysis.dtypes` sizes and classes.
KINETO_TYPES = {
    "f64": "double",
    "f32": "float",
    "f16": "c10::Half",
    "bf16": "c10::BFloat16",
    "f8e4m3fn": "c10::Float8_e4m3fn",
    "f8e5m2": "c10::Float8_e5m2",
    "i64": "long int",
    "i32": "int",
    "i16": "short int",
    "i8": "signed char",
    "u8": "unsigned char",
    "b8": "bool",
    "c64": "c10::complex<float>",
    "c128": "c10::complex<double>",
}
_TORCH_DTYPES = {
    "torch.float64": "f64",
    "torch.float32": "f32",
    "torch.float16": "f16",
    "torch.bfloat16": "bf16",
    "torch.float8_e4m3fn": "f8e4m3fn",
    "torch.float8_e5m2": "f8e5m2",
    "torch.int64": "i64",
    "torch.int32": "i32",
    "torch.int16": "i16",
    "torch.int8": "i8",
    "torch.uint8": "u8",
    "torch.bool": "b8",
}

_ANNOTATION = re.compile(r"^(\w+)\[([^\]]*)\]")
_READABLE = re.compile(r'^\s+(\w+)(?:: "([^"]*)")? = (.+?)(?:;  .*)?$')
_CALL = re.compile(r"^(?:torch\.ops\.)?([\w.]+)\((.*)\)$")
_GETITEM = re.compile(r"^(\w+)\[(\d+)\]$")
_SIGNATURE = re.compile(r"^\s*def forward\(self,? ?(.*)\):\s*$")
_PARAM = re.compile(r'(\w+): "([^"]*)"')
_RETURN = re.compile(r"^\s+return \((.*)\)\s*$")
_FRAGMENT_NODE = re.compile(
    r'^#\s+%(\w+) : \w+ "([^"]*)"(?:\[[^\]]*\])? = call_function\[target=([^\]]+)\]'
    r"\(args = \((.*)\), kwargs = \{(.*)\}\)\s*$"
)
_FRAGMENT_INPUT = re.compile(r'^#\s+%(\w+) : \w+ "([^"]*)"(?:\[[^\]]*\])? = PlaceHolder\[')
_FRAGMENT_RETURN = re.compile(r"^#\s+return (%.*)$")
_WORD = re.compile(r"%?([A-Za-z_]\w*)")


@dataclass(frozen=True)
class FxNode:
    """One FX node.

    Attributes
    ----------
    target : str
        ``aten.mul.Tensor``, ``prims.convert_element_type.default``, ``getitem``;
        ``placeholder`` for a graph input.
    shape : tuple of int or None
        The output's shape (None: not annotated, or symbolic).
    dtype : str or None
        Inductor's short name (``f32``, ``bf16``).
    args : tuple
        The positional arguments, in order: a node's name, or None for anything else (a
        number, a list, None).
    refs : tuple of str
        Every node named in its arguments (lists and keywords included).
    """

    target: str
    shape: tuple[int, ...] | None
    dtype: str | None
    args: tuple[str | None, ...] = ()
    refs: tuple[str, ...] = ()

    @property
    def kineto_type(self) -> str | None:
        """The output's element type as Kineto writes it (``float``), None where unknown."""
        return KINETO_TYPES.get(self.dtype or "")


@dataclass
class FxGraph:
    """A compiled graph's nodes (see the module docstring) and its outputs."""

    nodes: dict[str, FxNode] = field(default_factory=dict)
    outputs: frozenset[str] = frozenset()
    """The graph's outputs, and the nodes a generated kernel returns (its fragment's
    ``return``): tensors written to memory."""
    _users: dict[str, set[str]] | None = field(default=None, init=False, repr=False)

    def users(self, name: str) -> set[str]:
        """The nodes that take ``name`` as an argument."""
        if self._users is None:
            self._users = {}
            for n, node in self.nodes.items():
                for r in node.refs:
                    self._users.setdefault(r, set()).add(n)
        return self._users.get(name, set())


def parse_annotation(text: str) -> tuple[tuple[int, ...] | None, str | None]:
    """``"bf16[1024, 768][768, 1]cuda:0"`` -> ((1024, 768), "bf16"); a symbolic size -> no
    shape."""
    m = _ANNOTATION.match(text.strip())
    if m is None:
        return None, None
    dims = [d.strip() for d in m.group(2).split(",") if d.strip()]
    if not all(d.isdigit() for d in dims):
        return None, m.group(1)
    return tuple(int(d) for d in dims), m.group(1)


def read_fx_graph(readable: str | None, output_code: str | None, nodes_json: Any) -> FxGraph:
    """The nodes of one graph from its files' texts (any may be None: missing).

    Parameters
    ----------
    readable : str or None
        ``fx_graph_readable.py``.
    output_code : str or None
        ``output_code.py``.
    nodes_json : dict or None
        ``gpuviz_nodes.json``'s ``"nodes"``.

    Returns
    -------
    FxGraph
    """
    graph = FxGraph()
    if readable:
        _read_readable(readable, graph)
    if output_code:
        _read_fragments(output_code, graph)
    for name, rec in (nodes_json or {}).items():
        if name in graph.nodes or not isinstance(rec, dict):
            continue
        shape = rec.get("shape")
        dims = tuple(shape) if isinstance(shape, list) else None
        ok = dims is not None and all(isinstance(d, int) for d in dims)
        graph.nodes[name] = FxNode(
            target=str(rec.get("target") or ""),
            shape=dims if ok else None,
            dtype=_TORCH_DTYPES.get(str(rec.get("dtype"))),
        )
    return graph


def _read_readable(text: str, graph: FxGraph) -> None:
    for line in text.splitlines():
        sig = _SIGNATURE.match(line)
        if sig is not None:
            for param in _split(sig.group(1)):
                # An input without an annotation is still an input: of unknown size.
                m = _PARAM.fullmatch(param)
                name = m.group(1) if m is not None else param.split(":")[0].strip()
                if re.fullmatch(r"\w+", name):
                    got = parse_annotation(m.group(2)) if m is not None else (None, None)
                    graph.nodes[name] = FxNode("placeholder", *got)
            continue
        ret = _RETURN.match(line)
        if ret is not None:
            graph.outputs = frozenset(_names(ret.group(1), graph))
            continue
        m = _READABLE.match(line)
        if m is None:
            continue
        name, ann, rhs = m.group(1), m.group(2), m.group(3).strip()
        shape, dtype = parse_annotation(ann) if ann else (None, None)
        item = _GETITEM.match(rhs)
        if item is not None:
            graph.nodes[name] = FxNode("getitem", shape, dtype, (item.group(1),), (item.group(1),))
            continue
        call = _CALL.match(rhs)
        if call is None:
            continue
        args, refs = _arguments(call.group(2), graph, percent=False)
        graph.nodes[name] = FxNode(call.group(1), shape, dtype, args, refs)


def _read_fragments(text: str, graph: FxGraph) -> None:
    written: set[str] = set()
    for line in text.splitlines():
        if not line.startswith("#"):
            continue
        r = _FRAGMENT_RETURN.match(line)
        if r is not None:
            written.update(_names(r.group(1), graph, percent=True))
            continue
        m = _FRAGMENT_NODE.match(line)
        if m is not None:
            shape, dtype = parse_annotation(m.group(2))
            args, refs = _arguments(m.group(4), graph, percent=True)
            refs = tuple(dict.fromkeys((*refs, *_names(m.group(5), graph, percent=True))))
            target = m.group(3).removeprefix("torch.ops.")
            graph.nodes[m.group(1)] = FxNode(target, shape, dtype, args, refs)
            continue
        p = _FRAGMENT_INPUT.match(line)
        if p is not None and p.group(1) not in graph.nodes:
            shape, dtype = parse_annotation(p.group(2))
            graph.nodes[p.group(1)] = FxNode("placeholder", shape, dtype)
    # What a kernel returns it writes to memory: an output of its group, whoever reads it.
    graph.outputs = graph.outputs | frozenset(w for w in written if w in graph.nodes)


def _names(text: str, graph: FxGraph, percent: bool = False) -> list[str]:
    """The node names in ``text`` (``%name`` in a fragment; else words that name a node)."""
    if percent:
        return re.findall(r"%(\w+)", text)
    return [w for w in _WORD.findall(text) if w in graph.nodes]


def _split(text: str) -> list[str]:
    """``a, [b, c], d=(1, 2)`` -> its top-level comma-separated parts."""
    parts: list[str] = []
    depth, cur = 0, list[str]()
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


def _arguments(
    text: str, graph: FxGraph, percent: bool
) -> tuple[tuple[str | None, ...], tuple[str, ...]]:
    """The positional arguments (a node's name or None each) and every node referred to."""
    args: list[str | None] = []
    for p in _split(text):
        if "=" in p and not p.startswith(("[", "(")):
            continue  # a keyword argument: referred to, not positional
        word = p[1:] if percent and p.startswith("%") else p
        ok = (word in graph.nodes) if not percent else p.startswith("%")
        args.append(word if ok and re.fullmatch(r"\w+", word) else None)
    refs = tuple(dict.fromkeys(_names(text, graph, percent)))
    return tuple(args), refs
