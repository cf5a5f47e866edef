// Host code for shaders/invert.comp (32x32 workgroups), in the style of the Vulkan compute write-ups:
// the pipeline is built and the image dispatched in one function.
// Intentional pitfalls: SL503 (line 19: `ceil(imageWidth / 32)` divides two integers, so the
// division truncates before ceil sees it; for a 1000-pixel-wide image the last 1000 % 32 = 8 columns
// are never inverted).
// (look-alike that is fine: `ceil(imageHeight / 32.0)` on the same line divides in floating point
// and rounds up)
#include <vulkan/vulkan.h>
#include <cmath>
#include <cstdint>

VkShaderModule loadShader(VkDevice device, const char* path);

void invertImage(VkDevice device, VkCommandBuffer cmd, VkComputePipelineCreateInfo info, VkPipeline* pipeline,
                 uint32_t imageWidth, uint32_t imageHeight) {
    info.stage.module = loadShader(device, "shaders/invert.comp.spv");
    vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &info, nullptr, pipeline);
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, *pipeline);
    vkCmdDispatch(cmd, (uint32_t)ceil(imageWidth / 32), (uint32_t)ceil(imageHeight / 32.0), 1);
}
