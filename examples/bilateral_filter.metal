// bilateral_filter.metal
//
// Edge-preserving smoothing in half precision: a brute-force bilateral
// filter (spatial Gaussian x range Gaussian on luma) followed by a local
// contrast pass that adds back a boosted detail layer (original - base).
//
// Intentional pitfalls:
//   SL202 (line 83: `gain * 0.5` multiplies a half by a float literal and
//          promotes the multiply to float; use 0.5h)
//   SL202 (line 88: `toeDistance * 0.25` multiplies a half by a float
//          literal, so this multiply and the next run in float; use 0.25h)
// (look-alikes that are fine: `detail * 0.5` on a half4 vector, `luma * 2`
//  with an integer literal, `max(..., 0.0h)`; every other literal carries
//  the h suffix. Note that Metal rejects `max(half, 0.0)` outright as an
//  ambiguous call, so the float-literal pitfall shows up in operators.)

#include <metal_stdlib>
using namespace metal;

struct BilateralParams {
    float sigmaSpatial;
    float sigmaRange;
    int   radius;
};

struct ContrastParams {
    float strength;
    float shadowLift;
};

constant half3 kLuma = half3(0.2126h, 0.7152h, 0.0722h);
constant half  kToe  = 0.04h;

kernel void bilateral_filter(texture2d<half, access::read>  src    [[texture(0)]],
                             texture2d<half, access::write> dst    [[texture(1)]],
                             constant BilateralParams&      params [[buffer(0)]],
                             uint2                          gid    [[thread_position_in_grid]])
{
    if (gid.x >= dst.get_width() || gid.y >= dst.get_height()) {
        return;
    }
    const int2 size = int2(src.get_width(), src.get_height());

    const half4 center     = src.read(gid);
    const half  centerLuma = dot(center.rgb, kLuma);
    const half  invSpatial = half(-0.5f / (params.sigmaSpatial * params.sigmaSpatial));
    const half  invRange   = half(-0.5f / (params.sigmaRange * params.sigmaRange));

    half4 sum  = half4(0.0h);
    half  wsum = 0.0h;
    for (int dy = -params.radius; dy <= params.radius; ++dy) {
        for (int dx = -params.radius; dx <= params.radius; ++dx) {
            const int2  c = clamp(int2(gid) + int2(dx, dy), int2(0), size - 1);
            const half4 s = src.read(uint2(c));
            const half  d = dot(s.rgb, kLuma) - centerLuma;
            const half  r2 = half(dx * dx + dy * dy);
            const half  w = exp(r2 * invSpatial + d * d * invRange);
            sum  += s * w;
            wsum += w;
        }
    }
    dst.write(sum / max(wsum, 1.0e-3h), gid);
}

kernel void local_contrast(texture2d<half, access::read>  original [[texture(0)]],
                           texture2d<half, access::read>  base     [[texture(1)]],
                           texture2d<half, access::write> dst      [[texture(2)]],
                           constant ContrastParams&       params   [[buffer(0)]],
                           uint2                          gid      [[thread_position_in_grid]])
{
    if (gid.x >= dst.get_width() || gid.y >= dst.get_height()) {
        return;
    }

    const half4 o = original.read(gid);
    const half4 b = base.read(gid);
    const half4 detail = o - b;

    // Midtones get the full boost, deep shadows and highlights less.
    const half luma     = dot(b.rgb, kLuma);
    const half midtone  = 1.0h - abs(luma * 2 - 1.0h);
    const half gain     = half(params.strength) * midtone;
    const half halfGain = gain * 0.5;

    // Lift shadows a little, measured from the toe of the curve.
    const half shadowLuma = dot(o.rgb, kLuma);
    const half toeDistance = max(shadowLuma - kToe, 0.0h);
    const half lift = toeDistance * 0.25 * half(params.shadowLift);

    half4 result = b + detail * (1.0h + halfGain);
    result += detail * 0.5 * gain;
    result.rgb += lift;
    dst.write(half4(saturate(result.rgb), o.a), gid);
}
