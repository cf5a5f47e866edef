#version 450
layout(local_size_x_id = 0, local_size_y_id = 1) in;
layout(binding = 0) buffer Img { float px[]; };
layout(push_constant) uniform P { uint width; uint height; };

void main() {
    uvec2 p = gl_GlobalInvocationID.xy;
    if (p.x >= width || p.y >= height) return;
    px[p.y * width + p.x] *= 0.5;
}
