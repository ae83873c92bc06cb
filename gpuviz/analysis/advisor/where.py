"""Where in the code a finding's evidence comes from: its ops, modules and source lines.

Each evidence range is mapped to the work it stands for, and that work to the code through the
attribution (:mod:`gpuviz.analysis.attribution`):

- a GPU range (``device`` set): the kernels, copies and sets on that device (and stream) that
  overlap it (for the kinds of :data:`NAMED_KINDS`, those the evidence names); weighted by their time, or by
  their count for ``launch_bound`` (the modules issuing the most launches);
- a CPU range: the runtime calls on that rank (and thread) inside it (``host_sync``: those the
  evidence names, the synchronizing calls), weighted by duration.

Each call or kernel goes to its op (the innermost ``cpu_op`` around the launch), its module path
(outside modules: the outermost op or range, as in ``gpuviz breakdown --by module``) and its
line; backward kernels go where their forward op ran. The three most weighty names of each are
kept.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

from gpuviz.analysis.advisor.findings import Evidence, Finding
from gpuviz.analysis.attribution import Attribution, NodeKind, attribute
from gpuviz.analysis.compiled_regions import place_kernels
from gpuviz.analysis.graph_merge import merge_of
from gpuviz.analysis.graph_replays import graph_replays
from gpuviz.analysis.origin import CodeOrigin, KernelOrigin, capture_origin
from gpuviz.trace.model import NONE, Trace

TOP = 3
NAMED_KINDS = frozenset({"host_sync", "fp32_matmul", "low_occupancy", "pageable_copy"})
"""Kinds whose evidence names the culprits (the sync call, the GEMMs): only those count. The
others' names are examples, and all the work in the range counts."""
I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]


def with_code(trace: Trace, findings: Iterable[Finding]) -> list[Finding]:
    """``findings`` with ``ops``, ``modules`` and ``lines`` on each evidence range where the
    trace can tell them.

    Parameters
    ----------
    trace : Trace
    findings : iterable of Finding

    Returns
    -------
    list of Finding
        The same findings, evidence filled in.
    """
    findings = list(findings)
    if not findings:
        return findings
    att = attribute(trace)
    if not att.is_op.any() and not len(graph_replays(att)):
        return findings
    index = _Index(att)
    out = []
    for f in findings:
        ev = tuple(index.fill(f.kind, e) for e in f.evidence)
        out.append(dataclasses.replace(f, evidence=ev))
    return out


class _Index:
    """The per-kernel and per-node arrays the mapping reads, made once per trace."""

    def __init__(self, att: Attribution) -> None:
        self.att = att
        tr = att.trace
        s, t = tr.slices, tr.tracks
        self.k_track = s.track[att.gpu_rows]
        self.k_rank = t.rank[self.k_track]
        self.k_device = t.device[self.k_track]
        self.k_stream = t.stream[self.k_track]
        self.k_start = s.start_ns[att.gpu_rows]
        self.k_end = self.k_start + att.gpu_dur_ns
        self.k_name = s.name[att.gpu_rows]
        f = att.forest
        track = s.track[f.rows]
        self.n_rank = t.rank[track]
        self.n_tid = t.tid[track]
        launch = np.maximum(att.gpu_launch, 0)
        back = (att.gpu_launch >= 0) & att.backward[launch]
        src = np.where(back, att.forward_op[launch], -1)
        self.k_holder = np.where(att.gpu_launch < 0, -1, np.where(src >= 0, src, launch))
        self.op_of = f.nearest(att.is_op)
        # A graph replay outside every op is named as its unit ("graph 1: 421 kernels").
        replays = graph_replays(att)
        self.unit_of = {
            int(n): replays.label(r)
            for r, n in enumerate(replays.launch_node.tolist())
            if self.op_of[n] < 0
        }
        self.stacks = att.has_stacks()
        if self.stacks:
            self.origin = CodeOrigin(att)
        # Replayed kernels matched to their capture go where they were captured.
        self.captured: dict[int, KernelOrigin] | None = None
        merge = merge_of(att)
        if merge is not None:
            self.captured = {}
            seen: dict[tuple[int, int], KernelOrigin] = {}
            for k, c, n in zip(
                merge.kernel.tolist(),
                merge.capture.tolist(),
                merge.launch_node.tolist(),
                strict=True,
            ):
                got = seen.get((c, n))
                if got is None:
                    got = seen[(c, n)] = capture_origin(merge.captures[c], n)
                self.captured[k] = got

    def fill(self, kind: str, e: Evidence) -> Evidence:
        nodes, weight, kernels = self._work(kind, e)
        cap_ops: list[tuple[str, float]] = []
        cap_mods: list[tuple[str, float]] = []
        cap_lines: list[tuple[str, float]] = []
        if self.captured is not None and kernels is not None:
            for i, k in enumerate(kernels.tolist()):
                o = self.captured.get(k)
                if o is None or (o.module is None and o.op is None):
                    continue
                nodes[i] = -1  # counted here, from its capture
                w = float(weight[i])
                cap_ops += [(o.op, w)] if o.op else []
                cap_mods += [(o.module, w)] if o.module else []
                cap_lines += [(o.line, w)] if o.line else []
        ok = nodes >= 0
        kept = kernels[ok] if kernels is not None else np.full(int(ok.sum()), -1, dtype=np.int64)
        nodes, weight = nodes[ok], weight[ok]
        if len(nodes) == 0 and not (cap_ops or cap_mods):
            return e
        att = self.att
        ops = self.op_of[nodes]
        has_op = ops >= 0
        op_names = att.trace.symbols.lookup(att.name[ops[has_op]])
        op_weight = weight[has_op]
        if self.unit_of:
            unit = [(self.unit_of.get(int(n)), w) for n, w in zip(nodes[~has_op], weight[~has_op])]
            op_names += [u for u, _ in unit if u is not None]
            op_weight = np.concatenate([op_weight, [w for u, w in unit if u is not None]])
        op_names, op_weight = _joined(op_names, op_weight, cap_ops)
        out = dataclasses.replace(e, ops=_top(op_names, op_weight))
        if self.stacks:
            # A compiled model's kernels: the modules and lines that wrote them (issue 49).
            mods, lines = place_kernels(
                att,
                kept,
                self.origin.modules(nodes),
                self.origin.lines(nodes),
                self.origin.mod_inner[nodes] >= 0,
            )
            keep = [i for i, x in enumerate(lines) if x]
            out = dataclasses.replace(
                out,
                modules=_top(*_joined(mods, weight, cap_mods)),
                lines=_top(*_joined([lines[i] for i in keep], weight[keep], cap_lines)),
            )
        return out

    def _work(self, kind: str, e: Evidence) -> tuple[I64, F64, I64 | None]:
        """The nodes of the work an evidence range stands for, their weights, and for GPU
        ranges the kernels (``gpu_rows`` indices) they stand for."""
        rank = NONE if e.rank is None else e.rank
        sym = self.att.trace.symbols
        names = e.names if kind in NAMED_KINDS else ()
        named = [i for i in (sym.find(n) for n in (names or ())) if i >= 0]
        if e.device is not None:
            sel = (self.k_rank == rank) & (self.k_device == e.device)
            if e.stream is not None:
                sel &= self.k_stream == e.stream
            sel &= (self.k_start < e.end_ns) & (self.k_end > e.start_ns)
            if named and np.isin(self.k_name[sel], named).any():
                sel &= np.isin(self.k_name, named)
            rows = np.flatnonzero(sel)
            w = np.ones(len(rows)) if kind == "launch_bound" else self.att.gpu_dur_ns[rows]
            return self.k_holder[rows].copy(), np.asarray(w, dtype=np.float64), rows
        att = self.att
        f = att.forest
        sel = (att.kind == NodeKind.RUNTIME) & (self.n_rank == rank)
        if e.thread is not None:
            sel &= self.n_tid == e.thread
        sel &= (f.start_ns >= e.start_ns) & (f.start_ns < e.end_ns)
        if named and np.isin(att.name[sel], named).any():
            sel &= np.isin(att.name, named)
        nodes = np.flatnonzero(sel)
        return nodes, (f.end_ns - f.start_ns)[nodes].astype(np.float64), None


def _joined(names: list[str], weight: F64, more: list[tuple[str, float]]) -> tuple[list[str], F64]:
    """``names`` and ``weight`` with the ``(name, weight)`` pairs of ``more`` after them."""
    if not more:
        return names, weight
    return names + [n for n, _ in more], np.concatenate([weight, [w for _, w in more]])


def _top(names: list[str], weight: F64) -> tuple[str, ...] | None:
    """The :data:`TOP` names of most weight."""
    if not names:
        return None
    total: dict[str, float] = {}
    for n, w in zip(names, weight.tolist()):
        total[n] = total.get(n, 0.0) + w
    return tuple(sorted(total, key=lambda n: (-total[n], n))[:TOP])
