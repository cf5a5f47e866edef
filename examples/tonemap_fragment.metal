// tonemap_fragment.metal
//
// Final full-screen pass of an HDR renderer: a vertex shader that emits a
// single oversized triangle, and a fragment shader that applies exposure,
// the ACES fitted curve (Narkowicz approximation), sRGB encoding and a
// little dither. The fragment shader also accumulates a log-luminance
// histogram for next frame's auto-exposure.
//
// Intentional pitfalls:
//   SL701 (line 64: fragment function writes a device buffer (atomic
//          histogram) but is not declared [[early_fragment_tests]])
//   SL303 (line 65: `texture2d<float>` sampled into a float4 that is
//          immediately narrowed to half; declare texture2d<half>)

#include <metal_stdlib>
using namespace metal;

struct FullscreenOut {
    float4 position [[position]];
    float2 uv;
};

struct TonemapParams {
    float exposure;
    float minLogLuma;
    float invLogLumaRange;
    float ditherStrength;
};

constant half3 kLuma = half3(0.2126h, 0.7152h, 0.0722h);

vertex FullscreenOut fullscreen_vs(uint vid [[vertex_id]])
{
    // (0,0) (2,0) (0,2): one triangle that covers the viewport.
    const float2 corner = float2(float((vid << 1) & 2u), float(vid & 2u));
    FullscreenOut out;
    out.position = float4(corner * 2.0f - 1.0f, 0.0f, 1.0f);
    out.uv = float2(corner.x, 1.0f - corner.y);
    return out;
}

static inline half3 aces_fitted(half3 x)
{
    const half a = 2.51h;
    const half b = 0.03h;
    const half c = 2.43h;
    const half d = 0.59h;
    const half e = 0.14h;
    return saturate((x * (a * x + b)) / (x * (c * x + d) + e));
}

static inline half3 linear_to_srgb(half3 c)
{
    const half3 lo = c * 12.92h;
    const half3 hi = 1.055h * pow(c, half3(1.0h / 2.4h)) - 0.055h;
    return select(hi, lo, c <= 0.0031308h);
}

static inline half interleaved_gradient_noise(float2 p)
{
    return half(fract(52.9829189f * fract(dot(p, float2(0.06711056f, 0.00583715f)))));
}

fragment half4 tonemap_aces_fs(FullscreenOut          in        [[stage_in]],
                               texture2d<float>       hdr       [[texture(0)]],
                               constant TonemapParams& params   [[buffer(0)]],
                               device atomic_uint*    histogram [[buffer(1)]])
{
    constexpr sampler linearClamp(filter::linear, address::clamp_to_edge);

    const float4 sampled = hdr.sample(linearClamp, in.uv);
    const half3 rgb = half3(sampled.rgb) * half(params.exposure);

    // Histogram of log2 luminance, 64 bins, for the exposure adaptation pass.
    const half luma = dot(rgb, kLuma);
    const float logLuma = log2(max(float(luma), 1.0e-4f));
    const float t = saturate((logLuma - params.minLogLuma) * params.invLogLumaRange);
    const int bin = int(t * 63.0f);
    atomic_fetch_add_explicit(&histogram[bin], 1u, memory_order_relaxed);

    half3 color = linear_to_srgb(aces_fitted(rgb));
    const half noise = interleaved_gradient_noise(in.position.xy) - 0.5h;
    color += noise * half(params.ditherStrength) / 255.0h;
    return half4(color, 1.0h);
}
