// yuv_convert.metal
//
// Camera frame conversion between biplanar 4:2:0 YCbCr (NV12, video range,
// BT.709) and RGBA. `nv12_to_rgba` reads the luma plane and the interleaved
// chroma plane from buffers and writes an RGBA16F texture; the host uses
// dispatchThreads with the exact frame size, so it needs no bounds check.
// `rgba_to_nv12_chroma` does the reverse for the chroma plane, one thread
// per 2x2 block, with a regular guard.
//
// Intentional pitfalls:
//   SL204 (line 44: `y8 - 16` is 8-bit uchar arithmetic, emulated on Apple
//          GPUs; widen to ushort/short first)
// (look-alikes that are fine: the dispatch=threads annotation covers the
//  missing guard, `/ 2` and `>> 1` are divisions by a power of two)

#include <metal_stdlib>
using namespace metal;

struct NV12Layout {
    int width;
    int height;
    int chromaStride;   // uchar2 elements per chroma row
    int lumaStride;     // bytes per luma row
};

// BT.709 video-range YCbCr -> RGB.
constant half3x3 kYCbCrToRGB = half3x3(half3(1.0h,      1.0h,       1.0h),
                                       half3(0.0h,     -0.1873h,    1.8556h),
                                       half3(1.5748h,  -0.4681h,    0.0h));

// shaderlint: dispatch=threads
kernel void nv12_to_rgba(device const uchar*  lumaPlane   [[buffer(0)]],
                         device const uchar2* chromaPlane [[buffer(1)]],
                         constant NV12Layout& layout      [[buffer(2)]],
                         texture2d<half, access::write> dst [[texture(0)]],
                         uint2 gid [[thread_position_in_grid]])
{
    const int x = int(gid.x);
    const int y = int(gid.y);

    const uchar y8 = lumaPlane[y * layout.lumaStride + x];
    const uchar2 cbcr = chromaPlane[(y >> 1) * layout.chromaStride + (x >> 1)];

    const uchar yOffset = y8 - 16;
    const half luma = half(yOffset) * (1.0h / 219.0h);
    const half2 chroma = (half2(short2(cbcr) - short2(128))) * (1.0h / 224.0h);

    const half3 rgb = kYCbCrToRGB * half3(luma, chroma.x, chroma.y);
    dst.write(half4(saturate(rgb), 1.0h), gid);
}

kernel void rgba_to_nv12_chroma(texture2d<half, access::read> src         [[texture(0)]],
                                device uchar2*                chromaPlane [[buffer(0)]],
                                constant NV12Layout&          layout      [[buffer(1)]],
                                uint2 gid [[thread_position_in_grid]])
{
    const int cx = int(gid.x);
    const int cy = int(gid.y);
    if (cx >= layout.width / 2 || cy >= layout.height / 2) {
        return;
    }

    half3 sum = half3(0.0h);
    for (int dy = 0; dy < 2; ++dy) {
        for (int dx = 0; dx < 2; ++dx) {
            sum += src.read(uint2(cx * 2 + dx, cy * 2 + dy)).rgb;
        }
    }
    const half3 rgb = sum * 0.25h;

    // Rows 2 and 3 of the inverse matrix (Cb, Cr), scaled to video range.
    const half cb = dot(rgb, half3(-0.1146h, -0.3854h,  0.5h)) * 224.0h + 128.0h;
    const half cr = dot(rgb, half3( 0.5h,    -0.4542h, -0.0458h)) * 224.0h + 128.0h;
    chromaPlane[cy * layout.chromaStride + cx] = uchar2(clamp(half2(cb, cr), half2(0.0h), half2(255.0h)));
}
