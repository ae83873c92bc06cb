"""Check ``--memory-snapshot`` on a CUDA machine: a normal run, and a run that runs out of memory.

    PYTHONPATH=. python scripts/gpu/check_memory_snapshot.py OUT_DIR

Writes into OUT_DIR (at most 6 files, all small):

- ``train.json.gz`` + ``train.memory.pickle``: ``gpuviz run training --memory-snapshot``;
- ``oom.memory.pickle``: a user workload that asks for more than the GPU has, recorded with
  ``--memory-snapshot`` (the run fails; the snapshot must exist, with an ``oom`` entry);
- ``report.json``: what each step found (exit codes, ``gpuviz memory --json`` figures of both
  snapshots, and torch's own ``max_memory_allocated`` of a replay in this process), and ``ok``.

Exit status 0 when every check passed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

OOM_WORKLOAD = textwrap.dedent(
    """
    import torch

    def grab(device, gib: int = 1 << 14):
        keep = torch.empty(256 << 20, dtype=torch.uint8, device=device)
        return keep, torch.empty(gib << 30, dtype=torch.uint8, device=device)
    """
)


def _gpuviz(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=os.environ.get("PYTHONPATH", "."))
    return subprocess.run(
        [sys.executable, "-m", "gpuviz", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )


def main() -> int:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "memory-check")
    out.mkdir(parents=True, exist_ok=True)
    report: dict = {"checks": {}}
    checks = report["checks"]

    # 1. a training run with the snapshot beside its trace
    train = out / "train.json.gz"
    r = _gpuviz(
        "run",
        "training",
        "--device",
        "cuda",
        "--steps",
        "2",
        "--memory-snapshot",
        "--out",
        str(train),
        "--json",
    )
    report["train_run"] = {"rc": r.returncode, "stderr_tail": r.stderr[-1500:]}
    snap = out / "train.memory.pickle"
    checks["train snapshot written"] = r.returncode == 0 and snap.is_file()
    if snap.is_file():
        m = _gpuviz("memory", str(snap), "--json")
        report["train_memory"] = json.loads(m.stdout) if m.returncode == 0 else m.stderr
        devs = report["train_memory"]["devices"] if m.returncode == 0 else []
        checks["train figures"] = bool(devs) and devs[0]["peak_allocated_bytes"] > 0
        checks["train sites name the workload"] = bool(devs) and any(
            "workloads" in s.get("filename", "") for s in devs[0]["top_sites_at_peak"]
        )

    # 2. out of memory: the snapshot is written at the failure
    src = out / "oom_workload.py"
    src.write_text(OOM_WORKLOAD)
    oom_trace = out / "oom.json.gz"
    r = _gpuviz(
        "run",
        f"{src}:grab",
        "--device",
        "cuda",
        "--steps",
        "1",
        "--memory-snapshot",
        "--out",
        str(oom_trace),
    )
    report["oom_run"] = {"rc": r.returncode, "stderr_tail": r.stderr[-1500:]}
    oom_snap = out / "oom.memory.pickle"
    checks["oom run failed with exit 1"] = r.returncode == 1
    checks["oom snapshot written"] = oom_snap.is_file()
    checks["oom snapshot named on stderr"] = "memory snapshot at the failure" in r.stderr
    if oom_snap.is_file():
        m = _gpuviz("memory", str(oom_snap), "--json")
        report["oom_memory"] = json.loads(m.stdout) if m.returncode == 0 else m.stderr
        devs = report["oom_memory"]["devices"] if m.returncode == 0 else []
        checks["oom entry found"] = bool(devs) and devs[0]["oom"] is not None
        checks["oom request is 16 TiB"] = bool(devs) and devs[0]["oom"]["request_bytes"] == 16 << 40
    src.unlink()

    report["ok"] = all(checks.values())
    (out / "report.json").write_text(json.dumps(report, indent=1))
    for name, ok in checks.items():
        print(f"{'ok  ' if ok else 'FAIL'} {name}")
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
