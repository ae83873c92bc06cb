"""The time-left estimate of the progress bars: monotone on a steady feed, near-monotone and
close to the truth on a bursty one."""

from __future__ import annotations

import numpy as np
import pytest

from gpuviz.trace.progress_estimate import TimeLeft, describe_time_left

TOTAL_S = 40.0
STEP_S = 0.1


def _feed(fractions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Samples every STEP_S seconds: the times and the estimates (NaN while unknown)."""
    est = TimeLeft()
    times = np.arange(1, len(fractions) + 1) * STEP_S
    out = [est.update(float(f), float(t)) for f, t in zip(fractions, times)]
    return times, np.array([np.nan if v is None else v for v in out])


def _steady() -> np.ndarray:
    return np.arange(1, int(TOTAL_S / STEP_S) + 1) * STEP_S / TOTAL_S


def _bursty() -> np.ndarray:
    """The same job done in bursts: nothing reported for 1.5 s, then 1.5 s of work at once
    (a child's whole-file reply), with the rate also swinging 3x between halves of each 6 s."""
    rng = np.random.default_rng(7)
    t = np.arange(1, int(TOTAL_S / STEP_S) + 1) * STEP_S
    rate = np.where((t % 6.0) < 3.0, 1.5, 0.5) * (1 + 0.2 * rng.standard_normal(t.size))
    done = np.cumsum(np.clip(rate, 0.05, None))
    done = done / done[-1]
    reported = done.copy()
    for i in range(t.size):  # report only at the end of each 1.5 s burst
        reported[i] = done[(int(t[i] / 1.5) * 15) - 1] if t[i] >= 1.5 else 0.0
    reported[-1] = 1.0
    return reported


def test_steady_feed_never_rises_and_is_right() -> None:
    times, est = _feed(_steady())
    known = ~np.isnan(est)
    assert known[int(2.0 / STEP_S) :].all()  # an estimate from 2 s on
    e = est[known]
    assert np.all(np.diff(e) <= 1e-9), "the estimate rose on a steady feed"
    truth = TOTAL_S - times[known]
    assert np.max(np.abs(e - truth)) < 0.05 * TOTAL_S
    assert est[-1] == 0.0


def test_bursty_feed_is_nearly_monotone_and_close() -> None:
    times, est = _feed(_bursty())
    known = ~np.isnan(est)
    e, t = est[known], times[known]
    rises = np.clip(np.diff(e), 0.0, None)
    later = t > 0.25 * TOTAL_S
    # The first figure is low (the job starts in a fast phase) and climbs back in steps;
    # past the first quarter what it climbs in all is small beside the job (a windowed rate
    # climbs by tens of seconds at every stall: the next test).
    assert rises.max() < 0.075 * TOTAL_S, rises.max()
    assert rises[later[1:]].sum() < 0.15 * TOTAL_S, rises[later[1:]].sum()
    assert np.max(np.abs(e[later] - (TOTAL_S - t[later]))) < 0.25 * TOTAL_S
    assert est[-1] == 0.0


def test_bursty_feed_beats_a_windowed_rate() -> None:
    """The smoothing earns its keep: a rate over the last second moves far more."""
    f = _bursty()
    times = np.arange(1, f.size + 1) * STEP_S
    window = int(1.0 / STEP_S)
    naive = []
    for i in range(window, f.size - 1):
        rate = (f[i] - f[i - window]) / (window * STEP_S)
        naive.append((1 - f[i]) / rate if rate > 0 else np.inf)
    naive_arr = np.array(naive)
    naive_rises = np.clip(np.diff(naive_arr[np.isfinite(naive_arr)]), 0, None).sum()
    _, est = _feed(f)
    e = est[~np.isnan(est)]
    assert np.clip(np.diff(e), 0, None).sum() * 10 < naive_rises
    assert times.size == f.size


def test_odd_samples_are_ignored() -> None:
    est = TimeLeft(min_elapsed_s=0.0)
    assert est.update(0.0, 5.0) is None  # no rate yet
    first = est.update(0.5, 5.0)
    assert first == pytest.approx(5.0)
    assert est.update(float("nan"), 6.0) == first
    assert est.left(7.0) == pytest.approx(3.0)
    assert est.update(2.0, 8.0) == 0.0  # clipped to done


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(None, ""), (0.2, "less than a second left"), (12.2, "about 13 s left"),
     (95.0, "about 2 min left"), (61.0, "about 1.5 min left"), (3600.0, "about 60 min left")],
)  # fmt: skip
def test_describe(seconds: float | None, text: str) -> None:
    assert describe_time_left(seconds) == text
