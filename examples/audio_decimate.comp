// audio_decimate.comp
//
// Downsamples a mono float PCM stream by an integer factor for waveform
// thumbnails: each output sample is the windowed average (and peak) of
// `factor` consecutive input samples. One invocation per output sample,
// each walking its own contiguous window.
//
// Intentional pitfalls:
//   SL504 (line 46: per-invocation contiguous chunk loop; adjacent
//          invocations read addresses `factor` floats apart, so every load
//          touches a different cache line. A workgroup per output block
//          with an interleaved loop coalesces)

#version 450

layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer Input {
    float samples[];
};

layout(std430, binding = 1) readonly buffer Window {
    float window[];   // `factor` weights, sum to 1
};

layout(std430, binding = 2) writeonly buffer Output {
    vec2 thumb[];     // x = windowed mean, y = peak magnitude
};

layout(push_constant) uniform Params {
    uint inputCount;
    uint outputCount;
    uint factor;
} params;

void main()
{
    const uint tid = gl_GlobalInvocationID.x;
    if (tid >= params.outputCount) {
        return;
    }

    float mean = 0.0;
    float peak = 0.0;
    const uint begin = tid * params.factor;
    for (uint i = tid * params.factor; i < (tid + 1u) * params.factor; ++i) {
        const float s = i < params.inputCount ? samples[i] : 0.0;
        mean += s * window[i - begin];
        peak = max(peak, abs(s));
    }
    thumb[tid] = vec2(mean, peak);
}
