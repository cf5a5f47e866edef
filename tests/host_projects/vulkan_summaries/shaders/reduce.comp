#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ROWS = 4;  // the host sets id 1 to its y size (1): ROWS is 1
layout(binding = 0) buffer Data { float v[]; };
shared float part[gl_WorkGroupSize.x];

void main() {
    uint i = gl_LocalInvocationID.x;
    part[i] = v[gl_GlobalInvocationID.x] * float(ROWS);
    barrier();
    if (i == 0) {
        float s = 0.0;
        for (uint k = 0; k < gl_WorkGroupSize.x; ++k) s += part[k];
        v[gl_WorkGroupID.x] = s;
    }
}
