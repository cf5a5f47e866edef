import Metal

let imageWidth = 1000
let rowCount = 4096

final class Host {
    let scalePSO: MTLComputePipelineState
    let tailPSO: MTLComputePipelineState
    let stridedPSO: MTLComputePipelineState
    let rowsPSO: MTLComputePipelineState
    let checkedPSO: MTLComputePipelineState

    init(device: MTLDevice, library: MTLLibrary) throws {
        scalePSO = try device.makeComputePipelineState(function: library.makeFunction(name: "scale")!)
        tailPSO = try device.makeComputePipelineState(function: library.makeFunction(name: "scale_tail")!)
        stridedPSO = try device.makeComputePipelineState(function: library.makeFunction(name: "scale_strided")!)
        rowsPSO = try device.makeComputePipelineState(function: library.makeFunction(name: "scale_rows")!)
        checkedPSO = try device.makeComputePipelineState(function: library.makeFunction(name: "scale_checked")!)
    }

    func scale(encoder: MTLComputeCommandEncoder, width: Int, height: Int) {
        encoder.setComputePipelineState(scalePSO)
        let w = scalePSO.threadExecutionWidth
        let h = scalePSO.maxTotalThreadsPerThreadgroup / w
        let threadsPerThreadgroup = MTLSizeMake(w, h, 1)
        let threadgroupsPerGrid = MTLSize(width: width / w,  // expect: SL503
                                          height: (height + h - 1) / h,  // rounded up: fine
                                          depth: 1)
        encoder.dispatchThreadgroups(threadgroupsPerGrid, threadsPerThreadgroup: threadsPerThreadgroup)
    }

    func tail(encoder: MTLComputeCommandEncoder, n: Int) {
        encoder.setComputePipelineState(tailPSO)
        let groups = MTLSize(width: Int(Float(n) / 176 + 0.5), height: 1, depth: 1)  // expect: SL503
        encoder.dispatchThreadgroups(groups, threadsPerThreadgroup: MTLSize(width: 176, height: 1, depth: 1))
        // dispatchThreads counts threads: Metal sizes the edge threadgroup itself, nothing to round
        encoder.dispatchThreads(MTLSize(width: n / 2, height: 1, depth: 1),
                                threadsPerThreadgroup: MTLSize(width: 176, height: 1, depth: 1))
    }

    func strided(encoder: MTLComputeCommandEncoder, n: Int) {
        // the kernel loops with a grid-wide stride: any grid covers the data
        encoder.setComputePipelineState(stridedPSO)
        encoder.dispatchThreadgroups(MTLSize(width: n / 64, height: 1, depth: 1),
                                     threadsPerThreadgroup: MTLSize(width: 64, height: 1, depth: 1))
    }

    func rows(encoder: MTLComputeCommandEncoder) {
        encoder.setComputePipelineState(rowsPSO)
        let tg = MTLSize(width: 16, height: 1, depth: 1)
        encoder.dispatchThreadgroups(MTLSize(width: imageWidth / 16, height: 1, depth: 1), threadsPerThreadgroup: tg)  // expect: SL503
        encoder.dispatchThreadgroups(MTLSize(width: rowCount / 16, height: 1, depth: 1), threadsPerThreadgroup: tg)  // 4096 / 16: exact
    }

    func checked(encoder: MTLComputeCommandEncoder, count: Int) {
        precondition(count.isMultiple(of: 32), "whole threadgroups only")
        encoder.setComputePipelineState(checkedPSO)
        encoder.dispatchThreadgroups(MTLSize(width: count / 32, height: 1, depth: 1),
                                     threadsPerThreadgroup: MTLSize(width: 32, height: 1, depth: 1))
    }
}
