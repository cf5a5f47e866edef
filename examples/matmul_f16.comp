// matmul_f16.comp
//
// Half-precision GEMM for an on-device MLP layer: Y = s * act(X * W + b)
// with X [M x K], W [K x N], row-major float16 storage. 16x16 workgroups
// stage a 16 x kTileK slice of X and a kTileK x 16 slice of W in shared
// memory as f16vec2 pairs; products are accumulated in fp32 and the
// epilogue (bias, leaky ReLU clipped at 6, output scale) runs in fp16.
// The K tile depth and the output scale are specialization constants.
//
// Intentional pitfalls:
//   SL202 (line 84: `x * 0.01` multiplies a float16_t by a float literal,
//          which promotes the multiply to fp32; write 0.01hf)
// (look-alikes that are fine: `x > 0.0hf`, `min(y, 6.0hf)` and
//  `clipped * kOutScale` are pure fp16 (`min(y, 6.0)` would not even
//  compile: glslang reports an ambiguous overload); `kTileK / 2u` divides
//  by a literal power of two and `(shape.K + kTileK - 1u) / kTileK` by a
//  specialization constant)

#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require

layout(local_size_x = 16, local_size_y = 16) in;

layout(constant_id = 0) const uint kTileK = 32;
layout(constant_id = 1) const float kOutScaleF = 1.0;

layout(std430, binding = 0) readonly buffer MatX { float16_t X[]; };
layout(std430, binding = 1) readonly buffer MatW { float16_t W[]; };
layout(std430, binding = 2) readonly buffer Bias { float16_t bias[]; };
layout(std430, binding = 3) writeonly buffer MatY { float16_t Y[]; };

layout(push_constant) uniform Shape {
    uint M;
    uint N;
    uint K;
} shape;

shared f16vec2 tileX[16][kTileK / 2u];   // [row][k pair]
shared f16vec2 tileW[kTileK / 2u][16];   // [k pair][column]

float16_t loadX(uint r, uint k)
{
    return (r < shape.M && k < shape.K) ? X[r * shape.K + k] : 0.0hf;
}

float16_t loadW(uint k, uint c)
{
    return (k < shape.K && c < shape.N) ? W[k * shape.N + c] : 0.0hf;
}

void main()
{
    const uint row = gl_GlobalInvocationID.y;
    const uint col = gl_GlobalInvocationID.x;
    const uint lx = gl_LocalInvocationID.x;
    const uint ly = gl_LocalInvocationID.y;
    const uint tileRow = gl_WorkGroupID.y * 16u + ly;
    const uint tileCol = gl_WorkGroupID.x * 16u + lx;

    float acc = 0.0;
    const uint numTiles = (shape.K + kTileK - 1u) / kTileK;
    for (uint t = 0u; t < numTiles; ++t) {
        const uint k0 = t * kTileK;
        for (uint p = lx; p < kTileK / 2u; p += 16u) {
            const uint k = k0 + 2u * p;
            tileX[ly][p] = f16vec2(loadX(tileRow, k), loadX(tileRow, k + 1u));
        }
        for (uint p = ly; p < kTileK / 2u; p += 16u) {
            const uint k = k0 + 2u * p;
            tileW[p][lx] = f16vec2(loadW(k, tileCol), loadW(k + 1u, tileCol));
        }
        barrier();

        for (uint p = 0u; p < kTileK / 2u; ++p) {
            acc += dot(vec2(tileX[ly][p]), vec2(tileW[p][lx]));
        }
        barrier();
    }

    if (row < shape.M && col < shape.N) {
        const float16_t kOutScale = float16_t(kOutScaleF);
        const float16_t x = float16_t(acc) + bias[col];
        const float16_t y = x > 0.0hf ? x : float16_t(x * 0.01);
        const float16_t clipped = min(y, 6.0hf);
        Y[row * shape.N + col] = clipped * kOutScale;
    }
}
