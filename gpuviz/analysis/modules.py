"""The module tree: ``nn.Module`` calls as paths, with forward and backward device time.

With ``with_stack=True`` (or ``with_modules=True``) Kineto writes a ``python_function`` event
named ``nn.Module: Class_N`` around each module call (``N`` numbers the instances of a class).
A module's path is the names of the module frames around it, outermost first
(``TinyLM_0.Block_2.Attn_2``), found by nesting on the thread (the nesting that the events'
``Python parent id`` chains describe; it serves events without them too). A module called
twice is one path with two calls; a module inside itself (recursion) is one path too: the inner
call is a call of the outer's path, and its time is counted once.

Device time:

- forward: kernels launched inside the module's frames on its thread;
- backward: kernels of the backward ops that a ``fwdbwd`` link (or a sequence number) ties to a
  forward op inside the module (see :mod:`gpuviz.analysis.attribution`);
- other: the rest (:meth:`Attribution.phase_weights`), shown in a column of its own;
- kernels outside every module (optimizer step, ``zero_grad``, the loss, copies) go to rows of
  kind ``"outside"``, one per outermost op or ``record_function`` range around them
  (``Optimizer.step#AdamW.step``, ``aten::cross_entropy_loss``); backward kernels with no
  forward op (``AccumulateGrad``) to their outermost op on the autograd thread.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from gpuviz.analysis.attribution import MODULE_PREFIX, Attribution, NodeKind
from gpuviz.analysis.breakdown_table import Breakdown, BreakdownRow
from gpuviz.analysis.frame_rows import frame_sums, kernel_keys
from gpuviz.analysis.graph_replays import graph_replays
from gpuviz.analysis.names import name_mask

I64 = npt.NDArray[np.int64]

NO_OP = "(no op)"
"""The outside row of kernels launched outside any op and any module."""


def module_paths(att: Attribution) -> tuple[npt.NDArray[np.bool_], I64, list[str]]:
    """The module frames, each frame's path id, and the paths.

    Returns
    -------
    frame : bool array per node
        ``nn.Module: …`` Python frames.
    path : int64 array per node
        The path id of each module frame (-1 elsewhere).
    paths : list of str
        The paths, by id (``TinyLM_0.Block_2.Attn_2``).
    """

    def make() -> tuple[npt.NDArray[np.bool_], I64, list[str]]:
        sym = att.trace.symbols
        is_mod = name_mask(sym, lambda n: n.startswith(MODULE_PREFIX))[att.name]
        frame = is_mod & (att.kind == NodeKind.PYTHON)
        up = att.forest.nearest(frame, inclusive=False)
        path = np.full(len(att.forest), -1, dtype=np.int64)
        paths: list[str] = []
        ids: dict[tuple[int, int], int] = {}
        # For each path, the path of each module name on it: where a module recurs.
        chain: list[dict[int, int]] = []
        # Parents come before children in level order, so a parent's path is known first.
        nodes = np.flatnonzero(frame)
        nodes = nodes[np.argsort(att.forest.depth[nodes], kind="stable")]
        names = sym.strings
        cut = len(MODULE_PREFIX)
        for n, p, nm in zip(
            nodes.tolist(), up[nodes].tolist(), att.name[nodes].tolist(), strict=True
        ):
            parent_path = int(path[p]) if p >= 0 else -1
            again = chain[parent_path].get(nm) if parent_path >= 0 else None
            if again is not None:
                path[n] = again
                continue
            k = (parent_path, nm)
            pid = ids.get(k)
            if pid is None:
                label = names[nm][cut:]
                pid = len(paths)
                ids[k] = pid
                paths.append(label if parent_path < 0 else f"{paths[parent_path]}.{label}")
                above = dict(chain[parent_path]) if parent_path >= 0 else {}
                above[nm] = pid
                chain.append(above)
            path[n] = pid
        return frame, path, paths

    return att.memo("module_paths", make)


def outside_keys(att: Attribution) -> tuple[I64, list[str]]:
    """For each node, the id of its outside-modules row: its outermost op or range (steps
    markers aside), or :data:`NO_OP`; and the row names by id."""

    def make() -> tuple[I64, list[str]]:
        top = outermost_ops(att)
        ids = np.where(top >= 0, att.name[np.maximum(top, 0)].astype(np.int64) + 1, 0)
        # Symbol ids to dense row ids through a table (a sort of every node would cost more).
        used = np.zeros(len(att.trace.symbols) + 1, dtype=bool)
        used[ids] = True
        dense = np.cumsum(used) - 1
        uniq = np.flatnonzero(used)
        names = [NO_OP if u == 0 else att.trace.symbols[int(u) - 1] for u in uniq.tolist()]
        keys = dense[ids].astype(np.int64)
        # A graph replay outside every op is its own unit, "graph N: K kernels", not "(no op)".
        replays = graph_replays(att)
        for r in np.flatnonzero(top[replays.launch_node] < 0).tolist():
            label = replays.label(r)
            if label not in names:
                names.append(label)
            keys[replays.launch_node[r]] = names.index(label)
        return keys, names

    return att.memo("outside_keys", make)


def outermost_ops(att: Attribution) -> I64:
    """For each node, its outermost op or range (step markers aside), -1 for none."""

    def make() -> I64:
        eligible = att.is_op_or_annotation & ~att.step_marker()
        return att.forest.outermost(eligible)

    return att.memo("outermost_ops", make)


def module_table(att: Attribution) -> Breakdown:
    """Modules by path, and the rows outside any module.

    Parameters
    ----------
    att : Attribution
        ``attribute(trace)`` of a trace with ``python_function`` events.

    Returns
    -------
    Breakdown
        ``by="module"``. Module rows (kind ``"module"``): calls, host time of the module's
        calls (self: minus its child modules'), device time self (kernels whose innermost
        module is this one) and total (with its child modules'), split into forward and
        backward and other (``forward_device_ns``/``backward_device_ns``/``other_device_ns``
        are totals; other: outside every module's forward, e.g. in ``Optimizer.step``). Outside rows
        (kind ``"outside"``): calls and host time of those outermost ops outside modules, and
        the device time under them.
    """
    frame, path, paths = module_paths(att)
    n_paths = len(paths)
    sums = frame_sums(att, frame, path, n_paths)
    rows = [
        BreakdownRow(
            key=paths[i],
            calls=int(sums.calls[i]),
            cpu_self_ns=int(sums.cpu_self[i]),
            cpu_total_ns=int(sums.cpu_total[i]),
            device_self_ns=round(sums.dev_self[i]),
            device_total_ns=round(sums.dev_total[i]),
            kind="module",
            forward_device_ns=round(sums.fwd_total[i]),
            backward_device_ns=round(sums.bwd_total[i]),
            other_device_ns=round(sums.oth_total[i]),
        )
        for i in range(n_paths)
    ]
    # Outside modules: the nodes no module frame holds, by their outermost op.
    out_key, out_names = outside_keys(att)
    f = att.forest
    fwd_w, bwd_w, oth_w = att.phase_weights()
    outside = sums.inner < 0
    n_out = len(out_names)
    fwd = np.bincount(out_key[outside], weights=fwd_w[outside], minlength=n_out)
    bwd = np.bincount(out_key[outside], weights=bwd_w[outside], minlength=n_out)
    oth = np.bincount(out_key[outside], weights=oth_w[outside], minlength=n_out)
    # Backward ops tied to a forward op count in that op's row (or module), not here.
    tops = np.flatnonzero(outside & (outermost_ops(att) == np.arange(len(f))))
    linked = f.subtree_sum(att.forward_op >= 0)[tops] > 0
    tops = tops[~linked]
    dur = (f.end_ns - f.start_ns)[tops].astype(np.float64)
    calls = np.bincount(out_key[tops], minlength=n_out)
    cpu = np.bincount(out_key[tops], weights=dur, minlength=n_out)
    for j in range(n_out):
        if calls[j] == 0 and fwd[j] + bwd[j] + oth[j] == 0:
            continue
        dev = round(fwd[j] + bwd[j] + oth[j])
        rows.append(
            BreakdownRow(
                key=out_names[j],
                calls=int(calls[j]),
                cpu_self_ns=round(cpu[j]),
                cpu_total_ns=round(cpu[j]),
                device_self_ns=dev,
                device_total_ns=dev,
                kind="outside",
                forward_device_ns=round(fwd[j]),
                backward_device_ns=round(bwd[j]),
                other_device_ns=round(oth[j]),
            )
        )
    # Each kernel's row: its innermost module's path, else its outside row.
    row_of_outside = np.full(n_out, -1, dtype=np.int64)
    kept = [i for i, r in enumerate(rows) if r.kind == "outside"]
    for i in kept:
        row_of_outside[out_names.index(rows[i].key)] = i
    node_row = np.where(sums.inner >= 0, path[np.maximum(sums.inner, 0)], row_of_outside[out_key])
    kernel_row = kernel_keys(att, node_row)
    return Breakdown(
        by="module",
        rows=rows,
        kernel_rows=att.gpu_rows,
        kernel_row=kernel_row,
        unattributed_device_ns=int(att.gpu_dur_ns[kernel_row < 0].sum()),
    ).sorted()
