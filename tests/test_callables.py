"""Template arguments that name code (shaderlint.model.callables): a function bound to a
function-pointer template parameter, a functor type bound explicitly or deduced from a launch
argument. With the binding the estimator walks the body the call runs; without one, or when the
name is ambiguous, the call stays unknown.

Directions checked with nvcc 12 (``nvcc -arch=sm_90 -Xptxas -v``) on HEAVY below: ``kf<Heavy>``
36 registers, ``kp<heavy_fn>`` 24, both above the 8-register floor the unknown call gave."""

from __future__ import annotations

from shaderlint.estimate.registers import estimate_kernel, template_instances
from shaderlint.estimate.targets import get_target
from shaderlint.model.callables import bound_callables, deduced_args, functor_operator, named_function
from tests.test_estimate import model_of

SM80 = get_target("sm_80")

HEAVY = """
struct Heavy {
    __device__ float operator()(float a, float b) const {
        float acc[16];
#pragma unroll
        for (int i = 0; i < 16; ++i) acc[i] = a * i + b;
        float s = 0.f;
#pragma unroll
        for (int i = 0; i < 16; ++i) s += acc[i] * acc[15 - i] / (acc[i] + 1.0f);
        return sinf(s) * cosf(a) + expf(b);
    }
};
struct Light {
    __device__ float operator()(float a, float b) const { return a + b; }
};

__device__ float heavy_fn(float a) {
    return sinf(a) * cosf(a * 2.f) + expf(a) * logf(a + 3.f) + powf(a, 1.7f);
}
__device__ float light_fn(float a) { return a; }

template <typename Op>
__global__ void kf(float* p, const float* q, Op op) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    p[i] = op(p[i], q[i]);
}

template <float (*F)(float)>
__global__ void kp(float* p) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    p[i] = F(p[i]);
}
"""


def _kernel(m, name):
    return next(k for k in m.kernels if k.name == name)


def test_function_pointer_binding_walks_the_function():
    m = model_of(HEAVY + "void h(float* p) { kp<heavy_fn><<<1, 128>>>(p); kp<&light_fn><<<1, 128>>>(p); }\n")
    k = _kernel(m, "kp")
    assert "F" in k.template_params  # `float (*F)(float)` is a template parameter
    assert template_instances(m, k) == [{"F": "heavy_fn"}, {"F": "light_fn"}]
    unbound = estimate_kernel(m, k, SM80)
    heavy = estimate_kernel(m, k, SM80, bindings={"F": "heavy_fn"})
    light = estimate_kernel(m, k, SM80, bindings={"F": "light_fn"})
    assert heavy.name == "kp<heavy_fn>"
    assert any("inlined: heavy_fn" in n for n in heavy.notes)
    assert heavy.registers > unbound.registers
    assert heavy.registers > light.registers


def test_functor_binding_walks_operator_call():
    m = model_of(HEAVY + "void h(float* p, float* q) { kf<Heavy><<<1, 128>>>(p, q, Heavy{}); }\n")
    k = _kernel(m, "kf")
    assert template_instances(m, k) == [{"Op": "Heavy"}]
    unbound = estimate_kernel(m, k, SM80)
    heavy = estimate_kernel(m, k, SM80, bindings={"Op": "Heavy"})
    light = estimate_kernel(m, k, SM80, bindings={"Op": "Light"})
    assert heavy.name == "kf<Heavy>"
    assert any("Heavy::operator()" in n for n in heavy.notes)
    assert heavy.registers > light.registers
    assert heavy.registers > unbound.registers + 8


def test_functor_deduced_from_launch_argument():
    src = HEAVY + """
void h(float* p, float* q) {
    kf<<<1, 128>>>(p, q, Heavy());
    Light l;
    kf<<<1, 128>>>(p, q, l);
    kf<<<1, 128>>>(p, q, [] __device__ (float a, float b) { return a; });
}
"""
    m = model_of(src)
    k = _kernel(m, "kf")
    assert template_instances(m, k) == [{"Op": "Heavy"}, {"Op": "Light"}]  # the lambda deduces nothing
    launches = [ls for ls in m.launches if ls.kernel == "kf"]
    assert [deduced_args(m, k, ls.node) for ls in launches] == [{"Op": "Heavy"}, {"Op": "Light"}, {}]


def test_ambiguous_or_unknown_names_stay_unknown():
    src = HEAVY + """
__device__ float twice(float a) { return 2 * a; }
__device__ double twice(double a) { return 2 * a; }
struct Two {
    __device__ float operator()(float a, float b) const { return a; }
    __device__ int operator()(int a, int b) const { return a; }
};
template <typename T> struct Tpl { __device__ T operator()(T a, T b) const { return a; } };
"""
    m = model_of(src)
    assert named_function(m, "heavy_fn") is not None
    assert named_function(m, "twice") is None  # overload set
    assert named_function(m, "sinf") is None  # not defined here
    assert functor_operator(m, "Heavy") is not None
    assert functor_operator(m, "Two") is None  # two operator()
    assert functor_operator(m, "Tpl<float>") is None
    assert functor_operator(m, "FromHeader") is None
    kp, kf = _kernel(m, "kp"), _kernel(m, "kf")
    assert bound_callables(m, kp, {"F": "twice"}) == {}
    assert bound_callables(m, kf, {"Op": "Two"}) == {}
    assert estimate_kernel(m, kp, SM80, bindings={"F": "twice"}).registers \
        == estimate_kernel(m, kp, SM80).registers


def test_host_launch_binds_function():
    from shaderlint.estimate.registers import _host_instance_args

    m = model_of(HEAVY)
    k = _kernel(m, "kp")
    assert _host_instance_args(m, k, ("heavy_fn",)) == {"F": "heavy_fn"}
    assert _host_instance_args(m, k, ("other_fn",)) == {}


def test_calls_to_sees_calls_through_bound_arguments():
    from shaderlint.model.callables import bound_callee
    from shaderlint.model.dispatch import calls_to

    one = model_of(HEAVY + "void h(float* p) { kp<heavy_fn><<<1, 128>>>(p); }\n")
    (call,) = [c for c in one.nodes("call") if one.text(c).startswith("F(")]
    assert bound_callee(one, call) is named_function(one, "heavy_fn")
    assert call in calls_to(one, "heavy_fn")
    # two instances bind F to different functions: no single callee
    two = model_of(HEAVY + "void h(float* p) { kp<heavy_fn><<<1, 128>>>(p); kp<light_fn><<<1, 128>>>(p); }\n")
    (call,) = [c for c in two.nodes("call") if two.text(c).startswith("F(")]
    assert bound_callee(two, call) is None
    assert calls_to(two, "heavy_fn") == []
    # no launch at all: unknown
    none = model_of(HEAVY)
    (call,) = [c for c in none.nodes("call") if none.text(c).startswith("op(")]
    assert bound_callee(none, call) is None


def test_report_names_function_instances():
    from shaderlint.report import _signature_head, _template_args

    sig = "void kp<&(heavy_fn(float))>(float*)"  # what cu++filt prints for kp<heavy_fn>
    assert _signature_head(sig) == "void kp<&(heavy_fn(float))>"
    assert _template_args(sig, "kp") == "heavy_fn"  # matches the estimate's bindings
    assert _template_args("void tile<8, float>(float*)", "tile") == "8, float"
    m = model_of(HEAVY + "void h(float* p) { kp<heavy_fn><<<1, 128>>>(p); }\n")
    from shaderlint.estimate.registers import estimate_file

    names = [e.name for e in estimate_file(m, SM80)]
    assert "kp<heavy_fn>" in names
