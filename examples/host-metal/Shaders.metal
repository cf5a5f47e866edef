// host-metal/Shaders.metal
//
// Two kernels dispatched from Compute.swift, neither with a bounds check. The
// dispatch mode, threadgroup size and grid come from the Swift code, with no
// `// shaderlint:` annotation here.
//
// Intentional pitfalls (reported once the host index reads Compute.swift):
//   SL105 (line 19: `brighten` is dispatched with dispatchThreadgroups over
//          1920x1080 pixels in 16x16 threadgroups rounded up to 120x68
//          groups; the last row of groups runs 8 rows of threads below the
//          image, which read and write past the end of both buffers)
// (look-alike that is fine: `add_arrays` on line 30 is dispatched with
//  dispatchThreads, so Metal runs exactly arrayLength threads and the edge
//  threadgroup is partial)

#include <metal_stdlib>
using namespace metal;

kernel void brighten(device const float4* src [[buffer(0)]],
                     device float4* dst [[buffer(1)]],
                     constant uint& width [[buffer(2)]],
                     constant float& gain [[buffer(3)]],
                     ushort2 gid [[thread_position_in_grid]])
{
    int i = int(gid.y * width + gid.x);
    float4 c = src[i];
    dst[i] = float4(c.rgb * gain, c.a);
}

kernel void add_arrays(device const float* inA [[buffer(0)]],
                       device const float* inB [[buffer(1)]],
                       device float* result [[buffer(2)]],
                       uint index [[thread_position_in_grid]])
{
    result[index] = inA[index] + inB[index];
}
