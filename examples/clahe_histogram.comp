// clahe_histogram.comp
//
// First pass of CLAHE (contrast-limited adaptive histogram equalisation):
// one workgroup per image tile builds the tile's 256-bin luminance histogram
// with shared-memory atomics, clips it at the contrast limit, redistributes
// the excess evenly and stores the tile's CDF for the interpolation pass.
// The workgroup was sized 13x13 to match the 13x13-pixel tiles of the
// original CPU implementation.
//
// Intentional pitfalls:
//   SL501 (line 18: 13 x 13 = 169 invocations = 5.28 subgroups of 32; the
//          sixth subgroup runs 9 of 32 lanes and the SM holds fewer groups)
// (look-alikes that are fine: `/ kBins` and `% kBins` by a const, loops
//  strided by gl_WorkGroupSize, guarded imageLoad)

#version 450

layout(local_size_x = 13, local_size_y = 13) in;

layout(binding = 0, rgba8) uniform readonly image2D srcImage;

layout(std430, binding = 1) writeonly buffer TileCdfs {
    float cdf[];   // [tileY][tileX][256]
};

layout(std140, binding = 2) uniform ClaheParams {
    ivec2 tileSize;        // pixels per tile, a multiple of the workgroup size
    ivec2 tileCount;
    float clipLimit;       // multiple of the mean bin height
} params;

const uint kBins = 256u;
const uint kGroupInvocations = gl_WorkGroupSize.x * gl_WorkGroupSize.y;

shared uint hist[kBins];
shared uint excessTotal;

void main()
{
    const uint lid = gl_LocalInvocationIndex;
    for (uint b = lid; b < kBins; b += kGroupInvocations) {
        hist[b] = 0u;
    }
    if (lid == 0u) {
        excessTotal = 0u;
    }
    barrier();

    const ivec2 size = imageSize(srcImage);
    const ivec2 tileOrigin = ivec2(gl_WorkGroupID.xy) * params.tileSize;
    for (int y = int(gl_LocalInvocationID.y); y < params.tileSize.y; y += int(gl_WorkGroupSize.y)) {
        for (int x = int(gl_LocalInvocationID.x); x < params.tileSize.x; x += int(gl_WorkGroupSize.x)) {
            const ivec2 p = tileOrigin + ivec2(x, y);
            if (p.x < size.x && p.y < size.y) {
                const vec3 rgb = imageLoad(srcImage, p).rgb;
                const uint bin = min(uint(dot(rgb, vec3(0.2126, 0.7152, 0.0722)) * 255.0 + 0.5), kBins - 1u);
                atomicAdd(hist[bin], 1u);
            }
        }
    }
    barrier();

    // Clip each bin at the limit and collect the excess.
    const float pixels = float(params.tileSize.x * params.tileSize.y);
    const uint limit = max(1u, uint(params.clipLimit * pixels / float(kBins)));
    for (uint b = lid; b < kBins; b += kGroupInvocations) {
        const uint h = hist[b];
        if (h > limit) {
            atomicAdd(excessTotal, h - limit);
            hist[b] = limit;
        }
    }
    barrier();

    // Invocation 0 redistributes and integrates (256 steps, cheap next to the loads).
    if (lid == 0u) {
        const uint perBin = excessTotal / kBins;
        const uint remainder = excessTotal % kBins;
        const uint tileIndex = gl_WorkGroupID.y * uint(params.tileCount.x) + gl_WorkGroupID.x;
        float running = 0.0;
        for (uint b = 0u; b < kBins; ++b) {
            running += float(hist[b] + perBin + (b < remainder ? 1u : 0u));
            cdf[tileIndex * kBins + b] = running / pixels;
        }
    }
}
