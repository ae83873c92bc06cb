"""The capture-and-replay merge: each replayed kernel to the op, module and line that launched
it when its graph was captured.

A replay (:mod:`gpuviz.analysis.graph_replays`) runs its graph's kernels in the order they were
captured (:mod:`gpuviz.analysis.graph_capture`); a stream's kernels run in order, and a graph of
several streams keeps each stream's order. So the merge aligns, for each graph, the replay's
kernels in start order with the capture's launches in launch order:

- by name where the capture recorded it (ROCm), else by kind of work (kernel, copy, set: CUDA's
  launch calls name no kernel), as :class:`difflib.SequenceMatcher` aligns two sequences: a
  kernel the capture lacks (an extra kernel), or a launch the replay lacks (a missing one), is
  left out of the alignment and the rest still pair up; reordered kernels pair where they keep
  their relative order, and the others stay unmatched;
- each graph (:attr:`GraphReplays.graph`) is aligned once, with the capture it matches best (of
  every capture of every capture trace), so two graphs replayed in turn each find their own;
  a graph whose best match pairs less than half its kernels is left as its replay unit;
- a capture in the run's own trace is a candidate only for the replays of its own rank (in a
  rank folder read whole, each process replays the graphs it captured; another rank's capture
  of the same kernels would take its ops, and count its FLOPs, on the wrong rank); so is an
  attached capture trace (``--capture-trace``, ``capture_traces/``) that declares one of the
  run's ranks (``distributedInfo.rank``) where the run has several; any other attached capture
  is a candidate for every rank (CUDA's captures, compared by kind of work only, tie: the
  first would win for every rank);
- the grid, where both sides record it, checks the pairs: :attr:`GraphMerge.grid_mismatches`.

A matched kernel's time then goes where its capture launch's would: its op (the innermost
``cpu_op`` around the launch, and the ops and ranges above it for the totals), its module path
(and the paths above it), its source lines, in the phase of the capture (forward inside a
module, backward through a ``fwdbwd`` link, else other). Unmatched kernels stay on their replay
unit. :func:`merged_breakdown` builds the op, module and line tables that way.
"""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

import msgspec
import numpy as np
import numpy.typing as npt

from gpuviz.analysis.attribution import MODULE_PREFIX, OPTIMIZER_PREFIX, Attribution, attribute
from gpuviz.analysis.breakdown_table import Breakdown, empty_row
from gpuviz.analysis.graph_capture import COPY, KERNEL, SET, CapturedGraph, captured_graphs
from gpuviz.analysis.graph_replays import graph_replays
from gpuviz.analysis.names import name_mask
from gpuviz.trace.graph_captures import CAPTURES
from gpuviz.trace.model import Kind, Trace

I64 = npt.NDArray[np.int64]

MIN_MATCH = 0.5
"""The least share of a graph's kernels a capture must pair for the merge to use it."""


@dataclass
class GraphMerge:
    """Replayed kernels matched to capture launches.

    Attributes
    ----------
    kernel : int64
        Matched kernels (indices into the run's ``Attribution.gpu_rows``).
    capture : int64
        For each, the index into :attr:`captures` of its capture trace's attribution.
    launch_node : int64
        For each, its launch call's node in that attribution.
    captures : list of Attribution
        The capture traces' attributions.
    graph_kernels : int
        Kernels of every replay.
    grid_mismatches : int
        Matched pairs whose grids, recorded on both sides, differ.
    """

    kernel: I64
    capture: I64
    launch_node: I64
    captures: list[Attribution]
    graph_kernels: int
    grid_mismatches: int

    def own(self, att: Attribution) -> npt.NDArray[np.bool_]:
        """Which matched kernels paired with a capture in ``att``'s own trace (the first of
        :attr:`captures` where it holds one)."""
        if self.captures and self.captures[0] is att:
            return self.capture == 0
        return np.zeros(len(self.kernel), dtype=bool)

    @property
    def matched_share(self) -> float | None:
        """The share of the replays' kernels matched to a capture launch (None: no replays)."""
        return None if self.graph_kernels == 0 else len(self.kernel) / self.graph_kernels


def graph_merge(att: Attribution, captures: list[Trace], include_self: bool = False) -> GraphMerge:
    """Match the replayed kernels of ``att`` to the launches of the captures in ``captures``.

    Parameters
    ----------
    att : Attribution
        The run's attribution.
    captures : list of Trace
        Traces of the captures (each may hold several).
    include_self : bool
        Look for captures in ``att``'s own trace too (first).

    Returns
    -------
    GraphMerge
    """
    replays = graph_replays(att)
    c_atts = ([att] if include_self else []) + [attribute(c) for c in captures]
    graphs = [(i, g) for i, a in enumerate(c_atts) for g in captured_graphs(a)]
    g_rank = _capture_ranks(att, c_atts, graphs, include_self)
    kernels: list[I64] = []
    cap: list[I64] = []
    nodes: list[I64] = []
    mismatches = 0
    done: set[int] = set()
    s = att.trace.slices
    strings = att.trace.symbols.strings
    for r in range(len(replays)):
        gid = int(replays.graph[r])
        order = replays.kernel_order(r, att)
        if gid in done or not graphs:
            continue
        done.add(gid)
        rows = att.gpu_rows[order]
        tokens = [
            _replay_token(strings[int(n)], int(k))
            for n, k in zip(s.name[rows], s.kind[rows], strict=True)
        ]
        rank = int(replays.rank[r])
        best: tuple[float, int, list[tuple[int, int]]] | None = None
        for j, (_, g) in enumerate(graphs):
            if g_rank[j] is not None and g_rank[j] != rank:
                continue
            pairs = align([_capture_token(n) for n in g.names], tokens)
            score = len(pairs) / max(len(tokens), 1)
            if best is None or score > best[0]:
                best = (score, j, pairs)
        if best is None or best[0] < MIN_MATCH:
            continue
        score, j, pairs = best
        c_index, g = graphs[j]
        mismatches += _grid_mismatches(att, rows, g, pairs)
        # Every replay of this graph (of this rank: graphs are numbered per rank): its
        # kernels in order, paired like the first's.
        same = np.flatnonzero(replays.graph == gid)
        rep_pos = np.array([p[1] for p in pairs], dtype=np.int64)
        cap_pos = np.array([p[0] for p in pairs], dtype=np.int64)
        for other in same.tolist():
            o = replays.kernel_order(other, att)
            ok = rep_pos < len(o)
            kernels.append(o[rep_pos[ok]])
            nodes.append(g.launch_node[cap_pos[ok]])
            cap.append(np.full(int(ok.sum()), c_index, dtype=np.int64))
    empty = np.zeros(0, dtype=np.int64)
    return GraphMerge(
        kernel=np.concatenate(kernels) if kernels else empty,
        capture=np.concatenate(cap) if cap else empty,
        launch_node=np.concatenate(nodes) if nodes else empty,
        captures=c_atts,
        graph_kernels=int((replays.kernel_replay >= 0).sum()),
        grid_mismatches=mismatches,
    )


def _capture_ranks(
    att: Attribution,
    c_atts: list[Attribution],
    graphs: list[tuple[int, CapturedGraph]],
    include_self: bool,
) -> list[int | None]:
    """Per capture of ``graphs``, the only rank whose replays it may match (None: any).

    A capture in the run's own trace (``c_atts[0]`` where ``include_self``) is its launch
    rank's; an attached capture trace's is the rank it declares where the run has several
    ranks and that one among them.
    """
    t = att.trace
    run_ranks = [r for r in t.rank_values() if r is not None]
    declared: list[int | None] = []
    for c in c_atts:  # the run's own trace (include_self) is decided per capture below
        own = c.trace.rank_values()
        one = own[0] if len(own) == 1 else None
        declared.append(one if len(run_ranks) > 1 and one in run_ranks else None)
    out: list[int | None] = []
    for i, g in graphs:
        if include_self and i == 0:
            out.append(int(t.tracks.rank[t.slices.track[att.forest.rows[g.begin_node]]]))
        else:
            out.append(declared[i])
    return out


def align(capture: list[str], replay: list[str]) -> list[tuple[int, int]]:
    """Pairs ``(capture index, replay index)`` of equal tokens, in order: the longest matching
    blocks, as :class:`difflib.SequenceMatcher` finds them (missing, extra and moved items are
    left unpaired).

    Parameters
    ----------
    capture, replay : list of str
        Tokens: kernel names, or a kind of work (:data:`KERNEL`, :data:`COPY`, :data:`SET`).
    """
    # A capture that names no kernel (CUDA) is compared by kind of work alone.
    if capture and all(c in (KERNEL, COPY, SET) for c in capture):
        replay = [r if r in (COPY, SET) else KERNEL for r in replay]
    sm = SequenceMatcher(None, capture, replay, autojunk=False)
    return [(a + k, b + k) for a, b, size in sm.get_matching_blocks() for k in range(size)]


def _capture_token(name: str) -> str:
    return name


def _replay_token(name: str, kind: int) -> str:
    if kind == Kind.MEMCPY:
        return COPY
    if kind == Kind.MEMSET:
        return SET
    return name


def _grid_mismatches(
    att: Attribution, rows: I64, g: CapturedGraph, pairs: list[tuple[int, int]]
) -> int:
    """Pairs whose grids both sides record and that differ."""
    bad = 0
    for c, r in pairs:
        want = g.grids[c]
        if want is None:
            continue
        grid = att.trace.args.get(int(att.trace.slices.args[int(rows[r])])).get("grid")
        if isinstance(grid, list) and tuple(grid) != want:
            bad += 1
    return bad


def captures_of(trace: Trace) -> list[Trace]:
    """The capture traces attached to ``trace`` (none unless attached)."""
    got = trace.derived.get(CAPTURES)
    return list(got) if got else []


def merge_of(att: Attribution) -> GraphMerge | None:
    """The merge of ``att``'s replays with its trace's attached captures, once per trace;
    None where there are no captures, no replays or nothing matched."""

    def make() -> GraphMerge | None:
        captures = captures_of(att.trace)
        # A trace may hold its own captures (torch.cuda.graph captured inside the window).
        own = bool(captured_graphs(att))
        if not (captures or own) or not len(graph_replays(att)):
            return None
        m = graph_merge(att, captures, include_self=own)
        return m if len(m.kernel) else None

    return att.memo("graph_merge", make)


def capture_runs(att: Attribution, merge: GraphMerge) -> I64 | None:
    """Per node of ``att``'s forest, how many times the GPU ran it: for an op of a capture in
    ``att``'s own trace, the replays that ran a kernel it (or an op inside it) launched;
    1 elsewhere. None where no capture of this trace was matched.

    A captured op ran nothing at capture: its FLOPs are work done once per replay.
    """
    own = merge.own(att)
    if not own.any():
        return None
    nodes = merge.launch_node[own]
    replay = graph_replays(att).kernel_replay[merge.kernel[own]]
    pairs = np.unique(np.stack([nodes, replay]), axis=1)
    launch, count = np.unique(pairs[0], return_counts=True)
    runs = np.ones(len(att.forest), dtype=np.int64)
    for node, n in zip(launch.tolist(), count.tolist(), strict=True):
        at = int(att.op_parent[node])
        while at >= 0:  # the ops around the launch: each ran as often as its replays
            runs[at] = max(int(runs[at]), int(n))
            at = int(att.op_parent[at])
    return runs


def without_merged(att: Attribution, merge: GraphMerge) -> Attribution:
    """A copy of ``att`` in which the merged kernels have no launch (so that the tables count
    them nowhere, until :func:`add_captured` puts them where their capture says)."""
    launch = att.gpu_launch.copy()
    op = att.gpu_op.copy()
    launch[merge.kernel] = -1
    op[merge.kernel] = -1
    # The replays stay those of the whole trace: a unit keeps its name ("graph 1: 421
    # kernels") while it holds only the kernels the merge left on it.
    return dataclasses.replace(
        att,
        gpu_launch=launch,
        gpu_op=op,
        _op_args=None,
        _decoded=set(),
        _memo={"graph_replays": graph_replays(att)},
        _lock=threading.RLock(),
    )


@dataclass
class CaptureKeys:
    """Where each capture launch's kernels go in one table kind.

    Attributes
    ----------
    self_key : str or None
        The row that launched it itself (innermost op, module or line).
    totals : tuple of str
        Every row whose total holds it (the self row and the rows around it).
    phase : str
        ``"forward"``, ``"backward"`` or ``"other"``.
    kind : str
        The kind of a row this adds (``"op"``, ``"module"``, ``"outside"``, ``"line"``).
    """

    self_key: str | None
    totals: tuple[str, ...]
    phase: str
    kind: str


SHAPE_SEP = "\x1f"
"""Between an op-shape row's name and its shapes in :func:`shape_row_key`."""


def shape_row_key(name: str, input_shapes: Any) -> str:
    """An op-shape row's identity: its name and its input shapes (as JSON)."""
    return f"{name}{SHAPE_SEP}{msgspec.json.encode(input_shapes or []).decode()}"


def _dims_of(c_att: Attribution, nodes: list[int]) -> list[Any]:
    """The decoded ``Input Dims`` of op nodes (None where they record none)."""
    args = c_att.op_args(("input_dims",))
    where = np.searchsorted(c_att.op_node_indices(), np.asarray(nodes, dtype=np.int64))
    from gpuviz.analysis.op_table import decode_arg

    return [decode_arg(args.input_dims[i]) for i in where.tolist()]


def capture_keys(c_att: Attribution, node: int, by: str, mine: bool = False) -> CaptureKeys:
    """Where the kernel launched by capture node ``node`` goes in table ``by``.

    Parameters
    ----------
    c_att : Attribution
        The capture trace's attribution.
    node : int
        A launch call's node in it.
    by : str
        ``"op"``, ``"module"`` or ``"line"``.
    mine : bool
        For lines: the user's own files only.
    """
    from gpuviz.analysis.modules import module_paths, outside_keys
    from gpuviz.analysis.op_table import op_display_name
    from gpuviz.analysis.source_lines import line_frames

    f = c_att.forest
    # A backward launch counts where its forward op ran, as in the run's own tables.
    holder = node
    phase = "forward"
    if c_att.backward[node]:
        phase = "backward"
        if c_att.forward_op[node] >= 0:
            holder = int(c_att.forward_op[node])
    if by in ("op", "op-shape"):
        op = int(c_att.memo("graph_innermost_op", lambda: f.nearest(c_att.is_op))[node])
        if op < 0:
            return CaptureKeys(None, (), phase, "op")
        chain = [op]
        while c_att.op_parent[chain[-1]] >= 0:
            chain.append(int(c_att.op_parent[chain[-1]]))
        names = [op_display_name(n) for n in c_att.names(chain)]
        if by == "op-shape":  # each op's row of its own shapes
            dims = _dims_of(c_att, chain)
            names = [shape_row_key(n, d) for n, d in zip(names, dims, strict=True)]
        return CaptureKeys(names[0], tuple(dict.fromkeys(names)), phase, "op")
    if by == "module":
        frame, path, paths = module_paths(c_att)
        inner = int(c_att.memo("graph_inner_module", lambda: f.nearest(frame))[holder])
        if phase != "backward" and (inner < 0 or _in_optimizer(c_att, holder)):
            phase = "other"
        if inner < 0:
            out_key, out_names = outside_keys(c_att)
            row = out_names[int(out_key[holder])]
            return CaptureKeys(row, (row,), phase, "outside")
        p = paths[int(path[inner])]
        parts = p.split(".")
        prefixes = tuple(".".join(parts[: i + 1]) for i in range(len(parts)))
        return CaptureKeys(p, prefixes, phase, "module")
    frame, key, keys = line_frames(c_att, mine)
    if mine and not frame.any():
        frame, key, keys = line_frames(c_att, False)
    if phase != "backward":

        def make() -> Any:
            is_mod = name_mask(c_att.trace.symbols, lambda n: n.startswith(MODULE_PREFIX))
            return f.nearest(is_mod[c_att.name]) >= 0

        inside = c_att.memo("graph_in_module", make)
        if not inside[holder] or _in_optimizer(c_att, holder):
            phase = "other"
    up = c_att.memo(f"graph_line_up:{mine}", lambda: f.nearest(frame))
    found: list[str] = []
    x = int(up[holder])
    while x >= 0:
        found.append(keys[int(key[x])])
        x = int(up[f.parent[x]]) if f.parent[x] >= 0 else -1
    if not found:
        return CaptureKeys(None, (), phase, "line")
    return CaptureKeys(found[0], tuple(dict.fromkeys(found)), phase, "line")


def _in_optimizer(c_att: Attribution, node: int) -> bool:
    def make() -> Any:
        optim = name_mask(c_att.trace.symbols, lambda n: n.startswith(OPTIMIZER_PREFIX))
        return c_att.forest.nearest(optim[c_att.name] & c_att.is_op_or_annotation) >= 0

    return bool(c_att.memo("graph_in_optimizer", make)[node])


def add_captured(
    table: Breakdown, att: Attribution, merge: GraphMerge, mine: bool = False
) -> Breakdown:
    """``table`` (made from :func:`without_merged`) with the merged kernels added where their
    capture launches were: self time on the innermost row, totals on every row around it.

    Rows that only the capture has get ``calls`` 0 and no host time (their calls ran at
    capture, not in this trace); every row that received time carries
    ``extra["graph_device_us"]``, the part of its device total that came from graph replays.
    """
    by = table.by
    dur = att.gpu_dur_ns[merge.kernel].astype(np.float64)
    # One entry per distinct capture launch: replays of a graph share them.
    pair = merge.capture * (1 << 40) + merge.launch_node
    uniq, inv = np.unique(pair, return_inverse=True)
    sums = np.bincount(inv.reshape(-1), weights=dur, minlength=len(uniq))
    rows = list(table.rows)
    if by == "op-shape":
        index = {shape_row_key(r.key, r.input_shapes): i for i, r in enumerate(rows)}
    else:
        index = {r.key: i for i, r in enumerate(rows)}
    kernel_row = table.kernel_row.copy()
    added = 0.0
    graph_ns: dict[int, float] = {}
    uniq_self = np.full(len(uniq), -1, dtype=np.int64)
    for u, (p, total) in enumerate(zip(uniq.tolist(), sums.tolist(), strict=True)):
        c_att = merge.captures[p >> 40]
        keys = capture_keys(c_att, p & ((1 << 40) - 1), by, mine)
        if keys.self_key is None:
            continue
        for k in keys.totals:
            i = index.get(k)
            if i is None:
                i = index[k] = len(rows)
                if by == "op-shape":
                    name, _, shapes = k.partition(SHAPE_SEP)
                    rows.append(empty_row(name, keys.kind, phases=False))
                    rows[-1].input_shapes = msgspec.json.decode(shapes)
                else:
                    rows.append(empty_row(k, keys.kind, phases=by in ("module", "line")))
            r = rows[i]
            r.device_total_ns += round(total)
            graph_ns[i] = graph_ns.get(i, 0.0) + total
            if by in ("module", "line"):
                name = f"{keys.phase}_device_ns"
                setattr(r, name, (getattr(r, name) or 0) + round(total))
        i = index[keys.self_key]
        rows[i].device_self_ns += round(total)
        uniq_self[u] = i
        added += total
    placed = uniq_self[inv.reshape(-1)]
    kernel_row[merge.kernel[placed >= 0]] = placed[placed >= 0]
    for i, ns in graph_ns.items():
        rows[i].extra = {**rows[i].extra, "graph_device_us": round(ns / 1000.0, 3)}
    out = Breakdown(
        by=table.by,
        rows=rows,
        kernel_rows=table.kernel_rows,
        kernel_row=kernel_row,
        unattributed_device_ns=int(att.gpu_dur_ns[kernel_row < 0].sum()),
    )
    return out.sorted(by_self=table.by == "line")
