// pbr_lighting.metal
//
// Forward PBR shading: a vertex shader for static meshes (position, normal,
// tangent, uv) and a metallic-roughness fragment shader with GGX/Smith/
// Schlick, up to 16 point lights from a constant buffer, a PCF-filtered
// directional shadow, an underwater tint below the water plane, and
// object-id picking written to a device buffer under the cursor.
// Lighting math is half precision with h-suffixed literals.
//
// Intentional pitfalls:
//   SL203 (line 146: 100000.0 does not fit in half (max 65504) and becomes
//          +inf, so the "nearest light" search starts from infinity)
//   SL205 (line 163: select emulated with arithmetic on the bool-valued
//          `underwater`; use select() or ?:)
// (look-alike that is fine: the fragment function writes the picking buffer
//  and IS declared [[early_fragment_tests]])

#include <metal_stdlib>
using namespace metal;

struct VertexIn {
    float3 position [[attribute(0)]];
    float3 normal   [[attribute(1)]];
    float4 tangent  [[attribute(2)]];
    float2 uv       [[attribute(3)]];
};

struct VertexOut {
    float4 position [[position]];
    float3 worldPos;
    float4 shadowCoord;
    half3  normal;
    half4  tangent;
    float2 uv;
};

struct FrameUniforms {
    float4x4 viewProj;
    float4x4 lightViewProj;
    float3   cameraPos;
    float    waterHeight;
    float3   sunDirection;
    uint     lightCount;
    float3   sunColor;
    uint     objectId;
    uint2    cursor;
};

struct ObjectUniforms {
    float4x4 model;
    float3x3 normalMatrix;
};

struct PointLight {
    float3 position;
    float  radius;
    half3  color;
    half   intensity;
};

vertex VertexOut pbr_vs(VertexIn                in     [[stage_in]],
                        constant FrameUniforms&  frame  [[buffer(1)]],
                        constant ObjectUniforms& object [[buffer(2)]])
{
    const float4 world = object.model * float4(in.position, 1.0f);
    VertexOut out;
    out.position    = frame.viewProj * world;
    out.worldPos    = world.xyz;
    out.shadowCoord = frame.lightViewProj * world;
    out.normal      = half3(normalize(object.normalMatrix * in.normal));
    out.tangent     = half4(half3(normalize(object.normalMatrix * in.tangent.xyz)), half(in.tangent.w));
    out.uv          = in.uv;
    return out;
}

static inline half d_ggx(half NoH, half a)
{
    const half a2 = a * a;
    const half f = (NoH * a2 - NoH) * NoH + 1.0h;
    return a2 / (M_PI_H * f * f + 1.0e-4h);
}

static inline half v_smith_ggx_correlated(half NoV, half NoL, half a)
{
    const half a2 = a * a;
    const half gv = NoL * sqrt(NoV * NoV * (1.0h - a2) + a2);
    const half gl = NoV * sqrt(NoL * NoL * (1.0h - a2) + a2);
    return 0.5h / (gv + gl + 1.0e-4h);
}

static inline half3 f_schlick(half3 f0, half VoH)
{
    const half f = pow(1.0h - VoH, 5.0h);
    return f0 + (1.0h - f0) * f;
}

static inline half3 shade(half3 N, half3 V, half3 L, half3 radiance, half3 albedo, half metallic, half roughness)
{
    const half3 H = normalize(V + L);
    const half NoV = abs(dot(N, V)) + 1.0e-3h;
    const half NoL = saturate(dot(N, L));
    const half NoH = saturate(dot(N, H));
    const half VoH = saturate(dot(V, H));
    const half a = roughness * roughness;

    const half3 f0 = mix(half3(0.04h), albedo, metallic);
    const half3 F = f_schlick(f0, VoH);
    const half3 specular = F * (d_ggx(NoH, a) * v_smith_ggx_correlated(NoV, NoL, a));
    const half3 diffuse = (1.0h - metallic) * albedo / M_PI_H;
    return (diffuse + specular) * radiance * NoL;
}

[[early_fragment_tests]]
fragment half4 pbr_fs(VertexOut               in         [[stage_in]],
                      constant FrameUniforms&  frame      [[buffer(0)]],
                      constant PointLight*     lights     [[buffer(1)]],
                      device uint*             pickBuffer [[buffer(2)]],
                      texture2d<half>          albedoMap  [[texture(0)]],
                      texture2d<half>          ormMap     [[texture(1)]],
                      depth2d<float>           shadowMap  [[texture(2)]],
                      sampler                  aniso      [[sampler(0)]])
{
    constexpr sampler shadowSampler(coord::normalized, filter::linear,
                                    address::clamp_to_edge, compare_func::less_equal);

    const half4 base = albedoMap.sample(aniso, in.uv);
    const half3 orm = ormMap.sample(aniso, in.uv).rgb;   // occlusion, roughness, metallic
    const half3 N = normalize(in.normal);
    const half3 V = half3(normalize(frame.cameraPos - in.worldPos));

    // 3x3 PCF on the sun shadow map.
    const float3 sc = in.shadowCoord.xyz / in.shadowCoord.w;
    const float2 suv = sc.xy * float2(0.5f, -0.5f) + 0.5f;
    const float2 texel = 1.0f / float2(shadowMap.get_width(), shadowMap.get_height());
    float visibility = 0.0f;
    for (int y = -1; y <= 1; ++y) {
        for (int x = -1; x <= 1; ++x) {
            visibility += shadowMap.sample_compare(shadowSampler, suv + float2(x, y) * texel, sc.z);
        }
    }
    visibility *= 1.0f / 9.0f;

    half3 color = shade(N, V, half3(-frame.sunDirection), half3(frame.sunColor) * half(visibility),
                        base.rgb, orm.b, orm.g);

    half nearest = 100000.0;
    for (uint i = 0; i < min(frame.lightCount, 16u); ++i) {
        const PointLight light = lights[i];
        const float3 toLight = light.position - in.worldPos;
        const float dist = length(toLight);
        nearest = min(nearest, half(dist));
        const half falloff = saturate(1.0h - half(dist / light.radius));
        const half3 radiance = light.color * (light.intensity * falloff * falloff);
        color += shade(N, V, half3(toLight / dist), radiance, base.rgb, orm.b, orm.g);
    }
    // Fade in a rim term when a light is close, for readability in the editor.
    color += half3(0.02h) * saturate(1.0h - nearest * 0.25h);

    color += base.rgb * half3(0.03h) * orm.r;

    const half underwater = half(in.worldPos.y < frame.waterHeight);
    const half3 tinted = color * half3(0.55h, 0.8h, 0.9h);
    color = tinted * underwater + color * (1.0h - underwater);

    if (all(uint2(in.position.xy) == frame.cursor)) {
        pickBuffer[0] = frame.objectId;
    }
    return half4(color, base.a);
}
