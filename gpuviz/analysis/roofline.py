"""Roofline figures: achieved TFLOP/s, arithmetic intensity, the bound, the share of the roof,
and MFU. Pure functions of numbers and arrays; they know nothing of traces or op tables.

Units: FLOPs and bytes are counts, durations int or float nanoseconds, throughput TFLOP/s
(10¹² FLOP a second) and bandwidth TB/s (10¹² bytes a second). Then intensity × bandwidth is
directly TFLOP/s: FLOP/byte × 10¹² byte/s.

The roof of an op of intensity I on a device of peak P and bandwidth W is ``min(P, I · W)``:
below the ridge point ``P / W`` (FLOP per byte) memory bandwidth limits it, above it the
arithmetic units do. Bytes from :func:`gpuviz.analysis.flops.op_bytes` are a lower bound, so
intensity is an upper bound and an op near the ridge may be more memory-bound than it says.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

F64 = npt.NDArray[np.float64]


def _f64(x: Any) -> F64:
    return np.asarray(x, dtype=np.float64)


def _quiet() -> Any:
    """Float errors silenced: figures from a file or an option may be absurd (1e308 FLOPs, a
    5e-324 peak); a result that overflows is made NaN (unknown) by the caller, never printed
    as numpy's RuntimeWarning (issue 47, item 19)."""
    return np.errstate(over="ignore", divide="ignore", invalid="ignore", under="ignore")


def _finite_or_nan(out: F64) -> F64:
    out[~np.isfinite(out)] = np.nan
    return out


def achieved_tflops(flops: npt.ArrayLike, device_ns: npt.ArrayLike) -> F64:
    """Achieved TFLOP/s: FLOPs over device time.

    Parameters
    ----------
    flops : array_like
        FLOPs (NaN where unknown).
    device_ns : array_like
        The device time they took, ns (an op's device self time).

    Returns
    -------
    ndarray of float64
        NaN where the time is not positive or the FLOPs are unknown.
    """
    f, t = np.broadcast_arrays(_f64(flops), _f64(device_ns))
    out = np.full(f.shape, np.nan)
    ok = (t > 0) & np.isfinite(f)
    with _quiet():
        out[ok] = f[ok] / t[ok] / 1e3  # FLOP/ns = GFLOP/s; /1e3 -> TFLOP/s
    return _finite_or_nan(out)


def achieved_tb_s(nbytes: npt.ArrayLike, device_ns: npt.ArrayLike) -> F64:
    """Achieved bandwidth, TB/s (NaN where the time is not positive or the bytes unknown)."""
    return achieved_tflops(nbytes, device_ns)  # the same arithmetic: count / ns / 1e3


def intensity(flops: npt.ArrayLike, nbytes: npt.ArrayLike) -> F64:
    """Arithmetic intensity, FLOP per byte; NaN where bytes are not positive or either is
    unknown."""
    f, b = np.broadcast_arrays(_f64(flops), _f64(nbytes))
    out = np.full(f.shape, np.nan)
    ok = (b > 0) & np.isfinite(f) & np.isfinite(b)
    with _quiet():
        out[ok] = f[ok] / b[ok]
    return _finite_or_nan(out)


def ridge_point(peak_tflops: float, bandwidth_tb_s: float) -> float:
    """The intensity (FLOP/byte) where the memory roof meets the compute roof.

    Example: an H100 SXM at 989.4 TFLOP/s (bf16) and 3.35 TB/s has its ridge at 295 FLOP/byte.
    """
    if peak_tflops <= 0 or bandwidth_tb_s <= 0:
        raise ValueError("peak and bandwidth must be positive")
    return peak_tflops / bandwidth_tb_s


def roof_tflops(intensity_: npt.ArrayLike, peak_tflops: float, bandwidth_tb_s: float) -> F64:
    """The attainable TFLOP/s at an intensity: ``min(peak, intensity · bandwidth)``."""
    with _quiet():  # an overflowing product is above any peak: the peak is the roof
        return np.minimum(peak_tflops, _f64(intensity_) * bandwidth_tb_s)


def bound(
    intensity_: npt.ArrayLike, peak_tflops: float, bandwidth_tb_s: float
) -> npt.NDArray[np.object_]:
    """``"compute"`` where the intensity is at or above the ridge point, ``"memory"`` below it,
    None where the intensity is unknown (NaN)."""
    i = _f64(intensity_)
    ridge = ridge_point(peak_tflops, bandwidth_tb_s)
    out = np.full(i.shape, None, dtype=object)
    known = np.isfinite(i)
    out[known & (i >= ridge)] = "compute"
    out[known & (i < ridge)] = "memory"
    return out


def roof_share(
    achieved: npt.ArrayLike, intensity_: npt.ArrayLike, peak_tflops: float, bandwidth_tb_s: float
) -> F64:
    """Achieved TFLOP/s over the roof at that intensity (0 to 1, above 1 only when the bytes
    were undercounted or a peak is wrong); NaN where either is unknown."""
    a, roof = np.broadcast_arrays(
        _f64(achieved), roof_tflops(intensity_, peak_tflops, bandwidth_tb_s)
    )
    out = np.full(a.shape, np.nan)
    ok = np.isfinite(a) & np.isfinite(roof) & (roof > 0)
    with _quiet():
        out[ok] = a[ok] / roof[ok]
    return _finite_or_nan(out)


def dominant_precision(flops_by_precision: Mapping[str, float]) -> str | None:
    """The precision doing most of the FLOPs (None when there are none)."""
    items = [(p, f) for p, f in flops_by_precision.items() if f and f > 0]
    if not items:
        return None
    return max(items, key=lambda pf: pf[1])[0]


def flops_by_precision(flops: npt.ArrayLike, precisions: npt.ArrayLike) -> dict[str, float]:
    """FLOPs summed per precision class (NaN FLOPs left out).

    Parameters
    ----------
    flops : array_like
        FLOPs of each op call.
    precisions : array_like of str
        Each call's precision class (:func:`gpuviz.analysis.dtypes.op_precision`).
    """
    f = _f64(flops)
    p = np.asarray(precisions, dtype=object)
    out: dict[str, float] = {}
    for key in dict.fromkeys(p.tolist()):
        sel = (p == key) & np.isfinite(f)
        with _quiet():  # 1e308 FLOPs twice: inf, left to the callers' checks (not a warning)
            total = float(f[sel].sum())
        if total > 0:
            out[str(key)] = total
    return out


def mfu(step_flops: float, step_ns: float, peak_tflops: float | None) -> float | None:
    """Model FLOPs utilization: a step's FLOPs over what the peak would do in its duration.

    ``step_flops / (step_ns · 10⁻⁹ · peak_tflops · 10¹²)``. Pass the dense peak of the
    precision doing most of the step's FLOPs (:func:`dominant_precision`).

    Returns
    -------
    float or None
        None when the duration or the peak is unknown or not positive.
    """
    if peak_tflops is None or peak_tflops <= 0 or step_ns <= 0:
        return None
    work = float(step_ns) * peak_tflops * 1e3
    if not 0 < work < float("inf"):  # underflowed or overflowed: no figure to divide by
        return None
    value = float(step_flops) / work
    return value if value < float("inf") else None


@dataclass(frozen=True)
class StepMfu:
    """One step's FLOPs and MFU.

    Attributes
    ----------
    flops : float
        The FLOPs of the step's ops.
    precision : str or None
        The precision doing most of them (None when the step has no FLOPs).
    peak_tflops : float or None
        That precision's dense peak (None when the device's is unknown).
    mfu : float or None
        ``flops / (duration · peak)``; None when the peak or the duration is unknown.
    """

    flops: float
    precision: str | None
    peak_tflops: float | None
    mfu: float | None


def step_mfu(
    flops: npt.ArrayLike,
    precisions: npt.ArrayLike,
    step_ns: float,
    peak_of: Callable[[str], float | None],
) -> StepMfu:
    """The MFU of one step from its op calls.

    Parameters
    ----------
    flops : array_like
        FLOPs of each op call in the step (NaN for calls not counted).
    precisions : array_like of str
        Each call's precision class.
    step_ns : float
        The step's duration, ns.
    peak_of : callable
        A precision class -> its dense peak TFLOP/s, or None (``DevicePeaks.tflops``).

    Returns
    -------
    StepMfu
    """
    by = flops_by_precision(flops, precisions)
    total = float(sum(by.values()))
    precision = dominant_precision(by)
    peak = peak_of(precision) if precision is not None else None
    return StepMfu(total, precision, peak, mfu(total, step_ns, peak))


def tf32_if_faster(
    precision: str, achieved: float, fp32_peak_tflops: float | None, margin: float = 1.05
) -> str:
    """``"tf32"`` for an fp32 op that ran faster than the device's fp32 peak, else ``precision``.

    fp32 and TF32 share the type string ``float``, and recent cuBLAS kernels (``nvjet_*``) do
    not say ``tf32`` in their names, so :func:`gpuviz.analysis.dtypes.op_precision` may call a
    TF32 GEMM fp32. Its speed tells: no fp32 GEMM beats the CUDA cores' fp32 peak, so one that
    did (by more than ``margin``) ran on TF32 tensor cores. A TF32 GEMM slower than the fp32
    peak stays fp32 (its MFU is then measured against the lower peak).

    Parameters
    ----------
    precision : str
        The class from the op's types (and kernel names).
    achieved : float
        The op's achieved TFLOP/s.
    fp32_peak_tflops : float or None
        The device's fp32 peak.
    margin : float
        How far above the fp32 peak counts as proof.
    """
    if precision != "fp32" or fp32_peak_tflops is None or not np.isfinite(achieved):
        return precision
    return "tf32" if achieved > fp32_peak_tflops * margin else precision
