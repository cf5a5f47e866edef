// particles_update.metal
//
// GPU particle system: `particles_simulate` integrates velocity and
// position with gravity, drag and a ground plane; `particles_respawn`
// re-emits dead particles from an emitter whose shape (sphere, box, cone)
// is chosen at runtime. Random numbers come from a PCG hash of the
// particle index and frame number.
//
// Intentional pitfalls:
//   SL103 (line 67: `device const SimParams* sim` is a single struct read
//          through sim->field only; `constant SimParams&` enables preloading)
//   (not SL104: line 77 reads position and velocity with color between them,
//          but two 16-byte fields are two loads even when adjacent)
//   SL601 (line 109: case kShapeSphere falls through into kShapeBox, which
//          overwrites the sphere offset)

#include <metal_stdlib>
using namespace metal;

struct Particle {
    float3 position;
    half4  color;
    float3 velocity;
    float  age;
    float  lifetime;
};

struct SimParams {
    float3 gravity;
    float  dt;
    float  drag;
    float  groundHeight;
    float  restitution;
};

enum EmitterShape : int { kShapeSphere = 0, kShapeBox = 1, kShapeCone = 2 };

struct Emitter {
    float3 origin;
    float3 extent;       // box half-size
    float  radius;       // sphere radius / cone base radius
    float  speed;
    float  lifetime;
    int    shape;
    uint   frame;
};

static inline uint pcg_hash(uint v)
{
    const uint state = v * 747796405u + 2891336453u;
    const uint word = ((state >> ((state >> 28u) + 4u)) ^ state) * 277803737u;
    return (word >> 22u) ^ word;
}

static inline float3 random_float3(thread uint& seed)
{
    seed = pcg_hash(seed);
    const float x = float(seed) * (1.0f / 4294967296.0f);
    seed = pcg_hash(seed);
    const float y = float(seed) * (1.0f / 4294967296.0f);
    seed = pcg_hash(seed);
    const float z = float(seed) * (1.0f / 4294967296.0f);
    return float3(x, y, z);
}

kernel void particles_simulate(device Particle*         particles [[buffer(0)]],
                               device const SimParams*  sim       [[buffer(1)]],
                               constant uint&           count     [[buffer(2)]],
                               uint gid [[thread_position_in_grid]])
{
    if (gid >= count) {
        return;
    }
    device Particle& p = particles[gid];
    const float dt = sim->dt;

    float3 pos = p.position + p.velocity * dt;
    float3 vel = (p.velocity + sim->gravity * dt) * (1.0f - sim->drag * dt);

    if (pos.y < sim->groundHeight) {
        pos.y = sim->groundHeight;
        vel.y = -vel.y * sim->restitution;
    }

    p.position = pos;
    p.velocity = vel;
    p.age += dt;
}

kernel void particles_respawn(device Particle*  particles [[buffer(0)]],
                              constant Emitter& emitter   [[buffer(1)]],
                              constant uint&    count     [[buffer(2)]],
                              uint gid [[thread_position_in_grid]])
{
    if (gid >= count) {
        return;
    }
    device Particle& p = particles[gid];
    if (p.age < p.lifetime) {
        return;
    }

    uint seed = pcg_hash(gid ^ (emitter.frame * 0x9E3779B9u));
    const float3 r = random_float3(seed);

    float3 offset = 0.0f;
    float3 dir = float3(0.0f, 1.0f, 0.0f);
    switch (emitter.shape) {
        case kShapeSphere:
            offset = normalize(r - 0.5f) * emitter.radius;
            dir = normalize(offset);
        case kShapeBox:
            offset = (r * 2.0f - 1.0f) * emitter.extent;
            break;
        case kShapeCone: {
            const float phi = r.x * 2.0f * M_PI_F;
            const float rr = sqrt(r.y) * emitter.radius;
            offset = float3(cos(phi) * rr, 0.0f, sin(phi) * rr);
            dir = normalize(float3(offset.x, emitter.radius, offset.z));
            break;
        }
        default:
            break;
    }

    p.position = emitter.origin + offset;
    p.velocity = dir * emitter.speed * (0.75f + 0.5f * r.z);
    p.color    = half4(1.0h, 0.85h, 0.6h, 1.0h);
    p.age      = 0.0f;
    p.lifetime = emitter.lifetime * (0.8f + 0.4f * r.x);
}
