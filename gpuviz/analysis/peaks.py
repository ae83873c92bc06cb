"""Peak throughput of GPUs: dense TFLOP/s per precision and memory bandwidth, matched to a trace.

Every figure is the vendor's, dense (no 2:4 sparsity): where a datasheet gives only the sparse
figure, the dense one is half of it. docs/peaks.md lists each device's source. A trace names its
GPUs in ``deviceProperties`` (``name``, ``numSms``, ``computeMajor``/``computeMinor``,
``totalGlobalMem`` in bytes); :func:`match_device` finds the row, and says why when it cannot.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from gpuviz.analysis.dtypes import Precision
from gpuviz.trace.device_props import device_entries, device_entry
from gpuviz.trace.model import Trace, TrackKind, rank_code


@dataclass(frozen=True)
class DevicePeaks:
    """One device's peaks.

    Attributes
    ----------
    key : str
        A short id (``"h100-sxm"``), or ``"override"`` for the caller's own figures.
    label : str
        What to print (``"NVIDIA H100 SXM5 80GB"``).
    fp32_tflops, tf32_tflops, bf16_tflops, fp16_tflops, fp8_tflops : float or None
        Dense peak TFLOP/s for that precision (fp32: the rate an fp32 GEMM can reach without
        TF32: CUDA cores on NVIDIA, matrix cores on AMD CDNA); None where the device has no such
        unit.
    bandwidth_tb_s : float or None
        Peak device-memory bandwidth, TB/s (10¹² bytes a second).
    source : str
        Where the figures come from (docs/peaks.md has the full list).
    """

    key: str
    label: str
    fp32_tflops: float | None
    tf32_tflops: float | None
    bf16_tflops: float | None
    fp16_tflops: float | None
    fp8_tflops: float | None
    bandwidth_tb_s: float | None
    source: str

    def tflops(self, precision: Precision | str) -> float | None:
        """The dense peak for a precision class (:data:`gpuviz.analysis.dtypes.PRECISIONS`);
        None for fp64, int8, "other" and precisions the device lacks."""
        return {
            "fp32": self.fp32_tflops,
            "tf32": self.tf32_tflops,
            "bf16": self.bf16_tflops,
            "fp16": self.fp16_tflops,
            "fp8": self.fp8_tflops,
        }.get(precision)


@dataclass(frozen=True)
class _Row:
    peaks: DevicePeaks
    pattern: re.Pattern[str]  # on the upper-cased name
    num_sms: int
    compute: tuple[int, int]
    memory_gib: float


def _row(
    key: str,
    label: str,
    pattern: str,
    sms: int,
    compute: tuple[int, int],
    memory_gib: float,
    figures: tuple[float | None, float | None, float | None, float | None, float | None],
    bandwidth: float,
    source: str,
) -> _Row:
    fp32, tf32, bf16, fp16, fp8 = figures
    peaks = DevicePeaks(key, label, fp32, tf32, bf16, fp16, fp8, bandwidth, source)
    return _Row(peaks, re.compile(pattern), sms, compute, memory_gib)


_A100 = (19.5, 156.0, 312.0, 312.0, None)
_HOPPER_SXM = (66.9, 494.7, 989.4, 989.4, 1978.9)
_HOPPER_NVL = (60.0, 417.5, 835.5, 835.5, 1670.5)
_CDNA3 = (163.4, 653.7, 1307.4, 1307.4, 2614.9)

_A100_DS = "NVIDIA A100 Tensor Core GPU datasheet; NVIDIA Ampere GA100 whitepaper"
_H100_DS = "NVIDIA H100 Tensor Core GPU datasheet; NVIDIA H100 (Hopper) whitepaper"
_H200_DS = "NVIDIA H200 Tensor Core GPU datasheet (same GH100 compute as H100 SXM)"
_ADA_WP = "NVIDIA Ada Lovelace GPU architecture whitepaper, appendix tables"

# Order matters only for readability: a name matches by pattern, then SM count and memory.
TABLE: tuple[_Row, ...] = (
    _row("a100-sxm-40", "NVIDIA A100 SXM4 40GB", r"A100(?!.*PCIE)", 108, (8, 0), 40, _A100, 1.555, _A100_DS),
    _row("a100-sxm-80", "NVIDIA A100 SXM4 80GB", r"A100(?!.*PCIE)", 108, (8, 0), 80, _A100, 2.039, _A100_DS),
    _row("a100-pcie-40", "NVIDIA A100 PCIe 40GB", r"A100.*PCIE", 108, (8, 0), 40, _A100, 1.555, _A100_DS),
    _row("a100-pcie-80", "NVIDIA A100 PCIe 80GB", r"A100.*PCIE", 108, (8, 0), 80, _A100, 1.935, _A100_DS),
    _row("h100-sxm", "NVIDIA H100 SXM5 80GB", r"H100(?!.*(PCIE|NVL))", 132, (9, 0), 80, _HOPPER_SXM, 3.35, _H100_DS),
    _row("h100-pcie", "NVIDIA H100 PCIe 80GB", r"H100.*PCIE", 114, (9, 0), 80, (51.2, 378.0, 756.5, 756.5, 1513.0), 2.0, _H100_DS),
    _row("h100-nvl", "NVIDIA H100 NVL 94GB", r"H100.*NVL", 132, (9, 0), 94, _HOPPER_NVL, 3.9, _H100_DS),
    _row("h200", "NVIDIA H200 SXM 141GB", r"H200(?!.*NVL)", 132, (9, 0), 141, _HOPPER_SXM, 4.8, _H200_DS),
    _row("h200-nvl", "NVIDIA H200 NVL 141GB", r"H200.*NVL", 132, (9, 0), 141, _HOPPER_NVL, 4.8, _H200_DS),
    _row("b200", "NVIDIA B200 (HGX) 180GB", r"\bB200\b", 148, (10, 0), 180, (75.0, 1100.0, 2250.0, 2250.0, 4500.0), 7.7,
         "NVIDIA HGX B200 datasheet (sparse figures halved)"),
    _row("gb200", "NVIDIA GB200 (one B200) 186GB", r"GB200", 148, (10, 0), 186, (80.0, 1250.0, 2500.0, 2500.0, 5000.0), 8.0,
         "NVIDIA GB200 NVL72 datasheet, per GPU (sparse figures halved)"),
    _row("l4", "NVIDIA L4", r"\bL4\b", 58, (8, 9), 24, (30.3, 60.0, 121.0, 121.0, 242.5), 0.3,
         "NVIDIA L4 Tensor Core GPU datasheet (sparse figures halved)"),
    _row("l40", "NVIDIA L40", r"\bL40\b", 142, (8, 9), 48, (90.5, 90.5, 181.05, 181.05, 362.0), 0.864,
         "NVIDIA L40 GPU datasheet (sparse figures halved)"),
    _row("l40s", "NVIDIA L40S", r"\bL40S\b", 142, (8, 9), 48, (91.6, 183.0, 362.05, 362.05, 733.0), 0.864,
         "NVIDIA L40S GPU datasheet (sparse figures halved)"),
    _row("rtx-4090", "NVIDIA GeForce RTX 4090", r"RTX 4090", 128, (8, 9), 24, (82.6, 82.6, 165.2, 165.2, 330.3), 1.008,
         _ADA_WP + " (FP32 accumulate)"),
    _row("rtx-6000-ada", "NVIDIA RTX 6000 Ada Generation", r"RTX 6000 ADA", 142, (8, 9), 48,
         (91.1, 182.1, 364.2, 364.2, 728.5), 0.96, _ADA_WP),
    _row("v100-sxm2", "NVIDIA V100 SXM2", r"V100-(SXM2|DGXS)", 80, (7, 0), 32, (15.7, None, None, 125.0, None), 0.9,
         "NVIDIA Tesla V100 datasheet"),
    _row("v100-pcie", "NVIDIA V100 PCIe", r"V100-PCIE", 80, (7, 0), 32, (14.0, None, None, 112.0, None), 0.9,
         "NVIDIA Tesla V100 datasheet"),
    _row("mi250x", "AMD Instinct MI250X (one GCD)", r"MI250X", 110, (9, 0), 64, (47.85, None, 191.5, 191.5, None), 1.6384,
         "AMD Instinct MI250X datasheet (per package; halved: torch sees each of its 2 GCDs as a device)"),
    _row("mi300x", "AMD Instinct MI300X", r"MI300X", 304, (9, 4), 192, _CDNA3, 5.3, "AMD Instinct MI300X datasheet"),
    _row("mi325x", "AMD Instinct MI325X", r"MI325X", 304, (9, 4), 256, _CDNA3, 6.0, "AMD Instinct MI325X datasheet"),
)  # fmt: skip
"""The devices gpuviz knows, with the patterns, SM count, compute capability and memory size
it matches them by."""


@dataclass(frozen=True)
class PeakMatch:
    """The peaks found for a device, or why there are none.

    Attributes
    ----------
    peaks : DevicePeaks or None
        None when the device is unknown (and no override was given).
    reason : str
        How it was matched (``"name 'NVIDIA H100 80GB HBM3'"``), or why not.
    device_name : str
        ``deviceProperties.name`` ("" when absent).
    """

    peaks: DevicePeaks | None
    reason: str
    device_name: str = ""


@dataclass(frozen=True)
class PeakOverride:
    """The caller's own peaks (``--peak-tflops X --peak-bandwidth Y``).

    ``peak_tflops`` replaces the peak of every precision (the caller knows the one their run
    uses); ``peak_bandwidth_tb_s`` replaces the bandwidth. Either may be None: the matched
    device's figure stays.
    """

    peak_tflops: float | None = None
    peak_bandwidth_tb_s: float | None = None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _count(value: Any) -> int | None:
    """A size or count from the file: a positive int, else unknown (a negative
    ``totalGlobalMem`` was shown as "-0 GiB")."""
    n = _int(value)
    return n if n is not None and n > 0 else None


def _closest_memory(rows: list[_Row], total_bytes: int | None) -> list[_Row]:
    """The rows whose nominal memory is nearest the device's (all of them when unknown)."""
    if total_bytes is None or len(rows) < 2:
        return rows
    gib = total_bytes / 2**30
    best = min(abs(r.memory_gib - gib) for r in rows)
    return [r for r in rows if abs(r.memory_gib - gib) == best]


def _describe(props: dict[str, Any]) -> str:
    sms, major, minor = (
        _count(props.get("numSms")),
        props.get("computeMajor"),
        props.get("computeMinor"),
    )
    mem = _count(props.get("totalGlobalMem"))
    parts = [f"{sms} SMs" if sms is not None else "SM count unknown"]
    if major is not None:
        parts.append(f"compute {major}.{minor}")
    if mem is not None:
        parts.append(f"{mem / 2**30:.0f} GiB")
    elif "totalGlobalMem" in props:  # there, but not a size: say so, never "-0 GiB"
        parts.append("memory size unknown")
    return ", ".join(parts)


def match_device(props: dict[str, Any]) -> PeakMatch:
    """The table's row for one ``deviceProperties`` entry.

    A non-empty name must match a row's pattern (``"NVIDIA H100 80GB HBM3"`` -> H100 SXM);
    among the rows it matches, the SM count must agree (a MIG slice or a cut-down part does
    not get the full part's peaks) and the nearest memory size decides (A100 40GB or 80GB).
    A trace with no name (ROCm builds have written ``""``) is matched by SM count, compute
    capability and memory alone. A name that matches no row is unknown: the SM count alone
    could give a different part's bandwidth.

    Parameters
    ----------
    props : dict
        One entry of the trace's ``deviceProperties``.

    Returns
    -------
    PeakMatch
    """
    name = str(props.get("name") or "").strip()
    sms = _count(props.get("numSms"))
    mem = _count(props.get("totalGlobalMem"))
    major, minor = _int(props.get("computeMajor")), _int(props.get("computeMinor"))
    if name:
        rows = [r for r in TABLE if r.pattern.search(name.upper())]
        if not rows:
            return PeakMatch(None, f"unknown device {name!r} ({_describe(props)})", name)
        if sms is not None:
            same = [r for r in rows if r.num_sms == sms]
            if not same:
                return PeakMatch(
                    None,
                    f"{name!r} has {sms} SMs, not the {rows[0].num_sms} of a full "
                    f"{rows[0].peaks.label} (a MIG slice or another variant)",
                    name,
                )
            rows = same
        rows = _closest_memory(rows, mem)
        return PeakMatch(rows[0].peaks, f"name {name!r} ({_describe(props)})", name)
    if sms is None or major is None:
        return PeakMatch(None, "no device name and no SM count or compute capability", name)
    rows = [r for r in TABLE if r.num_sms == sms and r.compute == (major, minor)]
    rows = _closest_memory(rows, mem)
    keys = {r.peaks.key for r in rows}
    if len(keys) != 1:
        what = (
            "no known device" if not keys else "several devices (" + ", ".join(sorted(keys)) + ")"
        )
        return PeakMatch(None, f"no device name; {_describe(props)} fits {what}", name)
    return PeakMatch(rows[0].peaks, f"no device name; matched by {_describe(props)}", name)


def apply_override(match: PeakMatch, override: PeakOverride | None) -> PeakMatch:
    """``match`` with the caller's figures put in (see :class:`PeakOverride`)."""
    if override is None or (override.peak_tflops is None and override.peak_bandwidth_tb_s is None):
        return match
    base = match.peaks or DevicePeaks(
        "override", match.device_name or "override", None, None, None, None, None, None, "override"
    )
    t = override.peak_tflops
    if t is not None:
        base = replace(
            base, fp32_tflops=t, tf32_tflops=t, bf16_tflops=t, fp16_tflops=t, fp8_tflops=t
        )
    if override.peak_bandwidth_tb_s is not None:
        base = replace(base, bandwidth_tb_s=override.peak_bandwidth_tb_s)
    given = []
    if t is not None:
        given.append(f"{t:g} TFLOP/s")
    if override.peak_bandwidth_tb_s is not None:
        given.append(f"{override.peak_bandwidth_tb_s:g} TB/s")
    base = replace(base, source="override: " + ", ".join(given) + f" (was: {base.source})")
    return PeakMatch(base, f"override ({', '.join(given)}); {match.reason}", match.device_name)


def busiest_devices(trace: Trace) -> dict[int, int]:
    """Each rank's device whose GPU tracks hold the most kernels, copies and sets.

    Keyed by rank code (:func:`gpuviz.trace.model.rank_code`); ranks with no GPU activity are
    absent. One pass over the slices for every rank: a pass per rank had cost about 90 ms
    each on a 64-rank folder (37M slices), 12 s of ``gpuviz summary``'s 36 s.
    """
    s, t = trace.slices, trace.tracks
    gpu = trace.gpu_activity_mask()
    if not gpu.any():
        return {}
    # Counted per track, then per device of the ranks' streams: a few tracks, where a count
    # per slice had cost ~4 ms a call at 1M slices (and np.unique imported numpy.ma).
    per_track = np.bincount(s.track[gpu], minlength=len(t))[: len(t)]
    keep = (t.kind == TrackKind.GPU_STREAM) & (t.device >= 0) & (per_track > 0)
    counts: dict[int, dict[int, int]] = {}
    for code, device, n in zip(
        t.rank[keep].tolist(), t.device[keep].tolist(), per_track[keep].tolist()
    ):
        mine = counts.setdefault(code, {})
        mine[device] = mine.get(device, 0) + n
    # The most, and of those the lowest device index (np.argmax over sorted devices did so).
    return {code: min(c, key=lambda d: (-c[d], d)) for code, c in counts.items()}


def device_peaks(
    trace: Trace,
    rank: int | None = None,
    device: int | None = None,
    override: PeakOverride | None = None,
    busiest: dict[int, int] | None = None,
) -> PeakMatch:
    """The peaks of the GPU a trace ran on.

    Parameters
    ----------
    trace : Trace
        An imported trace; its files' ``deviceProperties`` are in ``trace.ranks[i].metadata``.
    rank : int, optional
        Which rank's file to read (default: the first with ``deviceProperties``).
    device : int, optional
        Which device of it (default: the one with the most GPU activity in that rank, else the
        first listed).
    override : PeakOverride, optional
        The caller's figures; they win over the table and stand in for an unknown device.
    busiest : dict, optional
        :func:`busiest_devices` of the trace, where the caller asks for several ranks.

    Returns
    -------
    PeakMatch
    """
    infos = [i for i in trace.ranks if rank is None or i.rank == rank]
    infos = [i for i in infos if i.metadata.get("deviceProperties")] or infos
    if not infos:
        return apply_override(PeakMatch(None, f"no rank {rank} in the trace"), override)
    info = infos[0]
    listed = device_entries(info.metadata)
    if not listed:
        return apply_override(PeakMatch(None, "the trace has no deviceProperties"), override)
    if device is None:
        if busiest is None:
            busiest = busiest_devices(trace)
        device = busiest.get(rank_code(info.rank))
    # the first entry of the id, as every reader takes it (the import warns of a repeated id)
    props = device_entry(info.metadata, device) or listed[0]
    return apply_override(match_device(props), override)
