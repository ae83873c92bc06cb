"""Two runs compared (:mod:`gpuviz.analysis.run_compare`): new findings by level, limits."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from gpuviz.analysis.advisor import Advice, advise
from gpuviz.analysis.run_compare import Limits, compare_runs, regressions
from gpuviz.trace.kineto import load_trace

ADV = Path(__file__).parents[1] / "data" / "advisor"


@pytest.fixture(scope="module")
def host_sync() -> Advice:
    # Two findings: launch_bound (critical) and host_sync (info).
    return advise(load_trace(ADV / "adv_host_sync.json.gz"))


def _with(advice: Advice, **severity: str) -> Advice:
    found = [
        dataclasses.replace(f, severity=severity[f.kind])
        for f in advice.findings
        if f.kind in severity
    ]
    return dataclasses.replace(advice, findings=found)


def test_a_finding_that_grew_past_the_level_is_new_at_that_level(host_sync: Advice) -> None:
    # The syncs come first since their gaps are theirs (issue 47, item 9): a warning there.
    kinds = {f.kind: f.severity for f in host_sync.findings}
    assert kinds == {"launch_bound": "critical", "host_sync": "warning"}
    base = _with(host_sync, launch_bound="critical", host_sync="info")
    new = _with(host_sync, launch_bound="critical", host_sync="critical")
    cmp = compare_runs(base, new)
    assert [f.kind for f in cmp.new_findings("critical")] == ["host_sync"]
    assert [f.kind for f in cmp.new_findings("info")] == []  # both runs have both kinds
    assert cmp.gone_findings() == []
    assert [r.to_json() for r in regressions(cmp, Limits())] == [
        {"what": "finding", "kind": "host_sync"}
    ]


def test_gone_and_unchanged(host_sync: Advice) -> None:
    base = _with(host_sync, launch_bound="critical", host_sync="info")
    new = _with(host_sync, launch_bound="critical")
    cmp = compare_runs(base, new)
    assert [f.kind for f in cmp.gone_findings()] == ["host_sync"]
    assert cmp.new_findings() == []
    assert cmp.step_change == 0.0 and cmp.memory_change is None  # no [memory] events
    assert regressions(cmp, Limits(max_step_regression=0.0)) == []


def test_the_level_must_be_a_severity(host_sync: Advice) -> None:
    with pytest.raises(ValueError, match="level must be one of"):
        compare_runs(host_sync, host_sync).new_findings("fatal")
