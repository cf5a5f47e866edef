// transpose_pack.metal
//
// Two small utility kernels from an ML preprocessing pipeline:
// `transpose_tiled` transposes a row-major float matrix through a padded
// 32x33 threadgroup tile (32x8 threads, each moving four elements), and
// `pack_unorm8_srgb` converts linear float4 pixels into packed sRGB8
// with an ordered dither before upload to a texture.
//
// Intentional pitfalls:
//   SL105 (line 72: pack_unorm8_srgb indexes src/dst with the grid
//          position and never checks it against the pixel count)
//   SL402 (line 80: threadgroup barrier with no threadgroup memory access
//          before or after it; it only stalls the group)

#include <metal_stdlib>
using namespace metal;

#define TILE_DIM   32
#define BLOCK_ROWS 8

// 4x4 Bayer matrix, normalised to [-0.5, 0.5) / 255.
constant float kBayer4[16] = {
     0.0f,  8.0f,  2.0f, 10.0f,
    12.0f,  4.0f, 14.0f,  6.0f,
     3.0f, 11.0f,  1.0f,  9.0f,
    15.0f,  7.0f, 13.0f,  5.0f,
};

struct MatrixShape {
    int rows;
    int cols;
};

// shaderlint: threadgroup-size=32x8
kernel void transpose_tiled(device const float*  in    [[buffer(0)]],
                            device float*        out   [[buffer(1)]],
                            constant MatrixShape& shape [[buffer(2)]],
                            ushort2 lid  [[thread_position_in_threadgroup]],
                            uint2   tgid [[threadgroup_position_in_grid]])
{
    threadgroup float tile[TILE_DIM][TILE_DIM + 1];

    const int x = int(tgid.x) * TILE_DIM + lid.x;
    const int y0 = int(tgid.y) * TILE_DIM + lid.y;
    for (int r = 0; r < TILE_DIM; r += BLOCK_ROWS) {
        const int y = y0 + r;
        if (x < shape.cols && y < shape.rows) {
            tile[lid.y + r][lid.x] = in[y * shape.cols + x];
        }
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);

    // Write the transposed tile: block (bx, by) lands at (by, bx).
    const int tx = int(tgid.y) * TILE_DIM + lid.x;
    const int ty0 = int(tgid.x) * TILE_DIM + lid.y;
    for (int r = 0; r < TILE_DIM; r += BLOCK_ROWS) {
        const int ty = ty0 + r;
        if (tx < shape.rows && ty < shape.cols) {
            out[ty * shape.rows + tx] = tile[lid.x][lid.y + r];
        }
    }
}

static inline float3 linear_to_srgb(float3 c)
{
    const float3 lo = c * 12.92f;
    const float3 hi = 1.055f * pow(c, float3(1.0f / 2.4f)) - 0.055f;
    return select(hi, lo, c <= 0.0031308f);
}

// shaderlint: dispatch=threadgroups
kernel void pack_unorm8_srgb(device const float4* src   [[buffer(0)]],
                             device uint*         dst   [[buffer(1)]],
                             constant int&        widthLog2 [[buffer(2)]],
                             uint gid [[thread_position_in_grid]])
{
    const float4 rgba = saturate(src[gid]);
    const float3 srgb = linear_to_srgb(rgba.rgb);

    threadgroup_barrier(mem_flags::mem_threadgroup);

    // Ordered dither on the 2D pixel position (the width is a power of two).
    const int px = int(gid) & ((1 << widthLog2) - 1);
    const int py = int(gid) >> widthLog2;
    const float d = (kBayer4[(py & 3) * 4 + (px & 3)] - 7.5f) * (1.0f / (16.0f * 255.0f));

    dst[gid] = pack_float_to_unorm4x8(float4(saturate(srgb + d), rgba.a));
}
