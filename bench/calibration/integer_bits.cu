// Integer and bit manipulation: hashing, population counts, division.
#include <cstdint>

__global__ void popcount_u32(int* out, const uint32_t* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = __popc(in[i]);
}

__global__ void bit_reverse_u32(uint32_t* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = __brev(x[i]);
}

__global__ void murmur3_fmix(uint32_t* h, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint32_t k = h[i];
    k ^= k >> 16; k *= 0x85ebca6bu; k ^= k >> 13; k *= 0xc2b2ae35u; k ^= k >> 16;
    h[i] = k;
}

__global__ void xorshift_stream(uint32_t* out, uint32_t seed, int per_thread) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t s = seed + 0x9e3779b9u * (t + 1);
    for (int k = 0; k < per_thread; ++k) {
        s ^= s << 13; s ^= s >> 17; s ^= s << 5;
        out[t * per_thread + k] = s;
    }
}

__global__ void div_mod_variable(int* q, int* r, const int* a, const int* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { q[i] = a[i] / b[i]; r[i] = a[i] % b[i]; }
}

__global__ void div_by_constant(int* q, const int* a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) q[i] = a[i] / 7 + a[i] % 13;
}

__global__ void index_2d_from_linear(int2* out, int width, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = make_int2(i % width, i / width);
}

__global__ void u64_mul_hi(unsigned long long* hi, const unsigned long long* a, const unsigned long long* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) hi[i] = __umul64hi(a[i], b[i]) ^ (a[i] * b[i]);
}

__global__ void morton_encode_3d(uint32_t* code, const ushort3* p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    auto spread = [](uint32_t v) {
        v &= 0x3ff;
        v = (v | (v << 16)) & 0x030000ffu; v = (v | (v << 8)) & 0x0300f00fu;
        v = (v | (v << 4)) & 0x030c30c3u; v = (v | (v << 2)) & 0x09249249u;
        return v;
    };
    code[i] = spread(p[i].x) | (spread(p[i].y) << 1) | (spread(p[i].z) << 2);
}

__device__ __forceinline__ uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

// One SHA-256 compression per thread: 64-word schedule plus 8 working words.
__global__ void sha256_compress(uint32_t* state, const uint32_t* blocks, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    const uint32_t K[64] = {
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
    uint32_t w[64];
#pragma unroll
    for (int i = 0; i < 16; ++i) w[i] = blocks[t * 16 + i];
#pragma unroll
    for (int i = 16; i < 64; ++i) {
        uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = state[t * 8 + 0], b = state[t * 8 + 1], c = state[t * 8 + 2], d = state[t * 8 + 3];
    uint32_t e = state[t * 8 + 4], f = state[t * 8 + 5], g = state[t * 8 + 6], h = state[t * 8 + 7];
#pragma unroll
    for (int i = 0; i < 64; ++i) {
        uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
        uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
    }
    state[t * 8 + 0] += a; state[t * 8 + 1] += b; state[t * 8 + 2] += c; state[t * 8 + 3] += d;
    state[t * 8 + 4] += e; state[t * 8 + 5] += f; state[t * 8 + 6] += g; state[t * 8 + 7] += h;
}

__global__ void crc32_bytes(uint32_t* crc, const unsigned char* data, int len_per_thread) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t c = 0xffffffffu;
    const unsigned char* p = data + (size_t)t * len_per_thread;
    for (int i = 0; i < len_per_thread; ++i) {
        c ^= p[i];
        for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
    }
    crc[t] = ~c;
}
