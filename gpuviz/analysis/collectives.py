"""Collectives aligned across ranks: who arrived when, and how long the others waited.

Each rank's trace holds its own part of every collective: an NCCL kernel on the GPU, or, for
gloo (and CPU-only traces), a ``gloo:all_reduce``-style range on the CPU. This module finds the
parts that belong to one collective and lines them up:

- Parts are grouped by process group: the kernel's ``Process Group Name`` (``pg_id``) arg where
  present; else by NCCL stream (the k-th NCCL stream of one rank goes with the k-th of
  another, streams ordered by first use); gloo ranges form one group.
- Within a group, parts are matched by their ``seq``/``Seq`` arg where every part has one.
  Otherwise by order: the n-th part of a rank goes with the n-th of the others, after a
  per-rank *shift* that absorbs traces that start or stop at different collectives (one
  rank's profiler window began a collective later). The shift is the one under which the
  collective names agree and the parts' end times are closest: a collective ends at about
  the same moment on every rank, since all of them wait for the last one.
- A part's *arrival* is its start: an NCCL kernel starts when its rank launched it and its
  stream was ready, then spins until every rank is there. The others *wait* for the last
  arrival: ``wait = last_arrival - arrival``. The last rank's *delay* is how much later it
  came than the one before it: what the whole group lost to it alone.

Ranks are assumed to share a clock (the importer aligns them on absolute time). Point-to-point
kernels (``SendRecv``) are left out: they pair two ranks, not a group.

Everything is arrays: :class:`CollectiveTable` holds one row per collective and one column per
rank, which is what a rank × collective chart or a "worst collectives" list reads directly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from gpuviz.analysis.names import collective_name, is_comm_kernel, is_p2p_kernel, name_mask
from gpuviz.analysis.steps import Steps
from gpuviz.trace.model import NONE, Kind, Trace

I64 = npt.NDArray[np.int64]
Bool = npt.NDArray[np.bool_]

MAX_SHIFT = 16
"""The largest per-rank shift (in collectives) tried when matching by order."""

_CPU_PREFIXES = ("gloo:", "nccl:")


@dataclass
class CollectiveTable:
    """Collectives of a multi-rank trace, one row each, one column per rank.

    Times are ns from the trace zero. Where a rank has no part in a collective (it is not in
    the group, or its trace does not cover it) its cells hold ``-1`` and ``present`` is False.

    Attributes
    ----------
    ranks : int64, shape (R,)
        The rank of each column.
    group : list of str, shape (C,)
        The process group (``Process Group Name``, ``stream#k`` or ``gloo``) of each row.
    name : list of str, shape (C,)
        The collective (``AllReduce``, ``all_reduce`` …).
    seq : int64, shape (C,)
        Its sequence number within its group (the ``seq`` arg, or its matched order).
    present : bool, shape (C, R)
        Whether the rank took part (and its trace shows it).
    arrival_ns, end_ns : int64, shape (C, R)
        Each rank's part: its start (the arrival) and its end.
    slice_row : int64, shape (C, R)
        The part's row in ``trace.slices`` (to jump to it on the Timeline).
    step : int64, shape (C, R)
        Row in the :class:`~gpuviz.analysis.steps.Steps` given to :func:`align_collectives`
        whose window holds the arrival, or -1.
    wait_ns : int64, shape (C, R)
        ``last_arrival_ns - arrival_ns`` (0 for the last rank, -1 where absent).
    last_arrival_ns : int64, shape (C,)
    last_rank : int64, shape (C,)
        The rank (not the column) that arrived last.
    delay_ns : int64, shape (C,)
        How much later the last rank arrived than the one before it.
    total_wait_ns : int64, shape (C,)
        The waits summed over ranks.
    matched_by : str
        ``seq``, ``order`` (no shift was needed) or ``order+shift``.
    shift : dict of (str, int) to int
        Per (group, rank): the shift applied when matching by order (0 for most).
    """

    ranks: I64
    group: list[str]
    name: list[str]
    seq: I64
    present: Bool
    arrival_ns: I64
    end_ns: I64
    slice_row: I64
    step: I64
    wait_ns: I64
    last_arrival_ns: I64
    last_rank: I64
    delay_ns: I64
    total_wait_ns: I64
    matched_by: str = "order"
    shift: dict[tuple[str, int], int] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.seq)

    def column(self, rank: int) -> int:
        """The column of ``rank``; ValueError when it is not in the table."""
        hit = np.flatnonzero(self.ranks == rank)
        if len(hit) == 0:
            raise ValueError(f"rank {rank} is not in the table")
        return int(hit[0])

    def worst(self, n: int = 10) -> I64:
        """Rows of the ``n`` collectives with the largest total wait, worst first."""
        order = np.lexsort((np.arange(len(self)), -self.total_wait_ns))
        return order[: max(int(n), 0)].astype(np.int64)

    def last_counts(self) -> dict[int, int]:
        """Rank -> how many collectives it arrived last in (rows with 2+ ranks present)."""
        multi = self.present.sum(axis=1) >= 2
        ranks, counts = np.unique(self.last_rank[multi], return_counts=True)
        return {int(r): int(c) for r, c in zip(ranks, counts)}

    @classmethod
    def empty(cls, ranks: I64 | None = None) -> CollectiveTable:
        """A table with no collectives."""
        r = np.empty(0, dtype=np.int64) if ranks is None else ranks
        z2 = np.empty((0, len(r)), dtype=np.int64)
        z1 = np.empty(0, dtype=np.int64)
        return cls(
            r, [], [], z1, z2.astype(bool), z2, z2, z2, z2, z2, z1, z1, z1, z1, matched_by="none"
        )


@dataclass
class _Parts:
    """Collective parts of all ranks: one row per kernel or CPU range (``row``: its row in
    ``trace.slices``)."""

    rank: I64
    group: list[str]
    name: list[str]
    seq: I64
    start_ns: I64
    end_ns: I64
    row: I64


CollectiveParts = _Parts
"""The public name of the parts (:func:`collective_parts`, :func:`align_parts`)."""


def collective_parts(trace: Trace) -> _Parts:
    """Every rank's collective parts: NCCL kernels, or gloo/CPU ranges where a rank has none."""
    s, t = trace.slices, trace.tracks
    slice_rank = t.rank[s.track].astype(np.int64)
    comm = name_mask(trace.symbols, is_comm_kernel)
    p2p = name_mask(trace.symbols, is_p2p_kernel)
    kernels = np.flatnonzero((s.kind == Kind.KERNEL) & comm[s.name] & ~p2p[s.name])
    kernel_ranks = np.unique(slice_rank[kernels])
    cpu_ok = name_mask(trace.symbols, lambda n: n.startswith(_CPU_PREFIXES))
    cpu_kind = (s.kind == Kind.USER_ANNOTATION) | (s.kind == Kind.CPU_OP)
    cpu = np.flatnonzero(cpu_kind & cpu_ok[s.name] & ~np.isin(slice_rank, kernel_ranks))

    rows: list[int] = []
    groups: list[str] = []
    names: list[str] = []
    seqs: list[int] = []
    # Kernels: group by process group where the args say it, else by NCCL stream order.
    # Each rank's kernels by one sort, not a scan of all ranks' per rank (issue 51).
    by_rank = kernels[np.lexsort((kernels, slice_rank[kernels]))]
    cut = np.flatnonzero(np.diff(slice_rank[by_rank])) + 1
    for mine in np.split(by_rank, cut) if len(by_rank) else []:
        mine = mine[np.argsort(s.start_ns[mine], kind="stable")]
        streams = t.stream[s.track[mine]]
        _, first = np.unique(streams, return_index=True)
        stream_order = {int(streams[i]): k for k, i in enumerate(sorted(first))}
        for r in mine.tolist():
            a = trace.args.get(int(s.args[r]))
            pg = a.get("Process Group Name", a.get("pg_id"))
            stream = int(t.stream[s.track[r]])
            groups.append(f"pg {pg}" if pg is not None else f"stream#{stream_order[stream]}")
            names.append(str(a.get("Collective name") or collective_name(trace.name_of(r))))
            seqs.append(_seq_of(a))
            rows.append(r)
    # CPU ranges (gloo): one group, by order.
    for r in cpu[np.lexsort((s.start_ns[cpu], slice_rank[cpu]))].tolist():
        rows.append(r)
        groups.append("gloo" if trace.name_of(r).startswith("gloo:") else "cpu")
        names.append(collective_name(trace.name_of(r)))
        seqs.append(NONE)
    idx = np.asarray(rows, dtype=np.int64)
    start = s.start_ns[idx].astype(np.int64)
    return _Parts(
        rank=slice_rank[idx],
        group=groups,
        name=names,
        seq=np.asarray(seqs, dtype=np.int64),
        start_ns=start,
        end_ns=start + s.dur_ns[idx],
        row=idx,
    )


def _split_by(keys: npt.ArrayLike, rows: I64) -> dict[int, I64]:
    """``rows`` by their ``keys`` (one per row), in ascending key order, each group in
    ascending row order."""
    keys = np.asarray(keys, dtype=np.int64)
    order = np.lexsort((rows, keys))
    k, r = keys[order], rows[order]
    cut = np.flatnonzero(np.diff(k)) + 1
    return {int(a[0]): b for a, b in zip(np.split(k, cut), np.split(r, cut)) if len(a)}


def _rows_by_seq(
    g: str, parts: _Parts, in_g: I64, col_of: dict[int, int]
) -> list[tuple[str, str, int, dict[int, int]]]:
    """Group ``g``'s collectives matched by sequence number: per number, each rank's first part
    with it (cells in rank order, named by the lowest rank's part). One sort by (seq, rank,
    part) instead of a scan of the group per number and rank: that was per-pair work, ranks
    times collectives squared."""
    seq, rank = parts.seq[in_g], parts.rank[in_g].astype(np.int64)
    order = np.lexsort((in_g, rank, seq))
    seq, rank, part = seq[order], rank[order], in_g[order]
    first = np.ones(len(part), dtype=bool)  # each (seq, rank)'s first part
    first[1:] = (seq[1:] != seq[:-1]) | (rank[1:] != rank[:-1])
    seq, rank, part = seq[first], rank[first], part[first]
    cut = np.flatnonzero(np.diff(seq)) + 1
    out = []
    for s_, r_, p_ in zip(np.split(seq, cut), np.split(rank, cut), np.split(part, cut)):
        cells = {col_of[int(r)]: int(p) for r, p in zip(r_.tolist(), p_.tolist())}
        out.append((g, parts.name[int(p_[0])], int(s_[0]), cells))
    return out


def _seq_of(args: dict[str, Any]) -> int:
    for key in ("seq", "Seq", "Collective seq"):
        v = args.get(key)
        if isinstance(v, int) and not isinstance(v, bool):
            return int(v)
        if isinstance(v, str) and v.strip().lstrip("-").isdigit():
            return int(v)
    return NONE


def align_collectives(trace: Trace, steps: Steps | None = None) -> CollectiveTable:
    """Match every collective's parts across ranks (see the module docstring).

    Parameters
    ----------
    trace : Trace
        A trace of several ranks (a lone file gives an empty table).
    steps : Steps, optional
        When given, each part gets the row of the step whose window holds its arrival.

    Returns
    -------
    CollectiveTable
        Rows ordered by group, then sequence.
    """
    ranks = np.asarray(sorted({-1 if r is None else int(r) for r in trace.rank_values()}))
    ranks = ranks.astype(np.int64)
    if len(ranks) < 2:
        return CollectiveTable.empty(ranks)
    return align_parts(ranks, collective_parts(trace), steps)


def align_parts(ranks: I64, parts: CollectiveParts, steps: Steps | None = None) -> CollectiveTable:
    """:func:`align_collectives` from the ranks' parts alone, without their trace.

    The Ranks view of a folder opened from per-rank reductions
    (:mod:`gpuviz.analysis.rank_reduction`) aligns the parts each rank sent, shifted onto
    the folder's clock; the parts' ``row`` is then a row of that rank's own trace.

    Parameters
    ----------
    ranks : int64 array
        The ranks, ascending (one column each).
    parts : CollectiveParts
        Every rank's parts (:func:`collective_parts`).
    steps : Steps, optional
        As :func:`align_collectives`'s.

    Returns
    -------
    CollectiveTable
    """
    if len(ranks) < 2:
        return CollectiveTable.empty(ranks)
    col_of = {int(r): i for i, r in enumerate(ranks.tolist())}
    group_arr = np.asarray(parts.group, dtype=object)
    out_rows: list[tuple[str, str, int, dict[int, int]]] = []  # group, name, seq, col -> part
    methods: set[str] = set()
    shifts: dict[tuple[str, int], int] = {}
    for g in sorted(set(parts.group)):
        in_g = np.flatnonzero(group_arr == g)
        per_rank = _split_by(parts.rank[in_g], in_g)  # one sort (issue 51: no per-pair scans)
        if len(per_rank) < 2:
            continue
        if all((parts.seq[i] >= 0).all() for i in per_rank.values()):
            methods.add("seq")
            out_rows += _rows_by_seq(g, parts, in_g, col_of)
            continue
        ref = max(per_rank, key=lambda r: (len(per_rank[r]), -r))
        by_global: dict[int, dict[int, int]] = {}
        for r, idx in per_rank.items():
            k = 0 if r == ref else _best_shift(parts, per_rank[ref], idx)
            shifts[(g, r)] = k
            methods.add("order+shift" if k else "order")
            for j, part in enumerate(idx.tolist()):
                by_global.setdefault(j - k, {})[col_of[r]] = part
        for n, gi in enumerate(sorted(by_global)):
            cells = by_global[gi]
            ref_part = cells.get(col_of[ref], next(iter(cells.values())))
            name = parts.name[ref_part]
            # A part whose collective differs from the reference's is not the same collective.
            cells = {c: p for c, p in cells.items() if parts.name[p] == name}
            out_rows.append((g, name, n, cells))
    out_rows = [r for r in out_rows if len(r[3]) >= 2]
    if not out_rows:
        return CollectiveTable.empty(ranks)
    return _table(parts, ranks, out_rows, steps, methods, shifts)


def _best_shift(parts: _Parts, ref: I64, other: I64) -> int:
    """The shift k (other's index = ref's index + k) under which the two sequences agree best."""
    n_ref, n = len(ref), len(other)
    ref_names = np.asarray([parts.name[i] for i in ref.tolist()], dtype=object)
    names = np.asarray([parts.name[i] for i in other.tolist()], dtype=object)
    best: tuple[float, float, int, int] | None = None
    limit = min(MAX_SHIFT, max(n_ref, n) - 1)
    for k in range(-limit, limit + 1):
        i0, i1 = max(0, -k), min(n_ref, n - k)
        if i1 <= i0:
            continue
        i = np.arange(i0, i1)
        same = ref_names[i] == names[i + k]
        mismatch = 1.0 - float(same.mean())
        diff = np.abs(parts.end_ns[other[i + k]] - parts.end_ns[ref[i]])
        closeness = float(np.median(diff[same])) if same.any() else float("inf")
        key = (mismatch, closeness, abs(k), k)
        if best is None or key < best:
            best = key
    return 0 if best is None else best[3]


def _table(
    parts: _Parts,
    ranks: I64,
    rows: list[tuple[str, str, int, dict[int, int]]],
    steps: Steps | None,
    methods: set[str],
    shifts: dict[tuple[str, int], int],
) -> CollectiveTable:
    n_c, n_r = len(rows), len(ranks)
    part = np.full((n_c, n_r), NONE, dtype=np.int64)
    for c, (_, _, _, cells) in enumerate(rows):
        for col, p in cells.items():
            part[c, col] = p
    present = part >= 0
    safe = np.where(present, part, 0)
    arrival = np.where(present, parts.start_ns[safe], NONE)
    end = np.where(present, parts.end_ns[safe], NONE)
    slice_row = np.where(present, parts.row[safe], NONE)
    big = np.iinfo(np.int64).min
    masked = np.where(present, arrival, big)
    last_col = np.argmax(masked, axis=1)
    last_arrival = masked[np.arange(n_c), last_col]
    second = np.where(present, arrival, big)
    second[np.arange(n_c), last_col] = big
    second_arrival = second.max(axis=1)
    delay = np.where(second_arrival > big, last_arrival - second_arrival, 0)
    wait = np.where(present, last_arrival[:, None] - arrival, NONE)
    total_wait = np.where(present, wait, 0).sum(axis=1)
    step = np.full((n_c, n_r), NONE, dtype=np.int64)
    if steps is not None and len(steps):
        for col, r in enumerate(ranks.tolist()):
            mine = steps.of_rank(r)
            if len(mine) == 0:
                continue
            t = arrival[:, col]
            k = np.searchsorted(steps.start_ns[mine], t, side="right") - 1
            kk = np.maximum(k, 0)
            ok = present[:, col] & (k >= 0) & (t < steps.end_ns[mine][kk])
            step[:, col] = np.where(ok, mine[kk], NONE)
    method = (
        "seq" if methods == {"seq"} else ("order+shift" if "order+shift" in methods else "order")
    )
    if "seq" in methods and len(methods) > 1:
        method = "seq+" + method
    return CollectiveTable(
        ranks=ranks,
        group=[r[0] for r in rows],
        name=[r[1] for r in rows],
        seq=np.asarray([r[2] for r in rows], dtype=np.int64),
        present=present,
        arrival_ns=arrival,
        end_ns=end,
        slice_row=slice_row,
        step=step,
        wait_ns=wait,
        last_arrival_ns=last_arrival,
        last_rank=ranks[last_col],
        delay_ns=delay.astype(np.int64),
        total_wait_ns=total_wait.astype(np.int64),
        matched_by=method,
        shift=shifts,
    )
