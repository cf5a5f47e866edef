#include <Metal/Metal.hpp>

void relu(MTL::Device* device, MTL::Library* library, MTL::ComputeCommandEncoder* encoder, NS::UInteger count) {
    MTL::Function* fn = library->newFunction(NS::String::string("relu", NS::UTF8StringEncoding));
    NS::Error* error = nullptr;
    MTL::ComputePipelineState* pso = device->newComputePipelineState(fn, &error);
    encoder->setComputePipelineState(pso);
    NS::UInteger w = pso->threadExecutionWidth();
    encoder->dispatchThreadgroups(MTL::Size(count / w, 1, 1), MTL::Size(w, 1, 1));  // expect: SL503
    encoder->dispatchThreadgroups(MTL::Size((count + w - 1) / w, 1, 1), MTL::Size(w, 1, 1));  // rounded up: fine
    encoder->dispatchThreads(MTL::Size(count, 1, 1), MTL::Size(w, 1, 1));  // threads: nothing to round
}
