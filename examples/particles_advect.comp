// particles_advect.comp
//
// Particle advection for a smoke/spark effect: particles are advected
// through a 3D velocity field texture, accelerated by buoyancy, damped and
// aged; dead particles are flagged by zeroing their color alpha so the
// emitter pass can recycle them. The host dispatches ceil(count / 64)
// workgroups.
//
// Intentional pitfalls:
//   SL105 (line 41: particles[] is indexed by gl_GlobalInvocationID.x with
//          no check against sim.count or particles.length(); the last
//          workgroup runs past the end)
//   (not SL104: line 45 reads `position` and `velocity` with `color` between
//          them, but two vec4 fields are two 16-byte loads even when adjacent)

#version 450

layout(local_size_x = 64) in;

struct Particle {
    vec4 position;   // xyz, w = age in seconds
    vec4 color;      // rgb, a = alive (0 or 1)
    vec4 velocity;   // xyz, w = lifetime in seconds
};

layout(std430, binding = 0) buffer Particles {
    Particle particles[];
};

layout(std140, binding = 1) uniform Simulation {
    vec4  buoyancy;      // xyz = acceleration per unit temperature
    vec4  fieldOrigin;   // xyz = world position of the field's corner
    vec4  fieldScale;    // xyz = 1 / world extent of the field
    float dt;
    float drag;
    uint  count;
} sim;

layout(binding = 2) uniform sampler3D velocityField;

void main()
{
    const uint i = gl_GlobalInvocationID.x;

    const vec3 p = particles[i].position.xyz + particles[i].velocity.xyz * sim.dt;
    const float age = particles[i].position.w + sim.dt;
    const float lifetime = particles[i].velocity.w;

    const vec3 uvw = (p - sim.fieldOrigin.xyz) * sim.fieldScale.xyz;
    const vec3 wind = textureLod(velocityField, uvw, 0.0).xyz;

    // Temperature falls linearly with normalised age.
    const float temperature = max(1.0 - age / lifetime, 0.0);
    vec3 v = particles[i].velocity.xyz;
    v += (wind - v) * sim.drag * sim.dt;
    v += sim.buoyancy.xyz * temperature * sim.dt;

    particles[i].position = vec4(p, age);
    particles[i].velocity = vec4(v, lifetime);
    if (age >= lifetime) {
        particles[i].color.a = 0.0;
    }
}
