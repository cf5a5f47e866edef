#include <vulkan/vulkan.h>
#include <cmath>
#include <cstdint>

VkShaderModule loadShader(VkDevice device, const char* path);

void invert(VkDevice device, VkCommandBuffer cmd, VkComputePipelineCreateInfo info, uint32_t imageWidth,
            uint32_t imageHeight) {
    VkPipeline pipeline;
    info.stage.module = loadShader(device, "shaders/invert.comp.spv");
    vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &info, nullptr, &pipeline);
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    vkCmdDispatch(cmd, (uint32_t)ceil(imageWidth / 32), imageHeight / 32, 1);  // expect: SL503
    // a floating-point division rounded up, and a rounded-up integer one: fine
    vkCmdDispatch(cmd, (uint32_t)ceil(imageWidth / 32.0), (imageHeight + 31) / 32, 1);
    // 16 is not the workgroup size along x (32): not this rule's case
    vkCmdDispatch(cmd, imageWidth / 16, 1, 1);
}
