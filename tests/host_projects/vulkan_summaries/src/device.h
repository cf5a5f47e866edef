#pragma once
#include <string>
#include <unordered_map>
#include <vector>
#include <vulkan/vulkan.h>

struct KernelDesc {
    std::string name;      // the SPIR-V file's name without ".spv"
    uint32_t size_x = 0;   // 0: the shader's own size
    uint32_t size_y = 0;
};

class Device {
public:
    VkPipeline pipeline_for(const KernelDesc& desc);

private:
    struct Built {
        VkPipeline pipeline = VK_NULL_HANDLE;
        VkPipelineLayout layout = VK_NULL_HANDLE;
    };
    std::vector<char> read_spirv(const std::string& name) const;
    Built build(const KernelDesc& desc);

    VkDevice dev_ = VK_NULL_HANDLE;
    std::string spirv_dir_;
    std::unordered_map<std::string, Built> cache_;
};
