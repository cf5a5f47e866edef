#import <Metal/Metal.h>
#include <math.h>

@implementation BlurEncoder

- (void)encodeBlur:(id<MTLComputeCommandEncoder>)encoder width:(NSUInteger)width {
    id<MTLFunction> fn = [_library newFunctionWithName:@"blur"];
    id<MTLComputePipelineState> pso = [_device newComputePipelineStateWithFunction:fn error:nil];
    [encoder setComputePipelineState:pso];
    NSUInteger w = pso.threadExecutionWidth;
    MTLSize threadsPerThreadgroup = MTLSizeMake(w, 1, 1);
    MTLSize threadgroupsPerGrid = MTLSizeMake(width / w, 1, 1);  // expect: SL503
    [encoder dispatchThreadgroups:threadgroupsPerGrid threadsPerThreadgroup:threadsPerThreadgroup];
}

- (void)encodeSharpen:(id<MTLComputeCommandEncoder>)encoder count:(NSUInteger)count {
    id<MTLFunction> fn = [_library newFunctionWithName:@"sharpen"];
    id<MTLComputePipelineState> pso = [_device newComputePipelineStateWithFunction:fn error:nil];
    [encoder setComputePipelineState:pso];
    MTLSize tg = MTLSizeMake(32, 1, 1);
    [encoder dispatchThreadgroups:MTLSizeMake((NSUInteger)ceil(count / 32), 1, 1) threadsPerThreadgroup:tg];  // expect: SL503
    // a floating-point division, rounded up: fine
    [encoder dispatchThreadgroups:MTLSizeMake((NSUInteger)ceil(count / 32.0), 1, 1) threadsPerThreadgroup:tg];
    [encoder dispatchThreadgroups:MTLSizeMake((count + 31) / 32, 1, 1) threadsPerThreadgroup:tg];  // rounded up: fine
    [encoder dispatchThreadgroups:MTLSizeMake(count / 64, 1, 1) threadsPerThreadgroup:tg];  // 64 is not the group size
}

@end
