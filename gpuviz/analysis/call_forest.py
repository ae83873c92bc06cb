"""The CPU call forest: which slice encloses which, on each thread, as parent pointers.

A CPU thread's ops, runtime calls, Python frames and ``record_function`` ranges nest in time.
Attribution needs that nesting as a forest: a kernel's launch is a leaf, its op an ancestor,
the ``nn.Module`` frame and the user's source line further up. :func:`build_forest` computes
every node's parent at once with numpy (a binary search per nesting level, never a Python loop
per event), and the two walks everything else is made of:

- :meth:`CallForest.nearest` -- for each node, its innermost ancestor (or itself) of a kind:
  "the op that launched this", "the module frame around this";
- :meth:`CallForest.subtree_sum` -- for each node, a weight summed over its subtree: "device
  time of kernels launched inside this".

Both run one numpy step per nesting level (tens), over that level's nodes only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

I64 = npt.NDArray[np.int64]
Mask = npt.NDArray[np.bool_]


@dataclass
class CallForest:
    """Nodes (CPU slices) in ``(group, start, longest first)`` order, with their nesting.

    Attributes
    ----------
    rows : int64
        Each node's slice row in ``Trace.slices``.
    group : int64
        The thread each node is on (one id per (rank, pid, tid); annotation lanes join their
        thread's).
    start_ns, end_ns : int64
        The node's bounds.
    parent : int64
        The enclosing node (a node index), -1 for a root.
    depth : int64
        Nesting level: 0 for roots, ``depth[parent] + 1`` otherwise.
    level_order : int64
        Node indices sorted by depth (stable), for level-by-level walks.
    level_bounds : int64
        ``level_order[level_bounds[d]:level_bounds[d + 1]]`` are the nodes at depth ``d``.
    given : int64
        Each node's position in the arrays given to :func:`build_forest`.
    """

    rows: I64
    group: I64
    start_ns: I64
    end_ns: I64
    parent: I64
    depth: I64
    level_order: I64
    level_bounds: I64
    given: I64

    def __len__(self) -> int:
        return len(self.rows)

    def levels(self) -> list[I64]:
        """The nodes of each depth, shallowest first."""
        b = self.level_bounds.tolist()
        return [self.level_order[b[d] : b[d + 1]] for d in range(len(b) - 1)]

    def nearest(self, mask: Mask, inclusive: bool = True) -> I64:
        """For each node, the innermost node on its path to the root where ``mask`` holds.

        Parameters
        ----------
        mask : bool array, one per node
            The kind of node looked for.
        inclusive : bool
            Whether a node may be its own answer (otherwise only strict ancestors count).

        Returns
        -------
        int64 array
            A node index per node, -1 where no node on the path qualifies.
        """
        strict = np.full(len(self), -1, dtype=np.int64)
        idx = np.arange(len(self), dtype=np.int64)
        for nodes in self.levels()[1:]:
            p = self.parent[nodes]
            # A parent at depth d-1 already holds its own strict answer.
            strict[nodes] = np.where(mask[p], p, strict[p])
        return np.where(mask, idx, strict) if inclusive else strict

    def outermost(self, mask: Mask) -> I64:
        """For each node, the outermost node on its path to the root (itself included) where
        ``mask`` holds; -1 where none does."""
        out = np.where(mask, np.arange(len(self), dtype=np.int64), -1)
        for nodes in self.levels()[1:]:
            above = out[self.parent[nodes]]
            out[nodes] = np.where(above >= 0, above, out[nodes])
        return out

    def subtree_sum(self, weight: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """``weight`` summed over each node's subtree (the node included)."""
        total = np.array(weight, dtype=np.float64, copy=True)
        for nodes in reversed(self.levels()[1:]):
            np.add.at(total, self.parent[nodes], total[nodes])
        return total

    def node_of(self, rows: npt.ArrayLike) -> I64:
        """The node index of each slice row, -1 for rows that are not nodes."""
        rows = np.asarray(rows, dtype=np.int64)
        if len(self) == 0:
            return np.full(len(rows), -1, dtype=np.int64)
        order = np.argsort(self.rows, kind="stable")
        sorted_rows = self.rows[order]
        pos = np.minimum(np.searchsorted(sorted_rows, rows), len(sorted_rows) - 1)
        return np.where(sorted_rows[pos] == rows, order[pos], -1)


def build_forest(rows: I64, group: I64, start_ns: I64, dur_ns: I64) -> CallForest:
    """The nesting of slices on each thread.

    Parameters
    ----------
    rows : int64
        Slice rows, grouped by kind, each kind in slice order (a lane's slices sorted by
        start, longest first). Where two slices of one thread start at the same time, the one
        given first comes first and may enclose the other (so give enclosing kinds, e.g.
        annotations, first).
    group : int64
        The thread of each slice.
    start_ns, dur_ns : int64
        Their bounds.

    Returns
    -------
    CallForest
        A slice's parent is the innermost earlier slice of its thread that contains it, as
        torch's ``EventList._populate_cpu_children`` finds it: a slice that overlaps another
        without nesting (a ``record_function`` range begun inside a Python frame that ends
        after the range began) is not its parent.
    """
    end_ns = start_ns + np.maximum(dur_ns, 0)
    # Sort by (group, start, longest first), keeping the given order for ties: two stable
    # sorts, the major key last.
    order = _order(group, start_ns, end_ns)
    rows, group, start_ns, end_ns = rows[order], group[order], start_ns[order], end_ns[order]
    parent = _enclosing(group, start_ns, end_ns)
    depth = _depths(parent)
    level_order = np.argsort(depth, kind="stable")
    level_bounds = np.searchsorted(
        depth[level_order], np.arange(int(depth.max(initial=-1)) + 2)
    ).astype(np.int64)
    return CallForest(
        rows=rows,
        group=group,
        start_ns=start_ns,
        end_ns=end_ns,
        parent=parent,
        depth=depth,
        level_order=level_order,
        level_bounds=level_bounds,
        given=order,
    )


def _order(group: I64, start_ns: I64, end_ns: I64) -> I64:
    """The order (group, start, longest first), keeping the given order for ties."""
    if len(group) == 0:
        return np.zeros(0, dtype=np.int64)
    t0 = int(start_ns.min())
    span = int(start_ns.max()) - t0
    if int(group.min()) >= 0 and int(group.max()) < (1 << 20) and span < (1 << 42):
        # Slices arrive grouped by kind, each kind in its lanes' (start, longest first)
        # order, and a thread's slices of one kind share one lane: one stable sort of
        # (group, start) keeps that order within equal starts, at a third of three sorts.
        return np.argsort((group << 42) | (start_ns - t0), kind="stable")
    order = np.argsort(-end_ns, kind="stable")
    order = order[np.argsort(start_ns[order], kind="stable")]
    return order[np.argsort(group[order], kind="stable")]


def _enclosing(group: I64, start_ns: I64, end_ns: I64, contain: bool = True) -> I64:
    """For slices sorted by (group, start, longest first): the last earlier slice of the same
    group that ends at or after the slice's end, and after its start; -1 for none.

    With ``contain=False``, the last earlier slice still running at the slice's start.

    All nearest larger values by pointer jumping: each slice's pointer starts at the slice
    before it and jumps to that slice's pointer while the slice it points at does not qualify.
    Everything a pointer skips ends before the slice pointed from does, so it cannot qualify
    either; the jumps double up like path halving, so it takes about log(depth) rounds over
    the slices not yet settled.
    """
    n = len(group)
    nxt = np.arange(n, dtype=np.int64) - 1
    if n:
        nxt[0] = -1
        nxt[1:][group[1:] != group[:-1]] = -1
    parent = np.full(n, -1, dtype=np.int64)
    todo = np.flatnonzero(nxt >= 0)
    if contain and len(todo):
        # A slice that ends after every earlier slice of its thread is a root: no pointer
        # needs to walk back through the thread's earlier roots (a million top-level ops
        # would take 20 doubling rounds over all of them).
        t0 = int(start_ns.min())
        span = int(end_ns.max()) - t0 + 1
        if int(group.max()) < (1 << 62) // span:
            key = group * span + (end_ns - t0)
            reach = np.maximum.accumulate(key)
            todo = todo[reach[todo - 1] >= key[todo]]
    while len(todo):
        p = nxt[todo]
        ok = end_ns[p] > start_ns[todo]
        if contain:
            ok &= end_ns[p] >= end_ns[todo]
        parent[todo[ok]] = p[ok]
        rest = todo[~ok]
        nxt[rest] = nxt[nxt[rest]]
        todo = rest[nxt[rest] >= 0]
    return parent


def _depths(parent: I64) -> I64:
    """Each node's distance to its root, by pointer jumping (about log(depth) rounds)."""
    depth = (parent >= 0).astype(np.int64)  # distance from a node to the node `up` names
    up = parent.copy()
    live = np.flatnonzero(up >= 0)
    while len(live):
        a = up[live]
        # Both read before either is written: one synchronous doubling step.
        depth[live], up[live] = depth[live] + depth[a], up[a]
        live = live[up[live] >= 0]
    return depth
