"""The critical path of a step: the chain of work its end waited for, and its time by category.

A step's graph (:mod:`gpuviz.analysis.dep_graph`) is *replayed*: in an order that every edge
follows, each node starts at the latest of its edges plus its own delay. With the recorded
durations the replay gives back the recorded times; with changed ones
(:mod:`gpuviz.analysis.whatif`) it predicts them. The node that ends last is the step's end,
and following back from it the edge that bound each node's start gives the *critical path*:
the longest path by duration through the graph (a node's delay counts as its in-edge's
length). Its time is split into the work of its nodes and the *waits* between them (their
delays: launch latency, gaps no dependency explains), and adds up to the step's span.

``gpuviz critical-path --json`` prints :func:`path_json`::

    {"step": N, "ranks": [...], "step_us": float, "span_us": float,
     "by_category": {"compute": {"us", "share"}, "communication": ..., "copies": ...,
                     "cpu": ..., "waits": ...},
     "ranks_on_path": [{"rank", "us", "share"}],
     "kernels": [{"name", "rank", "calls", "us", "share"}],
     "ops": [{"name", "rank", "calls", "us", "share"}],
     "graph": {"nodes", "edges": {kind: count}, "dropped_edges"}, "notes": [...]}

``step_us`` is the step's window (the longest of its ranks'); ``span_us`` is the path's length,
from the window's start to the end of the last work; shares are of ``span_us``. ``ops`` are
top-level ops (CPU time on the path inside each; ``(outside ops)`` is Python between ops);
``kernels`` are kernels, copies and sets by name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from gpuviz.analysis.dep_graph import (
    ARRIVE,
    CATEGORIES,
    GPU,
    WAITS,
    XFER,
    StepGraph,
)
from gpuviz.trace.model import Trace

I64 = npt.NDArray[np.int64]
_MIN = np.iinfo(np.int64).min


@dataclass
class Replay:
    """Start and end of every node of a graph, and the edge that bound each start.

    Attributes
    ----------
    start_ns, end_ns : int64, per node
    binding : int64, per node
        Index of the edge (into the graph's edge columns) that set its start; -1 for a node
        measured from its rank's window start.
    """

    start_ns: I64
    end_ns: I64
    binding: I64


def replay(
    g: StepGraph,
    dur_ns: I64 | None = None,
    delay_ns: I64 | None = None,
    edge_on: npt.NDArray[np.bool_] | None = None,
) -> Replay:
    """Replay ``g`` with the given durations and delays (the recorded ones by default).

    Parameters
    ----------
    g : StepGraph
    dur_ns, delay_ns : int64 per node, optional
    edge_on : bool per edge, optional
        Edges to keep (a removed wait's sync edges are dropped).

    Returns
    -------
    Replay
    """
    n = len(g)
    dur = (g.dur_ns if dur_ns is None else dur_ns).tolist()
    delay = (g.delay_ns if delay_ns is None else delay_ns).tolist()
    keep = np.ones(len(g.src), dtype=bool) if edge_on is None else edge_on
    eidx = np.flatnonzero(keep)
    eidx = eidx[np.argsort(g.dst[eidx], kind="stable")]
    ptr = np.searchsorted(g.dst[eidx], np.arange(n + 1)).tolist()
    src = g.src[eidx].tolist()
    fe = g.from_end[eidx].tolist()
    lag = g.lag_ns[eidx].tolist()
    anchor = g.anchor_ns().tolist()
    start = [0] * n
    bind = [-1] * n
    # The tight loop: one pass over the nodes in order, each reading its in-edges.
    for v in g.order.tolist():
        best, be = _MIN, -1
        for k in range(ptr[v], ptr[v + 1]):
            u = src[k]
            t = start[u] + (dur[u] if fe[k] else 0) + lag[k]
            if t > best:
                best, be = t, k
        if be < 0:
            start[v] = anchor[v] + delay[v]
        else:
            start[v] = best + delay[v]
            bind[v] = int(eidx[be])
    st = np.asarray(start, dtype=np.int64)
    return Replay(st, st + np.asarray(dur, dtype=np.int64), np.asarray(bind, dtype=np.int64))


@dataclass
class Path:
    """The critical path of a replay, first node first.

    Attributes
    ----------
    nodes : int64
    work_ns, wait_ns : int64, per path node
        The time the node holds on the path: its own work, and the wait before it. They add
        up to ``span_ns``.
    span_ns : int
        From the window start of the path's first node to the end of its last.
    """

    nodes: I64
    work_ns: I64
    wait_ns: I64
    span_ns: int


def critical_path(g: StepGraph, rp: Replay, rank: int | None = None) -> Path:
    """Follow the binding edges back from the node that ends last (of ``rank``, or of any)."""
    if len(g) == 0:
        e = np.empty(0, dtype=np.int64)
        return Path(e, e, e, 0)
    cand = np.arange(len(g)) if rank is None else np.flatnonzero(g.rank == rank)
    v = int(cand[np.argmax(rp.end_ns[cand])])
    nodes = [v]
    while rp.binding[v] >= 0:
        v = int(g.src[rp.binding[v]])
        nodes.append(v)
    path = np.asarray(nodes[::-1], dtype=np.int64)
    # Each node holds [its release, its hand-off to the next node on the path].
    release = rp.start_ns[path] - g.delay_ns[path]
    release[0] = g.anchor_ns()[path[0]]
    hand = rp.end_ns[path].copy()
    if len(path) > 1:
        e = rp.binding[path[1:]]
        hand[:-1] = (
            rp.start_ns[g.src[e]]
            + np.where(g.from_end[e], rp.end_ns[g.src[e]] - rp.start_ns[g.src[e]], 0)
            + g.lag_ns[e]
        )
    seg = hand - release
    wait = np.clip(rp.start_ns[path] - release, 0, np.maximum(seg, 0))
    return Path(path, seg - wait, wait, int(hand[-1] - release[0]))


def step_times(g: StepGraph, rp: Replay) -> tuple[I64, I64]:
    """Per rank of ``g.ranks``: the step time recorded, and the one ``rp`` predicts.

    A rank's step lasts its window (:mod:`gpuviz.analysis.steps`); the prediction moves its
    end by as much as the end of its last work moved.
    """
    measured = g.window_end_ns - g.window_start_ns
    end0 = g.end_ns
    predicted = measured.copy()
    for i, r in enumerate(g.ranks.tolist()):
        mine = g.rank == r
        if mine.any():
            predicted[i] = measured[i] + int(rp.end_ns[mine].max() - end0[mine].max())
    return measured, predicted


def _name(trace: Trace, row: int) -> str:
    return "(outside ops)" if row < 0 else trace.name_of(row)


def rank_json(rank: int) -> int | None:
    """A rank as JSON: null for a single process's trace (no distributed rank), as ``summary``
    writes it."""
    return None if rank < 0 else rank


def _us(ns: float) -> float:
    return round(float(ns) / 1000.0, 3)


def path_json(
    trace: Trace,
    g: StepGraph,
    rp: Replay,
    path: Path,
    top: int = 10,
    step_ns: int | None = None,
) -> dict[str, Any]:
    """The critical path as the module docstring's JSON (``top`` rows of kernels and ops;
    ``step_ns``: the step's time to print, the recorded one by default)."""
    span = max(path.span_ns, 1)
    cat = g.category[path.nodes].astype(np.int64)
    by_cat = np.bincount(cat, weights=path.work_ns, minlength=len(CATEGORIES))
    by_cat[WAITS] += path.wait_ns.sum()
    held = path.work_ns + path.wait_ns
    ranks = {}
    for r in g.ranks.tolist():
        us = float(held[g.rank[path.nodes] == r].sum())
        if us > 0:
            ranks[r] = us

    def rows(mask: npt.NDArray[np.bool_], key_rows: I64) -> list[dict[str, Any]]:
        agg: dict[tuple[str, int], list[float]] = {}
        for node, key, w in zip(
            path.nodes[mask].tolist(),
            key_rows[mask].tolist(),
            path.work_ns[mask].tolist(),
            strict=True,
        ):
            k = (_name(trace, key), int(g.rank[node]))
            a = agg.setdefault(k, [0, 0.0])
            a[0] += 1
            a[1] += w
        out = sorted(agg.items(), key=lambda kv: -kv[1][1])[:top]
        return [
            {
                "name": k[0],
                "rank": rank_json(k[1]),
                "calls": int(v[0]),
                "us": _us(v[1]),
                "share": round(v[1] / span, 4),
            }
            for k, v in out
        ]

    kinds = g.kind[path.nodes]
    gpu = (kinds == GPU) | (((kinds == XFER) | (kinds == ARRIVE)) & (g.thread[path.nodes] < 0))
    measured, _ = step_times(g, rp)
    return {
        "step": int(g.number),
        "ranks": [rank_json(int(r)) for r in g.ranks.tolist()],
        "step_us": _us(step_ns if step_ns is not None else measured.max() if len(measured) else 0),
        "span_us": _us(path.span_ns),
        "by_category": {
            c: {"us": _us(v), "share": round(float(v) / span, 4)}
            for c, v in zip(CATEGORIES, by_cat.tolist(), strict=True)
        },
        "ranks_on_path": [
            {"rank": rank_json(r), "us": _us(v), "share": round(v / span, 4)}
            for r, v in ranks.items()
        ],
        "kernels": rows(gpu, g.row[path.nodes]),
        "ops": rows(~gpu, g.outer[path.nodes]),
        "graph": {
            "nodes": len(g),
            "edges": g.edge_counts(),
            "dropped_edges": g.dropped_edges,
        },
        "notes": list(g.notes),
    }
