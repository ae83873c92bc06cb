"""What a name says: communication kernels, fp32 GEMMs without tensor cores, host syncs, steps.

Each test runs once per distinct string of the trace's symbol table and returns a boolean
array indexed by symbol id, so a whole column is classified with one fancy-index
(``mask[trace.slices.name]``), never with a Python loop per event.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from gpuviz.trace.model import SymbolTable

Mask = npt.NDArray[np.bool_]

SYNC_CALLS = frozenset(
    {
        "cudaStreamSynchronize",
        "cudaDeviceSynchronize",
        "cudaEventSynchronize",
        "cudaMemcpy",
        "cudaMemcpy2D",
        "cudaMemcpyFromSymbol",
        "cuStreamSynchronize",
        "cuCtxSynchronize",
        "cuEventSynchronize",
        "hipStreamSynchronize",
        "hipDeviceSynchronize",
        "hipEventSynchronize",
        "hipMemcpy",
    }
)
"""Runtime and driver calls that block the calling CPU thread until the GPU has caught up."""

PROFILER_STEP = re.compile(r"^ProfilerStep#(\d+)$")
HARNESS_STEP = re.compile(r"^gpuviz/.+#(\d+)$")
GRAPH_LAUNCH = re.compile(r"^(?:cuda|hip|cu)GraphLaunch(?:_v\d+)?(?:_ptsz|_spt)?$")
"""Runtime and driver calls that replay a CUDA or HIP graph."""


def graph_launch_mask(symbols: SymbolTable) -> Mask:
    """Per symbol id: whether it names a graph launch call (:data:`GRAPH_LAUNCH`)."""
    return name_mask(symbols, lambda n: GRAPH_LAUNCH.match(n) is not None)


"""The ``record_function`` gpuviz's runner puts around each profiled step."""
OPTIMIZER_STEP_PREFIX = "Optimizer.step#"
DATAPARALLEL_FORWARD = "DataParallel.forward"
DATALOADER_PREFIX = "enumerate(DataLoader)"

# record_function wrappers that 2021-era traces file as ``Operator`` (cpu_op): they are not
# PyTorch ops, and counting them would hide the time spent outside any op.
_WRAPPER_PREFIXES = ("ProfilerStep#", "Optimizer.", DATALOADER_PREFIX, "## ")

# Tokens that say a GEMM kernel runs on tensor cores or in a narrower type.
_NOT_FP32_SIMT = (
    "tf32",
    "tensorop",
    "bf16",
    "fp16",
    "f16",
    "hgemm",
    "h1688",
    "h16816",
    "s1688",
    "s16816",
    "s161616",
    "wmma",
    "i8",
    "fp8",
    "e4m3",
    "e5m2",
    "gemv",
)


def name_mask(symbols: SymbolTable, test: Callable[[str], bool]) -> Mask:
    """``test`` applied to every string of ``symbols``, as a mask indexed by symbol id."""
    return np.fromiter((test(s) for s in symbols.strings), dtype=bool, count=len(symbols))


def is_comm_kernel(name: str) -> bool:
    """An NCCL (or RCCL) collective or point-to-point kernel."""
    return "nccl" in name.lower()


def is_cpu_collective(name: str) -> bool:
    """A CPU-side collective: a ``gloo:``/``nccl:`` range, a ``c10d::`` op, ``record_param_comms``."""
    return name.startswith(("gloo:", "nccl:", "c10d::")) or name == "record_param_comms"


def is_p2p_kernel(name: str) -> bool:
    """An NCCL send/receive kernel (pairs of ranks, not a whole group)."""
    low = name.lower()
    return "nccl" in low and ("sendrecv" in low or "_send" in low or "_recv" in low)


def is_fp32_simt_gemm(name: str) -> bool:
    """A GEMM (or implicit-GEMM convolution) in fp32 on CUDA cores, without tensor cores.

    Recognised: ``*sgemm*`` (cuBLAS ``ampere_sgemm_…``, ``sgemm_largek…``, CUTLASS ``simt_sgemm``),
    cuBLAS small-size ``gemmSN``/``gemmk1`` kernels on ``float``, and xmma/CUTLASS kernels whose
    types read ``f32f32_f32f32`` or that say ``ffma``. Names with ``tf32``, ``tensorop``, a
    16-bit or 8-bit type, or ``gemv`` (memory bound: tensor cores would not help) are not.
    """
    low = name.lower()
    if re.match(r"(void )?(gemmsn_|gemmk1)\w*<float\b", low):
        return True  # their template arguments name a Gemv helper: test them first
    if any(tok in low for tok in _NOT_FP32_SIMT):
        return False
    if "sgemm" in low:
        return True
    return "gemm" in low and ("f32f32_f32f32" in low or "ffma" in low)


def is_gemm_like(name: str) -> bool:
    """A library GEMM/attention kernel, tuned to run at low occupancy on purpose."""
    low = name.lower()
    return any(
        tok in low for tok in ("gemm", "xmma", "cutlass", "cublas", "flash", "fmha", "cudnn")
    )


def is_pytorch_op(name: str) -> bool:
    """A ``cpu_op`` that is a real op, not a step or DataLoader ``record_function`` wrapper."""
    return not name.startswith(_WRAPPER_PREFIXES)


def collective_name(kernel_name: str) -> str:
    """The collective of an NCCL kernel name: ``ncclDevKernel_AllReduce_Sum_f32_RING_LL`` -> ``AllReduce``."""
    m = re.search(r"nccl(?:Dev)?Kernel_([A-Za-z]+)", kernel_name)
    if m:
        return m.group(1)
    m = re.search(r"(?:nccl|gloo):([A-Za-z_]+)", kernel_name)
    return m.group(1) if m else kernel_name
