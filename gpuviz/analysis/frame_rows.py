"""Rows of Python frames grouped by a key: what the module and source-line tables share.

Given some frames of the call forest (``nn.Module`` frames, or the user's code frames) and a
key for each (a module path, a ``file:line``), every kernel's device time goes to the key of
the innermost such frame around its launch -- forward kernels through their launch, backward
kernels through the forward op they came from (``Attribution.node_weights``). A key's total is
the time inside its outermost frames (a module inside itself is counted once).
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
    fwd_self, bwd_self, fwd_total, bwd_total : float64
        Device time whose innermost frame has the key; and inside the key's outermost frames.
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
    fwd_w, bwd_w = att.node_weights()
    inner = f.nearest(frame)
    frames = np.flatnonzero(frame)
    fkey = key[frames]
    up = f.nearest(frame, inclusive=False)
    outer = _outermost(frames, key, up)
    dur = (f.end_ns - f.start_ns)[frames].astype(np.float64)
    fwd_sub = f.subtree_sum(fwd_w)[frames]
    bwd_sub = f.subtree_sum(bwd_w)[frames]

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
    fwd_self: F64 = np.bincount(hkey, weights=fwd_w[held], minlength=n_keys).astype(
        np.float64, copy=False
    )
    bwd_self: F64 = np.bincount(hkey, weights=bwd_w[held], minlength=n_keys).astype(
        np.float64, copy=False
    )
    return FrameSums(
        calls=calls,
        cpu_total=np.rint(cpu_total).astype(np.int64),
        cpu_self=np.rint(np.maximum(cpu_total - cpu_taken, 0)).astype(np.int64),
        fwd_self=fwd_self,
        bwd_self=bwd_self,
        fwd_total=per_key(outer, fwd_sub),
        bwd_total=per_key(outer, bwd_sub),
        inner=inner,
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
