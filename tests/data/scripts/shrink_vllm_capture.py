"""Shrink vLLM's graph-capture trace (TraceLens tests/traces/inference/vllm_decode_full) for
tests/data/graphs: keep the capture window's ops, ranges and runtime calls, and only the Python
frames that enclose a launch call inside it (the stacks the merge reads); drop the rest.

    python tests/data/scripts/shrink_vllm_capture.py SRC_DIR OUT_DIR
"""

from __future__ import annotations

import bisect
import gzip
import json
import shutil
import sys
from pathlib import Path


def main(src: Path, out: Path) -> None:
    (out / "capture_traces").mkdir(parents=True, exist_ok=True)
    shutil.copy(src / "graph_execution.json.gz", out / "graph_execution.json.gz")
    details = json.loads((src / "capture_traces" / "execution_details.json").read_text())
    name = details[0]["file"]
    d = json.load(gzip.open(src / "capture_traces" / name))
    ev = d["traceEvents"]
    begin = min(e["ts"] for e in ev if e.get("name", "").endswith("StreamBeginCapture"))
    end = max(e["ts"] for e in ev if e.get("name", "").endswith("StreamEndCapture"))
    launches = sorted(
        e["ts"]
        for e in ev
        if e.get("cat") == "cuda_runtime" and "Launch" in e["name"] and begin <= e["ts"] <= end
    )
    keep = []
    for e in ev:
        cat, ts = e.get("cat"), e.get("ts")
        if e.get("ph") == "M" or cat == "Trace":
            keep.append(e)
        elif cat == "python_function":
            lo = bisect.bisect_left(launches, ts)
            if lo < len(launches) and launches[lo] <= ts + e["dur"]:
                keep.append(e)  # encloses a launch of the capture
        elif cat in ("cpu_op", "user_annotation", "cuda_runtime", "gpu_user_annotation"):
            if ts + e.get("dur", 0) >= begin and ts <= end:
                keep.append(e)
    d["traceEvents"] = keep
    with gzip.open(out / "capture_traces" / name, "wt") as f:
        json.dump(d, f)
    (out / "capture_traces" / "execution_details.json").write_text(json.dumps(details))


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
