"""The dependency graph of one step: threads, streams, launches, syncs, event waits, collectives.

Nodes are pieces of work with a start and a duration, in numpy columns (one row per node):

- CPU pieces of each thread (:mod:`gpuviz.analysis.cpu_pieces`): a thread runs its pieces in
  order (``thread`` edges). The step's main thread (the one busiest inside ops) keeps its idle
  time between ops (the program's Python) as CPU work; another thread's idle time is waiting:
  the first piece of each of its busy stretches is started by the main thread's piece running
  then (``trigger``), and a main-thread piece that holds a whole stretch of another thread
  (``loss.backward()`` while the autograd thread runs), or that is outside any op and returns
  within :data:`JOIN_TAIL_NS` of a stretch's end (``work.wait()`` on a gloo collective),
  returns after it (``join``).
- Kernels, copies and sets run on each stream in order (``stream``), after their launch
  (``launch``, by correlation id), after the work their stream waits for (``event``, or
  ``inferred``; :mod:`gpuviz.analysis.gpu_deps`).
- A blocking call (a synchronize, a blocking copy) is two nodes: its call (``WAIT``, no
  duration) and its return (``RETURN``), which starts after the call and after the GPU work
  it waits for (``sync``) and lasts until the call returned.
- A collective (an NCCL kernel, or a gloo range's exchange: its longest piece) is an
  ``ARRIVE`` node (no duration) and an ``XFER`` node released by the last rank to arrive
  (``collective`` edges from every part's arrival), lasting until the part ended. Parts are
  matched across ranks by :func:`gpuviz.analysis.collectives.align_collectives`.

Every edge goes from its source's end (or start, for ``trigger``) to its target's start. A node
starts at the latest of its edges, plus its own *delay*: what the trace shows beyond its
dependencies (a launch latency, a gap between kernels, Python between two ops). An edge whose
source ended after its target started (clocks a few µs apart, stacked kernels) carries that
overlap as a negative *lag*. So the recorded start times are the graph's own solution, and a
replay with changed durations (:mod:`gpuviz.analysis.critical_path`) moves only what depends
on the change.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from gpuviz.analysis.cpu_pieces import ThreadPieces, step_marker_mask, stretches, thread_pieces
from gpuviz.analysis.gpu_deps import (
    event_waits,
    inferred_waits,
    launched_by,
    rank_gpu,
    runtime_by_correlation,
    sync_info,
    sync_targets,
)
from gpuviz.analysis.names import is_comm_kernel
from gpuviz.analysis.steps import Steps
from gpuviz.trace.model import Kind, Trace

I64 = npt.NDArray[np.int64]

# Node kinds.
CPU, CALL, WAIT, RETURN, GPU, ARRIVE, XFER = range(7)
NODE_KINDS = ("cpu", "call", "wait", "return", "gpu", "arrive", "xfer")
# Ties in start time: calls and arrivals before what they release.
_TIE = np.array([1, 1, 0, 3, 2, 0, 3], dtype=np.int64)

CATEGORIES = ("compute", "communication", "copies", "cpu", "waits")
"""The critical path's time by category (``waits``: delays, not work)."""
COMPUTE, COMM, COPIES, CPU_CAT, WAITS = range(5)

EDGE_KINDS = (
    "thread",
    "trigger",
    "join",
    "launch",
    "stream",
    "sync",
    "event",
    "inferred",
    "collective",
)
(E_THREAD, E_TRIGGER, E_JOIN, E_LAUNCH, E_STREAM, E_SYNC, E_EVENT, E_INFERRED, E_COLL) = range(9)

RUNTIME_KIND = int(Kind.RUNTIME)

JOIN_MIN_NS = 20_000
"""A main-thread piece shorter than this is not taken for a wait on another thread."""

JOIN_TAIL_NS = 200_000
"""A main-thread piece outside any op that ends this soon after another thread's busy stretch
ended waited for it (``work.wait()`` of a gloo collective, which records no op)."""


@dataclass
class StepGraph:
    """The graph of one step of every rank (see the module docstring).

    Attributes
    ----------
    number : int
        The step's number (``Steps.number``), the same on every rank.
    ranks : int64
        The ranks that have it; ``window_start_ns``/``window_end_ns`` their windows.
    start_ns, dur_ns, delay_ns : int64, per node
        As recorded; ``delay_ns`` as the module docstring defines it.
    kind, category : uint8, per node
        :data:`NODE_KINDS`, :data:`CATEGORIES`.
    rank, row, outer, thread, launch : int64, per node
        Its rank; its slice row (a GPU node's work, a CPU piece's innermost slice; -1 for idle
        time); its outermost op (a GPU node's: its launch's); its thread (index into
        ``threads``; -1 for GPU nodes); a GPU node's launch node (-1).
    launch_row : int64, per node
        A GPU node's launch slice row, in the graph or not (-1): a loop whose CPU runs ahead
        launches a step's kernels in an earlier step's window.
    src, dst, edge_kind, lag_ns : per edge
        From ``src``'s end (its start where ``from_end`` is False) to ``dst``'s start.
    order : int64
        The nodes in an order every edge follows.
    dropped_edges : int
        Edges against that order (clocks apart by more than the work's length), left out.
    notes : list of str
        What the graph could not know, said once each.
    """

    number: int
    ranks: I64
    window_start_ns: I64
    window_end_ns: I64
    start_ns: I64
    dur_ns: I64
    delay_ns: I64
    kind: npt.NDArray[np.uint8]
    category: npt.NDArray[np.uint8]
    rank: I64
    row: I64
    outer: I64
    thread: I64
    launch: I64
    launch_row: I64
    src: I64
    dst: I64
    from_end: npt.NDArray[np.bool_]
    edge_kind: npt.NDArray[np.uint8]
    lag_ns: I64
    order: I64
    threads: list[ThreadPieces] = field(default_factory=list)
    dropped_edges: int = 0
    notes: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.start_ns)

    @property
    def end_ns(self) -> I64:
        """``start_ns + dur_ns``."""
        return self.start_ns + self.dur_ns

    def anchor_ns(self) -> I64:
        """Per node: its rank's window start (where a node with no edges in is measured from)."""
        pos = np.searchsorted(self.ranks, self.rank)
        return self.window_start_ns[pos]

    def edge_counts(self) -> dict[str, int]:
        """Edges by kind."""
        counts = np.bincount(self.edge_kind, minlength=len(EDGE_KINDS))
        return {k: int(c) for k, c in zip(EDGE_KINDS, counts, strict=True)}


class _Builder:
    """Nodes and edges as Python lists while a graph is built (then numpy columns)."""

    def __init__(self) -> None:
        self.cols: dict[str, list[int]] = {
            k: [] for k in ("start", "dur", "kind", "cat", "rank", "row", "outer", "thread")
        }
        self._lists = tuple(self.cols.values())
        self.launch: dict[int, int] = {}
        self.launch_row: dict[int, int] = {}
        self.edges: list[tuple[int, int, bool, int]] = []

    def node(
        self, start: int, dur: int, kind: int, cat: int, rank: int, row: int, outer: int, th: int
    ) -> int:
        """Add a node; its index."""
        c = self._lists
        c[0].append(start)
        c[1].append(dur)
        c[2].append(kind)
        c[3].append(cat)
        c[4].append(rank)
        c[5].append(row)
        c[6].append(outer)
        c[7].append(th)
        return len(c[0]) - 1

    def edge(self, src: int, dst: int, kind: int, from_end: bool = True) -> None:
        self.edges.append((src, dst, from_end, kind))


def step_numbers(steps: Steps) -> list[int]:
    """Step numbers that every rank of ``steps`` has, in order."""
    ranks = np.unique(steps.rank)
    common: set[int] | None = None
    for r in ranks.tolist():
        mine = set(steps.number[steps.rank == r].tolist())
        common = mine if common is None else common & mine
    return sorted(common or ())


def choose_step(steps: Steps, number: int | None = None) -> int:
    """The step to graph: ``number`` when every rank has it, else the one of median time
    (the longest of its ranks') among those every rank has.

    Raises
    ------
    ValueError
        No step that every rank has, or ``number`` is not one of them (the message says).
    """
    common = step_numbers(steps)
    if not common:
        raise ValueError("no step that every rank has")
    if number is not None:
        if number not in common:
            shown = ", ".join(str(n) for n in common[:10]) + (" …" if len(common) > 10 else "")
            raise ValueError(f"no step {number} on every rank (steps: {shown})")
        return number
    longest = [int(steps.duration_ns[steps.number == n].max()) for n in common]
    return common[int(np.argsort(longest, kind="stable")[(len(common) - 1) // 2])]


def step_graph(trace: Trace, number: int | None = None) -> StepGraph:
    """The graph of step ``number`` (the median step by default: :func:`choose_step`).

    Raises
    ------
    ValueError
        The trace has no step every rank has, or not ``number`` (the message says).
    """
    from gpuviz.analysis.steps import find_steps

    steps = find_steps(trace)
    if len(steps) == 0:
        raise ValueError("the trace has no events to make a step of")
    return build_step_graph(trace, steps, choose_step(steps, number))


def build_step_graph(trace: Trace, steps: Steps, number: int) -> StepGraph:
    """The dependency graph of step ``number`` on every rank that has it.

    Parameters
    ----------
    trace : Trace
    steps : Steps
        :func:`gpuviz.analysis.steps.find_steps` of ``trace``.
    number : int
        A value of ``steps.number``.

    Returns
    -------
    StepGraph
    """
    pick = np.flatnonzero(steps.number == number)
    if len(pick) == 0:
        raise ValueError(f"no step {number}")
    pick = pick[np.argsort(steps.rank[pick], kind="stable")]
    ranks = steps.rank[pick].astype(np.int64)
    w0s = steps.start_ns[pick].astype(np.int64)
    w1s = steps.end_ns[pick].astype(np.int64)
    b = _Builder()
    notes: list[str] = []
    marker = step_marker_mask(trace)
    comm = np.fromiter(
        (is_comm_kernel(x) for x in trace.symbols.strings), bool, count=len(trace.symbols)
    )
    all_threads: list[ThreadPieces] = []
    gpu_node_of_row: dict[int, int] = {}
    gpu_end_node: dict[int, int] = {}  # GPU node -> the node its dependants wait for
    part_nodes: dict[int, tuple[int, int]] = {}  # collective part slice row -> (arrive, xfer)
    arrivals = _collective_arrivals(trace, ranks, w0s, w1s)
    for r, w0, w1 in zip(ranks.tolist(), w0s.tolist(), w1s.tolist(), strict=True):
        threads = thread_pieces(trace, r, w0, w1, marker)
        g = rank_gpu(trace, r, w0, w1)
        info = sync_info(trace, r)
        corr_rows = runtime_by_correlation(trace, r)
        own_work = launched_by(g)
        if not info.any_events and len(g):
            notes.append(
                f"rank {r}: no cuda_sync events (record with enable_cuda_sync_events): stream "
                "waits inferred from timing, stream syncs from what they waited for"
            )
        # GPU nodes first: the CPU's blocking calls name them.
        gnode = np.empty(len(g), dtype=np.int64)
        kernel = trace.slices.kind[g.rows] == Kind.KERNEL
        cats = np.where(kernel, np.where(comm[trace.slices.name[g.rows]], COMM, COMPUTE), COPIES)
        for i, (row, cat, a, z) in enumerate(
            zip(g.rows.tolist(), cats.tolist(), g.start_ns.tolist(), g.end_ns.tolist(), strict=True)
        ):
            dur = z - a
            if row in arrivals:
                last = max(arrivals[row], a)
                gnode[i] = b.node(a, 0, ARRIVE, WAITS, r, row, -1, -1)
                x = b.node(last, max(a + dur - last, 0), XFER, cat, r, row, -1, -1)
                part_nodes[row] = (int(gnode[i]), x)
                gpu_end_node[int(gnode[i])] = x
            else:
                gnode[i] = b.node(a, dur, GPU, cat, r, row, -1, -1)
                gpu_end_node[int(gnode[i])] = int(gnode[i])
            gpu_node_of_row[row] = int(gnode[i])
        main = int(np.argmax([t.busy_ns for t in threads])) if threads else -1
        piece_nodes: dict[tuple[int, int], tuple[int, int]] = {}
        call_targets: dict[int, list[int]] = {}
        joins = _joins(threads, main)
        exchange = _exchange_pieces(threads, arrivals)
        for ti, tp in enumerate(threads):
            th = len(all_threads) + ti
            calls = (tp.inner >= 0) & (trace.slices.kind[np.maximum(tp.inner, 0)] == RUNTIME_KIND)
            for k, (inner, outer, a, e, is_call) in enumerate(
                zip(
                    tp.inner.tolist(),
                    tp.outer.tolist(),
                    tp.start_ns.tolist(),
                    tp.end_ns.tolist(),
                    calls.tolist(),
                    strict=True,
                )
            ):
                if ti != main and inner < 0:
                    continue  # waiting for work on a helper thread
                targets = []
                if is_call:
                    targets = sync_targets(trace, g, inner, info, corr_rows, own_work)
                if (ti, k) in exchange:
                    last = max(arrivals[inner], a)
                    n0 = b.node(a, 0, ARRIVE, WAITS, r, inner, outer, th)
                    n1 = b.node(last, max(e - last, 0), XFER, COMM, r, inner, outer, th)
                    part_nodes[inner] = (n0, n1)
                elif targets or (ti, k) in joins:
                    ends = [int(g.end_ns[j]) for j in targets]
                    ends += [int(threads[w].end_ns[p]) for w, p in joins.get((ti, k), [])]
                    ret = min(max([a, *ends]), e)
                    n0 = b.node(a, 0, WAIT, WAITS, r, inner, outer, th)
                    n1 = b.node(ret, e - ret, RETURN, CPU_CAT, r, inner, outer, th)
                    call_targets[n1] = targets
                else:
                    n0 = n1 = b.node(
                        a, e - a, CALL if is_call else CPU, CPU_CAT, r, inner, outer, th
                    )
                piece_nodes[(ti, k)] = (n0, n1)
        # Edges of the rank.
        for ti, tp in enumerate(threads):
            keys = [k for k in range(len(tp)) if (ti, k) in piece_nodes]
            for k0, k1 in itertools.pairwise(keys):
                b.edge(piece_nodes[(ti, k0)][1], piece_nodes[(ti, k1)][0], E_THREAD)
            if ti == main or main < 0:
                continue
            mt = threads[main]
            for first, _last in stretches(tp):
                m = int(np.searchsorted(mt.start_ns, tp.start_ns[first], side="right")) - 1
                if m >= 0 and (main, m) in piece_nodes:
                    b.edge(
                        piece_nodes[(main, m)][0],
                        piece_nodes[(ti, first)][0],
                        E_TRIGGER,
                        from_end=False,
                    )
        for (ti, k), pairs in joins.items():
            for w, p in pairs:
                if (w, p) in piece_nodes:
                    b.edge(piece_nodes[(w, p)][1], piece_nodes[(ti, k)][1], E_JOIN)
        for n1, targets in call_targets.items():
            for j in targets:
                b.edge(gpu_end_node[int(gnode[j])], n1, E_SYNC)
        launch_piece = _piece_of_rows(threads, piece_nodes, g.launch_row)
        for i in range(len(g)):
            b.launch_row[int(gnode[i])] = int(g.launch_row[i])
        for i in range(len(g)):
            lp = launch_piece[i]
            if lp is not None:
                n0, n1 = lp
                src = n0 if b.cols["kind"][n0] == WAIT else n1
                b.edge(src, int(gnode[i]), E_LAUNCH)
                b.launch[int(gnode[i])] = src
        for i in range(1, len(g)):
            if g.track[i] == g.track[i - 1]:
                b.edge(gpu_end_node[int(gnode[i - 1])], int(gnode[i]), E_STREAM)
        waits = event_waits(trace, g, info, corr_rows)
        for u, v in waits:
            b.edge(gpu_end_node[int(gnode[u])], int(gnode[v]), E_EVENT)
        if not info.any_events:
            s = trace.slices
            lr = np.maximum(g.launch_row, 0)
            lend = np.where(
                g.launch_row >= 0, s.start_ns[lr] + s.dur_ns[lr], np.iinfo(np.int64).min
            )
            for u, v in inferred_waits(g, lend.astype(np.int64)):
                b.edge(gpu_end_node[int(gnode[u])], int(gnode[v]), E_INFERRED)
        all_threads += threads
    _collective_edges(b, trace, part_nodes)
    return _finish(b, number, ranks, w0s, w1s, all_threads, notes)


def _collective_arrivals(trace: Trace, ranks: I64, w0s: I64, w1s: I64) -> dict[int, int]:
    """Collective part slice row -> the last arrival of its collective, for the parts of the
    step's windows (a collective needs two parts in them)."""
    if len(ranks) < 2:
        return {}
    from gpuviz.analysis.collectives import align_collectives

    table = align_collectives(trace)
    out: dict[int, int] = {}
    col_w0 = np.full(len(table.ranks), np.iinfo(np.int64).max, dtype=np.int64)
    col_w1 = np.full(len(table.ranks), np.iinfo(np.int64).min, dtype=np.int64)
    for r, a, z in zip(ranks.tolist(), w0s.tolist(), w1s.tolist(), strict=True):
        hit = np.flatnonzero(table.ranks == r)
        if len(hit):
            col_w0[hit[0]], col_w1[hit[0]] = a, z
    inside = table.present & (table.arrival_ns >= col_w0) & (table.arrival_ns < col_w1)
    for c in np.flatnonzero(inside.sum(axis=1) >= 2).tolist():
        cols = np.flatnonzero(inside[c])
        last = int(table.arrival_ns[c, cols].max())
        for col in cols.tolist():
            out[int(table.slice_row[c, col])] = last
    return out


def _exchange_pieces(threads: list[ThreadPieces], arrivals: dict[int, int]) -> set[tuple[int, int]]:
    """The longest piece of each CPU collective range (gloo): where its rank waits for the
    others and exchanges, ``(thread, piece)``."""
    out = set()
    for ti, tp in enumerate(threads):
        for row in set(tp.inner.tolist()) & arrivals.keys():
            idx = np.flatnonzero(tp.inner == row)
            out.add((ti, int(idx[np.argmax(tp.end_ns[idx] - tp.start_ns[idx])])))
    return out


def _joins(threads: list[ThreadPieces], main: int) -> dict[tuple[int, int], list[tuple[int, int]]]:
    """Main-thread pieces that hold a whole busy stretch of another thread, and the stretch's
    last piece: ``(main, piece) -> [(thread, piece), ...]``."""
    out: dict[tuple[int, int], list[tuple[int, int]]] = {}
    if main < 0:
        return out
    mt = threads[main]
    for ti, tp in enumerate(threads):
        if ti == main:
            continue
        for first, last in stretches(tp):
            end = int(tp.end_ns[last])
            m = int(np.searchsorted(mt.start_ns, end, side="left")) - 1
            if m < 0 or mt.end_ns[m] < end or mt.end_ns[m] - mt.start_ns[m] < JOIN_MIN_NS:
                continue
            whole = mt.start_ns[m] <= tp.start_ns[first]
            # Outside any op (``work.wait()`` of a collective records none), returning right
            # after the other thread's stretch ended: waiting for it.
            waited = mt.outer[m] < 0 and mt.end_ns[m] - end <= JOIN_TAIL_NS
            if whole or waited:
                out.setdefault((main, m), []).append((ti, last))
    return out


def _piece_of_rows(
    threads: list[ThreadPieces], piece_nodes: dict[tuple[int, int], tuple[int, int]], rows: I64
) -> list[tuple[int, int] | None]:
    """For each slice row, the nodes of the piece that it is the innermost slice of."""
    where: dict[int, tuple[int, int]] = {}
    for ti, tp in enumerate(threads):
        for k, inner in enumerate(tp.inner.tolist()):
            if inner >= 0 and (ti, k) in piece_nodes and inner not in where:
                where[inner] = piece_nodes[(ti, k)]
    return [where.get(int(r)) for r in rows.tolist()]


def _collective_edges(b: _Builder, trace: Trace, part_nodes: dict[int, tuple[int, int]]) -> None:
    """Every part's arrival releases every part's exchange (the last one binds)."""
    if not part_nodes:
        return
    from gpuviz.analysis.collectives import align_collectives

    table = align_collectives(trace)
    for c in range(len(table)):
        rows = [int(x) for x in table.slice_row[c][table.present[c]].tolist()]
        nodes = [part_nodes[x] for x in rows if x in part_nodes]
        if len(nodes) < 2:
            continue
        # The exchange starts at the last arrival (a gloo part arrives when its range's
        # longest piece starts, later than the range start the table aligned on).
        last = max(b.cols["start"][a] for a, _ in nodes)
        for a, x in nodes:
            end = b.cols["start"][x] + b.cols["dur"][x]
            b.cols["start"][x] = min(max(last, b.cols["start"][a]), end)
            b.cols["dur"][x] = end - b.cols["start"][x]
            for a2, _ in nodes:
                b.edge(a2, x, E_COLL)


def _finish(
    b: _Builder,
    number: int,
    ranks: I64,
    w0s: I64,
    w1s: I64,
    threads: list[ThreadPieces],
    notes: list[str],
) -> StepGraph:
    c = {k: np.asarray(v, dtype=np.int64) for k, v in b.cols.items()}
    n = len(c["start"])
    e = np.asarray(b.edges, dtype=np.int64).reshape(-1, 4)
    src, dst, from_end, ekind = e[:, 0], e[:, 1], e[:, 2].astype(bool), e[:, 3]
    order = np.lexsort((np.arange(n), _TIE[c["kind"]], c["start"])).astype(np.int64)
    pos = np.empty(n, dtype=np.int64)
    pos[order] = np.arange(n)
    ok = pos[src] < pos[dst]
    dropped = int((~ok).sum())
    src, dst, from_end, ekind = src[ok], dst[ok], from_end[ok], ekind[ok]
    t_src = c["start"][src] + np.where(from_end, c["dur"][src], 0)
    lag = np.minimum(0, c["start"][dst] - t_src)
    ready = np.full(n, np.iinfo(np.int64).min, dtype=np.int64)
    np.maximum.at(ready, dst, t_src + lag)
    anchor = w0s[np.searchsorted(ranks, c["rank"])] if n else np.empty(0, dtype=np.int64)
    has_in = ready > np.iinfo(np.int64).min
    delay = np.where(has_in, c["start"] - ready, np.maximum(c["start"] - anchor, 0))
    launch = np.full(n, -1, dtype=np.int64)
    for k, v in b.launch.items():
        launch[k] = v
    outer = np.where(launch >= 0, c["outer"][np.maximum(launch, 0)], c["outer"])
    launch_row = np.full(n, -1, dtype=np.int64)
    for k, v in b.launch_row.items():
        launch_row[k] = v
    if dropped:
        notes.append(f"{dropped} edges against time order left out (clocks apart)")
    return StepGraph(
        number=number,
        ranks=ranks,
        window_start_ns=w0s,
        window_end_ns=w1s,
        start_ns=c["start"],
        dur_ns=c["dur"],
        delay_ns=delay.astype(np.int64),
        kind=c["kind"].astype(np.uint8),
        category=c["cat"].astype(np.uint8),
        rank=c["rank"],
        row=c["row"],
        outer=outer,
        thread=c["thread"],
        launch=launch,
        launch_row=launch_row,
        src=src,
        dst=dst,
        from_end=from_end,
        edge_kind=ekind.astype(np.uint8),
        lag_ns=lag.astype(np.int64),
        order=order,
        threads=threads,
        dropped_edges=dropped,
        notes=notes,
    )
