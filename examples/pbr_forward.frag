// pbr_forward.frag
//
// Forward+ metallic-roughness fragment shader (Vulkan): normal mapping,
// GGX specular with a split-sum IBL approximation, one directional light
// and a clustered list of point lights. It also writes per-pixel motion
// vectors to a storage image for TAA, under early fragment tests. A debug
// uniform switches the output to individual material channels.
//
// Intentional pitfalls:
//   SL601 (line 144: `case DEBUG_ROUGHNESS` has no break and falls into
//          `case DEBUG_METALLIC`, so the roughness view shows metallic)
// (look-alike that is fine: imageStore from a fragment shader that declares
//  `layout(early_fragment_tests) in;`)

#version 450

#define DEBUG_NONE      0
#define DEBUG_ALBEDO    1
#define DEBUG_NORMAL    2
#define DEBUG_ROUGHNESS 3
#define DEBUG_METALLIC  4
#define DEBUG_LIGHTS    5

#define MAX_LIGHTS_PER_CLUSTER 64
#define PI 3.14159265359

layout(early_fragment_tests) in;

layout(location = 0) in vec3 vWorldPos;
layout(location = 1) in vec3 vNormal;
layout(location = 2) in vec4 vTangent;
layout(location = 3) in vec2 vUV;
layout(location = 4) in vec4 vCurrClip;
layout(location = 5) in vec4 vPrevClip;

layout(location = 0) out vec4 outColor;

layout(set = 0, binding = 0) uniform Frame {
    mat4  view;
    vec4  cameraPos;
    vec4  sunDirection;     // xyz, w unused
    vec4  sunColor;         // rgb * intensity
    uvec4 clusterGrid;      // x, y, z cluster counts, w = log2 of the tile size in pixels
    int   debugView;
} frame;

struct PointLight {
    vec4 positionRadius;
    vec4 colorIntensity;
};

layout(std430, set = 0, binding = 1) readonly buffer Lights { PointLight lights[]; };
layout(std430, set = 0, binding = 2) readonly buffer ClusterLightIndices { uint lightIndices[]; };
layout(std430, set = 0, binding = 3) readonly buffer ClusterLightCounts { uint lightCounts[]; };

layout(set = 0, binding = 4) uniform samplerCube irradianceMap;
layout(set = 0, binding = 5) uniform samplerCube prefilteredMap;
layout(set = 0, binding = 6) uniform sampler2D brdfLut;
layout(set = 0, binding = 7, rg16f) uniform writeonly image2D motionVectors;

layout(set = 1, binding = 0) uniform sampler2D albedoMap;
layout(set = 1, binding = 1) uniform sampler2D normalMap;
layout(set = 1, binding = 2) uniform sampler2D ormMap;

float d_ggx(float NoH, float a)
{
    const float a2 = a * a;
    const float f = (NoH * a2 - NoH) * NoH + 1.0;
    return a2 / (PI * f * f);
}

float v_smith(float NoV, float NoL, float a)
{
    const float a2 = a * a;
    const float gv = NoL * sqrt(NoV * NoV * (1.0 - a2) + a2);
    const float gl = NoV * sqrt(NoL * NoL * (1.0 - a2) + a2);
    return 0.5 / (gv + gl);
}

vec3 f_schlick(vec3 f0, float VoH)
{
    return f0 + (1.0 - f0) * pow(1.0 - VoH, 5.0);
}

vec3 direct_light(vec3 N, vec3 V, vec3 L, vec3 radiance, vec3 albedo, float metallic, float roughness)
{
    const vec3 H = normalize(V + L);
    const float NoL = clamp(dot(N, L), 0.0, 1.0);
    const float NoV = abs(dot(N, V)) + 1e-4;
    const float a = roughness * roughness;
    const vec3 f0 = mix(vec3(0.04), albedo, metallic);
    const vec3 F = f_schlick(f0, clamp(dot(V, H), 0.0, 1.0));
    const vec3 spec = F * d_ggx(clamp(dot(N, H), 0.0, 1.0), a) * v_smith(NoV, NoL, a);
    const vec3 diff = (1.0 - F) * (1.0 - metallic) * albedo / PI;
    return (diff + spec) * radiance * NoL;
}

void main()
{
    const vec4 albedo = texture(albedoMap, vUV);
    const vec3 orm = texture(ormMap, vUV).rgb;
    const float roughness = clamp(orm.g, 0.045, 1.0);
    const float metallic = orm.b;

    const vec3 Ng = normalize(vNormal);
    const vec3 T = normalize(vTangent.xyz - Ng * dot(Ng, vTangent.xyz));
    const vec3 B = cross(Ng, T) * vTangent.w;
    const vec3 tn = texture(normalMap, vUV).xyz * 2.0 - 1.0;
    const vec3 N = normalize(mat3(T, B, Ng) * tn);
    const vec3 V = normalize(frame.cameraPos.xyz - vWorldPos);

    vec3 color = direct_light(N, V, -frame.sunDirection.xyz, frame.sunColor.rgb, albedo.rgb, metallic, roughness);

    // Clustered point lights.
    const uvec2 tile = uvec2(gl_FragCoord.xy) >> frame.clusterGrid.w;
    const float viewZ = -(frame.view * vec4(vWorldPos, 1.0)).z;
    const uint slice = min(uint(log2(max(viewZ, 0.1)) * 4.0), frame.clusterGrid.z - 1u);
    const uint cluster = (slice * frame.clusterGrid.y + tile.y) * frame.clusterGrid.x + tile.x;
    const uint count = min(lightCounts[cluster], uint(MAX_LIGHTS_PER_CLUSTER));
    for (uint i = 0u; i < count; ++i) {
        const PointLight light = lights[lightIndices[cluster * MAX_LIGHTS_PER_CLUSTER + i]];
        const vec3 toLight = light.positionRadius.xyz - vWorldPos;
        const float dist = length(toLight);
        const float falloff = clamp(1.0 - dist / light.positionRadius.w, 0.0, 1.0);
        color += direct_light(N, V, toLight / dist, light.colorIntensity.rgb * light.colorIntensity.a * falloff * falloff,
                              albedo.rgb, metallic, roughness);
    }

    // Image-based lighting (split-sum).
    const float NoV = clamp(dot(N, V), 0.0, 1.0);
    const vec3 f0 = mix(vec3(0.04), albedo.rgb, metallic);
    const vec2 envBrdf = texture(brdfLut, vec2(NoV, roughness)).rg;
    const vec3 irradiance = texture(irradianceMap, N).rgb;
    const vec3 prefiltered = textureLod(prefilteredMap, reflect(-V, N), roughness * 6.0).rgb;
    color += (irradiance * albedo.rgb * (1.0 - metallic) + prefiltered * (f0 * envBrdf.x + envBrdf.y)) * orm.r;

    switch (frame.debugView) {
        case DEBUG_ALBEDO:
            color = albedo.rgb;
            break;
        case DEBUG_NORMAL:
            color = N * 0.5 + 0.5;
            break;
        case DEBUG_ROUGHNESS:
            color = vec3(roughness);
        case DEBUG_METALLIC:
            color = vec3(metallic);
            break;
        case DEBUG_LIGHTS:
            color = vec3(float(count) / float(MAX_LIGHTS_PER_CLUSTER), 0.0, 0.0);
            break;
        case DEBUG_NONE:
        default:
            break;
    }

    const vec2 curr = vCurrClip.xy / vCurrClip.w;
    const vec2 prev = vPrevClip.xy / vPrevClip.w;
    imageStore(motionVectors, ivec2(gl_FragCoord.xy), vec4((curr - prev) * 0.5, 0.0, 0.0));

    outColor = vec4(color, albedo.a);
}
