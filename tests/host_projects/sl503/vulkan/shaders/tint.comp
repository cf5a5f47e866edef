#version 450
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) buffer B { float data[]; };

void main() {
    data[gl_GlobalInvocationID.x] *= 0.5;
}
