"""Inductor's compile-info folder: each compiled graph's kernels, in call order, and the FX
nodes, modules and source lines each one fuses.

The folder is what ``TORCH_COMPILE_DEBUG=1`` (``torch._inductor.config.trace.enabled``) with
``trace.provenance_tracking_level = 1`` writes, one sub-folder per compiled graph
(``torchinductor/model__0_forward_1.0``, ``…/model__0_backward_3.1``; the number after the dot
counts graphs in the order they were compiled); ``gpuviz profile --compile-info`` writes it
beside the trace (:mod:`gpuviz.engine.compile_info`). Read from each graph's folder:

- ``output_code.py``, the code Inductor runs: each kernel's definition, with ``# kernel path:
  …/<hash>.py`` above Triton ones (the trace's ``kernel_hash`` arg names the same hash) and
  ``# Source node to ATen node mapping:`` lines (``source => post-grad nodes``); and in
  ``call()``, each kernel call in order, after a ``# [Provenance debug handles] name:N``
  comment;
- ``gpuviz_kernels.json`` (gpuviz's), else ``inductor_provenance_tracking_node_mappings.json``
  (``cppCodeToPost``, forward graphs only): each call ``name:N`` -> its post-grad FX nodes;
- ``gpuviz_nodes.json`` (gpuviz's): each post-grad node's module stack, shape and dtype;
- ``fx_graph_readable.py``: each node's ``# File: path:line`` (the user's source line).

Module paths are named as the profiler names module frames, ``Class_N``, N counting the
instances of a class in the order the forward graphs first use them (the order eager calls
them, for a model whose forward runs its modules once each), so that a compiled model's rows
read like the eager model's (``GPT_0.Block_1.Mlp_1``). Nothing here runs code from the folder:
the files are read as text and JSON (each may be gzipped: ``output_code.py.gz``).
"""

from __future__ import annotations

import gzip
import json
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuviz.analysis.inductor_graph import FxGraph, read_fx_graph

OUTPUT_CODE = "output_code.py"
NODES_FILE = "gpuviz_nodes.json"
KERNELS_FILE = "gpuviz_kernels.json"
MAPPINGS_FILE = "inductor_provenance_tracking_node_mappings.json"
READABLE_FILE = "fx_graph_readable.py"

_DEF = re.compile(r"^(\w+) = async_compile\.(?:triton|cpp_pybinding|cpp|cuda|halide)\(")
_KERNEL_PATH = re.compile(r"^# kernel path: (.+)$")
_MAPPING = re.compile(r"^#\s+(\w+) => (.+)$")
_SOURCE_NODES = re.compile(r"^\s*# (?:Topologically Sorted|Unsorted) Source Nodes: \[([^\]]*)\]")
_HANDLE = re.compile(r"^\s*# \[Provenance debug handles\] (\S+):(\d+)\s*$")
_FILE = re.compile(r"^\s*# File: (.+?):(\d+) in (\S+)")
_NODE = re.compile(r"^\s*(\w+)(?:: \"[^\"]*\")? = ")
#: Nodes that move or view data: a kernel's module and line come from its other nodes.
_TRIVIAL = re.compile(
    r"^(view|reshape|_unsafe_view|permute|transpose|t|expand|getitem|clone|_to_copy|convert_"
    r"element_type|squeeze|unsqueeze|slice|select|alias|full_default|full|where)(_\d+)?$"
)


SIBLING_SUFFIX = ".compile"
"""``run.json.gz`` -> ``run.compile/``: the compile-info folder ``gpuviz profile`` writes
beside a trace, found there by every command that reads the trace."""


def sibling_path(trace_path: str | os.PathLike[str]) -> Path:
    """Where the compile-info folder of a trace file or folder goes: ``run.json.gz`` ->
    ``run.compile/``, ``ranks/`` -> ``ranks.compile/``."""
    p = Path(trace_path)
    name = p.name
    for ext in (".json.gz", ".json"):
        if name.endswith(ext):
            name = name[: -len(ext)]
            break
    return p.with_name(name + SIBLING_SUFFIX)


def sibling_folder(trace_path: str | os.PathLike[str]) -> Path | None:
    """The compile-info folder beside a trace file or folder (:func:`sibling_path`), None
    where there is none."""
    folder = sibling_path(trace_path)
    return folder if folder.is_dir() else None


class CompileInfoError(ValueError):
    """A compile-info folder that is missing or holds no compiled graph."""


@dataclass(frozen=True)
class KernelCall:
    """One kernel call in a graph's ``call()``.

    Attributes
    ----------
    name : str
        ``triton_poi_fused_mul_silu_2``, ``extern_kernels.mm``, ``aten._scaled_dot_product_…``.
    base : str
        The name the trace shows for it: the kernel's name, or the ATen op's without
        namespace and overload (``mm``) for extern calls, whose op the trace records.
    extern : bool
        A library kernel (GEMM, attention) called through an ATen op, not generated code.
    nodes : tuple of str
        The post-grad FX nodes it computes (empty where the files do not say).
    """

    name: str
    base: str
    extern: bool
    nodes: tuple[str, ...] = ()


@dataclass
class CompiledGraph:
    """One compiled graph's folder, read."""

    folder: str
    backward: bool
    calls: list[KernelCall]
    hashes: dict[str, str]
    nodes: dict[str, dict[str, Any]]
    lines: dict[str, str]
    defined: dict[str, list[str]] = field(default_factory=dict)
    """Kernel name -> the post-grad nodes its definition's comments map its sources to."""
    fx: FxGraph = field(default_factory=FxGraph)
    """Each FX node's shape, dtype and arguments (:mod:`gpuviz.analysis.inductor_graph`)."""

    def module_of(self, call: KernelCall) -> tuple[tuple[str, str], ...] | None:
        """The module stack (``(qualified name, class)`` pairs, outermost first) of most of the
        call's nodes (data-moving nodes count only where nothing else does); None if unknown."""
        return _majority(call.nodes, lambda n: _stack(self.nodes.get(n)), self._grad)

    def line_of(self, call: KernelCall) -> str | None:
        """The ``path:line`` most of the call's nodes come from; None if unknown."""
        return _majority(call.nodes, lambda n: self.lines.get(n), self._grad)

    def _grad(self, name: str) -> bool:
        """In a backward graph, a node of the backward itself (not a forward node recomputed
        there): its module is the one whose gradient the kernel computes."""
        return not self.backward or bool((self.nodes.get(name) or {}).get("backward"))


@dataclass
class CompileInfo:
    """Every compiled graph of a compile-info folder, and module instance names.

    Attributes
    ----------
    root : str
    graphs : list of CompiledGraph
        In compile order.
    instance : dict
        Module qualified name -> ``Class_N``.
    """

    root: str
    graphs: list[CompiledGraph]
    instance: dict[str, str] = field(default_factory=dict)

    def module_path(self, stack: tuple[tuple[str, str], ...]) -> str:
        """``Block_1.Mlp_1`` for a module stack."""
        return ".".join(self.instance.get(q, f"{c}_?") for q, c in stack)

    def graph_of_hash(self) -> dict[str, int]:
        """Triton kernel hash -> the graph that defines it (the first, if several do)."""
        out: dict[str, int] = {}
        for i, g in enumerate(self.graphs):
            for h in g.hashes.values():
                out.setdefault(h, i)
        return out


def read_compile_info(root: str | os.PathLike[str]) -> CompileInfo:
    """Read a compile-info folder (any folder above the graphs' folders).

    Parameters
    ----------
    root : path

    Returns
    -------
    CompileInfo

    Raises
    ------
    CompileInfoError
        ``root`` is not a folder, or holds no ``output_code.py``.
    """
    base = Path(root)
    if not base.is_dir():
        raise CompileInfoError(f"{root}: not a folder")
    found = [*base.rglob(OUTPUT_CODE), *base.rglob(OUTPUT_CODE + ".gz")]
    folders = sorted({p.parent for p in found}, key=_compile_order)
    if not folders:
        raise CompileInfoError(
            f"{root}: no compiled graph (no {OUTPUT_CODE} below it); record with "
            "`gpuviz profile --compile-info` or TORCH_COMPILE_DEBUG=1 INDUCTOR_PROVENANCE=1"
        )
    graphs = [read_graph(f) for f in folders]
    info = CompileInfo(root=str(base), graphs=graphs)
    info.instance = _instance_names(graphs)
    return info


def read_graph(folder: Path) -> CompiledGraph:
    """One graph's folder (see the module docstring)."""
    text = _read_text(folder / OUTPUT_CODE) or ""
    hashes, mapped = _kernel_defs(text)
    kernels = _kernel_nodes(folder)
    calls = []
    for name, handle, at_call in _handles(text):
        # Per call, post-grad nodes first; then the call's own comment (the nodes it comes
        # from: one kernel called for two layers has two); the definition's, shared, last.
        fx = kernels.get(f"{name}:{handle}") or at_call or mapped.get(name) or []
        extern = not (name.startswith(("triton_", "cpp_")) or name in hashes)
        calls.append(KernelCall(name, _base(name) if extern else name, extern, tuple(fx)))
    nodes_json = _load_json(folder / NODES_FILE)
    got = nodes_json.get("nodes", {}) if isinstance(nodes_json, dict) else {}
    nodes: dict[str, dict[str, Any]] = got if isinstance(got, dict) else {}
    readable = _read_text(folder / READABLE_FILE)
    lines = _node_lines(readable)
    for name, node in nodes.items():
        # The node's own stack (the whole chain) is surer than the readable graph's comment.
        frames = (node or {}).get("stack") or []
        if frames and isinstance(frames[-1], list) and len(frames[-1]) >= 2:
            lines[name] = f"{frames[-1][0]}:{frames[-1][1]}"
    return CompiledGraph(
        folder=folder.name,
        backward="_backward_" in folder.name,
        calls=calls,
        hashes=hashes,
        nodes=nodes,
        lines=lines,
        defined=mapped,
        fx=read_fx_graph(readable, text, nodes),
    )


def _compile_order(folder: Path) -> tuple[int, str]:
    tail = folder.name.rsplit(".", 1)[-1]
    return (int(tail) if tail.isdigit() else 1 << 30, str(folder))


def _kernel_defs(text: str) -> tuple[dict[str, str], dict[str, list[str]]]:
    """Kernel name -> hash (from ``# kernel path``) and -> post-grad nodes (from the ``source
    => nodes`` comment lines above its definition)."""
    hashes: dict[str, str] = {}
    mapped: dict[str, list[str]] = {}
    comments: list[str] = []
    for line in text.splitlines():
        if line.startswith("#"):
            comments.append(line)
            continue
        m = _DEF.match(line)
        if m is not None:
            name = m.group(1)
            nodes: list[str] = []
            for c in comments:
                p = _KERNEL_PATH.match(c)
                if p is not None:
                    hashes[name] = Path(p.group(1).strip()).stem
                mm = _MAPPING.match(c)
                if mm is not None:
                    nodes += [n.strip() for n in mm.group(2).split(",") if n.strip()]
            if nodes:
                mapped[name] = list(dict.fromkeys(nodes))
        if line.strip():
            comments = []
    return hashes, mapped


def _handles(text: str) -> list[tuple[str, int, list[str]]]:
    """The calls of ``call()`` in order, by their provenance comments, each with the nodes of
    the ``# Topologically Sorted Source Nodes: [...]`` comment just above it (if any)."""
    out: list[tuple[str, int, list[str]]] = []
    source: list[str] = []
    for line in text.splitlines():
        m = _HANDLE.match(line)
        if m is not None:
            out.append((m.group(1), int(m.group(2)), source))
            source = []
            continue
        s = _SOURCE_NODES.match(line)
        source = [n.strip() for n in s.group(1).split(",") if n.strip()] if s else []
    return out


def _kernel_nodes(folder: Path) -> dict[str, list[str]]:
    """``name:N`` -> post-grad nodes, from gpuviz's file, else Inductor's mappings file."""
    got = _load_json(folder / KERNELS_FILE)
    if isinstance(got, dict) and isinstance(got.get("kernels"), dict):
        return {str(k): [str(n) for n in v] for k, v in got["kernels"].items()}
    got = _load_json(folder / MAPPINGS_FILE)
    if isinstance(got, dict) and isinstance(got.get("cppCodeToPost"), dict):
        return {str(k): [str(n) for n in v] for k, v in got["cppCodeToPost"].items()}
    return {}


def _base(name: str) -> str:
    """``extern_kernels.mm`` -> ``mm``; ``aten._foo.default`` -> ``_foo``."""
    parts = [p for p in name.split(".") if p not in ("default", "Tensor", "out")]
    return parts[-1] if parts else name


def _node_lines(text: str | None) -> dict[str, str]:
    """Node -> ``path:line`` of the ``# File:`` comment above it in the readable graph."""
    out: dict[str, str] = {}
    current: str | None = None
    for line in (text or "").splitlines():
        f = _FILE.match(line)
        if f is not None:
            current = f"{f.group(1)}:{f.group(2)}"
            continue
        if not line.strip():
            current = None
            continue
        n = _NODE.match(line)
        if n is not None and current is not None:
            out[n.group(1)] = current
    return out


def _read_text(path: Path) -> str | None:
    """The file's text, or its gzip copy's (``output_code.py.gz``: test data kept small);
    None where neither is."""
    if path.is_file():
        return path.read_text(encoding="utf-8", errors="replace")
    gz = path.with_name(path.name + ".gz")
    if gz.is_file():
        with gzip.open(gz, "rt", encoding="utf-8", errors="replace") as f:
            return f.read()
    return None


def _load_json(path: Path) -> Any:
    text = _read_text(path)
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _stack(node: dict[str, Any] | None) -> tuple[tuple[str, str], ...] | None:
    if not node or not node.get("modules"):
        return None
    return tuple((str(q), str(c)) for q, c in node["modules"])


def _majority(nodes: tuple[str, ...], of: Any, preferred: Any) -> Any:
    """The value ``of`` gives most of ``nodes``: of the ``preferred`` ones that do not only
    move data, else of those that do not only move data, else of all; ties: the first seen.
    None where no node has one."""
    picks = (
        lambda n: preferred(n) and not _TRIVIAL.match(n),
        lambda n: not _TRIVIAL.match(n),
        lambda n: True,
    )
    for pick in picks:
        votes = Counter(v for n in nodes if pick(n) and (v := of(n)) is not None)
        if votes:
            return votes.most_common(1)[0][0]
    return None


def _instance_names(graphs: list[CompiledGraph]) -> dict[str, str]:
    """Module qualified name -> ``Class_N``, numbered per class in first-use order (forward
    graphs first, in compile order; then backward-only modules)."""
    names: dict[str, str] = {}
    count: Counter[str] = Counter()
    for g in sorted(graphs, key=lambda g: g.backward):  # stable: compile order kept
        for node in g.nodes.values():
            for q, c in _stack(node) or ():
                if q not in names:
                    names[q] = f"{c}_{count[c]}"
                    count[c] += 1
    return names
