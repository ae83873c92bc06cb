"""Compiled regions: each kernel of a ``torch.compile``'d graph to the FX nodes it fuses, and
through them to the module and source line that wrote them (issue 49).

In a trace, a compiled graph runs as one ``## Call CompiledFxGraph <key> ##`` range (inside
``Torch-Compiled Region: f/n`` or ``CompiledFunction``); inside it, each Inductor kernel is a
``cpu_op`` named for the kernel (``triton_poi_fused_mul_silu_2``, args ``kernel_hash``,
``kernel_file``) and each library kernel (GEMM, attention) the ATen op that Inductor called
(``aten::mm``). The profiler sees no module frames there: by the trace alone every kernel
belongs to the module that was compiled (``OptimizedModule_0.GPT_0``) and to the line that
called it. The origin of each kernel is found, in this order:

1. ``"trace"``: provenance recorded in the kernel's own args. torch (2.13) records none yet
   (``kernel_hash``, ``kernel_file`` and launch settings only), so no kernel gets it today;
   the name is kept for when it does.
2. ``"compile-info"``: Inductor's compile-info folder
   (:mod:`gpuviz.analysis.inductor_provenance`). The graph a range runs is the one whose
   Triton kernels' hashes (and names) the range's ops carry; its ops, in order, are matched to
   the graph's kernel calls in order (a kernel that the graph calls twice, for two layers, is
   told apart by its place), and each call's FX nodes give the module path and line. Ranges
   named ``<key>`` share their graph; ``None`` (caches off, as ``--compile-info`` records)
   names no graph, so each such range is matched alone. Under ``mode="reduce-overhead"`` the
   graph's first call runs inside ``CUDAGraphNode.record`` ranges (the capture): its calls are
   the range's own, and each replayed kernel takes the call of the launch its capture recorded
   (:mod:`gpuviz.analysis.graph_merge`), where the capture is in the same trace.
3. ``"kernel-name"``: the kernel's name, which says which ATen ops it fuses
   (:func:`gpuviz.analysis.inductor_names.fused_ops`) but not where they came from: such a
   kernel stays on the compiled module and line.

:func:`refine` applies the origins to a breakdown table: module and line rows gain the
compiled model's modules (``OptimizedModule_0.GPT_0.Block_1.Mlp_1``) and lines, whose device
time moves there from the compiled module's (or line's) self time; op and kernel rows of
Inductor kernels gain ``fused_ops``, ``fused_nodes``, ``modules`` and ``attribution_source``.
A moved row's host time is unknown (the compiled code has no frames of it): ``null`` in JSON.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from gpuviz.analysis.attribution import Attribution, NodeKind
from gpuviz.analysis.breakdown_table import Breakdown, BreakdownRow, empty_row
from gpuviz.analysis.graph_merge import merge_of
from gpuviz.analysis.inductor_names import fused_ops, is_inductor_kernel
from gpuviz.analysis.inductor_provenance import (
    CompiledGraph,
    CompileInfo,
    CompileInfoError,
    read_compile_info,
    sibling_folder,
)
from gpuviz.analysis.names import name_mask
from gpuviz.trace.model import Trace

I64 = npt.NDArray[np.int64]

REGION_PREFIX = "## Call CompiledFxGraph"
CUDAGRAPH_RECORD = "CUDAGraphNode.record"
"""The ``record_function`` range Inductor runs each compiled graph in."""

#: ``attribution_source`` values, by :attr:`KernelOrigins.source` code (0: not compiled code).
SOURCES = (None, "trace", "compile-info", "kernel-name")
TRACE, COMPILE_INFO, KERNEL_NAME = 1, 2, 3

CPU_UNKNOWN = "unknown (compiled code: the profiler records no frames of its modules or lines)"


@dataclass
class KernelOrigins:
    """Where each kernel of compiled code came from; arrays indexed like ``Attribution.gpu_rows``.

    Attributes
    ----------
    source : uint8
        Index into :data:`SOURCES` (0: the kernel is not compiled code).
    module, line, nodes, ops : int64
        Ids into ``modules`` (paths below the compiled module, ``Block_1.Mlp_1``), ``lines``
        (``path:line``), ``node_sets`` (post-grad FX node names) and ``op_sets`` (ATen ops);
        -1 where unknown.
    call : int64
        The forest node of the op that ran the kernel inside its compiled range, -1 elsewhere.
    graph, index : int64
        The compiled graph (an index into ``CompileInfo.graphs``) and its kernel call
        (into ``CompiledGraph.calls``) the kernel was matched to; -1 where none.
    region : int64
        The forest node of the compiled range that ran the kernel (for a CUDA graph's replay,
        the range of the replay, not of its capture), -1 where none.
    """

    source: npt.NDArray[np.uint8]
    module: I64
    line: I64
    nodes: I64
    ops: I64
    call: I64
    graph: I64 = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    index: I64 = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    region: I64 = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    modules: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    node_sets: list[tuple[str, ...]] = field(default_factory=list)
    op_sets: list[tuple[str, ...]] = field(default_factory=list)

    def matched_share(self, dur_ns: npt.ArrayLike) -> float | None:
        """The share of compiled kernels' time that the compile info placed; None if none."""
        d = np.asarray(dur_ns, dtype=np.float64)
        compiled = self.source > 0
        total = float(d[compiled].sum())
        return None if total <= 0 else float(d[self.source == COMPILE_INFO].sum()) / total


COMPILE_INFO_KEY = "compile_info"
"""Where a trace keeps its compile info (``trace.derived``), once a command has read it."""


def attach_compile_info(trace: Trace, info: CompileInfo | None) -> None:
    """Keep ``info`` with ``trace``: every table of it made afterwards uses it.

    Parameters
    ----------
    trace : Trace
    info : CompileInfo or None
        None forgets it.
    """
    if info is None:
        trace.derived.pop(COMPILE_INFO_KEY, None)
    else:
        trace.derived[COMPILE_INFO_KEY] = info


def attach_sibling_compile_info(trace: Trace, path: str | os.PathLike[str]) -> str | None:
    """Attach the compile-info folder beside the trace file or folder ``path``
    (``run.json.gz`` -> ``run.compile/``) if there is one: what the app and the agents' server
    do on opening a trace, as the CLI's commands do.

    Returns
    -------
    str or None
        Why a folder that is there could not be read (a warning to show); None otherwise.
    """
    folder = sibling_folder(path)
    if folder is None:
        return None
    try:
        attach_compile_info(trace, read_compile_info(folder))
    except (CompileInfoError, OSError) as exc:
        return str(exc)
    return None


def compile_info_of(trace: Trace) -> CompileInfo | None:
    """The compile info attached to ``trace`` (:func:`attach_compile_info`), or None."""
    info = trace.derived.get(COMPILE_INFO_KEY)
    return info if isinstance(info, CompileInfo) else None


def compiled_origins(att: Attribution, info: CompileInfo | None = None) -> KernelOrigins:
    """The origin of every kernel of ``att`` (see the module docstring).

    Parameters
    ----------
    att : Attribution
    info : CompileInfo, optional
        The trace's compile-info folder, read; without it, kernel names only.

    Returns
    -------
    KernelOrigins
    """
    # The memo holds ``info`` too: while it lives, its id names no other folder's info.
    kept: tuple[CompileInfo | None, KernelOrigins] = att.memo(
        f"compiled_origins:{id(info)}", lambda: (info, _origins(att, info))
    )
    return kept[1]


def _origins(att: Attribution, info: CompileInfo | None) -> KernelOrigins:
    n = len(att.gpu_rows)
    out = KernelOrigins(
        source=np.zeros(n, dtype=np.uint8),
        module=np.full(n, -1, dtype=np.int64),
        line=np.full(n, -1, dtype=np.int64),
        nodes=np.full(n, -1, dtype=np.int64),
        ops=np.full(n, -1, dtype=np.int64),
        call=np.full(n, -1, dtype=np.int64),
        graph=np.full(n, -1, dtype=np.int64),
        index=np.full(n, -1, dtype=np.int64),
        region=np.full(n, -1, dtype=np.int64),
    )
    sym = att.trace.symbols
    is_op = att.kind == NodeKind.OP
    inductor = name_mask(sym, is_inductor_kernel)[att.name] & is_op
    region = name_mask(sym, lambda s: s.startswith(REGION_PREFIX))[att.name]
    region &= att.kind == NodeKind.ANNOTATION
    # cudagraph trees run a graph's first call inside nested CUDAGraphNode.record ranges: the
    # calls under them are the range's own, so each node's parent skips them.
    wrapper = name_mask(sym, lambda s: s.startswith(CUDAGRAPH_RECORD))[att.name]
    region_node = att.op_parent.copy()  # of each top call: its compiled range
    skip = np.flatnonzero((region_node >= 0) & wrapper[np.maximum(region_node, 0)])
    while len(skip):  # each pass climbs one level: it ends at the forest's roots
        region_node[skip] = att.op_parent[region_node[skip]]
        skip = skip[(region_node[skip] >= 0) & wrapper[np.maximum(region_node[skip], 0)]]
    top = is_op & ~wrapper & (region_node >= 0) & region[np.maximum(region_node, 0)]
    call_of = att.forest.nearest(top)
    ok = att.gpu_launch >= 0
    kcall = np.where(ok, call_of[np.maximum(att.gpu_launch, 0)], -1)
    out.region = np.where(kcall >= 0, region_node[np.maximum(kcall, 0)], -1)
    # A replayed kernel (mode="reduce-overhead") takes the call of its capture launch where
    # the capture is in this trace (graph_merge; another trace's has its own compile info).
    merge = merge_of(att) if top.any() else None  # no compiled range: nothing to place
    mine = merge.own(att) if merge is not None else np.zeros(0, dtype=bool)
    if merge is not None and mine.any():
        own = merge.kernel[mine]
        kcall[own] = call_of[merge.launch_node[mine]]
        out.region[own] = att.forest.nearest(region)[att.gpu_launch[own]]
    out.call = kcall
    # Kernel names first: every Inductor kernel at least says what ops it fuses.
    launch_op = np.where(att.gpu_op >= 0, att.gpu_op, 0)
    named = (att.gpu_op >= 0) & inductor[launch_op]
    ids: dict[tuple[str, ...], int] = {}
    for k in np.flatnonzero(named).tolist():
        ops = tuple(fused_ops(sym[int(att.name[launch_op[k]])]) or ())
        out.ops[k] = ids.setdefault(ops, len(ids))
    out.op_sets = list(ids)
    out.source[named] = KERNEL_NAME
    if info is not None and info.graphs:
        _from_info(att, info, out, top, region_node, inductor, kcall)
    return out


def _from_info(
    att: Attribution,
    info: CompileInfo,
    out: KernelOrigins,
    top: npt.NDArray[np.bool_],
    region_node: I64,
    inductor: npt.NDArray[np.bool_],
    kcall: I64,
) -> None:
    """Match each compiled range's ops to its graph's calls and fill the origins in."""
    trace, sym = att.trace, att.trace.symbols
    calls = np.flatnonzero(top)
    if not len(calls):
        return
    by_region = region_node[calls]
    order = np.argsort(by_region, kind="stable")  # forest order within a region: start order
    calls, by_region = calls[order], by_region[order]
    cut = np.flatnonzero(np.diff(by_region)) + 1
    hash_graph = info.graph_of_hash()
    # region name symbol -> graph. A name carries the graph's cache key; without one (caches
    # off, as --compile-info records: "## Call CompiledFxGraph None ##") every range is its own.
    graph_of_name: dict[int, int | None] = {}
    placed: dict[int, tuple[int, int]] = {}  # call node -> (graph, call index)
    for part in np.split(calls, cut):
        if not len(part):
            continue
        rname = int(att.name[int(region_node[part[0]])])
        if sym[rname].endswith(" None ##"):
            rname = -1 - int(part[0])  # a key no symbol has: this range alone
        names = [sym[int(att.name[c])] for c in part.tolist()]
        if rname not in graph_of_name:
            hashes = [
                _kernel_hash(trace, int(att.forest.rows[c])) for c in part.tolist() if inductor[c]
            ]
            graph_of_name[rname] = _pick_graph(info, names, hashes, hash_graph)
        g = graph_of_name[rname]
        if g is None:
            continue
        for node, k in _align(names, info.graphs[g]):
            placed[int(part[node])] = (g, k)
    mod_ids: dict[str, int] = {}
    line_ids: dict[str, int] = {}
    node_ids: dict[tuple[str, ...], int] = {}
    op_ids = {ops: i for i, ops in enumerate(out.op_sets)}
    memo: dict[tuple[int, int], tuple[int, int, int, int]] = {}
    for k in np.flatnonzero(kcall >= 0).tolist():
        hit = placed.get(int(kcall[k]))
        if hit is None:
            continue
        if hit not in memo:
            graph = info.graphs[hit[0]]
            call = graph.calls[hit[1]]
            stack = graph.module_of(call)
            line = graph.line_of(call)
            ops = _node_ops(graph, call.nodes)
            memo[hit] = (
                mod_ids.setdefault(info.module_path(stack), len(mod_ids)) if stack else -1,
                line_ids.setdefault(line, len(line_ids)) if line else -1,
                node_ids.setdefault(call.nodes, len(node_ids)) if call.nodes else -1,
                op_ids.setdefault(ops, len(op_ids)) if ops else -1,
            )
        m, li, nd, op = memo[hit]
        out.module[k], out.line[k], out.nodes[k] = m, li, nd
        out.graph[k], out.index[k] = hit
        if op >= 0:
            out.ops[k] = op
        out.source[k] = COMPILE_INFO
    out.modules, out.lines = list(mod_ids), list(line_ids)
    out.node_sets, out.op_sets = list(node_ids), list(op_ids)


def _kernel_hash(trace: Trace, row: int) -> str | None:
    args = trace.args.get(int(trace.slices.args[row]))
    h = args.get("kernel_hash") if isinstance(args, dict) else None
    return str(h) if h else None


def _pick_graph(
    info: CompileInfo, names: list[str], hashes: list[str | None], hash_graph: dict[str, int]
) -> int | None:
    """The graph a range runs: most of its Triton kernels' hashes, else of its kernel names."""
    votes = np.zeros(len(info.graphs), dtype=np.int64)
    for h in hashes:
        if h is not None and h in hash_graph:
            votes[hash_graph[h]] += 1 << 20  # a hash names one kernel's code: it outranks names
    wanted = set(names)
    for i, g in enumerate(info.graphs):
        votes[i] += sum(1 for c in g.calls if not c.extern and c.name in wanted)
    best = int(np.argmax(votes)) if len(votes) else -1
    return best if best >= 0 and votes[best] > 0 else None


def _align(names: Sequence[str], graph: CompiledGraph) -> list[tuple[int, int]]:
    """Pairs (op index, call index) matching a range's ops to the graph's calls in order: each
    op takes the next call of its name (ATen ops by their name without ``aten::``); ops the
    graph does not call (``aten::empty_strided`` of its buffers) are passed over."""
    bases = [c.base for c in graph.calls]
    pairs: list[tuple[int, int]] = []
    j = 0
    for i, name in enumerate(names):
        base = name[6:] if name.startswith("aten::") else name
        try:
            k = bases.index(base, j)
        except ValueError:
            continue
        pairs.append((i, k))
        j = k + 1
    return pairs


def _node_ops(graph: CompiledGraph, nodes: tuple[str, ...]) -> tuple[str, ...]:
    """The distinct ATen ops (``aten.mul.Tensor`` -> ``mul``) of ``nodes``, in order."""
    ops: dict[str, None] = {}
    for n in nodes:
        target = str((graph.nodes.get(n) or {}).get("target") or "")
        if target.startswith("aten."):
            ops[target.split(".")[1]] = None
    return tuple(ops)


def place_kernels(
    att: Attribution,
    kernels: npt.ArrayLike,
    modules: list[str],
    lines: list[str],
    in_module: npt.ArrayLike,
) -> tuple[list[str], list[str]]:
    """Kernels' module paths and lines as the trace gives them, with the compiled ones placed
    (as :func:`refine` places them in the tables): what the Timeline's details and the
    advisor's evidence name.

    Parameters
    ----------
    att : Attribution
    kernels : array_like of int
        Indices into ``att.gpu_rows`` (-1: not a kernel; left as it is).
    modules, lines : list of str
        Each one's module path (or row outside modules) and line by the trace (``""``: none).
    in_module : array_like of bool
        Whether each of ``modules`` is a module path (not a row outside modules).

    Returns
    -------
    (list of str, list of str)
        New lists; a compiled kernel's module is its compiled module's path followed by the
        module it came from, its line the model's line.
    """
    origins = compiled_origins(att, compile_info_of(att.trace))
    mods, lns = list(modules), list(lines)
    inside = np.asarray(in_module, dtype=bool)
    for i, k in enumerate(np.asarray(kernels, dtype=np.int64).tolist()):
        if k < 0 or origins.source[k] != COMPILE_INFO:
            continue
        m, li = int(origins.module[k]), int(origins.line[k])
        if m >= 0:
            sub = origins.modules[m]
            mods[i] = f"{mods[i]}.{sub}" if inside[i] else sub
        if li >= 0:
            lns[i] = origins.lines[li]
    return mods, lns


def refine(table: Breakdown, att: Attribution, origins: KernelOrigins) -> Breakdown:
    """``table`` with the compiled kernels' origins applied (see the module docstring).

    Parameters
    ----------
    table : Breakdown
        A table of ``att`` (any ``by``).
    att : Attribution
    origins : KernelOrigins

    Returns
    -------
    Breakdown
        A new table (``table`` is left as it is); the same one where nothing is compiled.
    """
    if not (origins.source > 0).any():
        return table
    if table.by == "module":
        return _move(table, att, origins, origins.module, origins.modules, nested=True)
    if table.by == "line":
        keys = [_line_key(line, table) for line in origins.lines]
        return _move(table, att, origins, origins.line, keys, nested=False)
    if table.by in ("op", "op-shape", "kernel"):
        return _annotate(table, origins)
    return table


def _line_key(line: str, table: Breakdown) -> str:
    """``/abs/path/gpt_train.py:31`` as the trace writes that file's lines (paths relative
    to their ``sys.path`` entry: ``gpt_train.py:31``) where the table has a line of it."""
    path, _, _ = line.rpartition(":")
    for row in table.rows:
        p = row.key.rpartition(":")[0]
        if p and (path == p or path.endswith("/" + p)):
            return p + line[len(path) :]
    return line


def _move(
    table: Breakdown,
    att: Attribution,
    origins: KernelOrigins,
    key_id: I64,
    keys: list[str],
    nested: bool,
) -> Breakdown:
    """Move each placed kernel's device time from its row's self time to the row of its key
    (below the old row's module path where ``nested``), adding the rows it needs."""
    rows = [_copy(r) for r in table.rows]
    index = {r.key: i for i, r in enumerate(rows)}
    kernel_row = table.kernel_row.copy()
    regions: dict[int, set[int]] = {}
    back = att.backward[np.maximum(att.gpu_launch, 0)] & (att.gpu_launch >= 0)
    region_of = origins.region
    sel = np.flatnonzero((key_id >= 0) & (kernel_row >= 0))
    # One step per (old row, key, phase), not per kernel: a trace holds millions of kernels.
    combo = (kernel_row[sel] * (len(keys) + 1) + key_id[sel]) * 2 + back[sel]
    uniq, inv = np.unique(combo, return_inverse=True)
    inv = inv.reshape(-1)
    sums = np.bincount(inv, weights=att.gpu_dur_ns[sel].astype(np.float64), minlength=len(uniq))
    pairs = np.unique(np.stack([inv, region_of[sel]], axis=1), axis=0)
    leaf_of = np.full(len(uniq), -1, dtype=np.int64)
    for c, (code, total) in enumerate(zip(uniq.tolist(), sums.tolist(), strict=True)):
        is_back, rest = code % 2, code // 2
        old_i, sub = rest // (len(keys) + 1), keys[rest % (len(keys) + 1)]
        old = rows[old_i]
        if nested and old.kind == "module":
            chain = [f"{old.key}.{p}" for p in _prefixes(sub)]
        elif nested:
            chain = _prefixes(sub)
        else:
            chain = [sub]
        if chain[-1] == old.key:
            leaf_of[c] = old_i
            continue
        d = round(total)
        old.device_self_ns -= d
        seen = set(pairs[pairs[:, 0] == c, 1].tolist())
        for depth, key in enumerate(chain):
            i = index.get(key)
            if i is None:
                i = index[key] = len(rows)
                rows.append(_new_row(key, "module" if nested else "line", old.key))
            row = rows[i]
            row.device_total_ns += d
            if is_back:
                row.backward_device_ns = (row.backward_device_ns or 0) + d
            else:
                row.forward_device_ns = (row.forward_device_ns or 0) + d
            if depth == len(chain) - 1:
                row.device_self_ns += d
                leaf_of[c] = i
            if row.extra.get("attribution_source") == "compile-info":
                regions.setdefault(i, set()).update(seen)
    kernel_row[sel] = leaf_of[inv]
    for i, seen in regions.items():
        rows[i].calls = len(seen)
    out = Breakdown(
        by=table.by,
        rows=rows,
        kernel_rows=table.kernel_rows,
        kernel_row=kernel_row,
        unattributed_device_ns=table.unattributed_device_ns,
    )
    return out.sorted(by_self=table.by == "line")


def _prefixes(path: str) -> list[str]:
    parts = path.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


def _copy(r: BreakdownRow) -> BreakdownRow:
    return BreakdownRow(**{**r.__dict__, "extra": dict(r.extra)})


def _new_row(key: str, kind: str, inside: str) -> BreakdownRow:
    # calls: the compiled ranges that ran its kernels (set after); host time: unknown.
    extra = {
        "cpu_self_us": None,
        "cpu_total_us": None,
        "cpu_note": CPU_UNKNOWN,
        "attribution_source": "compile-info",
        "compiled_in": inside,
    }
    return empty_row(key, kind, extra=extra)


def _ids(ids: I64) -> list[int]:
    """The distinct ids (-1 left out)."""
    u = np.unique(ids)
    return [int(i) for i in u[u >= 0]]


def _annotate(table: Breakdown, origins: KernelOrigins) -> Breakdown:
    """Op and kernel rows of compiled kernels: what they fuse, where from, and how known."""
    rows = [_copy(r) for r in table.rows]
    compiled = np.flatnonzero((origins.source > 0) & (table.kernel_row >= 0))
    order = np.argsort(table.kernel_row[compiled], kind="stable")
    compiled = compiled[order]
    at = table.kernel_row[compiled]
    cut = np.flatnonzero(np.diff(at)) + 1
    for ks in np.split(compiled, cut):
        if not len(ks):
            continue
        row = rows[int(table.kernel_row[ks[0]])]
        src = origins.source[ks]
        row.extra["attribution_source"] = SOURCES[int(src.min())]
        ops = {o for j in _ids(origins.ops[ks]) for o in origins.op_sets[j]}
        row.extra["fused_ops"] = sorted(ops)
        if (src == COMPILE_INFO).any():
            nodes = {x for j in _ids(origins.nodes[ks]) for x in origins.node_sets[j]}
            mods = {origins.modules[j] for j in _ids(origins.module[ks])}
            row.extra["fused_nodes"] = sorted(nodes)
            row.extra["modules"] = sorted(mods)
        if row.flops is None and table.by in ("op", "op-shape"):
            # compiled_calls.annotate_fused_flops counts it where the compile info can.
            row.extra["flops_note"] = (
                "unknown (Inductor kernel: the trace records no FLOP count for generated code)"
            )
    return Breakdown(
        by=table.by,
        rows=rows,
        kernel_rows=table.kernel_rows,
        kernel_row=table.kernel_row,
        unattributed_device_ns=table.unattributed_device_ns,
    )
