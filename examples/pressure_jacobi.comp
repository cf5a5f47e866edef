// pressure_jacobi.comp
//
// Pressure projection for a 2D grid fluid solver with temporal blocking:
// each workgroup loads a 48x48 block of pressure (plus a one-cell halo) and
// the divergence into shared memory, runs kIterations Jacobi sweeps there,
// and writes back the interior that stale edge values cannot have reached
// yet. An 8x8 workgroup strides over the block, 36 cells per invocation.
//
// Intentional pitfalls:
//   SL505 (line 39: 2 x 50 x 50 + 48 x 48 floats = 28.5 KiB of shared
//          memory for a 64-invocation workgroup (two 32-wide subgroups):
//          only a few groups fit per SM, so occupancy stays far below 50%,
//          limited by shared memory)
// (look-alikes that are fine: the interleaved `x += 8` loops, the barriers
//  between sweeps order the ping-pong buffers)

#version 450

layout(local_size_x = 8, local_size_y = 8) in;

const int kBlock = 48;
const int kHalo = 1;
const int kSpan = kBlock + 2 * kHalo;
const int kIterations = 8;

layout(binding = 0, r32f) uniform readonly image2D pressureIn;
layout(binding = 1, r32f) uniform readonly image2D divergence;
layout(binding = 2, r32f) uniform writeonly image2D pressureOut;

layout(push_constant) uniform Params {
    float alpha;    // -h^2
    float rBeta;    // 1/4
} params;

shared float pA[kSpan * kSpan];
shared float pB[kSpan * kSpan];
shared float div[kBlock * kBlock];

void main()
{
    const ivec2 size = imageSize(pressureIn);
    const ivec2 origin = ivec2(gl_WorkGroupID.xy) * (kBlock - 2 * kIterations) - kIterations;
    const ivec2 lid = ivec2(gl_LocalInvocationID.xy);

    for (int y = lid.y; y < kSpan; y += 8) {
        for (int x = lid.x; x < kSpan; x += 8) {
            const ivec2 p = clamp(origin + ivec2(x, y) - kHalo, ivec2(0), size - 1);
            const float v = imageLoad(pressureIn, p).r;
            pA[y * kSpan + x] = v;
            pB[y * kSpan + x] = v;   // the halo ring is read from both buffers
        }
    }
    for (int y = lid.y; y < kBlock; y += 8) {
        for (int x = lid.x; x < kBlock; x += 8) {
            const ivec2 p = clamp(origin + ivec2(x, y), ivec2(0), size - 1);
            div[y * kBlock + x] = imageLoad(divergence, p).r;
        }
    }
    barrier();

    for (int it = 0; it < kIterations; it += 2) {
        for (int y = lid.y; y < kBlock; y += 8) {
            for (int x = lid.x; x < kBlock; x += 8) {
                const int c = (y + kHalo) * kSpan + (x + kHalo);
                pB[c] = (pA[c - 1] + pA[c + 1] + pA[c - kSpan] + pA[c + kSpan]
                         + params.alpha * div[y * kBlock + x]) * params.rBeta;
            }
        }
        barrier();
        for (int y = lid.y; y < kBlock; y += 8) {
            for (int x = lid.x; x < kBlock; x += 8) {
                const int c = (y + kHalo) * kSpan + (x + kHalo);
                pA[c] = (pB[c - 1] + pB[c + 1] + pB[c - kSpan] + pB[c + kSpan]
                         + params.alpha * div[y * kBlock + x]) * params.rBeta;
            }
        }
        barrier();
    }

    // Only cells at least kIterations away from the block edge are exact.
    for (int y = lid.y + kIterations; y < kBlock - kIterations; y += 8) {
        for (int x = lid.x + kIterations; x < kBlock - kIterations; x += 8) {
            const ivec2 p = origin + ivec2(x, y);
            if (p.x >= 0 && p.y >= 0 && p.x < size.x && p.y < size.y) {
                imageStore(pressureOut, p, vec4(pA[(y + kHalo) * kSpan + (x + kHalo)]));
            }
        }
    }
}
