"""Source lines: device and host time per ``file:line`` of the Python stack.

With ``with_stack=True`` Kineto writes each Python call as a ``python_function`` event named
``path/to/file.py(123): func`` (paths relative to the ``sys.path`` entry they were found in;
the line is the one Kineto recorded for the frame). An op's stack is the frames around it on its
thread. Its line is the innermost frame that is code of the model or of the user:

- by default, the innermost frame outside torch (``torch``, ``triton``, generated
  ``torchinductor`` code) and the standard library, so that a Hugging Face model's time lands on
  its ``modeling_*.py`` lines, and a model run by a trainer on the model's lines, not on
  ``trainer.train()``;
- with ``mine=True``, the innermost frame in the user's own files: third-party packages are left
  out too (paths under ``site-packages``/``dist-packages``, and the well-known packages of
  :data:`THIRD_PARTY`, whose paths Kineto writes without that prefix).

Frames that are not source (``nn.Module: …``, ``<built-in …>``, ``<string>``) never count. Kernels
are counted forward where launched and backward through the forward op they came from (as for
modules), so a line reports both.
"""

from __future__ import annotations

import re
import sys

import numpy as np
import numpy.typing as npt

from gpuviz.analysis.attribution import Attribution, NodeKind
from gpuviz.analysis.breakdown_table import Breakdown, BreakdownRow
from gpuviz.analysis.frame_rows import frame_sums, kernel_keys

I64 = npt.NDArray[np.int64]

FRAME = re.compile(r"^(?P<file>.+)\((?P<line>\d+)\): (?P<func>.*)$")
"""A ``python_function`` name that is a source frame."""

TORCH_PACKAGES = frozenset({"torch", "torchgen", "functorch", "triton", "gpuviz"})
"""Top-level packages that count as torch (gpuviz: the hooks of `gpuviz profile` around a step)."""

THIRD_PARTY = frozenset(
    {
        "accelerate",
        "apex",
        "datasets",
        "deepspeed",
        "diffusers",
        "einops",
        "fairscale",
        "flash_attn",
        "huggingface_hub",
        "lightning",
        "lightning_fabric",
        "numpy",
        "peft",
        "pytorch_lightning",
        "safetensors",
        "timm",
        "tokenizers",
        "torchaudio",
        "torchvision",
        "tqdm",
        "transformers",
        "trl",
        "vllm",
        "xformers",
    }
)
"""Packages that are not the user's own with ``mine=True`` (besides site-/dist-packages)."""

OWN_THREAD_FILES = ("gpuviz/engine/sampler.py",)
"""gpuviz's own threads: what runs under these frames (psutil, pynvml in the memory sampler of
``gpuviz profile``) is never a line of the user's."""

_SITE = re.compile(r"^(?:.*[\\/])?(?:site|dist)-packages[\\/]")
_STDLIB_DIR = re.compile(r"[\\/]lib[\\/]python3(?:\.\d+)?[\\/]")


def classify(name: str) -> tuple[str, str] | None:
    """A frame name's ``(file:line, category)``; None when it is not a source frame.

    ``category`` is ``"torch"``, ``"stdlib"``, ``"third_party"`` or ``"user"``.
    """
    m = FRAME.match(name)
    if m is None:
        return None
    path = m.group("file")
    if path.startswith("<"):
        return None
    key = f"{path}:{m.group('line')}"
    site = _SITE.match(path)
    rel = path[site.end() :] if site else path
    top = re.split(r"[\\/]", rel.lstrip("/\\"), maxsplit=1)[0]
    top = top[:-3] if top.endswith(".py") else top
    if top in TORCH_PACKAGES or "torchinductor_" in path or "/torch/" in path:
        return key, "torch"
    if site:
        return key, "third_party"
    if _STDLIB_DIR.search(path) or (not path.startswith("/") and top in sys.stdlib_module_names):
        return key, "stdlib"
    if top in THIRD_PARTY:
        return key, "third_party"
    return key, "user"


def line_frames(
    att: Attribution, mine: bool = False
) -> tuple[npt.NDArray[np.bool_], I64, list[str]]:
    """The frames that count as lines, each one's line id, and the ``file:line`` keys.

    Parameters
    ----------
    att : Attribution
    mine : bool
        Count only the user's own files (see the module docstring).
    """

    def make() -> tuple[npt.NDArray[np.bool_], I64, list[str]]:
        allowed = {"user"} if mine else {"user", "third_party"}
        strings = att.trace.symbols.strings
        py = np.flatnonzero(att.kind == NodeKind.PYTHON)
        ids, inv = np.unique(att.name[py], return_inverse=True)
        keys: list[str] = []
        key_ids: dict[str, int] = {}
        sym_key = np.full(len(ids), -1, dtype=np.int64)
        for j, sid in enumerate(ids.tolist()):
            c = classify(strings[sid])
            if c is not None and c[1] in allowed:
                sym_key[j] = key_ids.setdefault(c[0], len(key_ids))
                if sym_key[j] == len(keys):
                    keys.append(c[0])
        key = np.full(len(att.forest), -1, dtype=np.int64)
        key[py] = sym_key[inv.reshape(-1)]
        own_sym = np.array(
            [strings[sid].startswith(OWN_THREAD_FILES) for sid in ids.tolist()], dtype=bool
        )
        if own_sym.any():
            own = np.zeros(len(att.forest), dtype=bool)
            own[py] = own_sym[inv.reshape(-1)]
            key[att.forest.nearest(own) >= 0] = -1
            used, key[key >= 0] = np.unique(key[key >= 0], return_inverse=True)
            keys = [keys[i] for i in used.tolist()]
        return key >= 0, key, keys

    return att.memo(f"line_frames:{mine}", make)


def line_functions(att: Attribution) -> dict[str, str]:
    """``file:line`` -> the function name its frames recorded (``path(12): forward``).

    A line may be recorded under two names (a lambda on a ``def`` line): the first seen wins.
    """

    def make() -> dict[str, str]:
        strings = att.trace.symbols.strings
        ids = np.unique(att.name[att.kind == NodeKind.PYTHON])
        out: dict[str, str] = {}
        for sid in ids.tolist():
            m = FRAME.match(strings[sid])
            if m is not None:
                out.setdefault(f"{m.group('file')}:{m.group('line')}", m.group("func"))
        return out

    return att.memo("line_functions", make)


def line_table(att: Attribution, mine: bool = False) -> Breakdown:
    """Device and host time per ``file:line``.

    Parameters
    ----------
    att : Attribution
        ``attribute(trace)`` of a trace with ``python_function`` events.
    mine : bool
        The user's own files only (falls back to the deepest frame where none is).

    Returns
    -------
    Breakdown
        ``by="line"``, largest device self time first. Per line: calls (its frames), host time inside its outermost frames
        (self: minus deeper lines' frames), device time of kernels whose innermost line it is
        (self) and of those under it (total), split into forward, backward and other totals
        (other: outside every module's forward, e.g. the optimizer step); ``extra["function"]``:
        the function its frames recorded.
    """
    frame, key, keys = line_frames(att, mine)
    if mine and not frame.any():
        # No frame of the user's: the deepest source frame of any kind stands in.
        frame, key, keys = line_frames(att, False)
    sums = frame_sums(att, frame, key, len(keys))
    funcs = line_functions(att)
    rows = [
        BreakdownRow(
            key=keys[i],
            calls=int(sums.calls[i]),
            cpu_self_ns=int(sums.cpu_self[i]),
            cpu_total_ns=int(sums.cpu_total[i]),
            device_self_ns=round(sums.dev_self[i]),
            device_total_ns=round(sums.dev_total[i]),
            kind="line",
            forward_device_ns=round(sums.fwd_total[i]),
            backward_device_ns=round(sums.bwd_total[i]),
            other_device_ns=round(sums.oth_total[i]),
            extra={"function": funcs.get(keys[i])},
        )
        for i in range(len(keys))
    ]
    node_row = np.where(sums.inner >= 0, key[np.maximum(sums.inner, 0)], -1)
    kernel_row = kernel_keys(att, node_row)
    return Breakdown(
        by="line",
        rows=rows,
        kernel_rows=att.gpu_rows,
        kernel_row=kernel_row,
        unattributed_device_ns=int(att.gpu_dur_ns[kernel_row < 0].sum()),
    ).sorted(by_self=True)
