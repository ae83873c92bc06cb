"""A hand-made compiled model: a Kineto trace of one compiled graph's range and the
compile-info folder of that graph, in the form Inductor writes for Triton (CUDA) code.

Model (nn_module_stack): ``blocks.0`` (Block) > ``mlp`` (Mlp) > ``fc`` (Linear), the same for
``blocks.1``. The graph calls, in order: the gelu kernel for block 0, an mm for block 0's fc,
the same gelu kernel for block 1, an mm for block 1's fc. Kernel times (µs) are set here, and
are the truth the tests compare with: block 0 has 10 + 40, block 1 has 7 + 25.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.analysis.synthetic_trace import k_annotation, k_kernel, k_launch, k_op, k_py

GELU = "triton_poi_fused_gelu_0"
GELU_HASH = "cgelu0hashxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
KEY = "fkeyabc"
DUR = {"gelu0": 10, "mm0": 40, "gelu1": 7, "mm1": 25}
MODEL = "/home/user/proj/model.py"
#: (64 x 64) @ (64 x 64) in bf16: 2 * 64^3 = 524288 FLOPs a GEMM, by hand.
MM_ARGS = {
    "Input Dims": [[64, 64], [64, 64]],
    "Input type": ["c10::BFloat16", "c10::BFloat16"],
}
MM_FLOPS = 2 * 64**3
#: The gelu kernel fuses one aten.mul node (and an erf, which has no FLOP formula) of a 64 x 64
#: output: one FLOP per element, 4096, by hand (issue 49: FLOPs of the nodes a kernel fuses).
GELU_FLOPS = 64 * 64

OUTPUT_CODE = f'''# AOT ID: ['0_forward']
from torch._inductor.async_compile import AsyncCompile
async_compile = AsyncCompile()


# kernel path: /tmp/torchinductor_user/ge/{GELU_HASH}.py
# Topologically Sorted Source Nodes: [gelu], Original ATen: [aten.gelu]
# Source node to ATen node mapping:
#   gelu => add, erf, mul, mul_1, mul_2
{GELU} = async_compile.triton('{GELU}', """
import triton
# a comment inside the kernel's source
@triton.jit
def {GELU}(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):
    pass
""", device_str='cuda')


async_compile.wait(globals())
del async_compile

class Runner:
    def call(self, args):
        primals_1, primals_2, primals_3 = args
        # Topologically Sorted Source Nodes: [gelu], Original ATen: [aten.gelu]
        # [Provenance debug handles] {GELU}:1
        stream0 = get_raw_stream(0)
        {GELU}.run(primals_1, buf0, 4096, stream=stream0)
        # Topologically Sorted Source Nodes: [linear], Original ATen: [aten.mm]
        # [Provenance debug handles] extern_kernels.mm:2
        extern_kernels.mm(buf0, primals_2, out=buf1)
        # Topologically Sorted Source Nodes: [gelu_1], Original ATen: [aten.gelu]
        # [Provenance debug handles] {GELU}:3
        {GELU}.run(buf1, buf2, 4096, stream=stream0)
        # Topologically Sorted Source Nodes: [linear_1], Original ATen: [aten.mm]
        # [Provenance debug handles] extern_kernels.mm:4
        extern_kernels.mm(buf2, primals_3, out=buf3)
        return (buf3, )
'''


def _node(modules: list[list[str]], target: str, line: int) -> dict[str, Any]:
    return {
        "target": target,
        "modules": modules,
        "backward": False,
        "stack": [[MODEL, line, "forward"]],
        "shape": [64, 64],
        "dtype": "torch.bfloat16",
    }


def write_compile_info(folder: Path) -> Path:
    """The compile-info folder of the graph (one forward graph)."""
    g = folder / "torchinductor" / "model__0_forward_1.0"
    g.mkdir(parents=True)
    (g / "output_code.py").write_text(OUTPUT_CODE)
    b0 = [["L['self'].blocks.0", "Block"], ["L['self'].blocks.0.mlp", "Mlp"]]
    b1 = [["L['self'].blocks.1", "Block"], ["L['self'].blocks.1.mlp", "Mlp"]]
    fc0 = [*b0, ["L['self'].blocks.0.mlp.fc", "Linear"]]
    fc1 = [*b1, ["L['self'].blocks.1.mlp.fc", "Linear"]]
    nodes = {
        "mul": _node(b0, "aten.mul.Tensor", 6),
        "erf": _node(b0, "aten.erf.default", 6),
        "view": _node(fc0, "aten.view.default", 5),
        "mm": _node(fc0, "aten.mm.default", 5),
        "mul_3": _node(b1, "aten.mul.Tensor", 6),
        "erf_1": _node(b1, "aten.erf.default", 6),
        "mm_1": _node(fc1, "aten.mm.default", 5),
    }
    (g / "gpuviz_nodes.json").write_text(json.dumps({"version": 1, "nodes": nodes}))
    kernels = {
        f"{GELU}:1": ["mul", "erf"],
        "extern_kernels.mm:2": ["mm"],
        f"{GELU}:3": ["mul_3", "erf_1"],
        "extern_kernels.mm:4": ["mm_1"],
    }
    (g / "gpuviz_kernels.json").write_text(json.dumps({"version": 1, "kernels": kernels}))
    return folder


def events() -> list[dict[str, Any]]:
    """One call of the compiled model: ``train.py(10)`` > ``nn.Module: OptimizedModule_0`` >
    ``nn.Module: Tiny_0`` > ``Torch-Compiled Region`` > the graph's range > its ops."""
    ev: list[dict[str, Any]] = [
        k_py("train.py(10): <module>", 0, 1000),
        k_py("nn.Module: OptimizedModule_0", 10, 900),
        k_py("nn.Module: Tiny_0", 20, 800),
        k_op("Torch-Compiled Region: 0/0", 30, 700),
        k_annotation(f"## Call CompiledFxGraph {KEY} ##", 40, 600),
    ]
    calls = [
        (GELU, "gelu0", 50, {"kernel_hash": GELU_HASH, "kernel_backend": "triton"}),
        ("aten::mm", "mm0", 100, MM_ARGS),
        ("aten::empty_strided", None, 140, {}),  # a buffer: not a call of the graph
        (GELU, "gelu1", 150, {"kernel_hash": GELU_HASH, "kernel_backend": "triton"}),
        ("aten::mm", "mm1", 210, MM_ARGS),
    ]
    for corr, (name, what, ts, args) in enumerate(calls, start=1):
        ev.append(k_op(name, ts, 30, **args))
        if what is not None:
            ev.append(k_launch(ts + 5, corr=corr))
            ev.append(
                k_kernel(
                    name if what.startswith("gelu") else "nvjet_gemm",
                    300 + ts,
                    DUR[what],
                    corr=corr,
                )
            )
    return ev
