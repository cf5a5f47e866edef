// wireframe_overlay.geom
//
// Single-pass wireframe overlay (the "solid wireframe" technique): the
// geometry shader computes, for each vertex of a triangle, its screen-space
// distance to the opposite edge, and passes those distances as
// noperspective varyings; the fragment shader blends an anti-aliased line
// where the minimum distance is small. Back-facing and degenerate triangles
// are dropped here to save fragment work.
//
// Intentional pitfalls: none

#version 450

layout(triangles) in;
layout(triangle_strip, max_vertices = 3) out;

layout(location = 0) in vec3 gsWorldPos[];
layout(location = 1) in vec3 gsNormal[];

layout(location = 0) out vec3 fsWorldPos;
layout(location = 1) out vec3 fsNormal;
layout(location = 2) noperspective out vec3 fsEdgeDistance;

layout(std140, binding = 0) uniform Viewport {
    vec2 size;          // pixels
    float minArea;      // in pixels^2; smaller triangles are culled
    int cullBackFaces;
} viewport;

vec2 to_screen(vec4 clip)
{
    return (clip.xy / clip.w * 0.5 + 0.5) * viewport.size;
}

void main()
{
    // All three vertices must be in front of the camera for the screen-space
    // math to hold; clipped triangles fall back to no overlay.
    const bool inFront = gl_in[0].gl_Position.w > 0.0 && gl_in[1].gl_Position.w > 0.0 && gl_in[2].gl_Position.w > 0.0;

    const vec2 p0 = to_screen(gl_in[0].gl_Position);
    const vec2 p1 = to_screen(gl_in[1].gl_Position);
    const vec2 p2 = to_screen(gl_in[2].gl_Position);

    const vec2 e0 = p2 - p1;
    const vec2 e1 = p2 - p0;
    const vec2 e2 = p1 - p0;
    const float signedArea = e2.x * e1.y - e2.y * e1.x;   // twice the area
    const float area = abs(signedArea);

    if (inFront && area < viewport.minArea) {
        return;
    }
    if (inFront && viewport.cullBackFaces != 0 && signedArea < 0.0) {
        return;
    }

    // Heights of the triangle = distances from each vertex to the opposite edge.
    vec3 heights = vec3(1.0e6);
    if (inFront) {
        heights = vec3(area / length(e0), area / length(e1), area / length(e2));
    }

    for (int i = 0; i < 3; ++i) {
        fsWorldPos = gsWorldPos[i];
        fsNormal = gsNormal[i];
        fsEdgeDistance = vec3(0.0);
        fsEdgeDistance[i] = heights[i];
        gl_Position = gl_in[i].gl_Position;
        EmitVertex();
    }
    EndPrimitive();
}
