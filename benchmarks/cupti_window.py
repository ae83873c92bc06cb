"""A CUPTI window with no ``torch.profiler``: CUPTI attached, activity recorded, then detached.

``benchmarks/profile_workload.py --window-kind cupti`` opens it where a profiler window would
be, to tell whether the cost a ``torch.profiler`` window leaves on the steps after it (issue
22, item 17) is CUPTI's own, with neither Kineto nor torch's profiler in the process's path:

- :func:`open_window` registers activity buffers and enables the activity kinds Kineto enables
  for a CUDA window (kernels, memory copies and sets, runtime and driver API calls);
- :func:`close_window` disables them, flushes the buffers and detaches CUPTI as Kineto's
  ``TEARDOWN_CUPTI=1`` does: ``cuptiFinalize`` from the exit callback of the next CUDA runtime
  call (CUPTI asks that it be called from such a callback; the call here is
  ``cudaRuntimeGetVersion`` of the runtime library torch loaded).

Nothing of the recorded activity is parsed: only its bytes are counted. ``open_window(kineto=True)``
sets CUPTI up as Kineto does beyond the kinds (see its docstring), and :func:`finalize_again`
detaches CUPTI with no window of its own, after a ``torch.profiler`` window.

:func:`op_mode` adds, for the window's steps, what a ``torch.profiler`` window of CPU and CUDA
activity does with CUPTI at each operator and a CUDA-only one does not: Kineto pushes the op's
id on CUPTI's external correlation stack as the op starts and pops it as it ends
(``cuptiActivityPushExternalCorrelationId``, kind ``CUSTOM0``, with the
``EXTERNAL_CORRELATION`` activity enabled), on whichever thread runs the op. Here a
``TorchDispatchMode`` wraps every ATen op of the script's threads and the autograd engine's
(the mode travels with autograd's thread-local state) and pushes and pops around it, or only
passes the op on (the control: the mode's own cost and leftovers without CUPTI's stack).
"""

from __future__ import annotations

import contextlib
import ctypes
import glob
import itertools
import os
from dataclasses import dataclass, field
from typing import Any

# cupti_activity.h's CUpti_ActivityKind and cupti_callbacks.h's CUpti_CallbackDomain
KINDS = {
    "memcpy": 1,
    "memset": 2,
    "driver": 4,
    "runtime": 5,
    "concurrent_kernel": 10,
    "overhead": 17,  # CUPTI's own overhead (buffer requests, flushes): Kineto enables it
    "external_correlation": 39,  # records that pair an external id with an API call
}
CUDA_WINDOW = ("memcpy", "memset", "driver", "runtime", "concurrent_kernel")
"""The kinds Kineto enables for a window of CUDA activity."""
CUSTOM0 = 3  # CUpti_ExternalCorrelationKind: the kind Kineto pushes its op ids as
DOMAIN_DRIVER_API = 1
DOMAIN_RUNTIME_API = 2
KINETO_QUIET_RUNTIME = (17,)
KINETO_QUIET_DRIVER = (304, 392, 686)
"""The API calls whose records Kineto switches off as it enables runtime and driver activity
(``cuptiActivityEnableRuntimeApi`` / ``cuptiActivityEnableDriverApi``, CUDA 12.5 and later):
``cudaGetDevice`` (runtime 17); ``cuCtxGetCurrent``, ``cuDevicePrimaryCtxGetState`` and
``cuKernelGetAttribute`` (driver 304, 392 and 686), frequent calls not worth a record."""
API_EXIT = 1
BUFFER_BYTES = 8 << 20

_REQUEST = ctypes.CFUNCTYPE(
    None,
    ctypes.POINTER(ctypes.c_void_p),
    ctypes.POINTER(ctypes.c_size_t),
    ctypes.POINTER(ctypes.c_size_t),
)
_COMPLETE = ctypes.CFUNCTYPE(
    None, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t
)
_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_void_p)


class CuptiError(RuntimeError):
    """A CUPTI call failed: the call and CUPTI's own message."""


def _mapped(name: str) -> list[str]:
    with open("/proc/self/maps") as maps:
        return sorted({ln.split()[-1] for ln in maps if f"/{name}" in ln})


def find_cupti() -> str:
    """The path of the ``libcupti`` that torch loaded, else one in an ``nvidia`` wheel."""
    found = _mapped("libcupti.so")
    if not found:
        import torch

        base = os.path.dirname(os.path.dirname(torch.__file__))
        found = sorted(
            glob.glob(os.path.join(base, "nvidia", "**", "libcupti.so*"), recursive=True)
        )
    if not found:
        raise CuptiError("no libcupti.so mapped by torch nor in an nvidia wheel")
    return found[0]


@dataclass
class Window:
    """One CUPTI window's state: the library, its buffers and what was recorded."""

    lib: Any
    kinds: tuple[str, ...]
    buffers: dict[int, Any] = field(default_factory=dict)
    recorded_bytes: int = 0
    finalized: bool = False
    via: str = ""
    """How CUPTI was finalized: at a runtime call's exit, or directly where another
    subscriber held CUPTI's callbacks (the subscribe error)."""
    callbacks: list[Any] = field(default_factory=list)  # ctypes callbacks kept alive
    domains: tuple[int, ...] = (DOMAIN_RUNTIME_API,)
    """The callback domains enabled while CUPTI waits to be finalized at an API call's exit."""

    def check(self, what: str, result: int) -> None:
        if result:
            msg = ctypes.c_char_p()
            self.lib.cuptiGetResultString(result, ctypes.byref(msg))
            raise CuptiError(f"{what}: {result} ({(msg.value or b'?').decode()})")


def open_window(
    kinds: tuple[str, ...] = CUDA_WINDOW, correlate: bool = False, kineto: bool = False
) -> Window:
    """Attach CUPTI and enable the activity ``kinds`` (names of :data:`KINDS`).

    ``correlate`` also enables the external correlation records, for :func:`op_mode`'s pushes.
    ``kineto`` sets CUPTI up further as Kineto does: its overhead records too, the records of
    :data:`KINETO_QUIET_RUNTIME` and :data:`KINETO_QUIET_DRIVER` switched off, and at the close
    the driver API's callbacks enabled beside the runtime's while CUPTI waits to be finalized.
    """
    if correlate:
        kinds = (*kinds, "external_correlation")
    if kineto:
        kinds = (*kinds, "overhead")
    win = Window(ctypes.CDLL(find_cupti()), kinds)
    if kineto:
        win.domains = (DOMAIN_RUNTIME_API, DOMAIN_DRIVER_API)

    def request(buf: Any, size: Any, max_records: Any) -> None:
        block = ctypes.create_string_buffer(BUFFER_BYTES + 8)
        address = (ctypes.addressof(block) + 7) & ~7  # CUPTI wants 8-byte alignment
        win.buffers[address] = block
        buf[0] = address
        size[0] = BUFFER_BYTES
        max_records[0] = 0

    def complete(ctx: Any, stream: int, buf: int, size: int, valid: int) -> None:
        win.recorded_bytes += valid
        win.buffers.pop(buf, None)

    win.callbacks = [_REQUEST(request), _COMPLETE(complete)]
    win.check(
        "cuptiActivityRegisterCallbacks", win.lib.cuptiActivityRegisterCallbacks(*win.callbacks)
    )
    for kind in kinds:
        win.check(f"cuptiActivityEnable({kind})", win.lib.cuptiActivityEnable(KINDS[kind]))
    if kineto:
        for name, cbids in (("Runtime", KINETO_QUIET_RUNTIME), ("Driver", KINETO_QUIET_DRIVER)):
            fn = getattr(win.lib, f"cuptiActivityEnable{name}Api")
            for cbid in cbids:
                win.check(f"cuptiActivityEnable{name}Api({cbid}, 0)", fn(cbid, 0))
    return win


def op_mode(win: Window, push: bool) -> Any:
    """A ``TorchDispatchMode`` that pushes and pops a CUPTI external id around each op (``push``)
    or only passes each op on; enter it for the window's steps, exit it before
    :func:`close_window`. Its ``threads`` counts the ops it saw by native thread id, its
    ``failed`` the pushes CUPTI refused."""
    import threading
    from collections import Counter

    from torch.utils._python_dispatch import TorchDispatchMode

    lib = win.lib
    lib.cuptiActivityPushExternalCorrelationId.argtypes = [ctypes.c_int, ctypes.c_uint64]
    lib.cuptiActivityPopExternalCorrelationId.argtypes = [
        ctypes.c_int,
        ctypes.POINTER(ctypes.c_uint64),
    ]
    last = ctypes.c_uint64()
    ids = itertools.count(1)

    class Correlating(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.threads: Counter[int] = Counter()
            self.failed = 0

        def __torch_dispatch__(
            self, func: Any, types: Any, args: Any = (), kwargs: Any = None
        ) -> Any:
            self.threads[threading.get_native_id()] += 1
            if not push:
                return func(*args, **(kwargs or {}))
            if lib.cuptiActivityPushExternalCorrelationId(CUSTOM0, next(ids)):
                self.failed += 1
            try:
                return func(*args, **(kwargs or {}))
            finally:
                lib.cuptiActivityPopExternalCorrelationId(CUSTOM0, ctypes.byref(last))

    return Correlating()


def runtime_version_call() -> Any:
    """``cudaRuntimeGetVersion`` of the CUDA runtime library this process mapped.

    ``gpuviz.engine.cupti`` makes the same call for Kineto's teardown; this one is its own
    because the ``cupti-raw`` variant measures a process with no gpuviz in it.
    """
    for path in _mapped("libcudart.so"):
        with contextlib.suppress(OSError, AttributeError):
            fn = ctypes.CDLL(path).cudaRuntimeGetVersion
            out = ctypes.c_int()
            return lambda: fn(ctypes.byref(out))
    raise CuptiError("no libcudart.so mapped: nothing to make the runtime call with")


def close_window(win: Window) -> Window:
    """Disable the activity, flush it and detach CUPTI (``cuptiFinalize`` at a runtime exit)."""
    for kind in win.kinds:
        win.check(f"cuptiActivityDisable({kind})", win.lib.cuptiActivityDisable(KINDS[kind]))
    win.check("cuptiActivityFlushAll", win.lib.cuptiActivityFlushAll(1))  # 1: forced
    return detach(win)


def detach(win: Window) -> Window:
    """Finalize CUPTI from the exit callback of a runtime call made here, as Kineto does.

    Also on its own, after a ``torch.profiler`` window (``profile_workload.py
    --window-refinalize``): CUPTI detached once more, whatever Kineto left of it.
    """
    subscriber = ctypes.c_void_p()
    done: list[int] = []

    def on_api(user: Any, domain: int, cbid: int, data: Any) -> None:
        # CUpti_CallbackData starts with its callback site (enter 0, exit 1)
        if done or ctypes.cast(data, ctypes.POINTER(ctypes.c_int))[0] != API_EXIT:
            return
        done.append(win.lib.cuptiUnsubscribe(subscriber))
        done.append(win.lib.cuptiFinalize())

    callback = _CALLBACK(on_api)
    win.callbacks.append(callback)
    result = win.lib.cuptiSubscribe(ctypes.byref(subscriber), callback, None)
    if result:  # another subscriber (Kineto's) holds the callbacks: finalize from here
        msg = ctypes.c_char_p()
        win.lib.cuptiGetResultString(result, ctypes.byref(msg))
        win.check("cuptiFinalize", win.lib.cuptiFinalize())
        win.finalized, win.via = True, f"directly (cuptiSubscribe: {(msg.value or b'?').decode()})"
        return win
    for domain in win.domains:
        win.check("cuptiEnableDomain", win.lib.cuptiEnableDomain(1, subscriber, domain))
    runtime_version_call()()
    if not done:
        raise CuptiError("the runtime call made no exit callback: CUPTI was not finalized")
    win.check("cuptiUnsubscribe", done[0])
    win.check("cuptiFinalize", done[1])
    win.finalized, win.via = True, "at a runtime call's exit"
    return win


def finalize_again() -> Window:
    """Detach CUPTI once more (:func:`detach`) with no window of its own open."""
    return detach(Window(ctypes.CDLL(find_cupti()), ()))
