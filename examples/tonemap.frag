// tonemap.frag
//
// Post-process fragment shader: exposure, Uncharted-2 filmic curve,
// letterbox bars for cinematic cutscenes, sRGB output. While it has the
// HDR value at hand it also bins log luminance into a histogram SSBO for
// the auto-exposure compute pass of the next frame.
//
// Intentional pitfalls:
//   SL701 (line 53: the fragment shader writes a storage buffer (atomicAdd
//          into the histogram) without `layout(early_fragment_tests) in;`)
//   SL205 (line 70: `color * inside + bar * (1.0 - inside)` with
//          `inside = float(bool)` is a select done with arithmetic; use mix()
//          with a bool, or ?:)

#version 450

layout(location = 0) in vec2 vUV;
layout(location = 0) out vec4 outColor;

layout(binding = 0) uniform sampler2D hdrScene;

layout(std140, binding = 1) uniform PostParams {
    float exposure;
    float whitePoint;
    float minLogLuminance;
    float invLogLuminanceRange;
    vec3  letterboxColor;
    float letterboxHalfHeight;   // 0.5 = no bars
} post;

layout(std430, binding = 2) buffer LuminanceHistogram {
    uint bins[64];
} histogram;

vec3 uncharted2_partial(vec3 x)
{
    const float A = 0.15;
    const float B = 0.50;
    const float C = 0.10;
    const float D = 0.20;
    const float E = 0.02;
    const float F = 0.30;
    return ((x * (A * x + C * B) + D * E) / (x * (A * x + B) + D * F)) - E / F;
}

vec3 linear_to_srgb(vec3 c)
{
    const vec3 lo = c * 12.92;
    const vec3 hi = 1.055 * pow(c, vec3(1.0 / 2.4)) - 0.055;
    return mix(hi, lo, lessThanEqual(c, vec3(0.0031308)));
}

void main()
{
    const vec3 hdr = texture(hdrScene, vUV).rgb * post.exposure;

    const float luminance = dot(hdr, vec3(0.2126, 0.7152, 0.0722));
    if (luminance > 1.0e-4) {
        const float t = clamp((log2(luminance) - post.minLogLuminance) * post.invLogLuminanceRange, 0.0, 1.0);
        atomicAdd(histogram.bins[uint(t * 62.0) + 1u], 1u);
    } else {
        atomicAdd(histogram.bins[0], 1u);
    }

    const vec3 curve = uncharted2_partial(hdr * 2.0);
    const vec3 whiteScale = 1.0 / uncharted2_partial(vec3(post.whitePoint));
    vec3 color = linear_to_srgb(clamp(curve * whiteScale, 0.0, 1.0));

    const float inside = float(abs(vUV.y - 0.5) < post.letterboxHalfHeight);
    color = color * inside + post.letterboxColor * (1.0 - inside);

    outColor = vec4(color, 1.0);
}
