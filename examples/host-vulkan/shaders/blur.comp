#version 450
// A 2-D box blur whose workgroup size the host sets through specialization constants
// (vulkan_blur.cpp): the shader alone does not say it.
// Intentional pitfalls: SL501 (line 12: the host specialises 13x13 = 169 invocations, 6 subgroups of
// 32 with 23 idle lanes; reported with vulkan_blur.cpp's line as the related location).
layout(local_size_x_id = 0, local_size_y_id = 1) in;

layout(std430, binding = 0) readonly buffer Src { float src[]; };
layout(std430, binding = 1) writeonly buffer Dst { float dst[]; };
layout(push_constant) uniform Size { int width; int height; } size;

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (p.x >= size.width || p.y >= size.height) return;
    float sum = 0.0;
    for (int dy = -1; dy <= 1; ++dy) {
        for (int dx = -1; dx <= 1; ++dx) {
            ivec2 q = clamp(p + ivec2(dx, dy), ivec2(0), ivec2(size.width - 1, size.height - 1));
            sum += src[q.y * size.width + q.x];
        }
    }
    dst[p.y * size.width + p.x] = sum / 9.0;
}
