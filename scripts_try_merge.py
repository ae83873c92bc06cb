import time
from gpuviz.trace.graph_captures import load_with_captures
from gpuviz.analysis.breakdown import breakdown
from gpuviz.analysis.attribution import attribute
from gpuviz.analysis.graph_merge import merge_of
t0=time.time()
tr = load_with_captures("/work/shared/traces/external/tl_vllm_decode_full/graph_execution.json.gz")
print("load", time.time()-t0)
att=attribute(tr)
m=merge_of(att)
print(len(m.kernel), m.graph_kernels, m.grid_mismatches, m.matched_share)
for by in ("op","module","line"):
    t0=time.time()
    b=breakdown(tr, by)
    print(by, time.time()-t0, "unattributed", b.unattributed_device_ns)
    for r in b.rows[:8]:
        print("  ", r.key[:70], r.kind, r.calls, r.device_self_ns, r.device_total_ns, r.extra)
