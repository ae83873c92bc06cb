"""Rows of Python frames grouped by a key: what the module and source-line tables share.

Given some frames of the call forest (``nn.Module`` frames, or the user's code frames) and a
key for each (a module path, a ``file:line``), every kernel's device time goes to the key of
the innermost such frame around its launch -- forward kernels through their launch, backward
kernels through the forward op they came from (``Attribution.node_weights``), in three phases:
forward, backward and other (outside every module's forward: optimizer, loss, copies; see
``Attribution.phase_weights``). A key's total is the time inside its outermost frames (a module
inside itself is counted once).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gpuviz.analysis.attribution import Attribution

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]
Mask = npt.NDArray[np.bool_]


@dataclass
class FrameSums:
    """Per key figures (arrays indexed by key id), in ns.

    Attributes
    ----------
    calls : int64
        Frames of the key.
    cpu_total, cpu_self : int64
        Time inside the key's outermost frames; minus that of other keys' frames directly
        inside them.
    fwd_self, bwd_self, oth_self, fwd_total, bwd_total, oth_total : float64
        Device time (forward, backward, other) whose innermost frame has the key; and inside
        the key's outermost frames.
    inner : int64
        For each forest node, its innermost frame (itself included), -1 for none.
    """

    calls: I64
    cpu_total: I64
    cpu_self: I64
    fwd_self: F64
    bwd_self: F64
    fwd_total: F64
    bwd_total: F64
    inner: I64
    oth_self: F64
    oth_total: F64

    @property
    def dev_self(self) -> F64:
        """Device time whose innermost frame has the key, all phases."""
        out: F64 = self.fwd_self + self.bwd_self + self.oth_self
        return out

    @property
    def dev_total(self) -> F64:
        """Device time inside the key's outermost frames, all phases."""
        out: F64 = self.fwd_total + self.bwd_total + self.oth_total
        return out


def frame_sums(att: Attribution, frame: Mask, key: I64, n_keys: int) -> FrameSums:
    """Sum device and host time per key of the frames ``frame``.

    Parameters
    ----------
    att : Attribution
    frame : bool array per node
        The frames that count.
    key : int64 array per node
        Each frame's key id (0 to ``n_keys - 1``); ignored elsewhere.
    n_keys : int

    Returns
    -------
    FrameSums
    """
    f = att.forest
    fwd_w, bwd_w, oth_w = att.phase_weights()
    inner = f.nearest(frame)
    frames = np.flatnonzero(frame)
    fkey = key[frames]
    up = f.nearest(frame, inclusive=False)
    outer = _outermost(frames, key, up)
    dur = (f.end_ns - f.start_ns)[frames].astype(np.float64)
    fwd_sub = f.subtree_sum(fwd_w)[frames]
    bwd_sub = f.subtree_sum(bwd_w)[frames]
    oth_sub = f.subtree_sum(oth_w)[frames]

    def per_key(mask: Mask, values: npt.ArrayLike, keys: I64 = fkey) -> F64:
        out: F64 = np.bincount(
            keys[mask], weights=np.asarray(values)[mask], minlength=n_keys
        ).astype(np.float64, copy=False)
        return out

    calls = np.bincount(fkey, minlength=n_keys).astype(np.int64)
    cpu_total = per_key(outer, dur)
    # Host time of other keys' outermost frames directly under a frame of this key.
    parent_frame = up[frames]
    nested = outer & (parent_frame >= 0)
    pkey = np.where(parent_frame >= 0, key[np.maximum(parent_frame, 0)], 0)
    nested &= pkey != fkey
    cpu_taken = per_key(nested, dur, pkey)
    held = inner >= 0
    hkey = key[inner[held]]

    def self_of(w: F64) -> F64:
        out: F64 = np.bincount(hkey, weights=w[held], minlength=n_keys).astype(
            np.float64, copy=False
        )
        return out

    return FrameSums(
        calls=calls,
        cpu_total=np.rint(cpu_total).astype(np.int64),
        cpu_self=np.rint(np.maximum(cpu_total - cpu_taken, 0)).astype(np.int64),
        fwd_self=self_of(fwd_w),
        bwd_self=self_of(bwd_w),
        fwd_total=per_key(outer, fwd_sub),
        bwd_total=per_key(outer, bwd_sub),
        inner=inner,
        oth_self=self_of(oth_w),
        oth_total=per_key(outer, oth_sub),
    )


def _outermost(frames: I64, key: I64, up: I64) -> Mask:
    """Of ``frames``, those with no frame of the same key above them (``up``: each node's
    nearest frame above it)."""
    fkey = key[frames]
    outer = np.ones(len(frames), dtype=bool)
    anc = up[frames]
    live = np.flatnonzero(anc >= 0)
    while len(live):
        a = anc[live]
        outer[live[key[a] == fkey[live]]] = False
        anc[live] = up[a]
        live = live[(anc[live] >= 0) & outer[live]]
    return outer


def key_totals(att: Attribution, frame: Mask, key: I64, n_keys: int, weight: F64) -> F64:
    """Per key, the sum of a per-node ``weight`` inside the key's outermost frames (as
    :attr:`FrameSums.fwd_total` sums device time; a frame inside one of its own key is
    counted once)."""
    frames = np.flatnonzero(frame)
    outer = _outermost(frames, key, att.forest.nearest(frame, inclusive=False))
    sub = att.forest.subtree_sum(weight)[frames]
    out: F64 = np.bincount(key[frames][outer], weights=sub[outer], minlength=n_keys).astype(
        np.float64, copy=False
    )
    return out


def kernel_keys(att: Attribution, node_key: I64) -> I64:
    """For each kernel, ``node_key`` of the node that holds its time (its launch, or for a
    linked backward kernel the forward op); -1 where its launch is not in the trace."""
    launch = att.gpu_launch
    ok = launch >= 0
    at = np.where(ok, launch, 0)
    back = ok & att.backward[at]
    src = np.where(back, att.forward_op[at], -1)
    holder = np.where(src >= 0, src, at)
    return np.where(ok, node_key[holder], -1)
