"""``gpuviz profile --nproc-per-node N …``: start ``torch.distributed.run`` with N ranks.

torchrun is the distributed engine: this only spares typing ``torchrun --standalone
--nproc-per-node N -m gpuviz profile …``. Every rank runs ``gpuviz profile`` with the same
options and one ``--out`` folder (``./gpuviz-runs/SCRIPT-STAMP/`` by default), where each
writes ``rank-<RANK>.json.gz``; ``gpuviz open`` merges the folder. Multi-node jobs use torchrun
directly (``torchrun --nnodes … -m gpuviz profile --out SHARED/ …``). Once the ranks are done,
the advisor reads the folder and prints its top findings over every rank (a straggler shows
only there), which also puts the folder in the import cache for ``gpuviz open``.

The ranks inherit this process's environment whole (``NCCL_NVLS_ENABLE=0`` and friends stay
set), and on a machine with 2 or more GPUs they also get the NVLink-multicast switches of
:data:`gpuviz.engine.multiprocess.NVLINK_MULTICAST_OFF` where the caller has not set them.
The exit status is torchrun's; Ctrl-C reaches the ranks (the terminal's process group), which
write what they recorded; this process waits for them and returns 130.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from gpuviz.engine.script.options import ProfileOptions, is_trace_file_name, profile_argv
from gpuviz.engine.script.report import job_advice, say
from gpuviz.engine.script.target import resolve_target
from gpuviz.engine.writable import check_file_place, check_out_folder
from gpuviz.errors import BadInputError


def torchrun_command(options: ProfileOptions, nproc: int, out: str) -> list[str]:
    """The command line that starts the ranks."""
    ranks = replace(options, out=out)
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc-per-node={nproc}",
        "-m",
        "gpuviz",
        "profile",
    ]
    if options.events:
        cmd += ["--events", options.events]
    return cmd + profile_argv(ranks)


def _gpu_count() -> int:
    """GPUs on this machine, from NVML (no torch, no CUDA context); 0 when unknown."""
    try:
        import pynvml

        pynvml.nvmlInit()
        try:
            return int(pynvml.nvmlDeviceGetCount())
        finally:
            pynvml.nvmlShutdown()
    except Exception:
        return 0


def run_torchrun(options: ProfileOptions, nproc: int) -> int:
    """Start the ranks and wait for them; returns torchrun's exit status (130 after Ctrl-C).

    Raises
    ------
    BadInputError
        A missing script or module, ``--out`` naming a file, or an ``--out`` or ``--events``
        place that cannot be written.
    """
    from gpuviz.engine.multiprocess import rank_env
    from gpuviz.engine.request import default_trace_path

    if options.out and is_trace_file_name(options.out):
        raise BadInputError(
            f"--out {options.out}: with --nproc-per-node each rank writes its own "
            "rank-N.json.gz: give --out a folder"
        )
    target = resolve_target(options.script, options.module, options.args)  # exit 2 if missing
    out = options.out or str(default_trace_path(target.stem, True, datetime.now()))
    check_out_folder(Path(out), True, "--out" if options.out else "the traces")
    if options.events:  # each rank writes E.rank-R.jsonl beside it
        check_file_place(Path(options.events), "--events", "a file (E.jsonl)")
    env = dict(os.environ)
    env.update(rank_env(env, _gpu_count()))
    pkg_root = str(Path(__file__).resolve().parents[3])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (pkg_root, env.get("PYTHONPATH")) if p)
    cmd = torchrun_command(options, nproc, out)
    say(f"starting {nproc} ranks with torch.distributed.run; traces in {out}/")
    proc = subprocess.Popen(cmd, env=env)
    interrupted = False
    while True:
        try:
            code = proc.wait()
            break
        except KeyboardInterrupt:
            # The ranks got Ctrl-C too (one process group): they are writing their traces.
            interrupted = True
    if Path(out).is_dir() and any(Path(out).glob("rank-*.json.gz")):
        if not interrupted:
            for line in job_advice(out):
                say(line)
        say(f"traces of every rank: {out}  (gpuviz open {out})")
    if interrupted:
        return 130
    return 130 if code == -2 else (code if code >= 0 else 128 - code)


__all__ = ["run_torchrun", "torchrun_command"]
