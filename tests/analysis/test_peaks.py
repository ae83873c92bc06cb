"""The table of device peaks: matching real deviceProperties, unknown devices, overrides."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from synthetic_trace import ev, make_trace

from gpuviz.analysis.peaks import (
    TABLE,
    PeakOverride,
    apply_override,
    busiest_devices,
    device_peaks,
    match_device,
)
from gpuviz.trace.kineto import load_trace
from gpuviz.trace.model import Kind

DATA = Path(__file__).parent.parent / "data"
GIB = 2**30


def _props(path: str) -> dict:
    with gzip.open(DATA / path, "rt") as f:
        return json.load(f)["deviceProperties"][0]


@pytest.mark.parametrize(
    ("path", "key"),
    [
        ("advisor/adv_clean.json.gz", "h100-sxm"),  # NVIDIA H100 80GB HBM3
        ("streams_overlap.json.gz", "h200"),  # NVIDIA H200
        ("tl__torch_compile_triton__trace.json.gz", "mi300x"),  # AMD Instinct MI300X
        ("hta__nccl_parser_config__nccl_data.json.gz", "a100-sxm-40"),  # NVIDIA A100-PG509-200
        ("kineto__tb_plugin__resnet50_num_workers_4__worker0.pt.trace.json.gz", "v100-sxm2"),
        ("hta__df_index_resolver__df_index_resolver.json.gz", "v100-sxm2"),
        # ROCm wrote no name: 304 CUs, gfx942, 192 GiB is an MI300X, not a 256 GiB MI325X
        ("tl__inference__vllm_decode_full__graph_execution.json.gz", "mi300x"),
    ],
)
def test_real_device_properties(path: str, key: str) -> None:
    m = match_device(_props(path))
    assert m.peaks is not None, m.reason
    assert m.peaks.key == key


def test_h100_sxm_figures() -> None:
    p = match_device(_props("advisor/adv_clean.json.gz")).peaks
    assert p is not None
    assert (p.bf16_tflops, p.fp16_tflops, p.tf32_tflops, p.fp32_tflops) == (
        989.4,
        989.4,
        494.7,
        66.9,
    )
    assert (p.fp8_tflops, p.bandwidth_tb_s) == (1978.9, 3.35)
    assert p.tflops("bf16") == 989.4 and p.tflops("fp64") is None and p.tflops("other") is None


@pytest.mark.parametrize(
    ("name", "sms", "mem_gib", "key"),
    [
        ("NVIDIA A100-SXM4-80GB", 108, 79.2, "a100-sxm-80"),
        ("NVIDIA A100-SXM4-40GB", 108, 39.4, "a100-sxm-40"),
        ("NVIDIA A100-PCIE-40GB", 108, 39.4, "a100-pcie-40"),
        ("NVIDIA A100 80GB PCIe", 108, 79.2, "a100-pcie-80"),
        ("NVIDIA H100 PCIe", 114, 79.2, "h100-pcie"),
        ("NVIDIA H100 NVL", 132, 93.1, "h100-nvl"),
        ("NVIDIA H200 NVL", 132, 139.8, "h200-nvl"),
        ("NVIDIA B200", 148, 178.4, "b200"),
        ("NVIDIA GB200", 148, 184.0, "gb200"),
        ("NVIDIA L4", 58, 22.0, "l4"),
        ("NVIDIA L40S", 142, 44.4, "l40s"),
        ("NVIDIA L40", 142, 44.4, "l40"),
        ("NVIDIA GeForce RTX 4090", 128, 23.6, "rtx-4090"),
        ("NVIDIA RTX 6000 Ada Generation", 142, 47.5, "rtx-6000-ada"),
        ("AMD Instinct MI250X", 110, 64.0, "mi250x"),
        ("AMD Instinct MI325X", 304, 256.0, "mi325x"),
    ],
)
def test_names_of_each_device(name: str, sms: int, mem_gib: float, key: str) -> None:
    m = match_device({"name": name, "numSms": sms, "totalGlobalMem": int(mem_gib * GIB)})
    assert m.peaks is not None and m.peaks.key == key, m.reason


def test_every_device_the_issue_names_has_dense_figures() -> None:
    keys = {r.peaks.key for r in TABLE}
    wanted = {
        "a100-sxm-40", "a100-sxm-80", "a100-pcie-40", "a100-pcie-80", "h100-sxm", "h100-pcie",
        "h100-nvl", "h200", "b200", "l4", "l40s", "rtx-4090", "rtx-6000-ada", "mi250x", "mi300x",
        "mi325x",
    }  # fmt: skip
    assert wanted <= keys
    for row in TABLE:
        p = row.peaks
        assert p.bandwidth_tb_s and p.fp32_tflops and p.source, p.key
        # a tensor unit is never slower than the CUDA cores, and fp8 doubles fp16 where present
        if p.bf16_tflops:
            assert p.bf16_tflops >= p.fp32_tflops, p.key
        if p.fp8_tflops and p.fp16_tflops:
            assert p.fp8_tflops == pytest.approx(2 * p.fp16_tflops, rel=0.02), p.key


def test_docs_list_every_device() -> None:
    text = (Path(__file__).parent.parent.parent / "docs" / "peaks.md").read_text()
    for row in TABLE:
        assert f"`{row.peaks.key}`" in text, row.peaks.key


def test_unknown_devices_say_why() -> None:
    m = match_device({"name": "Tesla T4", "numSms": 40, "computeMajor": 7, "computeMinor": 5})
    assert m.peaks is None and "unknown device 'Tesla T4'" in m.reason
    # a MIG slice of an H100 does not get the whole GPU's peaks
    m = match_device({"name": "NVIDIA H100 80GB HBM3", "numSms": 16})
    assert m.peaks is None and "16 SMs" in m.reason
    # no name, and SM count and compute capability fit nothing
    m = match_device({"name": "", "numSms": 7, "computeMajor": 1, "computeMinor": 0})
    assert m.peaks is None and "no known device" in m.reason
    m = match_device({})
    assert m.peaks is None and "no device name" in m.reason
    # no name, 132 SMs of compute 9.0 and no memory size: H100, H100 NVL or H200
    m = match_device({"name": "", "numSms": 132, "computeMajor": 9, "computeMinor": 0})
    assert m.peaks is None and "several devices" in m.reason


def test_override() -> None:
    unknown = match_device({"name": "Tesla T4", "numSms": 40})
    m = apply_override(unknown, PeakOverride(peak_tflops=65.0, peak_bandwidth_tb_s=0.32))
    assert m.peaks is not None
    assert m.peaks.tflops("fp16") == 65.0 and m.peaks.tflops("fp32") == 65.0
    assert m.peaks.bandwidth_tb_s == 0.32 and "override" in m.reason
    # an override of the bandwidth alone keeps the matched device's FLOP/s
    h100 = match_device(_props("advisor/adv_clean.json.gz"))
    m = apply_override(h100, PeakOverride(peak_bandwidth_tb_s=3.0))
    assert m.peaks is not None
    assert (m.peaks.bf16_tflops, m.peaks.bandwidth_tb_s) == (989.4, 3.0)
    assert apply_override(h100, None) is h100
    assert apply_override(h100, PeakOverride()) is h100


def test_device_peaks_of_a_trace() -> None:
    m = device_peaks(load_trace(DATA / "advisor" / "adv_clean.json.gz"))
    assert m.peaks is not None and m.peaks.key == "h100-sxm"
    m = device_peaks(load_trace(DATA / "ddp_nccl_4rank"), rank=2)
    assert m.peaks is not None and m.peaks.key == "h200"
    m = device_peaks(load_trace(DATA / "gloo_4rank_cpu"))
    assert m.peaks is None and "deviceProperties" in m.reason
    m = device_peaks(load_trace(DATA / "gloo_4rank_cpu"), override=PeakOverride(peak_tflops=1.0))
    assert m.peaks is not None and m.peaks.tflops("bf16") == 1.0
    m = device_peaks(load_trace(DATA / "advisor" / "adv_clean.json.gz"), rank=5)
    assert m.peaks is None and "no rank 5" in m.reason


def test_each_ranks_busiest_device_is_counted_in_one_pass() -> None:
    # Rank 0: 2 kernels on device 0, 3 copies and sets on device 1; rank 1: device 0 only;
    # rank 2: CPU work only (absent). A tie goes to the lower device.
    K, C, S, OP = Kind.KERNEL, Kind.MEMCPY, Kind.MEMSET, Kind.CPU_OP
    events = [
        ev(K, 0, 1, rank=0, device=0),
        ev(K, 2, 1, rank=0, device=0),
        ev(C, 0, 1, rank=0, device=1),
        ev(S, 2, 1, rank=0, device=1, stream=8),
        ev(K, 4, 1, rank=0, device=1, stream=9),
        ev(K, 0, 1, rank=1, device=0),
        ev(K, 0, 1, rank=1, device=3),
        ev(OP, 0, 1, rank=2),
    ]
    trace = make_trace(events, ranks=[0, 1, 2])
    assert busiest_devices(trace) == {0: 1, 1: 0}
    assert busiest_devices(make_trace([ev(OP, 0, 1)])) == {}


def test_device_peaks_per_rank_agree_with_a_shared_count() -> None:
    trace = load_trace(DATA / "ddp_nccl_4rank")
    busy = busiest_devices(trace)
    for rank in trace.rank_values():
        alone = device_peaks(trace, rank)
        shared = device_peaks(trace, rank, busiest=busy)
        assert alone == shared and alone.peaks is not None


# -- hostile deviceProperties (issue 47, item 20) ------------------------------------------


@pytest.mark.parametrize("mem", [-5, -(2**40), 0, "80GB", True])
def test_a_memory_size_that_is_not_one_is_unknown(mem: object) -> None:
    # a negative totalGlobalMem was shown as "-0 GiB"
    h100 = {"name": "NVIDIA H100 80GB HBM3", "numSms": 132, "computeMajor": 9, "computeMinor": 0}
    m = match_device({**h100, "totalGlobalMem": mem})
    assert m.peaks is not None and m.peaks.key == match_device(h100).peaks.key
    assert "GiB" not in m.reason and "memory size unknown" in m.reason
    odd = match_device({"name": "Weird GPU", "numSms": -3, "totalGlobalMem": mem})
    assert odd.peaks is None
    assert odd.reason == "unknown device 'Weird GPU' (SM count unknown, memory size unknown)"


def test_a_device_listed_twice_is_warned_of_and_read_as_its_first_entry(tmp_path: Path) -> None:
    from gpuviz.analysis.advisor.context import AdviceContext

    src = Path(__file__).parent.parent / "data" / "roofline" / "roofline.json.gz"
    doc = json.loads(gzip.decompress(src.read_bytes()))
    h100 = doc["deviceProperties"][0]
    a100 = {**h100, "name": "NVIDIA A100-SXM4-80GB", "numSms": 108, "computeMajor": 8}
    for first, second in ((h100, a100), (a100, h100)):
        doc["deviceProperties"] = [first, second]
        path = tmp_path / "two.json"
        path.write_text(json.dumps(doc))
        trace = load_trace(path, cache=False)
        assert trace.warnings.samples[0] == (
            f"{path}: deviceProperties lists device 0 2 times "
            f"({first['name']!r}, {second['name']!r}): the first is used"
        )
        # every reader takes the first entry
        assert device_peaks(trace).device_name == first["name"]
        assert AdviceContext(trace).device_properties(-1, 0)["name"] == first["name"]
