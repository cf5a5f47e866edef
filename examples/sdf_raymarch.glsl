// sdf_raymarch.glsl  (compute stage; compile with -S comp)
//
// Sphere-traces a signed-distance scene (ground plane, rounded box, torus,
// smooth-union blob) for a thumbnail/preview renderer and writes packed
// RGBA8 pixels to a storage buffer that the host copies out. The dispatch
// is one-dimensional over width*height pixels.
//
// Intentional pitfalls: none
// (look-alikes that are fine: `idx % view.width` and `idx / view.width` on
//  lines 78-79 divide by a uniform, but once per pixel, next to a ray march
//  of up to kMaxSteps scene evaluations: not a hot-loop division (SL201
//  reports only divisions a loop repeats); `float / float` everywhere else;
//  the loop-trip constant kMaxSteps; the `idx < total` guard)

#version 450

#define kMaxSteps 96
#define kHitEpsilon 0.0005
#define kFarPlane 40.0

layout(local_size_x = 64) in;

layout(std140, binding = 0) uniform View {
    mat4  invViewProj;
    vec4  cameraPos;
    vec4  lightDir;
    uint  width;
    uint  height;
    float time;
} view;

layout(std430, binding = 1) writeonly buffer Pixels {
    uint pixels[];
};

float sd_round_box(vec3 p, vec3 b, float r)
{
    const vec3 q = abs(p) - b + r;
    return length(max(q, 0.0)) + min(max(q.x, max(q.y, q.z)), 0.0) - r;
}

float sd_torus(vec3 p, vec2 t)
{
    const vec2 q = vec2(length(p.xz) - t.x, p.y);
    return length(q) - t.y;
}

float smooth_min(float a, float b, float k)
{
    const float h = clamp(0.5 + 0.5 * (b - a) / k, 0.0, 1.0);
    return mix(b, a, h) - k * h * (1.0 - h);
}

float scene(vec3 p)
{
    const float ground = p.y + 1.0;
    const float box = sd_round_box(p - vec3(-1.2, 0.0, 0.0), vec3(0.6), 0.1);
    const float torus = sd_torus(p - vec3(1.2, 0.0, 0.0), vec2(0.6, 0.2));
    const float blob = length(p - vec3(0.0, 0.4 + 0.3 * sin(view.time), 0.0)) - 0.45;
    return min(ground, smooth_min(smooth_min(box, torus, 0.3), blob, 0.4));
}

vec3 scene_normal(vec3 p)
{
    const vec2 e = vec2(1.0e-3, 0.0);
    return normalize(vec3(scene(p + e.xyy) - scene(p - e.xyy),
                          scene(p + e.yxy) - scene(p - e.yxy),
                          scene(p + e.yyx) - scene(p - e.yyx)));
}

void main()
{
    const uint idx = gl_GlobalInvocationID.x;
    const uint total = view.width * view.height;
    if (idx >= total) {
        return;
    }
    const uint x = idx % view.width;
    const uint y = idx / view.width;

    const vec2 ndc = (vec2(x, y) + 0.5) / vec2(view.width, view.height) * 2.0 - 1.0;
    const vec4 farPoint = view.invViewProj * vec4(ndc.x, -ndc.y, 1.0, 1.0);
    const vec3 rd = normalize(farPoint.xyz / farPoint.w - view.cameraPos.xyz);
    const vec3 ro = view.cameraPos.xyz;

    float t = 0.0;
    bool hit = false;
    for (int i = 0; i < kMaxSteps; ++i) {
        const float d = scene(ro + rd * t);
        if (d < kHitEpsilon * t) {
            hit = true;
            break;
        }
        t += d;
        if (t > kFarPlane) {
            break;
        }
    }

    vec3 color = mix(vec3(0.55, 0.65, 0.8), vec3(0.2, 0.25, 0.35), clamp(rd.y * 2.0, 0.0, 1.0));
    if (hit) {
        const vec3 p = ro + rd * t;
        const vec3 n = scene_normal(p);
        const float diffuse = max(dot(n, -view.lightDir.xyz), 0.0);
        const float ambient = 0.5 + 0.5 * n.y;
        color = vec3(0.9, 0.85, 0.8) * (0.15 * ambient + 0.85 * diffuse);
        color = mix(color, vec3(0.55, 0.65, 0.8), 1.0 - exp(-0.02 * t * t));
    }

    pixels[idx] = packUnorm4x8(vec4(pow(color, vec3(1.0 / 2.2)), 1.0));
}
