"""The agents' ``overview(".")`` of a folder of unrelated traces: refused in one sentence that
names the files, not "10 ranks" over 5.5 years at 0.0% busy (issue 47, item 6)."""

from __future__ import annotations

import shutil
from pathlib import Path

from test_mcp import ask  # tests/ is on the path (its conftest.py)

DATA = Path(__file__).parent.parent / "data"


def test_overview_of_a_folder_of_unrelated_traces_is_refused(tmp_path: Path) -> None:
    for name in ("streams_overlap.json.gz", "worker_thread.json.gz"):
        shutil.copy(DATA / name, tmp_path / name)
    shutil.copy(DATA / "gloo_2rank_h100" / "rank-0.json.gz", tmp_path / "h100.json.gz")
    _, [(err, text)] = ask([("overview", {"path": "."})], [tmp_path])
    assert err, text
    assert "its files are not one job" in text, text
    assert "open each file on its own" in text and "ranks" in text
    # Each file alone is still answered.
    _, [(err, text)] = ask([("overview", {"path": "h100.json.gz"})], [tmp_path])
    assert not err, text
