"""The model facts behind SL403's precision: the values a lane expression takes in a group
(guards.local_values), barrier-balanced branches (sync.balanced_region) and a for loop's
initializer as a killing write (flow.ReachingWrites)."""

from shaderlint.config import Settings
from shaderlint.engine import lint_source
from shaderlint.model import builtins as B
from shaderlint.model.guards import local_values
from shaderlint.model.sync import balanced_region


def _model(code: str):
    r = lint_source("k.cu", code.encode(), Settings(select=("SL403",)))
    return r.model


def _nodes(model, kind: str, text: str | None = None):
    out, stack = [], [model.root]
    while stack:
        n = stack.pop()
        if n.type == kind and (text is None or model.text(n).startswith(text)):
            out.append(n)
        stack.extend(n.children)
    return sorted(out, key=lambda n: n.start_byte)


def _init_of(model, name: str):
    f = model.functions[0]
    return next(v.init for v in f.vars if v.name == name)


VALUES = """__global__ void k(float* out, int n) {
    const int lane = threadIdx.x % 32;
    const int even = (threadIdx.x & 31) * 2;
    const int shifted = threadIdx.x - 16;
    const int open = n % 32;
    out[0] = lane + even + shifted + open;
}
"""


def test_local_values_of_lane_expressions():
    m = _model(VALUES)
    assert local_values(m, _init_of(m, "lane")) == frozenset(range(32))
    assert local_values(m, _init_of(m, "even")) == frozenset(range(0, 64, 2))
    assert local_values(m, _init_of(m, "shifted")) is None  # unsigned: wraps below 16
    assert local_values(m, _init_of(m, "open")) is None  # a parameter: any value


BRANCHES = """__device__ float ext(float);
__global__ void k(float* out, const float* in, int n) {
    const int warp = threadIdx.x / 32;
    if (warp == 0) { out[0] = 1.0f; __syncthreads(); } else { __syncthreads(); }
    if (warp == 0) { __syncthreads(); } else { __syncthreads(); __syncthreads(); }
    if (warp == 0) { ext(1.0f); __syncthreads(); } else { __syncthreads(); }
    if (warp == 1) { __syncthreads(); return; }
    __syncthreads();
}
"""


def test_balanced_region():
    m = _model(BRANCHES)
    ifs = [n for n in _nodes(m, "if_statement") if n.parent == m.functions[-1].body]
    assert len(ifs) == 4
    assert balanced_region(m, ifs[0]) == (ifs[0].start_byte, ifs[0].end_byte)
    assert balanced_region(m, ifs[1]) is None  # one barrier more
    assert balanced_region(m, ifs[2]) is None  # a call the file does not define
    body = m.functions[-1].body
    assert balanced_region(m, ifs[3]) == (ifs[3].start_byte, body.end_byte)  # the arm returns


REUSE = """__global__ void k(float* out, int n, int m) {
    int i;
    for (i = threadIdx.x; i < n; i += 256) out[i] = 0.0f;
    for (i = 0; i < m; i++) out[i] += 1.0f;
    out[i] = 2.0f;
    for (; i < n; i++) out[i] = 3.0f;
}
"""


def test_for_initializer_kills_earlier_writes():
    m = _model(REUSE)
    conds = [n.child_by_field_name("condition") for n in _nodes(m, "for_statement")]
    assert B.LOCAL in m.deps(conds[0])
    assert B.LOCAL not in m.deps(conds[1])  # i = 0 reaches it, not i = threadIdx.x
    assert B.LOCAL not in m.deps(conds[2])  # after the second loop: i = 0, i++ only
