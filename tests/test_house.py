"""The house's documents stay what they say (issue 48): a short README that is a guide,
docs/cli.md generated from ``--help``, docs/performance.md whose commands name files that exist,
and scripts/json_outputs.py, the byte-for-byte check of the analysis commands' JSON.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
README_MAX_LINES = 450


def _script(name: str) -> ModuleType:
    """``scripts/NAME.py`` as a module (scripts/ is no package)."""
    spec = importlib.util.spec_from_file_location(f"house_{name}", ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_readme_is_a_short_guide() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= README_MAX_LINES
    # The two commands, exactly as .ci/run runs the test one.
    assert "bash scripts/setup.sh && .venv/bin/gpuviz" in text
    test_cmd = (
        'bash scripts/setup.sh --test && .venv/bin/python -m pytest -m "not gpu and not bench"'
    )
    assert test_cmd in text
    assert test_cmd in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_readme_links_and_pictures_exist() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)\)", text)
    assert len(targets) >= 10  # the screenshots and the docs pages
    missing = [t for t in targets if not t.startswith("http") and not (ROOT / t).exists()]
    assert not missing


def _docs_paths(text: str) -> list[str]:
    """Every ``benchmarks/...``, ``scripts/...`` or ``examples/...`` file a text names."""
    # Not preceded by a folder: tests/data/scripts/x.py is not scripts/x.py.
    return re.findall(r"(?<![\w/])((?:benchmarks|scripts|examples)/[\w./-]+\.(?:py|sh))\b", text)


def test_performance_rows_each_have_one_command_naming_existing_files() -> None:
    text = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    rows = [ln for ln in text.splitlines() if ln.startswith("| ") and not ln.startswith("| target")]
    assert len(rows) >= 15  # import, memory limits, snapshots, the app, profiling
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert len(cells) == 4, row  # target, figure now, machine, command
        command = cells[3]
        assert "`" in command or "same command" in command, row
        for path in _docs_paths(command):
            assert (ROOT / path).is_file(), f"{path} (in: {row[:80]})"


def test_docs_name_only_files_that_exist() -> None:
    # A benchmark or script that is deleted must leave no page pointing at it (git keeps the
    # removed experiments; the overhead page names them as removed, in one sentence).
    for page in sorted((ROOT / "docs").glob("*.md")):
        text = page.read_text(encoding="utf-8")
        text = re.sub(r"The experiments that ruled these out.*?removed;", "", text, flags=re.S)
        for path in _docs_paths(text):
            assert (ROOT / path).is_file(), f"{page.name} names {path}"


def test_cli_reference_is_what_help_says(tmp_path: Path) -> None:
    ref = _script("cli_reference")
    assert ref.main(["--check"]) == 0, "docs/cli.md is out of date: python scripts/cli_reference.py"
    text = ref.render()
    for command in ("open", "profile", "summary", "advise", "breakdown", "memory", "check", "mcp"):
        assert f"## gpuviz {command}\n" in text
    # The check can fail: a page that differs from --help is refused.
    page = tmp_path / "cli.md"
    page.write_text(text.replace("--max-step-regression", "--max-step-growth"), encoding="utf-8")
    old, ref.PAGE = ref.PAGE, page
    try:
        assert ref.main(["--check"]) == 1
    finally:
        ref.PAGE = old


@pytest.mark.slow
def test_json_outputs_dump_and_compare(tmp_path: Path) -> None:
    # Two dumps of the same checkout compare equal; a changed byte, or an output only one dump
    # has, is named and exits 1. Two small traces and one snapshot keep it short.
    env_py = [sys.executable, str(ROOT / "scripts" / "json_outputs.py")]
    only = ("adv_clean", "snap_oom")
    a, b = tmp_path / "a", tmp_path / "b"
    for out in (a, b):
        for name in only:
            done = subprocess.run(
                [*env_py, "dump", str(out), "--only", name, "--jobs", "2"],
                capture_output=True, text=True, timeout=600,
            )  # fmt: skip
            assert done.returncode == 0, done.stderr
    names = sorted(p.name for p in a.iterdir())
    # summary, advise, 6 breakdowns and check for the trace; memory for the snapshot; each
    # with its stderr and exit status beside it.
    assert len(names) == 2 * (9 + 1)
    summary = a / "tests__data__advisor__adv_clean.json.gz.summary.json"
    assert summary.read_text().startswith("{") and '"sources"' in summary.read_text()
    assert (a / "tests__data__snapshots__snap_oom.pickle.memory.json").stat().st_size > 100
    # --by module on a trace without stacks is refused (exit 2): an output all the same.
    err = (a / "tests__data__advisor__adv_clean.json.gz.breakdown-module.err").read_text()
    assert err.startswith("exit 2\n")
    same = subprocess.run([*env_py, "compare", str(a), str(b)], capture_output=True, text=True)
    assert same.returncode == 0, same.stdout
    changed = b / "tests__data__advisor__adv_clean.json.gz.advise.json"
    changed.write_bytes(changed.read_bytes().replace(b"1", b"2", 1))
    (a / "tests__data__snapshots__snap_oom.pickle.memory.err").unlink()
    diff = subprocess.run([*env_py, "compare", str(a), str(b)], capture_output=True, text=True)
    assert diff.returncode == 1
    assert "tests__data__advisor__adv_clean.json.gz.advise.json: differs" in diff.stdout
    assert "tests__data__snapshots__snap_oom.pickle.memory.err: only in" in diff.stdout


def test_json_outputs_covers_every_trace_folder_and_snapshot() -> None:
    mod = _script("json_outputs")
    traces, snapshots = mod.targets(ROOT)
    data = ROOT / "tests" / "data"
    # Counted independently: every .json.gz outside scripts/, plus each folder of rank files.
    files = [p for p in data.rglob("*.json.gz") if "scripts" not in p.parts]
    folders = {p.parent for p in files if p.name.startswith("rank-")}
    assert len(traces) == len(files) + len(folders)
    assert "tests/data/gloo_4rank_cpu" in traces
    assert len(snapshots) == len(list(data.rglob("*.pickle"))) + len(
        list(data.rglob("*.pickle.gz"))
    )
    kinds = {name.rsplit(".", 1)[1] for name, _ in mod.commands(ROOT)}
    assert kinds == {
        "summary", "advise", "check", "memory",
        *(f"breakdown-{by}" for by in ("op", "op-shape", "module", "line", "kernel", "step")),
    }  # fmt: skip
