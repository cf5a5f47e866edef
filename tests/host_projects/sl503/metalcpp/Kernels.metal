#include <metal_stdlib>
using namespace metal;

kernel void relu(device float* data [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
    data[gid] = max(data[gid], 0.0f);
}
