"""``benchmarks/import_timeline.py``: a rank folder's import, child by child."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from subproc import gpuviz_env

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"


def test_it_shows_when_each_child_got_its_files_and_answered(tmp_path: Path) -> None:
    out = tmp_path / "ranks"
    out.mkdir()
    for i, name in enumerate(["ddp_nccl_4rank/rank-0.json.gz", "dataparallel_seed_2gpu.json.gz"]):
        shutil.copy(DATA / name, out / f"rank-{i}.json.gz")
    env = gpuviz_env(GPUVIZ_IMPORT_WORKER_MIN_BYTES="0", GPUVIZ_IMPORT_WORKERS="2")
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "import_timeline.py"), str(out)],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert re.search(r"^import [\d.]+ s, 2 children$", done.stdout, re.M), done.stdout
    assert "assemble for" in done.stdout
    children = re.findall(
        r"child +\d+: sent at ([\d. ]+); replies at ([\d. ]*)$", done.stdout, re.M
    )
    # each of the two files went whole to a child, and came back
    assert sum(len(s.split()) for s, _ in children) == 2
    assert sum(len(r.split()) for _, r in children) == 2
