"""Dump the ``--json`` outputs of the analysis commands on tests/data, and compare two dumps.

    python scripts/json_outputs.py dump OUT_DIR [--root CHECKOUT] [--jobs N] [--only SUBSTR]
    python scripts/json_outputs.py compare A_DIR B_DIR

``dump`` runs, as child processes of ``python -m gpuviz`` from ``--root`` (default: the
checkout this script is in), on every trace file and rank folder under ``ROOT/tests/data``:
``summary --json``, ``advise --json``, ``breakdown --json --top 0 --by B`` for each of
``op, op-shape, module, line, kernel, step``, and ``check T --against T --json`` (a trace
against itself); and ``memory --json`` on every allocator snapshot. Each output is written to
``OUT_DIR/<trace path with / as __>.<command>.json`` with what came on stderr and the exit
status beside it (``.err``), so a refusal is an output too. Paths are given relative to the
checkout, so the dumps of two checkouts name the same files and compare equal.

Each dump has its own empty import cache (``GPUVIZ_CACHE_DIR`` in a temporary folder): a
cache left by another gpuviz version cannot answer for this one.

``compare`` exits 0 when both folders hold the same files with the same bytes, else 1,
naming each output that differs or is only in one folder. It is the check of issue 48: a
refactor that changes no behaviour leaves these outputs byte for byte the same.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BREAKDOWN_BY = ("op", "op-shape", "module", "line", "kernel", "step")
SNAPSHOT_SUFFIXES = (".pickle", ".pickle.gz")


def targets(root: Path) -> tuple[list[str], list[str]]:
    """The traces (files, and folders of ``rank-N.json[.gz]``) and snapshots under
    ``root/tests/data``, as paths relative to ``root``, sorted.

    A rank folder's files count once each as well as the folder: each file opens alone too.
    ``tests/data/scripts`` holds Python scripts, not traces, and is skipped."""
    data = root / "tests" / "data"
    traces: set[str] = set()
    snapshots: list[str] = []
    for path in sorted(data.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if not path.is_file() or rel.startswith("tests/data/scripts/"):
            continue
        if path.name.endswith(".json.gz"):
            traces.add(rel)
            if path.name.startswith("rank-"):
                traces.add(path.parent.relative_to(root).as_posix())
        elif path.name.endswith(SNAPSHOT_SUFFIXES):
            snapshots.append(rel)
    return sorted(traces), sorted(snapshots)


def commands(root: Path) -> list[tuple[str, list[str]]]:
    """``(output name, gpuviz arguments)`` for every output a dump holds."""
    traces, snapshots = targets(root)
    out: list[tuple[str, list[str]]] = []
    for t in traces:
        stem = t.replace("/", "__")
        out.append((f"{stem}.summary", ["summary", "--json", t]))
        out.append((f"{stem}.advise", ["advise", "--json", t]))
        for by in BREAKDOWN_BY:
            out.append(
                (f"{stem}.breakdown-{by}", ["breakdown", "--json", "--top", "0", "--by", by, t])
            )
        out.append((f"{stem}.check", ["check", "--json", t, "--against", t]))
    for s in snapshots:
        out.append((f"{s.replace('/', '__')}.memory", ["memory", "--json", s]))
    return out


def dump(out_dir: Path, root: Path, jobs: int, only: str | None) -> int:
    """Write every output of :func:`commands` into ``out_dir``; the count of outputs."""
    out_dir.mkdir(parents=True, exist_ok=True)
    todo = [c for c in commands(root) if only is None or only in c[0]]
    with tempfile.TemporaryDirectory(prefix="gpuviz-json-outputs-") as cache:
        env = dict(os.environ, GPUVIZ_CACHE_DIR=cache, PYTHONPATH=str(root))
        env.pop("GPUVIZ_NO_CACHE", None)

        def one(item: tuple[str, list[str]]) -> None:
            name, argv = item
            done = subprocess.run(
                [sys.executable, "-m", "gpuviz", *argv],
                cwd=root,
                env=env,
                capture_output=True,
                timeout=600,
            )
            (out_dir / f"{name}.json").write_bytes(done.stdout)
            (out_dir / f"{name}.err").write_bytes(b"exit %d\n" % done.returncode + done.stderr)

        # Every trace's summary first, one at a time per trace, so that its import fills the
        # cache before the other commands of that trace read it side by side.
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            list(pool.map(one, [c for c in todo if c[0].endswith(".summary")]))
            list(pool.map(one, [c for c in todo if not c[0].endswith(".summary")]))
    return len(todo)


def compare(a: Path, b: Path) -> list[str]:
    """The outputs that differ between dumps ``a`` and ``b``, each with why."""
    names_a = {p.name for p in a.iterdir() if p.is_file()}
    names_b = {p.name for p in b.iterdir() if p.is_file()}
    problems = [f"{n}: only in {a}" for n in sorted(names_a - names_b)]
    problems += [f"{n}: only in {b}" for n in sorted(names_b - names_a)]
    for n in sorted(names_a & names_b):
        if (a / n).read_bytes() != (b / n).read_bytes():
            problems.append(f"{n}: differs")
    return problems


def main(argv: list[str] | None = None) -> int:
    """The command line; the exit status."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump", help="write the outputs into a folder")
    d.add_argument("out", type=Path)
    d.add_argument(
        "--root", type=Path, default=ROOT, help="the checkout to run (default: this one)"
    )
    d.add_argument("--jobs", type=int, default=2, help="commands run side by side (default 2)")
    d.add_argument("--only", help="only outputs whose name contains this (e.g. a trace's name)")
    c = sub.add_parser("compare", help="exit 1 when two dumps differ, naming the outputs")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    a = p.parse_args(argv)
    if a.cmd == "dump":
        n = dump(a.out, a.root.resolve(), a.jobs, a.only)
        print(f"{n} outputs in {a.out}")
        return 0
    for folder in (a.a, a.b):
        if not folder.is_dir():
            print(f"json_outputs: {folder}: not a folder", file=sys.stderr)
            return 2
    problems = compare(a.a, a.b)
    for line in problems:
        print(line)
    if problems:
        print(f"{len(problems)} outputs differ", file=sys.stderr)
        return 1
    print(f"the same: {sum(1 for _ in a.a.iterdir())} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
