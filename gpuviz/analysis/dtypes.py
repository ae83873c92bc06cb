"""Element types of Kineto's ``Input type`` strings: their size in bytes and precision class.

With ``record_shapes=True`` each ``cpu_op`` carries ``Input type``, one string per input: the
C++ name of a tensor's element type (``float``, ``c10::BFloat16``, ``c10::Half``,
``c10::Float8_e4m3fn``, ``long int`` …), or ``Scalar``, ``ScalarList``, ``TensorList`` and ``""``
for what is not a tensor. This module reads those strings; it knows nothing of the ops.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

Precision = Literal["fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "int8", "other"]
"""The precision class of an op: which of a device's peaks its arithmetic runs against."""

PRECISIONS: tuple[Precision, ...] = ("fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "int8", "other")

# Element size of every type string torch writes (c10's TypeMeta names, demangled: `long int`
# on Linux, `long` in older or other builds, `__int64` on Windows).
_BYTES: dict[str, int] = {
    "double": 8,
    "float": 4,
    "c10::Half": 2,
    "c10::BFloat16": 2,
    "c10::Float8_e4m3fn": 1,
    "c10::Float8_e5m2": 1,
    "c10::Float8_e4m3fnuz": 1,
    "c10::Float8_e5m2fnuz": 1,
    "c10::Float8_e8m0fnu": 1,
    "c10::Float4_e2m1fn_x2": 1,
    "c10::complex<double>": 16,
    "c10::complex<float>": 8,
    "c10::complex<c10::Half>": 4,
    "long int": 8,
    "long": 8,
    "long long": 8,
    "__int64": 8,
    "int": 4,
    "short int": 2,
    "short": 2,
    "signed char": 1,
    "unsigned char": 1,
    "bool": 1,
    "unsigned short": 2,
    "unsigned int": 4,
    "unsigned long": 8,
    "c10::qint8": 1,
    "c10::quint8": 1,
    "c10::qint32": 4,
    "c10::quint4x2": 1,
    "c10::quint2x4": 1,
}

_PRECISION: dict[str, Precision] = {
    "double": "fp64",
    "float": "fp32",
    "c10::Half": "fp16",
    "c10::BFloat16": "bf16",
    "c10::Float8_e4m3fn": "fp8",
    "c10::Float8_e5m2": "fp8",
    "c10::Float8_e4m3fnuz": "fp8",
    "c10::Float8_e5m2fnuz": "fp8",
    "signed char": "int8",
    "c10::qint8": "int8",
    "c10::quint8": "int8",
}

# torch's ScalarType codes, as `aten::to`/`_to_copy`/`empty` record their dtype argument in
# `Concrete Inputs` (c10/core/ScalarType.h order).
SCALAR_TYPE_CODES: dict[int, str] = {
    0: "unsigned char",
    1: "signed char",
    2: "short int",
    3: "int",
    4: "long int",
    5: "c10::Half",
    6: "float",
    7: "double",
    8: "c10::complex<c10::Half>",
    9: "c10::complex<float>",
    10: "c10::complex<double>",
    11: "bool",
    15: "c10::BFloat16",
    23: "c10::Float8_e5m2",
    24: "c10::Float8_e4m3fn",
    25: "c10::Float8_e5m2fnuz",
    26: "c10::Float8_e4m3fnuz",
}


def element_bytes(type_name: str) -> int | None:
    """The size of one element of ``type_name`` in bytes; None for a non-tensor or unknown type.

    Parameters
    ----------
    type_name : str
        One entry of ``Input type`` (``"c10::BFloat16"`` -> 2, ``"float"`` -> 4).
    """
    return _BYTES.get(type_name.strip())


def precision_of_type(type_name: str) -> Precision | None:
    """The precision class of one type string; None for a non-tensor, ``"other"`` for integers
    and types with no tensor-core peak of their own (complex, bool)."""
    name = type_name.strip()
    if name in _PRECISION:
        return _PRECISION[name]
    return "other" if name in _BYTES else None


def op_precision(
    input_types: Sequence[object], kernel_names: Sequence[str] = (), tensor_inputs: int = 2
) -> Precision:
    """The precision class an op computes in, from its inputs' types.

    The first ``tensor_inputs`` floating-point tensor inputs decide (a GEMM's two operands, a
    convolution's input and weight): the lowest precision among them, as the hardware runs the
    product in it (an fp8 GEMM may take an fp32 bias).

    fp32 and TF32 have the same type string: a trace cannot tell them apart from the op. A kernel
    name can: cuBLAS and CUTLASS name TF32 kernels ``…tf32…``, so pass the names of the op's
    kernels (when known) and fp32 becomes ``"tf32"`` where one of them says so.

    Parameters
    ----------
    input_types : sequence of str
        The op's ``Input type`` (entries that are not strings, such as a TensorList's nested
        list, are skipped).
    kernel_names : sequence of str
        Names of the kernels the op launched, if known.
    tensor_inputs : int
        How many floating-point tensor inputs to look at.

    Returns
    -------
    str
        One of :data:`PRECISIONS`; ``"other"`` when no input is a floating-point tensor.
    """
    order = {"fp8": 0, "int8": 1, "fp16": 2, "bf16": 3, "tf32": 4, "fp32": 5, "fp64": 6}
    found: list[Precision] = []
    for t in input_types:
        if not isinstance(t, str):
            continue
        p = precision_of_type(t)
        if p is None or p == "other":
            continue
        found.append(p)
        if len(found) == tensor_inputs:
            break
    if not found:
        return "other"
    best = min(found, key=lambda p: order[p])
    if best == "fp32" and any("tf32" in k.lower() for k in kernel_names):
        return "tf32"
    return best
