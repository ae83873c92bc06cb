"""The call forest against torch's own stack algorithm (EventList._populate_cpu_children)."""

from __future__ import annotations

import numpy as np
import pytest

from gpuviz.analysis.call_forest import build_forest


def _torch_parents(group, start, end):  # type: ignore[no-untyped-def]
    """torch's algorithm, on slices sorted by (group, start, longest first)."""
    parent, stack = [], []
    for i in range(len(group)):
        while stack and (
            group[stack[-1]] != group[i] or start[i] >= end[stack[-1]] or end[i] > end[stack[-1]]
        ):
            stack.pop()
        parent.append(stack[-1] if stack else -1)
        stack.append(i)
    return np.array(parent)


@pytest.mark.parametrize("seed", range(6))
def test_parents_match_torch(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 3000
    # Nested calls from random recursion, plus a few slices that overlap without nesting.
    starts, durs, groups = [], [], []
    for g in range(3):
        t = 0
        for _ in range(n // 3):
            t += int(rng.integers(0, 50))
            starts.append(t)
            durs.append(int(rng.choice([0, 1, 5, 50, 400, 3000])))
            groups.append(g)
    start = np.array(starts, dtype=np.int64)
    dur = np.array(durs, dtype=np.int64)
    group = np.array(groups, dtype=np.int64)
    f = build_forest(np.arange(len(start), dtype=np.int64), group, start, dur)
    want = _torch_parents(f.group.tolist(), f.start_ns.tolist(), f.end_ns.tolist())
    assert (f.parent == want).all()
    # Depths are the parent chains' lengths, and the walks agree with them.
    d = np.where(f.parent >= 0, f.depth[np.maximum(f.parent, 0)] + 1, 0)
    assert (f.depth == d).all()
    ones = f.subtree_sum(np.ones(len(f)))
    assert ones.sum() == (f.depth + 1).sum()
