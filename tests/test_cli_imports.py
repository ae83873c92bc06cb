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


def test_a_kept_output_is_printed_on_the_standard_library_alone(tmp_path: Path) -> None:
    # The re-run of a summary whose output the cache keeps is the process the issue times at
    # 0.1x the first open: numpy, msgspec and dataclasses (with the inspect and
    # typing_extensions they import) were 0.1 s and a third of it.
    import os
    import shutil
    import time

    trace = tmp_path / "t.json.gz"
    shutil.copyfile(DATA / "streams_overlap.json.gz", trace)
    hour_ago = time.time() - 3600  # a file written just now is not cached yet
    os.utime(trace, (hour_ago, hour_ago))
    env = gpuviz_env(GPUVIZ_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("GPUVIZ_NO_CACHE", None)
    cmd = [sys.executable, "-X", "importtime", "-m", "gpuviz", "summary", str(trace), "--json"]
    first = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    again = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert first.returncode == again.returncode == 0, again.stderr[-2000:]
    assert again.stdout == first.stdout
    names = {
        line.rsplit("|", 1)[1].strip() for line in again.stderr.splitlines() if line.count("|") == 2
    }
    assert "gpuviz.trace.cache_memo" in names  # the kept output was looked up
    assert "gpuviz.analysis.summary" not in names, "the summary was computed again"
    heavy = sorted(n for n in names if n.split(".")[0] in ("numpy", "msgspec", "dataclasses"))
    assert not heavy, f"printing a kept output imported {heavy[:10]}"
