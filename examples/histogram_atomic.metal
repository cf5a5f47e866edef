// histogram_atomic.metal
//
// Statistics for auto-exposure and saturation metering of an 8-bit RGBA
// frame. `saturation_histogram16` builds a coarse 16-bin chroma histogram
// with per-thread private counters that are flushed with device atomics;
// `luma_histogram256` is the production path: a 256-bin histogram in
// threadgroup atomics, merged into the device histogram once per group.
//
// Intentional pitfalls:
//   SL101 (line 26: `uint counts[16]` is indexed by a data-dependent bin,
//          so it lives on the stack instead of in registers)
//   SL204 (line 32: `hi - lo` is 8-bit uchar arithmetic; Apple GPUs
//          have no 8-bit ALU, use ushort)
// (look-alikes that are fine: `counts[b]` in the constant 16-trip flush loop,
//  the ushort luma math, the runtime index into threadgroup atomics)

#include <metal_stdlib>
using namespace metal;

kernel void saturation_histogram16(device const uchar4* pixels     [[buffer(0)]],
                                   device atomic_uint*  histogram  [[buffer(1)]],
                                   constant int&        pixelCount [[buffer(2)]],
                                   uint gid      [[thread_position_in_grid]],
                                   uint gridSize [[threads_per_grid]])
{
    uint counts[16] = { 0 };

    for (int i = int(gid); i < pixelCount; i += int(gridSize)) {
        const uchar4 p = pixels[i];
        const uchar hi = max(max(p.r, p.g), p.b);
        const uchar lo = min(min(p.r, p.g), p.b);
        const uchar chroma = hi - lo;
        counts[chroma >> 4] += 1;
    }

    for (int b = 0; b < 16; ++b) {
        if (counts[b] != 0) {
            atomic_fetch_add_explicit(&histogram[b], counts[b], memory_order_relaxed);
        }
    }
}

[[max_total_threads_per_threadgroup(256)]]
kernel void luma_histogram256(device const uchar4* pixels     [[buffer(0)]],
                              device atomic_uint*  histogram  [[buffer(1)]],
                              constant int&        pixelCount [[buffer(2)]],
                              uint   gid      [[thread_position_in_grid]],
                              uint   gridSize [[threads_per_grid]],
                              ushort lid      [[thread_index_in_threadgroup]])
{
    threadgroup atomic_uint localHist[256];

    // The pipeline is always dispatched with exactly 256 threads per group.
    atomic_store_explicit(&localHist[lid], 0u, memory_order_relaxed);
    threadgroup_barrier(mem_flags::mem_threadgroup);

    for (int i = int(gid); i < pixelCount; i += int(gridSize)) {
        const uchar4 p = pixels[i];
        // BT.709 weights in 8.8 fixed point, widened to 16 bits first.
        const ushort luma = (ushort(p.r) * 54 + ushort(p.g) * 183 + ushort(p.b) * 19) >> 8;
        atomic_fetch_add_explicit(&localHist[luma], 1u, memory_order_relaxed);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);

    const uint c = atomic_load_explicit(&localHist[lid], memory_order_relaxed);
    if (c != 0) {
        atomic_fetch_add_explicit(&histogram[lid], c, memory_order_relaxed);
    }
}
