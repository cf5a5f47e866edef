#include <vulkan/vulkan.h>
#include <cassert>
#include <cstdint>

VkShaderModule loadShader(VkDevice device, const char* path);

void tint(VkDevice device, VkCommandBuffer cmd, VkComputePipelineCreateInfo info, int n, int m) {
    VkPipeline pipeline;
    info.stage.module = loadShader(device, "shaders/tint.comp.spv");
    VkSpecializationMapEntry entry = {0, 0, sizeof(uint32_t)};
    const uint32_t groupSize = 176;
    VkSpecializationInfo spec = {1, &entry, sizeof(groupSize), &groupSize};
    info.stage.pSpecializationInfo = &spec;
    vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &info, nullptr, &pipeline);
    vkCmdDispatch(cmd, (int)((float)n / 176 + 0.5), 1, 1);  // expect: SL503
    assert(m % 176 == 0);
    vkCmdDispatch(cmd, m / 176, 1, 1);  // m is checked to be a multiple of the group size
}
