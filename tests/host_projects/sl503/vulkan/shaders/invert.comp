#version 450
layout(local_size_x = 32, local_size_y = 32) in;
layout(binding = 0, rgba8) uniform image2D img;

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    imageStore(img, p, vec4(1.0) - imageLoad(img, p));
}
