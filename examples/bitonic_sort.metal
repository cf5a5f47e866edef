// bitonic_sort.metal
//
// Bitonic sort of (key, value) pairs, used to depth-sort transparent
// particles. `bitonic_sort_local32` sorts each run of 32 pairs in
// threadgroup memory (the host dispatches it with 32 threads per group);
// `bitonic_merge_step` performs one global compare-exchange stage (k, j)
// and is dispatched log2(n) * (log2(n) + 1) / 2 times.
//
// Intentional pitfalls:
//   SL401 (line 33: threadgroup-wide barrier although the threadgroup is a
//          single SIMD group of 32 threads; simdgroup_barrier is enough)
//   SL401 (line 47: same, inside the sorting network)

#include <metal_stdlib>
using namespace metal;

struct BitonicStep {
    int count;   // number of pairs (power of two, padded with +inf keys)
    int k;       // size of the bitonic sequences being merged
    int j;       // compare distance in this stage
};

// shaderlint: threadgroup-size=32
kernel void bitonic_sort_local32(device uint2*  pairs [[buffer(0)]],
                                 constant int&  count [[buffer(1)]],
                                 uint   gid [[thread_position_in_grid]],
                                 ushort lid [[thread_index_in_threadgroup]])
{
    threadgroup uint2 cache[32];

    const bool inRange = int(gid) < count;
    cache[lid] = inRange ? pairs[gid] : uint2(0xFFFFFFFFu, 0u);
    threadgroup_barrier(mem_flags::mem_threadgroup);

    for (ushort k = 2; k <= 32; k <<= 1) {
        for (ushort j = k >> 1; j > 0; j >>= 1) {
            const ushort partner = lid ^ j;
            if (partner > lid) {
                const bool ascending = (lid & k) == 0;
                const uint2 a = cache[lid];
                const uint2 b = cache[partner];
                if ((a.x > b.x) == ascending) {
                    cache[lid] = b;
                    cache[partner] = a;
                }
            }
            threadgroup_barrier(mem_flags::mem_threadgroup);
        }
    }

    if (inRange) {
        pairs[gid] = cache[lid];
    }
}

kernel void bitonic_merge_step(device uint2*         pairs [[buffer(0)]],
                               constant BitonicStep& step  [[buffer(1)]],
                               uint gid [[thread_position_in_grid]])
{
    // Thread t handles the pair (lo, lo + j) where lo skips the upper half
    // of every 2j-sized block.
    const int t  = int(gid);
    const int j  = step.j;
    const int lo = ((t & ~(j - 1)) << 1) | (t & (j - 1));
    const int hi = lo + j;
    if (hi >= step.count) {
        return;
    }

    const bool ascending = (lo & step.k) == 0;
    const uint2 a = pairs[lo];
    const uint2 b = pairs[hi];
    if ((a.x > b.x) == ascending) {
        pairs[lo] = b;
        pairs[hi] = a;
    }
}
