// gaussian_blur_separable.metal
//
// Separable Gaussian blur for RGBA16F render targets: a horizontal and a
// vertical pass that read their weights from a constant buffer, a fused
// 5x5 binomial variant that stages a tile plus apron in threadgroup memory,
// and a box downsample whose factor is a function constant.
// Radius, edge mode and downsample factor are Metal function constants, so
// loop bounds and divisions fold when the pipeline is specialised.
//
// Intentional pitfalls: none
// (look-alikes a precise linter must accept: constant-address-space arrays
//  indexed at runtime, integer division by a function constant and by a
//  literal, early-return bounds guards on get_width()/get_height())

#include <metal_stdlib>
using namespace metal;

constant int  kRadius       [[function_constant(0)]];
constant bool kClampToEdge  [[function_constant(1)]];
constant int  kDownsample   [[function_constant(2)]];

#define TILE  16
#define APRON 2
#define TILE_WITH_APRON (TILE + 2 * APRON)

// Binomial 5-tap kernel (1 4 6 4 1) / 16, used by the fused variant.
constant half kBinomial5[5] = { 0.0625h, 0.25h, 0.375h, 0.25h, 0.0625h };

static inline int2 resolve_coord(int2 c, int2 size)
{
    if (kClampToEdge) {
        return clamp(c, int2(0), size - 1);
    }
    // Mirror without repeating the edge texel.
    const int2 m = abs(c);
    return select(m, 2 * (size - 1) - m, m >= size);
}

kernel void blur_horizontal(texture2d<half, access::read>  src     [[texture(0)]],
                            texture2d<half, access::write> dst     [[texture(1)]],
                            constant float*                weights [[buffer(0)]],
                            uint2                          gid     [[thread_position_in_grid]])
{
    if (gid.x >= dst.get_width() || gid.y >= dst.get_height()) {
        return;
    }
    const int2 size = int2(src.get_width(), src.get_height());

    float4 acc = 0.0f;
    for (int i = -kRadius; i <= kRadius; ++i) {
        const int2 c = resolve_coord(int2(gid) + int2(i, 0), size);
        acc += float4(src.read(uint2(c))) * weights[i + kRadius];
    }
    dst.write(half4(acc), gid);
}

kernel void blur_vertical(texture2d<half, access::read>  src     [[texture(0)]],
                          texture2d<half, access::write> dst     [[texture(1)]],
                          constant float*                weights [[buffer(0)]],
                          uint2                          gid     [[thread_position_in_grid]])
{
    if (gid.x >= dst.get_width() || gid.y >= dst.get_height()) {
        return;
    }
    const int2 size = int2(src.get_width(), src.get_height());

    float4 acc = 0.0f;
    for (int i = -kRadius; i <= kRadius; ++i) {
        const int2 c = resolve_coord(int2(gid) + int2(0, i), size);
        acc += float4(src.read(uint2(c))) * weights[i + kRadius];
    }
    dst.write(half4(acc), gid);
}

// shaderlint: threadgroup-size=16x16
kernel void blur_binomial5_tiled(texture2d<half, access::read>  src  [[texture(0)]],
                                 texture2d<half, access::write> dst  [[texture(1)]],
                                 uint2   gid  [[thread_position_in_grid]],
                                 ushort2 lid  [[thread_position_in_threadgroup]],
                                 uint2   tgid [[threadgroup_position_in_grid]])
{
    threadgroup half4 tile[TILE_WITH_APRON][TILE_WITH_APRON];

    const int2 size   = int2(src.get_width(), src.get_height());
    const int2 origin = int2(tgid * TILE) - APRON;

    // 400 texels, 256 threads: every thread loads one or two of them.
    // No early return before the barrier; out-of-image texels are clamped.
    const int flatIndex = int(lid.y) * TILE + int(lid.x);
    for (int t = flatIndex; t < TILE_WITH_APRON * TILE_WITH_APRON; t += TILE * TILE) {
        const int ty = t / TILE_WITH_APRON;
        const int tx = t % TILE_WITH_APRON;
        const int2 c = resolve_coord(origin + int2(tx, ty), size);
        tile[ty][tx] = src.read(uint2(c));
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);

    half4 acc = half4(0.0h);
    for (int dy = 0; dy < 5; ++dy) {
        half4 row = half4(0.0h);
        for (int dx = 0; dx < 5; ++dx) {
            row += tile[lid.y + dy][lid.x + dx] * kBinomial5[dx];
        }
        acc += row * kBinomial5[dy];
    }

    if (gid.x < dst.get_width() && gid.y < dst.get_height()) {
        dst.write(acc, gid);
    }
}

// Box-filtered downsample by kDownsample in both directions.
kernel void box_downsample(texture2d<half, access::read>  src [[texture(0)]],
                           texture2d<half, access::write> dst [[texture(1)]],
                           uint2 gid [[thread_position_in_grid]])
{
    const int2 srcSize = int2(src.get_width(), src.get_height());
    const int2 dstSize = srcSize / kDownsample;
    if (int(gid.x) >= dstSize.x || int(gid.y) >= dstSize.y) {
        return;
    }

    float4 acc = 0.0f;
    const int2 base = int2(gid) * kDownsample;
    for (int y = 0; y < kDownsample; ++y) {
        for (int x = 0; x < kDownsample; ++x) {
            acc += float4(src.read(uint2(base + int2(x, y))));
        }
    }
    const float norm = 1.0f / float(kDownsample * kDownsample);
    dst.write(half4(acc * norm), gid);
}
