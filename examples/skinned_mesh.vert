// skinned_mesh.vert
//
// Linear-blend skinning vertex shader for instanced characters: up to four
// bone influences per vertex, bone matrices for all instances in one
// storage buffer (instance i uses bones [i * boneCount, (i+1) * boneCount)),
// tangent frame skinned alongside the normal, previous-frame position for
// motion vectors. With MORPH_TARGETS defined, two blend-shape deltas are
// added before skinning.
//
// Intentional pitfalls: none
// (look-alikes a precise linter must accept: the `const` palette array
//  indexed by gl_InstanceIndex, the private `weights` array indexed only
//  in a constant 4-trip loop, runtime-indexed storage buffers)

#version 450

layout(location = 0) in vec3  inPosition;
layout(location = 1) in vec3  inNormal;
layout(location = 2) in vec4  inTangent;
layout(location = 3) in vec2  inUV;
layout(location = 4) in uvec4 inBoneIndices;
layout(location = 5) in vec4  inBoneWeights;
#ifdef MORPH_TARGETS
layout(location = 6) in vec3  inMorphDelta0;
layout(location = 7) in vec3  inMorphDelta1;
#endif

layout(location = 0) out vec3 vWorldPos;
layout(location = 1) out vec3 vNormal;
layout(location = 2) out vec4 vTangent;
layout(location = 3) out vec2 vUV;
layout(location = 4) out vec4 vCurrClip;
layout(location = 5) out vec4 vPrevClip;
layout(location = 6) out vec3 vTint;

layout(set = 0, binding = 0) uniform Camera {
    mat4 viewProj;
    mat4 prevViewProj;
} camera;

layout(std430, set = 0, binding = 1) readonly buffer BoneMatrices { mat4 bones[]; };
layout(std430, set = 0, binding = 2) readonly buffer PrevBoneMatrices { mat4 prevBones[]; };

layout(push_constant) uniform DrawParams {
    uint  boneCount;
    float morphWeight0;
    float morphWeight1;
} draw;

// Team colors for crowd instances; the index is data-dependent but the
// array is a compile-time constant, so it is emitted as a constant table.
const vec3 kTeamPalette[4] = vec3[4](
    vec3(0.80, 0.20, 0.20),
    vec3(0.20, 0.40, 0.85),
    vec3(0.25, 0.70, 0.30),
    vec3(0.85, 0.75, 0.20)
);

void main()
{
    vec3 position = inPosition;
#ifdef MORPH_TARGETS
    position += inMorphDelta0 * draw.morphWeight0 + inMorphDelta1 * draw.morphWeight1;
#endif

    // Renormalise in case the exporter left the weights slightly off.
    float weights[4];
    float total = 0.0;
    for (int i = 0; i < 4; ++i) {
        weights[i] = inBoneWeights[i];
        total += weights[i];
    }

    const uint base = uint(gl_InstanceIndex) * draw.boneCount;
    mat4 skin = mat4(0.0);
    mat4 prevSkin = mat4(0.0);
    for (int i = 0; i < 4; ++i) {
        const float w = weights[i] / total;
        skin += bones[base + inBoneIndices[i]] * w;
        prevSkin += prevBones[base + inBoneIndices[i]] * w;
    }

    const vec4 world = skin * vec4(position, 1.0);
    const vec4 prevWorld = prevSkin * vec4(position, 1.0);
    const mat3 skin3 = mat3(skin);

    vWorldPos = world.xyz;
    vNormal = normalize(skin3 * inNormal);
    vTangent = vec4(normalize(skin3 * inTangent.xyz), inTangent.w);
    vUV = inUV;
    vTint = kTeamPalette[gl_InstanceIndex & 3];

    vCurrClip = camera.viewProj * world;
    vPrevClip = camera.prevViewProj * prevWorld;
    gl_Position = vCurrClip;
}
