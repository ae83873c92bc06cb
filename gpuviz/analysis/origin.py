"""Where one kernel (or CPU call) comes from: its op, module path and source line.

What the Timeline's details show for a kernel, and what the advisor's evidence names. Names are
made only for the nodes asked about; the arrays behind them are the attribution's, computed once
per trace.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gpuviz.analysis.attribution import Attribution, attribute
from gpuviz.analysis.compiled_regions import place_kernels
from gpuviz.analysis.graph_merge import capture_keys, merge_of
from gpuviz.analysis.graph_replays import graph_replays
from gpuviz.analysis.modules import module_paths, outside_keys
from gpuviz.analysis.source_lines import line_frames
from gpuviz.trace.model import Trace

I64 = npt.NDArray[np.int64]


@dataclass(frozen=True)
class KernelOrigin:
    """One kernel's place in the code.

    Attributes
    ----------
    op : str or None
        The op that launched it (innermost ``cpu_op`` around its launch); None where none did.
    module : str or None
        Its module path (``TinyLM_0.Block_0.Attn_0``), or the row outside modules it counts in
        (``Optimizer.step#AdamW.step``); None without Python stacks or a launch.
    line : str or None
        Its source line (``model.py:42``); None where no frame is the user's or the model's.
    backward : bool
        Whether it ran in backward (module and line are then its forward op's).
    outside : bool
        Whether ``module`` is a row outside any module (an op or range, not a module path).
    """

    op: str | None
    module: str | None
    line: str | None
    backward: bool
    outside: bool = False


class CodeOrigin:
    """Module and line names of forest nodes, for a few nodes at a time.

    Parameters
    ----------
    att : Attribution
    """

    def __init__(self, att: Attribution) -> None:
        self.att = att
        self.stacks = att.has_stacks()
        f = att.forest
        self.op_of = f.nearest(att.is_op)
        if self.stacks:
            frame, self.path, self.paths = module_paths(att)
            self.mod_inner = f.nearest(frame)
            self.out_key, self.out_names = outside_keys(att)
            lframe, self.lkey, self.lkeys = line_frames(att)
            self.line_inner = f.nearest(lframe)

    def ops(self, nodes: I64) -> list[str | None]:
        """The op around each node (innermost ``cpu_op``), None where there is none."""
        op = self.op_of[nodes]
        names = self.att.trace.symbols.strings
        return [names[int(self.att.name[o])] if o >= 0 else None for o in op.tolist()]

    def modules(self, nodes: I64) -> list[str]:
        """Each node's module path, or its row outside modules."""
        inner = self.mod_inner[nodes]
        return [
            self.paths[int(self.path[i])] if i >= 0 else self.out_names[int(k)]
            for i, k in zip(inner.tolist(), self.out_key[nodes].tolist(), strict=True)
        ]

    def lines(self, nodes: I64) -> list[str]:
        """Each node's ``file:line`` (``""`` where none counts)."""
        inner = self.line_inner[nodes]
        return [self.lkeys[int(self.lkey[i])] if i >= 0 else "" for i in inner.tolist()]


def kernel_origins(trace: Trace, rows: npt.ArrayLike) -> list[KernelOrigin | None]:
    """The op, module and line of kernel, copy or set slice ``rows`` (None for other rows).

    Parameters
    ----------
    trace : Trace
    rows : array_like of int
        Slice rows (a kernel the Timeline shows).

    Returns
    -------
    list of KernelOrigin or None
    """
    att = attribute(trace)
    origin: CodeOrigin = att.memo("code_origin", lambda: CodeOrigin(att))
    rows = np.asarray(rows, dtype=np.int64)
    pos = np.searchsorted(att.gpu_rows, rows)
    pos_c = np.minimum(pos, max(len(att.gpu_rows) - 1, 0))
    out: list[KernelOrigin | None] = []
    for r, p in zip(rows.tolist(), pos_c.tolist(), strict=True):
        if len(att.gpu_rows) == 0 or att.gpu_rows[p] != r:
            out.append(None)
            continue
        launch = int(att.gpu_launch[p])
        op = int(att.gpu_op[p])
        op_name = att.trace.symbols[int(att.name[op])] if op >= 0 else None
        captured = _captured_origin(att, p)
        if captured is not None:
            out.append(captured)
            continue
        replay = int(graph_replays(att).kernel_replay[p])
        if op_name is None and replay >= 0:
            op_name = graph_replays(att).label(replay)  # the replay unit it belongs to
        if launch < 0:
            out.append(KernelOrigin(op_name, None, None, False))
            continue
        back = bool(att.backward[launch])
        holder = int(att.forward_op[launch]) if back and att.forward_op[launch] >= 0 else launch
        module = line = None
        outside = False
        if origin.stacks:
            at = np.array([holder], dtype=np.int64)
            # A compiled model's kernel: the module and line that wrote it (issue 49).
            inside = origin.mod_inner[at] >= 0
            mods, lines = place_kernels(att, [p], origin.modules(at), origin.lines(at), inside)
            module, line = mods[0], lines[0] or None
            outside = not bool(inside[0]) and module == origin.modules(at)[0]
        out.append(KernelOrigin(op_name, module, line, back, outside))
    return out


def _captured_origin(att: Attribution, k: int) -> KernelOrigin | None:
    """A replayed kernel's origin at capture (:mod:`gpuviz.analysis.graph_merge`), None where
    it was not matched to a capture launch."""
    merge = merge_of(att)
    if merge is None:
        return None
    hit = np.flatnonzero(merge.kernel == k)
    if len(hit) == 0:
        return None
    return capture_origin(
        merge.captures[int(merge.capture[hit[0]])], int(merge.launch_node[hit[0]])
    )


def capture_origin(c_att: Attribution, node: int) -> KernelOrigin:
    """The op, module and line of the kernels that capture launch ``node`` of ``c_att`` (a
    capture trace's attribution) made: where the capture-and-replay merge puts them."""
    op = capture_keys(c_att, node, "op")
    stacks = c_att.has_stacks()
    module = capture_keys(c_att, node, "module") if stacks else None
    line = capture_keys(c_att, node, "line") if stacks else None
    return KernelOrigin(
        op.self_key,
        None if module is None else module.self_key,
        None if line is None else line.self_key,
        op.phase == "backward",
        module is not None and module.kind == "outside",
    )
