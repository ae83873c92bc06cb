"""``benchmarks/bench_scale.py``: ``json.load`` of the first K files only, and the ratios to
all the files' time estimated from it (``--json-load-files``, the 30 GB case)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))  # bench_scale imports bench_import as the scripts do
import bench_scale  # noqa: E402


def _folder(tmp_path: Path) -> list[Path]:
    files = []
    for r, text in enumerate(["[1]", "[2, 3]", "not JSON"]):
        f = tmp_path / f"rank-{r}.json"
        f.write_text(text)
        files.append(f)
    return files


def test_json_each_reads_only_the_first_k_files(tmp_path: Path) -> None:
    _folder(tmp_path)  # the third file is not JSON: reading it fails
    run = [sys.executable, "-c", bench_scale.JSON_EACH, str(tmp_path)]
    assert subprocess.run([*run, "2"], capture_output=True).returncode == 0
    assert subprocess.run(run, capture_output=True).returncode != 0


def test_ratios_to_all_files_are_estimated_by_their_bytes(tmp_path: Path) -> None:
    files = _folder(tmp_path)  # 3, 6 and 8 bytes
    case = {
        "contenders": {
            "json.load of 2 files": {"median_s": 9.0},
            "gpuviz summary": {"median_s": 4.5, "time_ratio": 0.5},
        }
    }
    bench_scale._estimate_all_files(case, files, 2)
    c = case["contenders"]
    assert c["json.load of 2 files"]["estimated_all_files_s"] == pytest.approx(9.0 * 17 / 9)
    assert c["gpuviz summary"]["estimated_time_ratio"] == pytest.approx(0.5 * 9 / 17)


def test_a_pythonpath_contender_runs_the_gpuviz_it_names(tmp_path: Path) -> None:
    """Run from the checkout (as bench_scale runs every contender), ``python -m`` would put the
    checkout first on the path: the setting would change nothing."""
    other = tmp_path / "other" / "gpuviz"
    other.mkdir(parents=True)
    (other / "__init__.py").write_text("")
    (other / "__main__.py").write_text("print('the other gpuviz')")
    cmd = [sys.executable, "-m", "gpuviz", "--version"]
    contenders = bench_scale.env_contenders(
        cmd, ["PYTHONPATH=" + str(other.parent), "GPUVIZ_X=1"], {"A": "1"}
    )
    run, env = contenders["gpuviz PYTHONPATH=" + str(other.parent)]
    assert env == {"A": "1", "PYTHONPATH": str(other.parent)}
    done = subprocess.run(run, env=env, cwd=bench_scale.REPO, capture_output=True, text=True)
    assert done.stdout.strip() == "the other gpuviz"
    assert contenders["gpuviz GPUVIZ_X=1"] == (cmd, {"A": "1", "GPUVIZ_X": "1"})
