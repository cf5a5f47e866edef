// Workspace for the VS Code end-to-end test (tests/e2e/test_vscode_e2e.py).
// SL202 offers the (unsafe) quick fix "Write 0.5h" for the float literal below.

#include <metal_stdlib>
using namespace metal;

kernel void scale(device half *out [[buffer(0)]],
                  constant uint &count [[buffer(1)]],
                  uint i [[thread_position_in_grid]])
{
    if (i >= count) {
        return;
    }
    half h = out[i];
    half y = h * 0.5;  // expect: SL202
    out[i] = y;
}
