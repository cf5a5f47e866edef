// Host code for blur.comp: the pipeline is built from its SPIR-V with a 13x13 workgroup set by
// specialization constants 0 and 1, and dispatched over a 1920x1080 image.
#include <vulkan/vulkan.h>
#include <cstdint>

VkShaderModule loadShader(VkDevice device, const char* path);

VkPipeline createBlurPipeline(VkDevice device, VkPipelineLayout layout) {
    VkShaderModule module = loadShader(device, "shaders/blur.comp.spv");
    VkSpecializationMapEntry entries[] = {{0, 0, sizeof(uint32_t)}, {1, 4, sizeof(uint32_t)}};
    const uint32_t groupSize[] = {13, 13};
    VkSpecializationInfo specialization{};
    specialization.mapEntryCount = 2;
    specialization.pMapEntries = entries;
    specialization.dataSize = sizeof(groupSize);
    specialization.pData = groupSize;
    VkComputePipelineCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
    info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    info.stage.module = module;
    info.stage.pName = "main";
    info.stage.pSpecializationInfo = &specialization;
    info.layout = layout;
    VkPipeline pipeline = VK_NULL_HANDLE;
    vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &info, nullptr, &pipeline);
    return pipeline;
}

void recordBlur(VkCommandBuffer cmd) {
    vkCmdDispatch(cmd, (1920 + 12) / 13, (1080 + 12) / 13, 1);
}
