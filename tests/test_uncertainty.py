"""Measured intervals around register estimates (shaderlint.estimate.uncertainty) and how the report
and the hover show them."""

from __future__ import annotations

import json
import math

import pytest

from shaderlint.estimate import uncertainty
from shaderlint.report import main as report_main

TABLE = {
    "bands": [["<=32", 0, 32], ["33-64", 33, 64], ["65-128", 65, 128], [">128", 129, 10 ** 9]],
    "measured_on": "a test table",
    "languages": {"cuda": {"archs": {"sm_80": {
        "quantiles": {"<=32": {"kernels": 400, "q10": -0.25, "q50": 0.1, "q90": 0.6},
                      "33-64": {"kernels": 120, "q10": -0.1, "q50": 0.2, "q90": 0.9},
                      "65-128": {"kernels": 5, "q10": 0.3, "q50": 0.5, "q90": 0.7}},
        "coverage_lopo": 0.78}}}},
}


@pytest.fixture
def table(monkeypatch):
    monkeypatch.setattr(uncertainty, "_table", lambda: TABLE)
    return TABLE


def test_interval_is_the_measured_quantiles_around_the_estimate(table):
    iv = uncertainty.register_interval("cuda", "sm_80", 20)
    assert (iv.low, iv.high) == (math.floor(20 * math.exp(-0.25)), math.ceil(20 * math.exp(0.6))) == (15, 37)
    assert iv.coverage == 0.78 and iv.kernels == 400
    iv = uncertainty.register_interval("cuda", "sm_80", 40)
    assert (iv.low, iv.high) == (36, 99)


def test_no_interval_where_nothing_was_measured(table):
    assert uncertainty.register_interval("cuda", "sm_80", 100) is None  # 5 kernels in that band: noise
    assert uncertainty.register_interval("cuda", "sm_80", 200) is None  # no row for the band
    assert uncertainty.register_interval("cuda", "sm_75", 20) is None  # architecture not measured
    assert uncertainty.register_interval("metal", "apple-m1", 20) is None
    assert uncertainty.register_interval("glsl", "generic-32", 20) is None
    assert uncertainty.register_interval("cuda", "sm_80", None) is None
    assert uncertainty.measured_for("cuda", "sm_80") and not uncertainty.measured_for("metal", "apple-m1")


def test_unreadable_table_gives_no_interval(monkeypatch):
    monkeypatch.setattr(uncertainty, "_table", lambda: {})
    assert uncertainty.register_interval("cuda", "sm_80", 20) is None


def test_shipped_table_is_a_real_code_measurement():
    """The shipped file comes from bench/calibrate.py --realcode --write-intervals: both measured
    architectures, every band with its kernel count, a leave-one-project-out coverage."""
    with open(uncertainty._PATH, encoding="utf-8") as fh:
        doc = json.load(fh)
    archs = doc["languages"]["cuda"]["archs"]
    assert set(archs) >= {"sm_80", "sm_90"}
    for a in archs.values():
        assert 0 < a["coverage_lopo"] <= 1
        for q in a["quantiles"].values():
            assert q["kernels"] > 0 and q["q10"] <= q["q50"] <= q["q90"]
    assert "real-code corpus" in doc["measured_on"]


KERNEL = """
__global__ void __launch_bounds__(256) scale(float* out, const float* in, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * in[i] + 1.0f;
}
"""


def test_report_shows_the_interval_and_the_occupancy_range(table, tmp_path, capsys):
    p = tmp_path / "k.cu"
    p.write_text(KERNEL)
    assert report_main([str(p), "--format", "json", "--target", "sm_80", "--compiler", "none"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    iv = uncertainty.register_interval("cuda", "sm_80", row["registers"])
    assert row["registers_interval"] == [iv.low, iv.high]
    occ = row["occupancy_interval"]
    assert occ is None or 0 < occ[0] < occ[1] <= 1
    assert report_main([str(p), "--target", "sm_80", "--compiler", "none"]) == 0
    out = capsys.readouterr().out
    assert f"~{row['registers']} ({iv.low}–{iv.high})" in out
    assert "8 in 10 real kernels" in out


def test_report_says_where_the_error_is_not_measured(table, tmp_path, capsys):
    p = tmp_path / "k.cu"
    p.write_text(KERNEL)
    assert report_main([str(p), "--format", "json", "--target", "sm_75", "--compiler", "none"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["registers_interval"] is None and row["occupancy_interval"] is None
    assert report_main([str(p), "--target", "sm_75", "--compiler", "none"]) == 0
    out = capsys.readouterr().out
    assert "not measured for cuda on sm_75" in out
