"""The pure parts of bench/calibrate.py --realcode (bench/realcode_calibration.py, bench/realcode_nvcc.py):
matching ptxas's kernels to the model's, the leave-one-project-out split and fits, band metrics,
residual intervals, include flags. No nvcc, no corpus."""

from __future__ import annotations

import importlib.util
import math
import os
import sys
from types import SimpleNamespace

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "bench")


def _load(name: str):
    if BENCH not in sys.path:
        sys.path.insert(0, BENCH)
    spec = importlib.util.spec_from_file_location(name, os.path.join(BENCH, name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


rc = _load("realcode_calibration")
nv = _load("realcode_nvcc")


# ---- matching --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("arg, want", [
    ("4", "4"), ("4u", "4"), ("128ul", "128"), ("(ggml_type)2", "2"), ("(char)-1", "-1"),
    ("float", "float"), ("true", "true"), ("c10::Half", "c10::Half"),
    ("&_INTERNAL_ea5b8fe6_8_unary_cu_eb6d5366::op_cos", "op_cos"), ("&ns::relu", "ns::relu"),
])
def test_normalize_arg_writes_demangled_constants_as_source_does(arg, want):
    assert rc.normalize_arg(arg) == want


def test_template_args_of_an_instance():
    assert rc.template_args("void ns::tile<8, float, (ggml_type)3>(float*, int)", "tile") == ["8", "float", "3"]
    assert rc.template_args("void k<foo<int, 2>, 4u>(int)", "k") == ["foo<int, 2>", "4"]
    assert rc.template_args("axpy(float, float const*, float*, int)", "axpy") is None


def test_param_count():
    assert rc.param_count("void k<4>(float*, std::pair<int, int>, int)") == 3
    assert rc.param_count("k()") == 0
    assert rc.param_count("k(void)") == 0
    assert rc.param_count("_Z1kv") is None


def _fn(name, nparams, body=True, tparams=()):
    return SimpleNamespace(name=name, params=[object()] * nparams, body=object() if body else None,
                           template_params={p: None for p in tparams})


def test_match_kernel_by_name_then_parameter_count():
    a, b, c = _fn("k", 1), _fn("k", 2), _fn("other", 1)
    assert rc.match_kernel([a, b, c], "k", "k(float*, int)") == (b, None)
    assert rc.match_kernel([a, b, c], "k", "k(float*)") == (a, None)
    assert rc.match_kernel([a, b, c], "other", "other(int)") == (c, None)
    assert rc.match_kernel([a, b, c], "missing", "missing(int)") == (None, rc.NOT_IN_FILE)
    assert rc.match_kernel([a, _fn("k", 1)], "k", "k(int)") == (None, rc.AMBIGUOUS)
    assert rc.match_kernel([_fn("k", 1, body=False)], "k", "k(int)") == (None, rc.NO_BODY)


def test_bindings_only_when_the_counts_agree():
    f = _fn("k", 1, tparams=("T", "N"))
    assert rc.bindings_for(f, ["float", "4"]) == {"T": "float", "N": "4"}
    assert rc.bindings_for(f, ["float"]) is None
    assert rc.bindings_for(f, None) is None


def test_matching_on_a_parsed_cuda_file():
    from shaderlint.languages import FRONT_ENDS
    from shaderlint.model.build import build_model
    from shaderlint.model.source import Source

    text = b"""
template <typename T, int N> __global__ void tile(T *x, int n) { if (threadIdx.x < N) x[threadIdx.x] = 0; }
__global__ void over(float *x) { x[0] = 1.0f; }
__global__ void over(float *x, int n) { x[n] = 1.0f; }
"""
    model = build_model(FRONT_ENDS["cuda"].parse(Source("t.cu", text)))
    fs = [f for f in model.kernels if f.is_device_code]
    f, why = rc.match_kernel(fs, "tile", "void tile<float, 4>(float*, int)")
    assert why is None and f.name == "tile"
    assert rc.bindings_for(f, rc.template_args("void tile<float, 4>(float*, int)", "tile")) == {"T": "float", "N": "4"}
    g, _ = rc.match_kernel(fs, "over", "over(float*, int)")
    assert len(g.params) == 2
    assert rc.kernel_lines(text, f.node.start_byte, f.node.end_byte) == 1


# ---- the register formula ------------------------------------------------------------------------------
def test_registers_from_applies_floor_stack_term_and_cap():
    assert rc.registers_from(2.0, False, 255, base=4, scale=1, floor=8, stack_array=16) == 8
    assert rc.registers_from(20.2, False, 255, base=4, scale=1, floor=8, stack_array=16) == 25
    assert rc.registers_from(20.0, True, 255, base=4, scale=1, floor=8, stack_array=16) == 40
    assert rc.registers_from(300.0, False, 255, base=4, scale=1, floor=8, stack_array=16) == 255
    assert rc.registers_from(10.0, False, 64, base=4, scale=1.5, floor=4, stack_array=16) == 19


def test_on_stack_read_back_from_an_estimate():
    c = SimpleNamespace(base=4.0, scale=1.0, floor=8.0, stack_array=16.0)
    e = SimpleNamespace(peak=20.0, register_cap=255, registers_exact=40.0, stack_arrays={"a": 64})
    assert rc._on_stack(e, c) is True
    e = SimpleNamespace(peak=20.0, register_cap=255, registers_exact=24.0, stack_arrays={})
    assert rc._on_stack(e, c) is False


def test_bands():
    assert [rc.band_of(x) for x in (8, 32, 33, 64, 65, 128, 129, 255)] == \
        ["<=32", "<=32", "33-64", "33-64", "65-128", "65-128", ">128", ">128"]


# ---- metrics --------------------------------------------------------------------------------------------
def test_metrics_overall_and_per_band():
    est = [10, 40, 100, 100]
    real = [10, 50, 80, 200]
    m = rc.metrics(est, real)
    assert m["kernels"] == 4
    assert m["median_ape"] == pytest.approx((0.2 + 0.25) / 2)
    assert m["within_25"] == 0.75
    assert m["under"] == 0.5 and m["over"] == 0.25
    assert m["bands"]["<=32"]["median_ape"] == 0
    assert m["bands"]["33-64"]["median_signed"] == pytest.approx(-0.2)
    assert m["bands"]["65-128"]["median_signed"] == pytest.approx(0.25)
    assert m["bands"][">128"]["under"] == 1.0
    assert m["spearman"] == pytest.approx(rc.spearman(est, real))
    assert rc.spearman([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)


def test_lopo_groups_hold_each_package_out_of_its_own_training_set():
    pk = ["a", "b", "a", "c"]
    groups = rc.lopo_groups(pk)
    assert [g[0] for g in groups] == ["a", "b", "c"]
    for name, train, held in groups:
        assert all(pk[i] == name for i in held)
        assert all(pk[i] != name for i in train)
        assert sorted(train + held) == [0, 1, 2, 3]


def _rows():
    rows = []
    for pkg, scale in (("a", 1.0), ("b", 1.1), ("c", 0.9)):
        for n in (10, 20, 40, 80, 160):
            regs = round(scale * 4 * n ** 0.5)
            peak = regs - 4
            rows.append({"package": pkg, "lines": n, "registers": regs, "cap": 255,
                         "walks": {rc.walk_key(w): [peak * (1 + 0.1 * (w["hoist"] - 3)), False]
                                   for w in rc.combos()}})
    return rows


def test_lopo_loc_prediction_ignores_the_held_out_package():
    rows = _rows()
    before = rc.lopo_loc(rows)
    changed = [dict(r, registers=r["registers"] * 7) if r["package"] == "b" else r for r in rows]
    after = rc.lopo_loc(changed)
    for i, r in enumerate(rows):
        if r["package"] == "b":
            assert after[i] == pytest.approx(before[i])
        else:
            assert after[i] != pytest.approx(before[i])


def test_fit_loc_recovers_a_power_law():
    a, b = rc.fit_loc([10, 100, 1000], [8 * 10 ** 0.5, 8 * 100 ** 0.5, 8 * 1000 ** 0.5])
    assert b == pytest.approx(0.5)
    assert math.exp(a) == pytest.approx(8)


def test_lopo_fit_chooses_on_the_other_packages_only():
    grid = [{"hoist": 3, "batch": 1.0, "stream": 1.0, "base": base, "scale": 1.0, "floor": 8.0, "stack_array": 16.0}
            for base in (3.0, 4.0, 6.0)]
    rows = _rows()
    pred, chosen = rc.lopo_fit(rows, grid)
    assert set(chosen) == {"a", "b", "c"}
    # the held-out package's own numbers cannot change its prediction
    changed = [dict(r, registers=r["registers"] * 3) if r["package"] == "a" else r for r in rows]
    pred2, chosen2 = rc.lopo_fit(changed, grid)
    assert chosen2["a"] == chosen["a"]
    assert [p for p, r in zip(pred2, rows) if r["package"] == "a"] == \
        [p for p, r in zip(pred, rows) if r["package"] == "a"]
    assert rc.best_fit(rows, grid) in grid


def test_residual_quantiles_by_estimate_band_and_interval():
    est = [20.0] * 10 + [100.0] * 10
    real = [20.0 * (1 + i / 10) for i in range(10)] + [100.0] * 10
    q = rc.residual_quantiles(est, real)
    assert set(q) == {"<=32", "65-128"}
    assert q["<=32"]["kernels"] == 10
    assert q["<=32"]["q10"] < q["<=32"]["q50"] < q["<=32"]["q90"]
    assert q["65-128"]["q10"] == q["65-128"]["q90"] == 0.0
    lo, hi = rc.interval(20.0, q)
    assert lo >= 20.0 and hi <= 40.0
    assert rc.interval(50.0, q) is None  # no band 33-64 measured: no interval


def test_lopo_coverage_counts_held_out_kernels():
    rows = [{"package": p, "registers": r} for p in "abc" for r in (10, 12, 14, 16, 18)]
    est = [14.0] * len(rows)
    cov = rc.lopo_coverage(rows, est, min_kernels=5)
    assert cov["kernels"] == 15
    assert 0.0 < cov["coverage"] <= 1.0
    assert rc.lopo_coverage(rows, est)["kernels"] == 0  # 10 training kernels: the report shows no interval
    # a floor (~N+: the report shows no interval) neither trains nor is judged
    rows[0]["estimator_unseen"] = ["func"]
    assert rc.lopo_coverage(rows, est, min_kernels=5)["kernels"] == 14
    assert rc.lopo_intervals(rows, est, min_kernels=5)[0] is None


def test_lopo_intervals_come_from_the_other_packages_and_need_enough_kernels():
    # package a's estimates are all 2x low, b's and c's exact: a's interval is built from b and c only,
    # so it is exactly its estimate (and misses), while b's includes a's residuals
    rows = [{"package": p, "registers": (2 * r if p == "a" else r)} for p in "abc" for r in (10, 12, 14, 16, 18)]
    est = [float(r) for p in "abc" for r in (10, 12, 14, 16, 18)]
    iv = rc.lopo_intervals(rows, est, min_kernels=5)
    assert iv[0] == (10, 10)
    assert iv[5][0] <= 10 and iv[5][1] > 10
    assert rc.lopo_intervals(rows, est, min_kernels=11) == [None] * 15  # 10 training kernels per band


def test_occupancy_range_contains_what_the_point_misses():
    # 256 threads on sm_80: 64 registers give 50 %, 32 give 100 %; the estimate says 32 (100 %), ptxas 64
    row = {"package": "a", "arch": "sm_80", "threads": 256, "registers": 64, "estimate": 32.0,
           "shared_bytes": 0, "dynamic_shared": 0, "estimated_shared": 0, "estimated_occupancy": 1.0}
    no_range = rc.occupancy_check([row], None, [None])
    assert no_range["shown_agrees"] == 0.0 and no_range["shown_or_range_agrees"] == 0.0
    ranged = rc.occupancy_check([row], None, [(30, 70)])
    assert ranged["shown_agrees"] == 0.0 and ranged["shown_or_range_agrees"] == 1.0
    assert ranged["shown_as_range"] == 1.0 and ranged["range_width_median"] > 0.4
    assert rc.occupancy_check([row], None, [(30, 40)])["shown_or_range_agrees"] == 0.0  # range misses it
    assert rc.occupancy_check([row])["shown_or_range_agrees"] is None  # no intervals asked for


# ---- nvcc flags and the cache -------------------------------------------------------------------------
def test_flags_for_walks_up_to_the_package_root(tmp_path):
    src = tmp_path / "src"
    pkg = src / "vllm-0.33.0"
    (pkg / "csrc" / "attention").mkdir(parents=True)
    (pkg / "include").mkdir()
    f = pkg / "csrc" / "attention" / "k.cu"
    f.write_text("__global__ void k() {}\n")
    flags = nv.flags_for(str(f), str(src))
    incs = [x[2:] for x in flags if x.startswith("-I")]
    assert incs[0] == str(f.parent)
    assert str(pkg / "csrc") in incs and str(pkg / "include") in incs and str(pkg) in incs
    assert str(tmp_path) not in incs and str(src) not in incs  # never above the package
    assert "-std=c++17" in flags
    assert nv.package_of(str(f), str(src)) == ("vllm", str(pkg))
    assert nv.package_of(str(tmp_path / "x.cu"), str(src)) is None


def test_stratified_sample_takes_every_package(tmp_path):
    src = str(tmp_path / "src")
    paths = [os.path.join(src, "vllm-0.33.0", f"v{i}.cu") for i in range(10)] + \
            [os.path.join(src, "xformers-0.0.35", f"x{i}.cu") for i in range(2)]
    got = nv.stratified(paths, 4, src)
    assert len(got) == 4
    assert sum("xformers" in p for p in got) == 2
    assert nv.stratified(paths, None, src) == paths
    assert nv.stratified(paths, 4, src) == got  # deterministic


def test_cached_result_round_trips():
    from shaderlint.estimate.ptxas import PtxasKernel, PtxasResult

    k = PtxasKernel("k", "void k<4>(int)", "_Z1kILi4EEvi", "sm_80", 32, 0, 0, 0, 1024, 1, 356)
    res = PtxasResult({k.mangled: k}, arch="sm_80")
    back = nv._from_json(nv._to_json(res))
    assert back[k.mangled] == k and back.error is None and back.arch == "sm_80"


def test_failure_cause_names_the_missing_header():
    assert rc._failure_cause("a.cu:5:10: fatal error: c10/util/BFloat16.h: No such file or directory") == \
        "missing header c10"
    assert rc._failure_cause("a.cu:5:10: fatal error: cublas_v2.h: No such file or directory") == \
        "missing header cublas_v2.h"
    assert rc._failure_cause("nvcc timed out after 300 s") == "timed out"


def test_bindings_place_function_pointer_parameters_and_skip_packs():
    from shaderlint.languages import FRONT_ENDS
    from shaderlint.model.build import build_model
    from shaderlint.model.source import Source

    text = b"""
template <float (*op)(float), typename T> __global__ void unary(const T *x, T *y) { y[0] = x[0]; }
template <typename F, int N, typename... Args> __global__ void dist(long n, Args... args) { }
"""
    model = build_model(FRONT_ENDS["cuda"].parse(Source("t.cu", text)))
    fs = {f.name: f for f in model.kernels}
    dem = "void unary<&op_relu, float>(float const*, float*)"
    # a function-pointer parameter is a template parameter of the model (bound to the function)
    assert rc.bindings_for(fs["unary"], rc.template_args(dem, "unary"), model) == {"op": "op_relu", "T": "float"}
    dem = "void dist<my_functor, 4, int*, double*>(long, int*, double*)"
    got = rc.bindings_for(fs["dist"], rc.template_args(dem, "dist"), model)
    assert got is not None and got["F"] == "my_functor" and got["N"] == "4"
    assert rc.bindings_for(fs["dist"], ["my_functor"], model) is None  # too few arguments


def test_one_instance_per_kernel_definition():
    rows = [{"file": "a.cu", "kernel": f"void k<{n}>", "registers": r} for n, r in ((1, 10), (2, 30), (3, 20))] + \
           [{"file": "a.cu", "kernel": "other", "registers": 8},
            {"file": "b.cu", "kernel": "void k<1>", "registers": 5}]
    got = rc.one_per_source_kernel(rows)
    assert got == [2, 3, 4]  # k's median instance (20 registers), other, b.cu's k


def _full_rows():
    rows = []
    for p, pkg in enumerate("abc"):
        for i, regs in enumerate((10, 24, 40, 72, 140)):
            peak = regs * (0.6 + 0.1 * p) - 4
            rows.append({
                "package": pkg, "file": f"{pkg}/k.cu", "arch": "sm_80", "kernel": f"void k<{i}>",
                "mangled": f"_Z{pkg}{i}",
                "registers": regs, "stack_bytes": 0, "spill_bytes": 0, "shared_bytes": 0, "lines": 5 + 10 * i,
                "estimate": rc.registers_from(peak, False, 255, 4, 1, 8, 16), "estimate_stack": 0, "cap": 255,
                "walks": {rc.walk_key(w): [peak, False] for w in rc.combos()}, "bound": True, "complete": True,
                "threads": 256 if i % 2 else None, "threads_origin": "launch" if i % 2 else None,
                "estimated_occupancy": 1.0 if i % 2 else None, "occupancy_is_bound": False, "dynamic_shared": 0,
                "estimated_shared": 0, "notes": [], "unseen_calls": ["op"] if i == 3 else [],
                "template_param_words": ["op"],
            })
    return rows


def test_evaluate_and_markdown_on_synthetic_rows():
    rows = _full_rows()
    ev = rc.evaluate(rows)
    assert ev["shipped"]["kernels"] == 15 and set(ev["packages"]) == {"a", "b", "c"}
    assert set(ev["lopo_refit_choices"]) == {"a", "b", "c"}
    occ = ev["occupancy"]
    # 256 threads at 24/72/140 registers: 72 and 140 limit occupancy below 100 %; the estimate shows 100 %
    assert occ["known_group_size"] == 6 and occ["true_below_100"] >= 2 and occ["shown_agrees"] == 0.0
    assert ev["by_cause_shipped"]["calls a function-pointer/functor template parameter"]["yes"]["kernels"] == 3
    md = rc.markdown({"archs": {"sm_80": ev}})
    assert "15 kernels from 3 packages, leave-one-project-out" in md
    assert "| >128 | 3 |" in md


# ---- bench/sl505_precision.py: judging a finding against the occupancy ptxas implies ------------------
def test_sl505_findings_judged_by_the_lowest_instance_at_the_named_group_size():
    from shaderlint.estimate.ptxas import PtxasKernel, PtxasResult

    sp = _load("sl505_precision")
    ks = [PtxasKernel("k", f"void k<{i}>(float*)", f"_Z1kILi{i}EEvPf", "sm_80", regs, 0, 0, 0, 0, 0)
          for i, regs in ((1, 32), (2, 80))]
    res = PtxasResult({k.mangled: k for k in ks}, arch="sm_80")
    finding = {"code": "SL505", "path": "a.cu", "line": 3, "kernel": "k",
               "message": "kernel 'k' has an occupancy of 37.5% on sm_80 (threshold 50%), limited by registers "
                          "(80 per thread from ptxas with 256 threads per group: 3 groups of 8 SIMD groups per core)"}
    (row,) = sp.judge([finding], res, "sm_80", 0.5)
    assert (row["threads"], row["shown"], row["implied"], row["verdict"]) == (256, 0.375, 0.375, "right")
    light = PtxasResult({ks[0].mangled: ks[0]}, arch="sm_80")  # only the 32-register instance: 100 %
    assert sp.judge([finding], light, "sm_80", 0.5)[0]["verdict"] == "wrong unless dynamic shared memory"
    other = {**finding, "kernel": "j"}
    assert sp.judge([other], res, "sm_80", 0.5)[0]["verdict"] == "unknown"
