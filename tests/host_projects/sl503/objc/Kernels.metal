#include <metal_stdlib>
using namespace metal;

kernel void blur(device float* data [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
    data[gid] *= 0.5f;
}

kernel void sharpen(device float* data [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
    data[gid] *= 1.5f;
}
