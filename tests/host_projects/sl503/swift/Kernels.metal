#include <metal_stdlib>
using namespace metal;

kernel void scale(device float* data [[buffer(0)]], uint2 gid [[thread_position_in_grid]]) {
    data[gid.y * 4096 + gid.x] *= 2.0f;
}

kernel void scale_tail(device float* data [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
    data[gid] *= 2.0f;
}

kernel void scale_strided(device float* data [[buffer(0)]], constant uint& n [[buffer(1)]],
                          uint gid [[thread_position_in_grid]], uint grid [[threads_per_grid]]) {
    for (uint i = gid; i < n; i += grid) data[i] *= 2.0f;
}

kernel void scale_rows(device float* data [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
    data[gid] *= 2.0f;
}

kernel void scale_checked(device float* data [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
    data[gid] *= 2.0f;
}
