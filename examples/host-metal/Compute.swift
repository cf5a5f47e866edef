// host-metal/Compute.swift
//
// The host side of Shaders.metal, in the style of Apple's "Performing Calculations
// on a GPU": one pipeline per kernel built in init, each dispatched from its own
// method. brighten: dispatchThreadgroups, 16x16 threadgroups, 120x68 groups (1920x1080
// rounded up). add_arrays: dispatchThreads, 256-thread threadgroups, 2^20 threads.

import Metal

let imageWidth = 1920
let imageHeight = 1080
let arrayLength = 1 << 20

/// Encodes the two kernels of Shaders.metal.
final class Compute {
    let device: MTLDevice
    let queue: MTLCommandQueue
    let brightenPSO: MTLComputePipelineState
    let addPSO: MTLComputePipelineState

    init(device: MTLDevice) throws {
        self.device = device
        queue = device.makeCommandQueue()!
        let library = device.makeDefaultLibrary()!
        brightenPSO = try device.makeComputePipelineState(function: library.makeFunction(name: "brighten")!)
        let addFunction = library.makeFunction(name: "add_arrays")!
        addPSO = try device.makeComputePipelineState(function: addFunction)
    }

    func brighten(src: MTLBuffer, dst: MTLBuffer, gain: Float) {
        let commandBuffer = queue.makeCommandBuffer()!
        let encoder = commandBuffer.makeComputeCommandEncoder()!
        var width = UInt32(imageWidth)
        var gain = gain
        encoder.setComputePipelineState(brightenPSO)
        encoder.setBuffer(src, offset: 0, index: 0)
        encoder.setBuffer(dst, offset: 0, index: 1)
        encoder.setBytes(&width, length: MemoryLayout<UInt32>.size, index: 2)
        encoder.setBytes(&gain, length: MemoryLayout<Float>.size, index: 3)
        let threadsPerGroup = MTLSize(width: 16, height: 16, depth: 1)
        let groups = MTLSize(width: (imageWidth + 15) / 16, height: (imageHeight + 15) / 16, depth: 1)
        encoder.dispatchThreadgroups(groups, threadsPerThreadgroup: threadsPerGroup)
        encoder.endEncoding()
        commandBuffer.commit()
    }

    func add(a: MTLBuffer, b: MTLBuffer, result: MTLBuffer) {
        let commandBuffer = queue.makeCommandBuffer()!
        let encoder = commandBuffer.makeComputeCommandEncoder()!
        encoder.setComputePipelineState(addPSO)
        encoder.setBuffer(a, offset: 0, index: 0)
        encoder.setBuffer(b, offset: 0, index: 1)
        encoder.setBuffer(result, offset: 0, index: 2)
        let grid = MTLSize(width: arrayLength, height: 1, depth: 1)
        encoder.dispatchThreads(grid, threadsPerThreadgroup: MTLSize(width: 256, height: 1, depth: 1))
        encoder.endEncoding()
        commandBuffer.commit()
    }
}
