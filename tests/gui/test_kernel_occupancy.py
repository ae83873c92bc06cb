"""Occupancy that CUPTI did not compute reads "unknown", never "0 %" (issue 47, item 23):
cuBLASLt's nvjet GEMMs, launched with cuLaunchKernelEx, carry ``est. achieved occupancy %: 0``."""

from __future__ import annotations

import gzip
import json
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from gpuviz.analysis.kernels import kernel_table, known_occupancy
from gpuviz.gui.timeline.details import describe_slice
from gpuviz.gui.views.trace.qt_kernels import COLUMNS, QtKernelsView, kernel_rows
from gpuviz.trace.kineto import load_trace
from gpuviz.trace.model import Kind

TINYLM = "attribution/tinylm_train.json.gz"


def test_known_occupancy():
    assert known_occupancy(0) is None and known_occupancy(0.0, 11.6) is None
    assert known_occupancy(0, 0.03) == 0.0  # one block of 4 warps on 132 SMs: under 1 %
    assert known_occupancy(None) is None and known_occupancy(True) is None
    assert known_occupancy("50") is None and known_occupancy(-3) is None
    assert known_occupancy(37.5) == 37.5


def test_nvjet_occupancy_is_unknown_and_others_keep_theirs(qtbot, data_dir):
    events = json.loads(gzip.decompress((data_dir / TINYLM).read_bytes()))["traceEvents"]
    occ: dict[str, set[float]] = {}
    for e in events:
        if e.get("cat") == "kernel":
            a = e["args"]
            occ.setdefault(e["name"], set()).add(a.get("est. achieved occupancy %"))
            if e["name"].startswith("nvjet"):
                assert a["warps per SM"] >= 1  # warps were resident: the 0 is no figure
    nvjet = [n for n in occ if n.startswith("nvjet")]
    assert nvjet and all(occ[n] == {0} for n in nvjet)  # what the file says
    # Kernels with one figure on every launch, above 1 %: shown as they are.
    others = {n: next(iter(o)) for n, o in occ.items() if len(o) == 1 and next(iter(o)) >= 1}
    assert others

    trace = load_trace(str(data_dir / TINYLM))
    view = QtKernelsView(trace, kernel_rows(kernel_table(trace)))
    qtbot.addWidget(view)
    col = [c.key for c in COLUMNS].index("occupancy")
    cells = {
        view.model.rows[r]["name"]: view.model.data(view.model.index(r, col))
        for r in range(view.model.rowCount())
    }
    assert all(cells[n] == "unknown" for n in nvjet)
    assert all(cells[n] == f"{others[n]:.0f} %" for n in others)
    # The Timeline's hover text of an nvjet kernel says so too.
    s = trace.slices
    row = next(
        int(r) for r in (s.kind == Kind.KERNEL).nonzero()[0] if trace.name_of(int(r)) in nvjet
    )
    text = describe_slice(trace, row, rich=False)
    assert "est. achieved occupancy %: unknown" in text and "occupancy %: 0" not in text
