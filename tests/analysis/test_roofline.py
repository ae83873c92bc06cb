"""Roofline arithmetic: achieved TFLOP/s, intensity, ridge, bound, roof share and MFU."""

from __future__ import annotations

import numpy as np
import pytest

from gpuviz.analysis.roofline import (
    achieved_tb_s,
    achieved_tflops,
    bound,
    dominant_precision,
    flops_by_precision,
    intensity,
    mfu,
    ridge_point,
    roof_share,
    roof_tflops,
    step_mfu,
    tf32_if_faster,
)

H100_BF16, H100_BW = 989.4, 3.35


def test_achieved_tflops() -> None:
    # 2·8192³ FLOPs in 1.25 ms: 879.6 TFLOP/s
    flops = 2 * 8192**3
    assert achieved_tflops(flops, 1_250_000) == pytest.approx(flops / 1.25e-3 / 1e12)
    out = achieved_tflops([1e12, np.nan, 1e12], [1e9, 1e9, 0])
    assert out[0] == pytest.approx(1.0)
    assert np.isnan(out[1]) and np.isnan(out[2])
    assert achieved_tb_s(3.35e9, 1e6) == pytest.approx(3.35)


def test_intensity_and_ridge() -> None:
    assert intensity(100.0, 50.0) == pytest.approx(2.0)
    assert np.isnan(intensity(100.0, 0.0)) and np.isnan(intensity(np.nan, 8.0))
    assert ridge_point(H100_BF16, H100_BW) == pytest.approx(295.34, abs=0.01)
    with pytest.raises(ValueError, match="positive"):
        ridge_point(0.0, 1.0)


def test_roof_bound_and_share() -> None:
    i = np.array([0.25, 295.0, 296.0, 5000.0, np.nan])
    roof = roof_tflops(i, H100_BF16, H100_BW)
    assert roof[0] == pytest.approx(0.25 * 3.35)
    assert roof[3] == pytest.approx(H100_BF16)
    assert list(bound(i, H100_BF16, H100_BW)) == ["memory", "memory", "compute", "compute", None]
    share = roof_share([0.5, 700.0, np.nan, 989.4, 1.0], i, H100_BF16, H100_BW)
    assert share[0] == pytest.approx(0.5 / (0.25 * 3.35))
    assert share[1] == pytest.approx(700.0 / (295.0 * 3.35))
    assert share[3] == pytest.approx(1.0)
    assert np.isnan(share[2]) and np.isnan(share[4])


def test_mfu() -> None:
    # a 10 ms step doing 4.947 PFLOP... of bf16 on an H100: half the peak
    assert mfu(0.5 * 989.4e12 * 0.010, 10e6, 989.4) == pytest.approx(0.5)
    assert mfu(1e12, 10e6, None) is None and mfu(1e12, 0, 989.4) is None


def test_step_mfu_uses_the_precision_doing_most_flops() -> None:
    flops = np.array([6e12, 1e12, np.nan, 2e12])
    prec = np.array(["bf16", "fp32", "bf16", "fp32"], dtype=object)
    assert flops_by_precision(flops, prec) == {"bf16": 6e12, "fp32": 3e12}
    assert dominant_precision({"bf16": 6e12, "fp32": 3e12}) == "bf16"
    assert dominant_precision({}) is None
    peaks = {"bf16": 989.4, "fp32": 66.9}
    s = step_mfu(flops, prec, 20e6, peaks.get)
    assert s.flops == 9e12 and s.precision == "bf16" and s.peak_tflops == 989.4
    assert s.mfu == pytest.approx(9e12 / (20e-3 * 989.4e12))
    none = step_mfu([np.nan], ["bf16"], 1e6, peaks.get)
    assert (none.flops, none.precision, none.mfu) == (0.0, None, None)


def test_tf32_if_faster() -> None:
    # an fp32 GEMM at 400 TFLOP/s on an H100 (fp32 peak 66.9) ran on TF32 tensor cores
    assert tf32_if_faster("fp32", 400.0, 66.9) == "tf32"
    assert tf32_if_faster("fp32", 50.0, 66.9) == "fp32"
    assert tf32_if_faster("fp32", 68.0, 66.9) == "fp32"  # within the margin
    assert tf32_if_faster("bf16", 400.0, 66.9) == "bf16"
    assert tf32_if_faster("fp32", float("nan"), 66.9) == "fp32"
    assert tf32_if_faster("fp32", 400.0, None) == "fp32"


def test_absurd_figures_raise_no_numpy_warning_and_give_nan() -> None:
    # issue 47, item 19: figures from a file (1e308 FLOPs) or an option (a 5e-324 peak)
    # overflowed with a RuntimeWarning; made errors here, none may be raised, and what
    # overflows is unknown (NaN / None), never inf
    import warnings

    from gpuviz.analysis import roofline as rf

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isnan(rf.achieved_tflops([1e308], [1e-300])).all()
        assert np.isnan(rf.intensity([1e308], [1e-300])).all()
        assert rf.roof_tflops([1e308], 1e5, 1e3).tolist() == [1e5]
        assert np.isnan(rf.roof_share([1e300], [1e-300], 1e-3, 1e-3)).all()
        assert rf.roof_share([2.0], [1e308], 4.0, 1e3).tolist() == [0.5]
        assert rf.flops_by_precision([1e308, 1e308], ["bf16", "bf16"]) == {"bf16": float("inf")}
        assert rf.mfu(1e308, 1e-300, 1e-3) is None
        assert rf.mfu(1.0, 1.0, 5e-324) is None  # the product underflows to 0
        assert rf.mfu(2e9, 1e6, 1.0) == 2.0
