// gaussian_blur_rows.comp
//
// Horizontal pass of a separable Gaussian blur for a bloom chain (Vulkan).
// Each workgroup processes one 256-pixel run of a row: it caches the run
// plus an apron of kRadius texels on both sides in shared memory, then each
// invocation applies the 2*kRadius+1 weights from a uniform buffer.
// The workgroup width and the radius are specialization constants.
//
// Intentional pitfalls: none
// (look-alikes a precise linter must accept: integer division by
//  gl_WorkGroupSize.x, a constant; invocations outside the image still take
//  part in the load and the barrier, and only the final imageStore is
//  guarded; runtime index into a uniform-block array)

#version 450

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;
layout(local_size_x_id = 0) in;

layout(constant_id = 1) const int kRadius = 8;
const int kMaxRadius = 16;

layout(binding = 0, rgba16f) uniform readonly image2D srcImage;
layout(binding = 1, rgba16f) uniform writeonly image2D dstImage;

layout(std140, binding = 2) uniform BlurWeights {
    vec4 weights[kMaxRadius + 1];   // weights[i].x = w(|offset| = i)
} blur;

shared vec4 rowCache[gl_WorkGroupSize.x + 2 * kMaxRadius];

void main()
{
    const ivec2 size = imageSize(srcImage);
    const int runStart = int(gl_WorkGroupID.x * gl_WorkGroupSize.x);
    const int row = min(int(gl_WorkGroupID.y), size.y - 1);
    const int lid = int(gl_LocalInvocationID.x);
    const int cacheLength = int(gl_WorkGroupSize.x) + 2 * kRadius;

    // Every invocation loads ceil(cacheLength / width) texels, clamped to the row.
    const uint loadsPerInvocation = (uint(cacheLength) + gl_WorkGroupSize.x - 1u) / gl_WorkGroupSize.x;
    for (uint k = 0u; k < loadsPerInvocation; ++k) {
        const int c = lid + int(k * gl_WorkGroupSize.x);
        if (c < cacheLength) {
            const int x = clamp(runStart + c - kRadius, 0, size.x - 1);
            rowCache[c] = imageLoad(srcImage, ivec2(x, row));
        }
    }
    memoryBarrierShared();
    barrier();

    vec4 acc = rowCache[lid + kRadius] * blur.weights[0].x;
    for (int i = 1; i <= kRadius; ++i) {
        const float w = blur.weights[i].x;
        acc += (rowCache[lid + kRadius - i] + rowCache[lid + kRadius + i]) * w;
    }

    const ivec2 dst = ivec2(runStart + lid, int(gl_WorkGroupID.y));
    if (dst.x < size.x && dst.y < size.y) {
        imageStore(dstImage, dst, acc);
    }
}
