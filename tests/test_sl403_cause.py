"""SL403 names the cause of a divergent barrier: behind a thread-dependent early return, a loop
whose counter is only tainted by that return is not the cause (found on a real n-body shader)."""

from shaderlint.engine import lint_source
from shaderlint.config import Settings

CODE = """#version 450
layout(local_size_x = 64) in;
layout(binding = 0) buffer Bodies { vec4 pos[]; };
layout(binding = 1) uniform Params { int count; } params;
shared vec4 cache[64];
void main() {
    uint id = gl_GlobalInvocationID.x;
    if (id >= params.count) return;
    vec4 force = vec4(0.0);
    for (int base = 0; base < params.count; base += 64) {
        cache[gl_LocalInvocationID.x] = pos[base + gl_LocalInvocationID.x];
        barrier();
        for (int k = 0; k < 64; k++) force += cache[k] - pos[id];
        barrier();
    }
    pos[id] += force;
}
"""


def test_early_return_is_named_as_the_cause():
    r = lint_source("nbody.comp", CODE.encode(), Settings(select=("SL403",)))
    msgs = [d.message for d in r.diagnostics if d.code == "SL403"]
    assert len(msgs) == 2
    for m in msgs:
        assert "leave early when `id >= params.count`" in m, m
        assert "base < params.count" not in m
