// cloth_constraints.comp
//
// One Verlet step of a cloth simulation on a W x H particle grid: integrate
// with gravity and wind, then relax the structural springs to the right and
// below once (Jacobi style, reading the predicted positions of neighbours
// from the input buffer). Pinned particles (inverse mass 0) do not move.
// The host ping-pongs the position buffers between steps.
//
// Intentional pitfalls:
//   SL402 (line 67: barrier() with no shared-memory access anywhere in the
//          shader (and no memoryBarrierBuffer): it orders nothing, and it
//          cannot make other workgroups' buffer writes visible anyway)

#version 450

layout(local_size_x = 16, local_size_y = 16) in;

layout(std430, binding = 0) readonly buffer PositionsIn { vec4 posIn[]; };       // xyz, w = inverse mass
layout(std430, binding = 1) readonly buffer PreviousPositions { vec4 posPrev[]; };
layout(std430, binding = 2) writeonly buffer PositionsOut { vec4 posOut[]; };

layout(std140, binding = 3) uniform ClothParams {
    vec4  gravity;
    vec4  wind;           // xyz direction * strength, w = turbulence
    uvec2 gridSize;       // particles in x and y
    float restLength;
    float stiffness;
    float dt;
    float damping;
} cloth;

vec3 predict(uint idx)
{
    const vec4 p = posIn[idx];
    if (p.w == 0.0) {
        return p.xyz;
    }
    const vec3 velocity = (p.xyz - posPrev[idx].xyz) * cloth.damping;
    return p.xyz + velocity + (cloth.gravity.xyz + cloth.wind.xyz) * (cloth.dt * cloth.dt);
}

vec3 spring_correction(vec3 self, vec3 other, float selfInvMass, float otherInvMass)
{
    const float wSum = selfInvMass + otherInvMass;
    if (wSum == 0.0) {
        return vec3(0.0);
    }
    const vec3 delta = other - self;
    const float len = length(delta);
    const float c = (len - cloth.restLength) / max(len, 1.0e-6);
    return delta * (c * cloth.stiffness * selfInvMass / wSum);
}

void main()
{
    const uvec2 g = gl_GlobalInvocationID.xy;
    const bool inside = g.x < cloth.gridSize.x && g.y < cloth.gridSize.y;
    const uint idx = g.y * cloth.gridSize.x + g.x;

    vec3 p = vec3(0.0);
    float invMass = 0.0;
    if (inside) {
        p = predict(idx);
        invMass = posIn[idx].w;
    }

    barrier();

    if (!inside) {
        return;
    }

    vec3 correction = vec3(0.0);
    if (g.x + 1u < cloth.gridSize.x) {
        correction += spring_correction(p, predict(idx + 1u), invMass, posIn[idx + 1u].w);
    }
    if (g.x > 0u) {
        correction += spring_correction(p, predict(idx - 1u), invMass, posIn[idx - 1u].w);
    }
    if (g.y + 1u < cloth.gridSize.y) {
        correction += spring_correction(p, predict(idx + cloth.gridSize.x), invMass, posIn[idx + cloth.gridSize.x].w);
    }
    if (g.y > 0u) {
        correction += spring_correction(p, predict(idx - cloth.gridSize.x), invMass, posIn[idx - cloth.gridSize.x].w);
    }

    posOut[idx] = vec4(p + correction, invMass);
}
