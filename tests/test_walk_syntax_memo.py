"""The register walk's per-model syntax memos (``Walker._syntax``) and per-text name memos
(shaderlint.estimate.liveness) answer what depends on the node or the text alone: the values a walk
binds (unrolled counters, template arguments) must still decide every answer that depends on them."""

from __future__ import annotations

import re

from shaderlint.estimate import liveness
from shaderlint.estimate.registers import estimate_kernel
from shaderlint.estimate.targets import get_target
from shaderlint.languages import FRONT_ENDS
from shaderlint.model.build import build_model
from shaderlint.model.source import Source

SM80 = get_target("sm_80")


def model_of(src: str):
    return build_model(FRONT_ENDS["cuda"].parse(Source("k.cu", src.encode())))


def estimate(m, **kw):
    return estimate_kernel(m, m.kernels[0], SM80, **kw)


# nvcc loads an address a statement reads twice once (Walker.memory's ``stmt_seen``): the key is the
# expression's text and the values of what it depends on. In the loop the same nodes are walked once
# per unrolled iteration, with the counter bound to another value each time.
LOOP = """
__global__ void k(const unsigned* q, unsigned* out, int n) {
    unsigned acc = 0;
    #pragma unroll
    for (int l = 0; l < 4; ++l) {
        acc += (q[l] & 3u) * ((q[l] >> 2) & 3u) + (q[l + 1] & 5u) * q[l + 1];
    }
    for (int r = 0; r < n; ++r) {
        acc += q[r] * q[r] + (q[r + 1] & 5u);
    }
    out[threadIdx.x] = acc;
}
"""


class _Unmemoized(dict):
    """A model's ``_walk_syntax`` that keeps none of the memos named: the walk computes them each time."""

    def __init__(self, kinds):
        super().__init__()
        self.kinds = kinds

    def get(self, key, default=None):
        return default if key[0] in self.kinds else super().get(key, default)

    def __setitem__(self, key, value):
        if key[0] not in self.kinds:
            super().__setitem__(key, value)


def unmemoized(src: str, kinds=("seen", "returns")):
    m = model_of(src)
    m.__dict__["_walk_syntax"] = _Unmemoized(kinds)
    return m


def test_a_statements_repeated_loads_are_found_as_without_the_memo():
    memo, plain = estimate(model_of(LOOP)), estimate(unmemoized(LOOP))
    assert (memo.peak, memo.registers) == (plain.peak, plain.registers)
    m = model_of(LOOP)
    estimate(m)
    assert any(k[0] == "seen" for k in m._walk_syntax)  # (the memo was used)


# One helper walked under two template arguments; the second instance is walked with the first
# instance's syntax memos already filled in, and must find what a walk without those memos finds.
HELPER = """
template <int N>
__device__ float pick(const float* p, int i) { return p[i] * p[i + N] + p[i] * p[i + N]; }

template <int N>
__global__ void k(const float* p, float* out) { out[threadIdx.x] = pick<N>(p, threadIdx.x); }
"""


def test_the_memos_filled_by_one_instance_do_not_decide_another():
    for first, second in (("0", "3"), ("3", "0")):
        shared = model_of(HELPER)
        estimate(shared, bindings={"N": first})
        after = estimate(shared, bindings={"N": second})
        fresh = estimate(unmemoized(HELPER), bindings={"N": second})
        assert (after.peak, after.registers) == (fresh.peak, fresh.registers), (first, second)


LAMBDAS = """
__global__ void k(const float* p, float* out) {
    auto get = [&](int i) { return p[i] * 2.0f; };
    auto put = [&](int i) { out[i] = 1.0f; };
    float s = 0.0f;
    #pragma unroll
    for (int j = 0; j < 4; ++j) { s += get(threadIdx.x + j); put(threadIdx.x + j); }
    out[threadIdx.x] = s;
}
"""


def test_a_lambdas_result_is_what_its_own_body_returns():
    m = model_of(LAMBDAS)
    first = estimate(m)
    m.__dict__.pop("_walk_cache", None)  # walk again with the syntax memos filled in
    again = estimate(m)
    assert (first.peak, first.registers) == (again.peak, again.registers)
    plain = estimate(unmemoized(LAMBDAS))
    assert (first.peak, first.registers) == (plain.peak, plain.registers)
    bodies = [k for k in m._walk_syntax if k[0] == "returns"]
    assert sorted(m._walk_syntax[k] for k in bodies) == [False, True]  # `put` returns nothing, `get` a value


def test_the_name_memos_give_what_the_text_gives():
    texts = ["reduce::init<rop::Add, float>", "f", "a::b::c", "x<y<z>>", "1bad", "", "ns::g<T>", "f"]
    for t in texts + texts:
        assert liveness._plain_name(t) == liveness._plain_name_uncached(t), t
    assert liveness._plain_name("reduce::init<rop::Add, float>") == "init"
    for t in ["const T", "T", "volatile const float", "T __restrict__", "constant", "const T", "T"]:
        assert liveness._bare_type_name(t) == re.sub(r"\b(const|volatile|__restrict__)\b", " ", t).strip(), t
    assert liveness._bare_type_name("const T") == "T"
    assert liveness._bare_type_name("constant") == "constant"


# `#pragma unroll U` with U a template parameter: the pragma's text is read once per model, the value
# U takes in each instance is not (a loop indexing a private array by its counter keeps the array in
# registers when unrolled, on the stack when not).
PRAGMA = """
template <int U>
__global__ void k(const float* in, float* out, int n) {
    float acc[8];
    #pragma unroll
    for (int j = 0; j < 8; ++j) acc[j] = in[j * n + threadIdx.x];
    float s = 0.0f;
    #pragma unroll U
    for (int j = 0; j < 8; ++j) s += acc[j] * acc[7 - j];
    out[threadIdx.x] = s;
}
"""


def test_a_pragmas_bound_value_is_read_at_each_instance():
    shared = model_of(PRAGMA)
    got = {u: estimate(shared, bindings={"U": u}) for u in ("1", "8", "1")}
    for u in ("1", "8"):
        plain = estimate(unmemoized(PRAGMA, ("unroll",)), bindings={"U": u})
        assert (got[u].peak, got[u].registers, got[u].stack_bytes) == (plain.peak, plain.registers, plain.stack_bytes)
    assert got["1"].stack_bytes > got["8"].stack_bytes  # (rolled: the array is indexed at run time)



TYPES = """
struct S { float a; float b; };
__global__ void k(const float* in, float* out) { S s; s.a = in[0]; s.b = in[1]; out[0] = s.a * s.b; }
"""


def test_a_type_text_resolves_as_its_bare_form_does():
    m = model_of(TYPES)
    estimate(m)
    walker = next(w[0] for w in m._walk_cache.values() if isinstance(w[0], liveness.Walker))

    def bare(t):
        t = re.sub(r"\b(const|volatile|__restrict__|restrict|typename|struct|thread|device|constant)\b", " ", t)
        return " ".join(t.replace("*", " ").replace("&", " ").split())

    cases = {"const float*": "float", "struct S": "S", "const S &": "S", "device half4 &": "half4",
             "unsigned int": "unsigned int", "constant_t": "constant_t", "volatile double": "double"}
    for t, want in list(cases.items()) * 2:  # (the second time from the memo)
        assert bare(t) == want, t
        assert walker.resolve_type_text(t) == walker.resolve_type_text(want), t
    assert walker.resolve_type_text("const S &").struct == "S"
    assert walker.resolve_type_text("const float*").bits == 32
