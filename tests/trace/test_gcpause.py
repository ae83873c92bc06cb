"""glibc's heap thresholds raised for a cluster's task
(:func:`gpuviz.trace.gcpause.heap_thresholds_raised`): where a block of 1 MiB comes from, read
from glibc's own count of mapped blocks."""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gpuviz.trace import gcpause

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not gcpause._libc(), reason="glibc's malloc only"
)


class _MallInfo(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_int)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


def mapped_on_its_own(size: int = 2**20) -> bool:
    """Whether glibc gives a block of ``size`` bytes a mapping of its own (over its mmap
    threshold) rather than a place on its heap."""
    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo.restype = _MallInfo
    libc.malloc.restype = ctypes.c_void_p
    libc.free.argtypes = [ctypes.c_void_p]
    before = libc.mallinfo().hblks
    block = libc.malloc(size)
    try:
        return bool(libc.mallinfo().hblks - before)
    finally:
        libc.free(block)


PROBE = """
import json, sys
sys.path.insert(0, sys.argv[1])
from test_gcpause import mapped_on_its_own
from gpuviz.trace.gcpause import heap_thresholds_raised, release_freed_memory
seen = {"before": mapped_on_its_own()}
with heap_thresholds_raised():
    seen["within"] = mapped_on_its_own()
    with heap_thresholds_raised():  # a second task on the worker's other thread
        pass
    seen["after the inner exit"] = mapped_on_its_own()
release_freed_memory()  # the task gives its freed pages back
seen["after"] = mapped_on_its_own()
print(json.dumps(seen))
"""


def test_fixed_thresholds_raised_within_and_restored_after() -> None:
    # A process started as Dask's nanny starts a worker: glibc reads the setting at start-up.
    env = {**os.environ, "MALLOC_TRIM_THRESHOLD_": "65536"}
    env.pop("MALLOC_MMAP_THRESHOLD_", None)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(Path(__file__).parent)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert json.loads(out) == {
        "before": True,  # over the fixed 128 KiB mmap threshold: a mapping of its own
        "within": False,  # on the heap, as glibc's dynamic thresholds would let it
        "after the inner exit": False,
        "after": True,  # fixed again as the setting fixed it
    }


def test_nothing_is_changed_where_nothing_fixed_them(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Any] = []

    class Libc:
        def mallopt(self, *args: int) -> int:
            calls.append(args)
            return 1

    monkeypatch.setattr(gcpause, "_LIBC", Libc())
    for name in gcpause.FIXED_BY:
        monkeypatch.delenv(name, raising=False)
    with gcpause.heap_thresholds_raised():
        pass
    assert calls == []
    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "not a number")
    with gcpause.heap_thresholds_raised():
        assert calls == [(gcpause.M_MMAP_THRESHOLD, 2**25), (gcpause.M_TRIM_THRESHOLD, 2**26)]
    # restored: trim as glibc's default (nothing set it), mmap as set (unreadable: the default)
    assert calls[2:] == [(gcpause.M_TRIM_THRESHOLD, 2**17), (gcpause.M_MMAP_THRESHOLD, 2**17)]
