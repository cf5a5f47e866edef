#version 450
// Colour inversion of an RGBA8 image in 32x32 workgroups, dispatched by vulkan_invert.cpp.
// Intentional pitfalls: none in the shader (it checks the image bounds). SL503 is reported in the
// host file (vulkan_invert.cpp:19, with this file's main as the related location): the grid's x
// count drops the last columns.
layout(local_size_x = 32, local_size_y = 32) in;
layout(binding = 0, rgba8) uniform image2D img;

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(p, imageSize(img)))) return;
    imageStore(img, p, vec4(1.0) - imageLoad(img, p));
}
