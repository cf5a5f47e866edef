// sobel_edges.metal
//
// Sobel edge detection for a camera/video pipeline. Pass 1 samples the
// color image, converts to luma and writes gradient magnitude plus a
// quantised orientation; pass 2 applies non-maximum suppression and a
// hysteresis-style double threshold to produce a thin edge mask.
// Frames are 1080p: shaderlint: grid-size=1920x1080 (SL302 with --extend-select SL302)
// Intentional pitfalls: SL303 (line 27: `texture2d<float>` sampled into a
//   float4 whose value only feeds half-precision luma math)

#include <metal_stdlib>
using namespace metal;

struct SobelParams {
    float2 invSize;      // 1 / texture size, for normalised sampling
    float  gain;         // magnitude scale
    float  lowThreshold;
    float  highThreshold;
};

constant half3 kLumaRec709 = half3(0.2126h, 0.7152h, 0.0722h);

// Neighbour offsets along the four quantised gradient directions
// (0: horizontal, 1: 45 degrees, 2: vertical, 3: 135 degrees).
constant short2 kDirOffsets[4] = { short2(1, 0), short2(1, 1), short2(0, 1), short2(-1, 1) };

kernel void sobel_gradient(texture2d<float, access::sample> src      [[texture(0)]],
                           texture2d<half, access::write>   gradient [[texture(1)]],
                           constant SobelParams&            params   [[buffer(0)]],
                           uint2                            gid      [[thread_position_in_grid]])
{
    if (gid.x >= gradient.get_width() || gid.y >= gradient.get_height()) {
        return;
    }
    constexpr sampler nearest(coord::normalized, address::clamp_to_edge, filter::nearest);

    const float2 uv = (float2(gid) + 0.5f) * params.invSize;
    half l[3][3];
    for (int y = 0; y < 3; ++y) {
        for (int x = 0; x < 3; ++x) {
            const float4 c = src.sample(nearest, uv + float2(x - 1, y - 1) * params.invSize);
            l[y][x] = dot(half3(c.rgb), kLumaRec709);
        }
    }

    const half gx = (l[0][2] + 2.0h * l[1][2] + l[2][2]) - (l[0][0] + 2.0h * l[1][0] + l[2][0]);
    const half gy = (l[2][0] + 2.0h * l[2][1] + l[2][2]) - (l[0][0] + 2.0h * l[0][1] + l[0][2]);
    const half magnitude = sqrt(gx * gx + gy * gy) * half(params.gain);

    // Quantise the angle to 4 bins; atan2 range is [-pi, pi].
    const float angle = atan2(float(gy), float(gx));
    const int bin = int(round(angle * (4.0f / M_PI_F))) & 3;

    gradient.write(half4(magnitude, half(bin), 0.0h, 0.0h), gid);
}

kernel void sobel_nms_threshold(texture2d<half, access::read>  gradient [[texture(0)]],
                                texture2d<half, access::write> edges    [[texture(1)]],
                                constant SobelParams&          params   [[buffer(0)]],
                                uint2                          gid      [[thread_position_in_grid]])
{
    const int2 size = int2(gradient.get_width(), gradient.get_height());
    if (int(gid.x) >= size.x || int(gid.y) >= size.y) {
        return;
    }

    const half4 g = gradient.read(gid);
    const int bin = int(g.y);
    // Runtime index into a constant-address-space table: no stack traffic.
    const int2 d = int2(kDirOffsets[bin]);

    const int2 p = clamp(int2(gid) + d, int2(0), size - 1);
    const int2 n = clamp(int2(gid) - d, int2(0), size - 1);
    const half mp = gradient.read(uint2(p)).x;
    const half mn = gradient.read(uint2(n)).x;

    half edge = 0.0h;
    if (g.x >= mp && g.x >= mn) {
        if (g.x >= half(params.highThreshold)) {
            edge = 1.0h;
        } else if (g.x >= half(params.lowThreshold)) {
            edge = 0.5h;   // weak edge, resolved by the connectivity pass
        }
    }
    edges.write(half4(edge), gid);
}
