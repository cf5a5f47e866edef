#version 450
layout(local_size_x = 64) in;
layout(binding = 0) buffer Data { uint v[]; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    v[i] = v[i] + 1u;
}
