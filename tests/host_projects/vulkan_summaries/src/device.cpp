#include "device.h"

#include <fstream>
#include <stdexcept>

std::vector<char> Device::read_spirv(const std::string& name) const
{
    const std::string file = spirv_dir_ + "/" + name + ".spv";
    std::ifstream in(file, std::ios::binary | std::ios::ate);
    if (!in) {
        throw std::runtime_error("cannot open " + file);
    }
    std::vector<char> bytes(static_cast<size_t>(in.tellg()));
    in.seekg(0);
    in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return bytes;
}

Device::Built Device::build(const KernelDesc& desc)
{
    const std::vector<char> code = read_spirv(desc.name);
    VkShaderModuleCreateInfo module_ci{};
    module_ci.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
    module_ci.codeSize = code.size();
    module_ci.pCode = reinterpret_cast<const uint32_t*>(code.data());
    VkShaderModule module = VK_NULL_HANDLE;
    vkCreateShaderModule(dev_, &module_ci, nullptr, &module);

    std::vector<VkSpecializationMapEntry> entries;
    std::vector<uint32_t> values;
    if (desc.size_x > 0) {
        entries.push_back({0, 0, sizeof(uint32_t)});
        entries.push_back({1, 4, sizeof(uint32_t)});
        values = {desc.size_x, desc.size_y};
    }
    VkSpecializationInfo spec{};
    spec.mapEntryCount = static_cast<uint32_t>(entries.size());
    spec.pMapEntries = entries.data();
    spec.dataSize = values.size() * sizeof(uint32_t);
    spec.pData = values.data();

    Built out{};
    VkPipelineLayoutCreateInfo layout_ci{};
    layout_ci.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
    vkCreatePipelineLayout(dev_, &layout_ci, nullptr, &out.layout);

    VkComputePipelineCreateInfo ci{};
    ci.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
    ci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    ci.stage.module = module;
    ci.stage.pName = "main";
    ci.stage.pSpecializationInfo = entries.empty() ? nullptr : &spec;
    ci.layout = out.layout;
    if (vkCreateComputePipelines(dev_, VK_NULL_HANDLE, 1, &ci, nullptr, &out.pipeline) != VK_SUCCESS) {
        throw std::runtime_error("pipeline " + desc.name);
    }
    vkDestroyShaderModule(dev_, module, nullptr);
    return out;
}

VkPipeline Device::pipeline_for(const KernelDesc& desc)
{
    auto hit = cache_.find(desc.name);
    if (hit != cache_.end()) {
        return hit->second.pipeline;
    }
    Built built = build(desc);
    cache_[desc.name] = built;
    return built.pipeline;
}
