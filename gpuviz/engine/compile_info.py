"""Inductor's provenance for a profiled run: which FX nodes, modules and lines each compiled
kernel comes from (issue 49).

A trace of a ``torch.compile``'d model shows Inductor's kernels (``triton_poi_fused_mul_silu_2``)
under one ``Torch-Compiled Region`` range: the layers that wrote them are gone from it.
Inductor knows them while it compiles; :func:`enable_compile_info` asks it to write them down
beside the trace, in a folder that :mod:`gpuviz.analysis.inductor_provenance` reads:

- ``torch._inductor.config.trace.enabled`` and ``trace.provenance_tracking_level = 1`` (what
  ``TORCH_COMPILE_DEBUG=1`` turns on): one folder per compiled graph (``model__0_forward_1.0``,
  ``model__0_backward_3.1``) with ``output_code.py`` (each Triton kernel's ``# kernel path``,
  the hash the trace's ``kernel_hash`` arg names, and its ``# Topologically Sorted Source
  Nodes``), ``fx_graph_readable.py`` (each FX node's shape and ``# File: path:line``) and
  ``inductor_provenance_tracking_node_mappings.json`` (kernel -> post-grad FX nodes);
- a post-grad pass of gpuviz's that writes ``gpuviz_nodes.json`` into the same folder: each
  post-grad node's module stack (``nn_module_stack``, for backward nodes the forward node's
  ``fwd_nn_module_stack``), its stack trace and its output shape and dtype. Inductor writes no
  module path anywhere, and without one a kernel of ``blocks[0]`` and one of ``blocks[1]``
  share every line;
- ``gpuviz_kernels.json`` beside it: each kernel (``name:handle``) -> its post-grad nodes, for
  backward graphs too (Inductor's own mappings file is written for forward graphs only);
- ``force_disable_caches``: a graph taken from Inductor's caches is not compiled again, and
  writes nothing.

This costs compile time only (the files are written once per graph), never step time.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

# The files' names are the reader's: one place for the writer and the reader.
from gpuviz.analysis.inductor_provenance import KERNELS_FILE, NODES_FILE

NODES_VERSION = 1

_FRAME = re.compile(r'File "([^"]+)", line (\d+), in (\S+)')


def node_records(graph: Any) -> dict[str, Any]:
    """What :data:`NODES_FILE` holds for one post-grad FX graph.

    Parameters
    ----------
    graph : torch.fx.Graph

    Returns
    -------
    dict
        ``{"version": 1, "nodes": {name: {"target", "modules": [[qualified name, class], ...]
        outermost first, "backward": bool, "stack": [[file, line, function], ...] outermost
        first, "shape", "dtype"}}}``; a node without a module stack has ``"modules": []``.
    """
    nodes: dict[str, Any] = {}
    for node in graph.nodes:
        if node.op not in ("call_function", "call_method", "call_module"):
            continue
        meta = node.meta
        stack = meta.get("nn_module_stack")
        backward = False
        if not stack and meta.get("fwd_nn_module_stack"):
            stack, backward = meta.get("fwd_nn_module_stack"), True
        modules = []
        for value in (stack or {}).values():
            # (qualified name, class) in torch 2.x; the class may be a type or its name.
            qual, cls = value[0], value[1]
            cls_name = cls if isinstance(cls, str) else getattr(cls, "__name__", str(cls))
            modules.append([str(qual), cls_name.rsplit(".", 1)[-1]])
        val = meta.get("val")
        shape = getattr(val, "shape", None)
        nodes[node.name] = {
            "target": str(node.target),
            "modules": modules,
            "backward": backward,
            "stack": [
                [f, int(n), fn] for f, n, fn in _FRAME.findall(meta.get("stack_trace") or "")
            ],
            "shape": [_int_or_str(d) for d in shape] if shape is not None else None,
            "dtype": str(getattr(val, "dtype", "")) or None,
        }
    return {"version": NODES_VERSION, "nodes": nodes}


def _int_or_str(d: Any) -> int | str:
    try:
        return int(d)
    except (TypeError, ValueError):
        return str(d)  # a symbolic size (dynamic shapes)


def _make_pass(chained: Any) -> Any:
    """A post-grad custom pass (``CustomGraphPass``) that writes :data:`NODES_FILE` into the
    graph's debug folder, then runs the pass the script had set (if any)."""
    from torch._inductor.custom_graph_pass import CustomGraphPass, get_hash_for_files
    from torch._inductor.virtualized import V

    class GpuvizNodesPass(CustomGraphPass):
        def __call__(self, graph: Any) -> None:
            try:
                with V.debug.fopen(NODES_FILE, "w") as fd:
                    json.dump(node_records(graph), fd)
            except Exception:  # provenance must never break a compile
                pass
            if chained is not None:
                chained(graph)

        def uuid(self) -> Any:
            return get_hash_for_files((__file__,))

    return GpuvizNodesPass()


def _patch_kernel_dump() -> Callable[[], None]:
    """Write :data:`KERNELS_FILE` (kernel -> post-grad nodes) into each graph's debug folder.

    Inductor writes that map to ``inductor_provenance_tracking_node_mappings.json`` only for
    graphs with a pre-grad graph (forward ones), and names a backward kernel's nodes in
    ``output_code.py`` only for Triton kernels; it keeps the map for every graph, and hands
    it to ``dump_inductor_provenance_info`` after each graph's code is made."""
    import torch._inductor.debug as idebug
    from torch._inductor.virtualized import V

    original = idebug.dump_inductor_provenance_info

    def dump() -> dict[str, Any]:
        out = original()
        try:
            kernels = dict(idebug._inductor_triton_kernel_to_post_grad_node_info)
            with V.debug.fopen(KERNELS_FILE, "w") as fd:
                json.dump({"version": NODES_VERSION, "kernels": kernels}, fd)
        except Exception:  # provenance must never break a compile
            pass
        return out

    idebug.dump_inductor_provenance_info = dump

    def undo() -> None:
        idebug.dump_inductor_provenance_info = original

    return undo


def compile_info_folder(trace_base: str | os.PathLike[str]) -> Path:
    """The compile-info folder beside a trace file or rank folder: ``run.json.gz`` ->
    ``run.compile/``, where every command that reads the trace looks."""
    from gpuviz.analysis.inductor_provenance import sibling_path

    return sibling_path(trace_base)


def enable_compile_info(out_dir: str | os.PathLike[str]) -> Callable[[], None]:
    """Make Inductor write its provenance for every graph compiled from now on under
    ``out_dir`` (see the module's docstring), in this process.

    Parameters
    ----------
    out_dir : path
        The compile-info folder (``gpuviz profile`` uses ``<trace>.compile/``); Inductor
        writes ``torch_compile_debug/run_*/torchinductor/<graph>/`` under it.

    Returns
    -------
    callable
        Undoes the settings.
    """
    import torch._inductor.config as ic

    Path(out_dir).mkdir(parents=True, exist_ok=True)
    saved = {
        "trace.enabled": ic.trace.enabled,
        "trace.debug_dir": ic.trace.debug_dir,
        "trace.provenance_tracking_level": ic.trace.provenance_tracking_level,
        "force_disable_caches": ic.force_disable_caches,
        "post_grad_custom_post_pass": ic.post_grad_custom_post_pass,
    }
    ic.trace.enabled = True
    ic.trace.debug_dir = str(Path(out_dir).resolve())
    ic.trace.provenance_tracking_level = 1
    ic.force_disable_caches = True
    ic.post_grad_custom_post_pass = _make_pass(saved["post_grad_custom_post_pass"])
    undo_kernels = _patch_kernel_dump()

    def undo() -> None:
        for key, value in saved.items():
            obj: Any = ic.trace if key.startswith("trace.") else ic
            setattr(obj, key.split(".")[-1], value)
        undo_kernels()

    return undo
