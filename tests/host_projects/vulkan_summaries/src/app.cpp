#include <memory>

#include "device.h"

struct Kernels {
    VkPipeline blur = VK_NULL_HANDLE;
    VkPipeline reduce = VK_NULL_HANDLE;
    VkPipeline scan = VK_NULL_HANDLE;
};

class App {
public:
    void init();
    void frame(VkCommandBuffer cmd, uint32_t width, uint32_t height, uint32_t count);

private:
    std::unique_ptr<Device> device_;
    Kernels k_;
};

void App::init()
{
    auto make = [&](const char* name, uint32_t x, uint32_t y) {
        KernelDesc d;
        d.name = name;
        d.size_x = x;
        d.size_y = y;
        return device_->pipeline_for(d);
    };
    k_.blur = make("blur", 16, 8);
    k_.reduce = make("reduce", 128, 1);
    k_.scan = make("scan", 0, 0);  // no constants: scan.comp's own 64
}

static void run_2d(VkCommandBuffer cmd, VkPipeline pipe, uint32_t gx, uint32_t gy)
{
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
    vkCmdDispatch(cmd, gx, gy, 1);
}

static void run_fixed(VkCommandBuffer cmd, VkPipeline pipe)
{
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
    vkCmdDispatch(cmd, 4, 1, 1);
}

static void run_scan(VkCommandBuffer cmd, VkPipeline pipe, uint32_t count)
{
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
    vkCmdDispatch(cmd, count / 64, 1, 1);  // expect: SL503
}

void App::frame(VkCommandBuffer cmd, uint32_t width, uint32_t height, uint32_t count)
{
    run_2d(cmd, k_.blur, (width + 15) / 16, (height + 7) / 8);
    run_fixed(cmd, k_.reduce);
    run_scan(cmd, k_.scan, count);
}
