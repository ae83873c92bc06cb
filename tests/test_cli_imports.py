"""What a ``gpuviz summary`` process imports: no torch, no Qt, no pyqtgraph.

They are the heavy modules of the other commands (profile, open); a summary needs none, and
importing one would cost a start-up that the issue's targets leave no room for (issue 25:
``gpuviz summary --json`` at 0.2x a ``json.load`` process). Measured with ``-X importtime``
in a fresh process, as a user's shell runs it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from subproc import gpuviz_env

DATA = Path(__file__).parent / "data"
HEAVY = ("torch", "PySide6", "shiboken6", "pyqtgraph")


def _imported(args: list[str]) -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "gpuviz", *args],
        capture_output=True,
        text=True,
        env=gpuviz_env(GPUVIZ_NO_CACHE="1"),
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    names = set()
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            name = line.rsplit("|", 1)[1].strip()
            if name != "package":  # the header line
                names.add(name)
    return names


@pytest.mark.parametrize("json_out", [False, True])
def test_summary_imports_no_torch_no_qt(json_out: bool) -> None:
    args = ["summary", str(DATA / "streams_overlap.json.gz")] + (["--json"] if json_out else [])
    names = _imported(args)
    assert "gpuviz.analysis.summary" in names  # the report is read right
    heavy = sorted(n for n in names if n.split(".")[0] in HEAVY)
    assert not heavy, f"gpuviz summary imported {heavy[:10]}"
