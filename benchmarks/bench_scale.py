"""Scale benchmark (issue 25): a rank folder, the memory limit, start-up and re-open, as processes.

    python benchmarks/bench_scale.py --world 64 --kernels 100000 --repeat 3 \\
        --limit 8G --out bench_scale.json                 (the 16-core machine: ~10 GB of ranks)
    python benchmarks/bench_scale.py --world 4 --kernels 5000 --startup-kernels 20000 \\
        --cache-kernels 20000                             (small, to try it on 2 cores)

Every contender is a fresh process, timed from its start to its exit, its process tree's
memory sampled every 10 ms (the sum of resident sets and of proportional sets, PSS, as
``bench_import.py`` samples them: its sampler is used here). Side by side, in each round, so
that the ratios compare runs made under the same load:

- **rank folder** (``gen_trace.py --world N --all-ranks``): ``gpuviz summary DIR --no-cache
  --json`` against ``json.load`` of each file in turn (one held at a time, as the issue's
  "180 s" was measured), and, with ``--limit``, ``gpuviz summary --max-memory LIMIT``: its
  peak against the limit, and what it left out (target: 0.1x the time, 2 GB PSS; with
  ``--limit 8G`` on 3x the files: 0.15x the time, within the limit). Without the cache, and
  over the limit, ``summary`` reads a folder a rank at a time (``gpuviz.commands.summary_ranks``);
  ``--gpuviz-env GPUVIZ_SUMMARY_BY_RANK=0`` adds the folder read whole beside it.
- **start-up**: ``gpuviz summary FILE --json --no-cache`` against ``python -c
  "json.load(...)"`` on one file of ``--startup-kernels`` kernels (target 0.2x).
- **re-open**: ``gpuviz summary FILE --json`` with an empty cache (the import, and writing the
  entry), then again from the cache, on ``--cache-kernels`` kernels (target 0.1x): once as a
  user re-runs it (the output kept beside the entry is printed back), once with the kept
  output deleted first (the trace read from the cache and its figures computed).

``--gpuviz-env VAR=VALUE`` (repeatable) adds a ``gpuviz summary`` contender to the rank
folder and the start-up with that setting: an import knob such as
``GPUVIZ_IMPORT_WHOLE_FILE_MAX_BYTES``, or ``PYTHONPATH=DIR`` for another version of gpuviz
(``git archive`` of the last commit, say; run the benchmark from outside the checkout). And
``--skip-json-load`` leaves the slow reference out (ratios are then to plain gpuviz).
``--json-load-files K`` times ``json.load`` of the first K files only, and the ratios to all
the files' are then estimated from it by their bytes (the 30 GB case: 192 files one after the
other take about 9 minutes on the 16-core machine): they are printed and stored as
``estimated_time_ratio``, beside the ratio to the K files' time.

The generated traces are kept in ``--data`` (default ``/tmp/gpuviz-bench/scale``) and reused.
It prints each figure and writes them all, with the machine (CPUs, model, RAM) and its load
before and after each case, to ``--out`` (JSON), which the README's performance table is made
from.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench_import import compile_sources, run_sampled  # the import benchmark's

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # gpuviz without PYTHONPATH (this process reads one name of it)

from gpuviz.trace.cache_memo import MEMO_PREFIX  # noqa: E402

JSON_EACH = (
    "import json, os, sys\n"
    "d = sys.argv[1]\n"
    "fs = (sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith('.json'))\n"
    "      if os.path.isdir(d) else [d])\n"
    "fs = fs[: int(sys.argv[2])] if len(sys.argv) > 2 else fs\n"
    "for p in fs:\n"
    "    with open(p, 'rb') as f:\n"
    "        json.load(f)\n"
)
"""``json.load`` of each file in turn (or of the one file), one held at a time; of the first
``argv[2]`` files only, where given (``--json-load-files``)."""


def machine() -> dict[str, Any]:
    """The machine the figures come from."""
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            model = next(
                (ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), ""
            )
    except OSError:
        pass
    try:
        ram = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):
        ram = 0
    return {
        "cpus": os.cpu_count(),
        "usable_cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "cpu_model": model,
        "ram_gb": round(ram / 2**30, 1),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def load() -> list[float]:
    """The load average now (1, 5, 15 minutes)."""
    return [round(x, 2) for x in os.getloadavg()]


def run(cmd: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run ``cmd`` as a fresh process: its wall time and its tree's memory peaks (MB)."""
    code, out, err, wall, (rss, pss, scratch) = run_sampled(cmd, env=env, cwd=REPO)
    if code != 0:
        raise RuntimeError(f"{' '.join(cmd[:4])}… failed ({code}):\n{err[-3000:]}")
    return {
        "s": wall,
        "tree_rss_mb": rss / 2**20,
        "tree_pss_mb": pss / 2**20,
        "scratch_mb": scratch / 2**20,
        "stderr": err.strip()[-2000:],
        "stdout_bytes": len(out),
    }


def gpuviz_env(**extra: str) -> dict[str, str]:
    """The environment of a ``python -m gpuviz`` child: this checkout first on its path."""
    env = dict(os.environ, **extra)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)
    return env


def gen(args: list[str], out: Path) -> Path:
    """``gen_trace.py`` ARGS into ``out``, unless it is there already."""
    if not out.exists():
        print(f"generating {out} …", flush=True)
        subprocess.run(
            [sys.executable, str(REPO / "benchmarks" / "gen_trace.py"), *args, "--out", str(out)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    return out


def env_contenders(
    cmd: list[str], settings: list[str], env: dict[str, str]
) -> dict[str, tuple[list[str], dict[str, str]]]:
    """``cmd`` once more for each ``VAR=VALUE`` of ``--gpuviz-env``, with it added to ``env``.

    With ``PYTHONPATH`` (another gpuviz's source, say) the interpreter runs with ``-P``: the
    runs' working folder is this checkout, which ``python -m`` would otherwise put first on
    the path, so that every contender ran this checkout's gpuviz whatever the setting.
    """
    out = {}
    for item in settings:
        var, _, value = item.partition("=")
        run = [cmd[0], "-P", *cmd[1:]] if var == "PYTHONPATH" else cmd
        out[f"gpuviz {item}"] = (run, {**env, var: value})
    return out


def size_mb(path: Path) -> float:
    files = [f for f in path.iterdir() if f.is_file()] if path.is_dir() else [path]
    return sum(f.stat().st_size for f in files) / 1e6


def rounds(
    name: str, contenders: dict[str, tuple[list[str], dict[str, str] | None]], repeat: int,
    ref: str, before_each: dict[str, Any] | None = None,
) -> dict[str, Any]:  # fmt: skip
    """``repeat`` rounds of the contenders in turn: each run, and the median of each one's
    ratio to ``ref`` (time and PSS) over the rounds."""
    print(f"\n== {name}  (load {load()})", flush=True)
    runs: dict[str, list[dict[str, Any]]] = {k: [] for k in contenders}
    for k in range(repeat):
        for which, (cmd, env) in contenders.items():
            if before_each and which in before_each:
                before_each[which]()
            r = run(cmd, env)
            runs[which].append(r)
            base = runs[ref][-1] if runs[ref] and which != ref else None
            ratio = (
                f"  x{ref}: time {r['s'] / base['s']:.3f}, PSS {r['tree_pss_mb'] / base['tree_pss_mb']:.3f}"
                if base
                else ""
            )
            print(
                f"  round {k + 1} {which:<22} {r['s']:8.2f} s  PSS {r['tree_pss_mb']:8.0f} MB"
                f"  (RSS {r['tree_rss_mb']:6.0f}){ratio}",
                flush=True,
            )
    summary: dict[str, Any] = {}
    for which, rs in runs.items():
        entry: dict[str, Any] = {
            "median_s": statistics.median(r["s"] for r in rs),
            "median_pss_mb": statistics.median(r["tree_pss_mb"] for r in rs),
            "runs": rs,
        }
        if which != ref:
            entry["time_ratio"] = statistics.median(r["s"] / b["s"] for r, b in zip(rs, runs[ref]))
            entry["pss_ratio"] = statistics.median(
                r["tree_pss_mb"] / b["tree_pss_mb"] for r, b in zip(rs, runs[ref])
            )
        summary[which] = entry
    for which, e in summary.items():
        extra = (
            f"  = {e['time_ratio']:.3f}x time, {e['pss_ratio']:.3f}x PSS of {ref}"
            if "time_ratio" in e
            else ""
        )
        print(
            f"  median {which:<22} {e['median_s']:8.2f} s  PSS {e['median_pss_mb']:8.0f} MB{extra}"
        )
    return {"load_before": load(), "contenders": summary}


def _estimate_all_files(case: dict[str, Any], files: list[Path], k: int) -> None:
    """Each contender's ratio to ``json.load`` of all ``files``, estimated from the first
    ``k`` files' time by their share of the bytes (stored as ``estimated_time_ratio``)."""
    share = sum(f.stat().st_size for f in files[:k]) / sum(f.stat().st_size for f in files)
    ref = case["contenders"][f"json.load of {k} files"]
    ref["estimated_all_files_s"] = ref["median_s"] / share
    print(
        f"  json.load of all {len(files)} files, estimated from {k} ({share:.1%} of the bytes):"
        f" {ref['estimated_all_files_s']:.1f} s"
    )
    for which, e in case["contenders"].items():
        if "time_ratio" in e:
            e["estimated_time_ratio"] = e["time_ratio"] * share
            print(f"  {which:<30} {e['estimated_time_ratio']:.3f}x the estimate")


def _drop_memos(cache_dir: Path) -> None:
    """Delete the outputs ``gpuviz summary`` kept beside its entries (``cache_memo``): the next
    run reads the trace from the cache and computes its figures."""
    for memo in (cache_dir / "traces").glob(f"*/{MEMO_PREFIX}*"):
        memo.unlink()


def main(argv: list[str] | None = None) -> int:
    """The command line."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--world", type=int, default=64, help="rank files in the folder (64)")
    p.add_argument("--kernels", type=int, default=100_000, help="kernels per rank file (100k)")
    p.add_argument("--limit", default=None, metavar="SIZE", help="also --max-memory SIZE")
    p.add_argument("--startup-kernels", type=int, default=100_000, metavar="N")
    p.add_argument("--cache-kernels", type=int, default=300_000, metavar="N")
    p.add_argument("--repeat", type=int, default=1, help="rounds (contenders take turns)")
    p.add_argument("--data", type=Path, default=Path("/tmp/gpuviz-bench/scale"))
    p.add_argument("--out", type=Path, default=Path("bench_scale.json"))
    p.add_argument(
        "--cases", default="ranks,startup,reopen", help="which cases (ranks,startup,reopen)"
    )
    p.add_argument(
        "--gpuviz-env",
        action="append",
        default=[],
        metavar="VAR=VALUE",
        help="rank folder: also gpuviz summary with this setting (repeatable: one contender each)",
    )
    p.add_argument(
        "--skip-json-load",
        action="store_true",
        help="rank folder: leave json.load out (ratios then against plain gpuviz summary)",
    )
    p.add_argument(
        "--json-load-files",
        type=int,
        default=0,
        metavar="K",
        help="rank folder: json.load of the first K files only, all files' time estimated",
    )
    a = p.parse_args(argv)
    for item in a.gpuviz_env:
        if "=" not in item:
            p.error(f"--gpuviz-env {item!r}: give VAR=VALUE")
    a.data.mkdir(parents=True, exist_ok=True)
    # Time gpuviz as installed, not compiling itself in every process: this checkout, and any
    # other gpuviz that a contender's PYTHONPATH names.
    others = [
        d
        for item in a.gpuviz_env
        if item.startswith("PYTHONPATH=")
        for d in item.partition("=")[2].split(os.pathsep)
        if d
    ]
    compile_sources(REPO, *others)
    cases = set(a.cases.split(","))
    py = sys.executable
    nocache = gpuviz_env(GPUVIZ_NO_CACHE="1")
    report: dict[str, Any] = {
        "issue": 25,
        "machine": machine(),
        "load_start": load(),
        "command": " ".join([os.path.basename(py), *sys.argv]),
        "cases": {},
    }
    print(f"machine: {report['machine']}\nload: {report['load_start']}")

    if "ranks" in cases:
        folder = gen(
            ["--kernels", str(a.kernels), "--world", str(a.world), "--all-ranks"],
            a.data / f"w{a.world}-k{a.kernels}",
        )
        contenders: dict[str, tuple[list[str], dict[str, str] | None]] = {
            "json.load each": ([py, "-c", JSON_EACH, str(folder)], None),
            "gpuviz summary": ([py, "-m", "gpuviz", "summary", str(folder), "--json"], nocache),
        }
        contenders.update(env_contenders(contenders["gpuviz summary"][0], a.gpuviz_env, nocache))
        files = sorted(folder.glob("*.json"))
        k = a.json_load_files
        if a.skip_json_load:
            del contenders["json.load each"]
        elif k and k < len(files):
            del contenders["json.load each"]
            ref_cmd = [py, "-c", JSON_EACH, str(folder), str(k)]
            contenders = {f"json.load of {k} files": (ref_cmd, None), **contenders}
        if a.limit:
            contenders[f"gpuviz --max-memory {a.limit}"] = (
                [py, "-m", "gpuviz", "summary", str(folder), "--json", "--max-memory", a.limit],
                nocache,
            )
        case = rounds(
            f"rank folder: {a.world} x {a.kernels} kernels, {size_mb(folder):.0f} MB",
            contenders,
            a.repeat,
            next(iter(contenders)),
        )
        case.update(world=a.world, kernels=a.kernels, size_mb=size_mb(folder), limit=a.limit)
        if k and k < len(files) and not a.skip_json_load:
            _estimate_all_files(case, files, k)
        if a.limit:
            limited = case["contenders"][f"gpuviz --max-memory {a.limit}"]
            limited["dropped"] = limited["runs"][0]["stderr"]
        report["cases"]["rank_folder"] = case

    if "startup" in cases:
        one = gen(["--kernels", str(a.startup_kernels)], a.data / f"k{a.startup_kernels}.json")
        summary = [py, "-m", "gpuviz", "summary", str(one), "--json"]
        case = rounds(
            f"start-up: one file of {a.startup_kernels} kernels, {size_mb(one):.0f} MB",
            {
                "python -c json.load": ([py, "-c", JSON_EACH, str(one)], None),
                "gpuviz summary --json": (summary, nocache),
                **env_contenders(summary, a.gpuviz_env, nocache),
            },
            a.repeat,
            "python -c json.load",
        )
        case.update(kernels=a.startup_kernels, size_mb=size_mb(one))
        report["cases"]["startup"] = case

    if "reopen" in cases:
        one = gen(["--kernels", str(a.cache_kernels)], a.data / f"k{a.cache_kernels}.json")
        cache_dir = Path(tempfile.mkdtemp(prefix="gpuviz-bench-cache-"))
        env = gpuviz_env(GPUVIZ_CACHE_DIR=str(cache_dir))
        cmd = [py, "-m", "gpuviz", "summary", str(one), "--json"]
        try:
            case = rounds(
                f"re-open: one file of {a.cache_kernels} kernels, {size_mb(one):.0f} MB",
                {
                    "first open": (cmd, env),
                    "from the cache": (cmd, env),
                    "cache, output not kept": (cmd, env),
                },
                a.repeat,
                "first open",
                before_each={
                    "first open": lambda: shutil.rmtree(cache_dir / "traces", True),
                    "cache, output not kept": lambda: _drop_memos(cache_dir),
                },
            )
        finally:
            shutil.rmtree(cache_dir, ignore_errors=True)
        case.update(kernels=a.cache_kernels, size_mb=size_mb(one))
        report["cases"]["reopen"] = case

    report["load_end"] = load()
    a.out.write_text(json.dumps(report, indent=1))
    print(f"\nwrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
