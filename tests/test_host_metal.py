"""Metal host scanners: what Swift, Objective-C and metal-cpp dispatch code says about each dispatch."""

from __future__ import annotations

import random

import pytest

from shaderlint.host import ALL_SCANNERS, HostLaunch, _metal_analysis, metal
from shaderlint.host.metal import scan_metal_cpp, scan_objc, scan_swift


def scan(scanner, text: str, path: str = "host") -> list[HostLaunch]:
    """The dispatches."""
    return [x for x in scanner(path, text.encode()) if x.api == "metal"]


def references(scanner, text: str) -> list[str]:
    """The names written as literals that no linked dispatch accounts for."""
    return [x.kernel for x in scanner("host", text.encode()) if x.api == "reference"]


def line_of(text: str, needle: str, nth: int = 0) -> int:
    start = -1
    for _ in range(nth + 1):
        start = text.index(needle, start + 1)
    return text.count("\n", 0, start) + 1


def summary(launches: list[HostLaunch]) -> list[tuple]:
    return [(x.at.line, x.dispatch, x.kernel, x.group, x.grid) for x in launches]


# --------------------------------------------------------------------------------------------
# Swift

SWIFT_ADDER = """\
import Metal

let arrayLength = 1 << 24

class MetalAdder {
    var device: MTLDevice
    var addFunctionPSO: MTLComputePipelineState
    var commandQueue: MTLCommandQueue

    init(with device: MTLDevice) throws {
        self.device = device
        let defaultLibrary = device.makeDefaultLibrary()!
        let addFunction = defaultLibrary.makeFunction(name: "add_arrays")!
        addFunctionPSO = try device.makeComputePipelineState(function: addFunction)
        commandQueue = device.makeCommandQueue()!
    }

    func encodeAddCommand(computeEncoder: MTLComputeCommandEncoder) {
        computeEncoder.setComputePipelineState(addFunctionPSO)
        computeEncoder.setBuffer(bufferA, offset: 0, index: 0)
        let gridSize = MTLSizeMake(arrayLength, 1, 1)
        var threadGroupSize = addFunctionPSO.maxTotalThreadsPerThreadgroup
        if threadGroupSize > arrayLength {
            threadGroupSize = arrayLength
        }
        let threadgroupSize = MTLSizeMake(threadGroupSize, 1, 1)
        computeEncoder.dispatchThreads(gridSize, threadsPerThreadgroup: threadgroupSize)
    }
}
"""


def test_swift_apple_sample_links_the_stored_pipeline_and_leaves_the_runtime_group_unknown():
    (d,) = scan(scan_swift, SWIFT_ADDER, "Adder.swift")
    assert d.api == "metal"
    assert d.kernel == "add_arrays"
    assert d.dispatch == "threads"
    # maxTotalThreadsPerThreadgroup is read at run time; arrayLength is a file-level constant
    assert d.group is None and d.group_at is None
    assert d.grid == (1 << 24, 1, 1)
    assert d.at.path == "Adder.swift"
    assert d.at.line == line_of(SWIFT_ADDER, "computeEncoder.dispatchThreads")
    assert d.at.column == 9
    assert SWIFT_ADDER.encode()[d.at.start : d.at.end].startswith(b"computeEncoder.dispatchThreads(")


SWIFT_IMAGE = """\
import Metal

final class Blur {
    let pipeline: MTLComputePipelineState
    let tile = 16

    init(device: MTLDevice, library: MTLLibrary) throws {
        pipeline = try device.makeComputePipelineState(function: library.makeFunction(name: "blur")!)
    }

    func encode(_ encoder: MTLComputeCommandEncoder, width: Int, height: Int) {
        encoder.setComputePipelineState(pipeline)
        let w = pipeline.threadExecutionWidth
        let h = pipeline.maxTotalThreadsPerThreadgroup / w
        encoder.dispatchThreads(MTLSize(width: width, height: height, depth: 1),
                                threadsPerThreadgroup: MTLSize(width: w, height: h, depth: 1))
        let groups = MTLSize(width: (width + w - 1) / w, height: (height + h - 1) / h, depth: 1)
        encoder.dispatchThreadgroups(groups, threadsPerThreadgroup: MTLSizeMake(w, h, 1))
        let tg = MTLSize(width: tile, height: tile, depth: 1)
        let hd = MTLSize(width: (1920 + tile - 1) / tile, height: (1080 + 15) / 16, depth: 1)
        encoder.dispatchThreadgroups(hd, threadsPerThreadgroup: tg)
    }
}
"""


def test_swift_thread_execution_width_group_is_unknown_but_the_dispatch_mode_is_known():
    launches = scan(scan_swift, SWIFT_IMAGE)
    assert summary(launches) == [
        (line_of(SWIFT_IMAGE, "encoder.dispatchThreads("), "threads", "blur", None, None),
        (line_of(SWIFT_IMAGE, "encoder.dispatchThreadgroups(groups"), "threadgroups", "blur", None, None),
        (line_of(SWIFT_IMAGE, "encoder.dispatchThreadgroups(hd"), "threadgroups", "blur", (16, 16, 1), (120, 68, 1)),
    ]
    last = launches[-1]
    # the sizes point at the MTLSize written in the source, through the local names
    assert last.group_at.line == line_of(SWIFT_IMAGE, "let tg = MTLSize")
    assert SWIFT_IMAGE.encode()[last.group_at.start : last.group_at.end].startswith(b"MTLSize(width: tile")
    assert last.grid_at.line == line_of(SWIFT_IMAGE, "let hd = MTLSize")


SWIFT_TWO = """\
import Metal

func run(device: MTLDevice, library: MTLLibrary, queue: MTLCommandQueue, n: Int) throws {
    let scale = try device.makeComputePipelineState(function: library.makeFunction(name: "scale")!)
    let reduceFn = library.makeFunction(name: "reduce")!
    let reduce = try device.makeComputePipelineState(function: reduceFn)
    let buffer = queue.makeCommandBuffer()!
    let encoder = buffer.makeComputeCommandEncoder()!
    encoder.setComputePipelineState(scale)
    encoder.dispatchThreads(MTLSize(width: n, height: 1, depth: 1),
                            threadsPerThreadgroup: MTLSize(width: 64, height: 1, depth: 1))
    encoder.setComputePipelineState(reduce)
    encoder.dispatchThreadgroups(MTLSize(width: 1, height: 1, depth: 1),
                                 threadsPerThreadgroup: MTLSize(width: 1024, height: 1, depth: 1))
    encoder.endEncoding()
}
"""


def test_swift_two_pipelines_in_one_function_each_link_to_their_own_dispatch():
    assert summary(scan(scan_swift, SWIFT_TWO)) == [
        (line_of(SWIFT_TWO, "encoder.dispatchThreads"), "threads", "scale", (64, 1, 1), None),
        (line_of(SWIFT_TWO, "encoder.dispatchThreadgroups"), "threadgroups", "reduce", (1024, 1, 1), (1, 1, 1)),
    ]


SWIFT_AMBIGUOUS = """\
import Metal

class Runner {
    var pipelines: [MTLComputePipelineState] = []
    var byName: [String: MTLComputePipelineState] = [:]
    var current: MTLComputePipelineState
    let tg = MTLSize(width: 32, height: 1, depth: 1)

    init(device: MTLDevice, library: MTLLibrary) throws {
        for name in ["a", "b"] {
            pipelines.append(try device.makeComputePipelineState(function: library.makeFunction(name: name)!))
        }
        current = try device.makeComputePipelineState(function: library.makeFunction(name: "first")!)
    }

    func swap(device: MTLDevice, library: MTLLibrary) throws {
        current = try device.makeComputePipelineState(function: library.makeFunction(name: "second")!)
    }

    func fromArray(_ encoder: MTLComputeCommandEncoder, i: Int) {
        encoder.setComputePipelineState(pipelines[i])
        encoder.dispatchThreads(grid, threadsPerThreadgroup: tg)  // D1
    }

    func fromDictionary(_ encoder: MTLComputeCommandEncoder, name: String) {
        let pso = byName[name]!
        encoder.setComputePipelineState(pso)
        encoder.dispatchThreads(grid, threadsPerThreadgroup: tg)  // D2
    }

    func fromProperty(_ encoder: MTLComputeCommandEncoder) {
        encoder.setComputePipelineState(current)
        encoder.dispatchThreads(grid, threadsPerThreadgroup: tg)  // D3
    }

    func fromBranch(_ encoder: MTLComputeCommandEncoder, library: MTLLibrary, device: MTLDevice, flag: Bool) throws {
        let a = try device.makeComputePipelineState(function: library.makeFunction(name: "a")!)
        let b = try device.makeComputePipelineState(function: library.makeFunction(name: "b")!)
        encoder.setComputePipelineState(a)
        if flag {
            encoder.setComputePipelineState(b)
        }
        encoder.dispatchThreads(grid, threadsPerThreadgroup: tg)  // D4
    }

    func otherBranch(_ encoder: MTLComputeCommandEncoder, library: MTLLibrary, device: MTLDevice, flag: Bool) throws {
        let a = try device.makeComputePipelineState(function: library.makeFunction(name: "a")!)
        if flag {
            encoder.setComputePipelineState(a)
        } else {
            encoder.dispatchThreads(grid, threadsPerThreadgroup: tg)  // D8
        }
    }

    func inClosure(_ buffer: MTLCommandBuffer, library: MTLLibrary, device: MTLDevice) throws {
        let current = try device.makeComputePipelineState(function: library.makeFunction(name: "c")!)
        for current in pipelines {
            let encoder = buffer.makeComputeCommandEncoder()!
            encoder.setComputePipelineState(current)
            encoder.dispatchThreads(grid, threadsPerThreadgroup: tg)  // D9
        }
        pipelines.forEach { current in
            let encoder = buffer.makeComputeCommandEncoder()!
            encoder.setComputePipelineState(current)
            encoder.dispatchThreads(grid, threadsPerThreadgroup: tg)  // D10
        }
        _ = current
    }

    func fromParameter(_ encoder: MTLComputeCommandEncoder, pso: MTLComputePipelineState) {
        encoder.setComputePipelineState(pso)
        encoder.dispatchThreads(grid, threadsPerThreadgroup: tg)  // D5
    }

    func escapes(_ encoder: MTLComputeCommandEncoder, library: MTLLibrary, device: MTLDevice) throws {
        let a = try device.makeComputePipelineState(function: library.makeFunction(name: "a")!)
        encoder.setComputePipelineState(a)
        bindSomethingElse(encoder)
        encoder.dispatchThreads(grid, threadsPerThreadgroup: tg)  // D6
    }

    func inLoop(_ encoder: MTLComputeCommandEncoder, library: MTLLibrary, device: MTLDevice) throws {
        let a = try device.makeComputePipelineState(function: library.makeFunction(name: "a")!)
        let b = try device.makeComputePipelineState(function: library.makeFunction(name: "b")!)
        encoder.setComputePipelineState(a)
        for _ in 0..<4 {
            encoder.dispatchThreads(grid, threadsPerThreadgroup: tg)  // D7
            encoder.setComputePipelineState(b)
        }
    }
}
"""


@pytest.mark.parametrize("marker", ["D1", "D2", "D3", "D4", "D5", "D6", "D7", "D8", "D9", "D10"])
def test_swift_pipelines_chosen_at_run_time_have_no_kernel(marker):
    launches = {x.at.line: x for x in scan(scan_swift, SWIFT_AMBIGUOUS)}
    d = launches[line_of(SWIFT_AMBIGUOUS, "// " + marker)]
    assert d.kernel is None
    assert d.dispatch == "threads"
    assert d.group == (32, 1, 1)  # the stored constant size is still read


def test_swift_one_pipeline_in_a_loop_stays_linked():
    text = SWIFT_AMBIGUOUS.replace("            encoder.setComputePipelineState(b)\n        }", "        }")
    launches = {x.at.line: x for x in scan(scan_swift, text)}
    assert launches[line_of(text, "// D7")].kernel == "a"


def test_swift_guard_let_and_reassigned_sizes():
    text = """\
func f(encoder: MTLComputeCommandEncoder, device: MTLDevice, library: MTLLibrary, big: Bool) {
    guard let fn = library.makeFunction(name: "k"),
          let pso = try? device.makeComputePipelineState(function: fn) else { return }
    encoder.setComputePipelineState(pso)
    var tg = MTLSize(width: 8, height: 8, depth: 1)
    if big { tg = MTLSize(width: 16, height: 16, depth: 1) }
    encoder.dispatchThreadgroups(MTLSize(width: 4, height: 4, depth: 1), threadsPerThreadgroup: tg)
    let same = MTLSize(width: 8, height: 8, depth: 1)
    encoder.dispatchThreadgroups(MTLSize(width: 4, height: 4, depth: 1), threadsPerThreadgroup: same)
}
"""
    assert summary(scan(scan_swift, text)) == [
        (7, "threadgroups", "k", None, (4, 4, 1)),
        (9, "threadgroups", "k", (8, 8, 1), (4, 4, 1)),
    ]


def test_swift_helper_returning_the_pipeline_for_a_name():
    text = """\
class Kernels {
    let device: MTLDevice
    let library: MTLLibrary
    var cache: [String: MTLComputePipelineState] = [:]

    func pipeline(_ name: String) -> MTLComputePipelineState {
        if let p = cache[name] { return p }
        let p = try! device.makeComputePipelineState(function: library.makeFunction(name: name)!)
        cache[name] = p
        return p
    }

    func prefixed(_ name: String) -> MTLComputePipelineState {
        let full = "k_" + name
        return try! device.makeComputePipelineState(function: library.makeFunction(name: full)!)
    }

    func encode(_ e: MTLComputeCommandEncoder) {
        e.setComputePipelineState(pipeline("softmax"))
        e.dispatchThreadgroups(MTLSize(width: 8, height: 1, depth: 1), threadsPerThreadgroup: MTLSize(width: 256, height: 1, depth: 1))
        e.setComputePipelineState(prefixed("gelu"))
        e.dispatchThreadgroups(MTLSize(width: 8, height: 1, depth: 1), threadsPerThreadgroup: MTLSize(width: 256, height: 1, depth: 1))
    }
}
"""
    assert [x.kernel for x in scan(scan_swift, text)] == ["softmax", None]


def test_swift_indirect_dispatch_reads_only_the_group():
    text = """\
func f(e: MTLComputeCommandEncoder, buf: MTLBuffer) {
    e.dispatchThreadgroups(indirectBuffer: buf, indirectBufferOffset: 0,
                           threadsPerThreadgroup: MTLSize(width: 64, height: 1, depth: 1))
}
"""
    assert summary(scan(scan_swift, text)) == [(2, "threadgroups", None, (64, 1, 1), None)]


# --------------------------------------------------------------------------------------------
# Objective-C

OBJC_ADDER = """\
#import "MetalAdder.h"

const unsigned int arrayLength = 1 << 24;
#define TILE 16

@implementation MetalAdder
{
    id<MTLDevice> _mDevice;
    id<MTLComputePipelineState> _mAddFunctionPSO;
    id<MTLCommandQueue> _mCommandQueue;
}

- (instancetype) initWithDevice: (id<MTLDevice>) device
{
    self = [super init];
    if (self)
    {
        _mDevice = device;
        NSError* error = nil;
        id<MTLLibrary> defaultLibrary = [_mDevice newDefaultLibrary];
        id<MTLFunction> addFunction = [defaultLibrary newFunctionWithName:@"add_arrays"];
        _mAddFunctionPSO = [_mDevice newComputePipelineStateWithFunction: addFunction error:&error];
        self.scalePSO = [_mDevice newComputePipelineStateWithFunction:
                            [defaultLibrary newFunctionWithName:[NSString stringWithUTF8String:"scale"]]
                                                               error:&error];
        _mCommandQueue = [_mDevice newCommandQueue];
    }
    return self;
}

- (void)encodeAddCommand:(id<MTLComputeCommandEncoder>)computeEncoder {
    [computeEncoder setComputePipelineState:_mAddFunctionPSO];
    [computeEncoder setBuffer:_mBufferA offset:0 atIndex:0];
    MTLSize gridSize = MTLSizeMake(arrayLength, 1, 1);
    NSUInteger threadGroupSize = _mAddFunctionPSO.maxTotalThreadsPerThreadgroup;
    if (threadGroupSize > arrayLength)
    {
        threadGroupSize = arrayLength;
    }
    MTLSize threadgroupSize = MTLSizeMake(threadGroupSize, 1, 1);
    [computeEncoder dispatchThreads:gridSize
              threadsPerThreadgroup:threadgroupSize];
}

- (void)encodeScale:(id<MTLComputeCommandEncoder>)encoder count:(NSUInteger)n {
    [encoder setComputePipelineState:self.scalePSO];
    MTLSize tg = MTLSizeMake((NSUInteger)TILE, TILE / 2, 1u);
    [encoder dispatchThreadgroups:MTLSizeMake((n + TILE - 1) / TILE, 1, 1) threadsPerThreadgroup:tg];
}
@end
"""


def test_objc_apple_sample_and_a_property_set_through_self():
    launches = scan(scan_objc, OBJC_ADDER, "MetalAdder.m")
    assert summary(launches) == [
        (line_of(OBJC_ADDER, "[computeEncoder dispatchThreads"), "threads", "add_arrays", None, (1 << 24, 1, 1)),
        (line_of(OBJC_ADDER, "[encoder dispatchThreadgroups"), "threadgroups", "scale", (16, 8, 1), None),
    ]
    assert launches[1].group_at.line == line_of(OBJC_ADDER, "MTLSize tg = ")


def test_objc_switch_selected_pipeline_has_no_kernel_and_nil_initialisation_is_not_a_value():
    text = """\
static void encode(id<MTLComputeCommandEncoder> encoder, id<MTLDevice> device, id<MTLLibrary> lib, int type, int n) {
    NSError *error = nil;
    id<MTLComputePipelineState> a = nil;
    a = [device newComputePipelineStateWithFunction:[lib newFunctionWithName:@"kernel_a"] error:&error];
    id<MTLComputePipelineState> b = [device newComputePipelineStateWithFunction:[lib newFunctionWithName:@"kernel_b"] error:&error];
    switch (type) {
        case 0: [encoder setComputePipelineState:a]; break;
        case 1: [encoder setComputePipelineState:b]; break;
    }
    [encoder dispatchThreadgroups:MTLSizeMake(n, 1, 1) threadsPerThreadgroup:MTLSizeMake(1, 1, 1)];
    [encoder setComputePipelineState:a];
    [encoder dispatchThreadgroups:MTLSizeMake(n, 1, 1) threadsPerThreadgroup:MTLSizeMake(32, 1, 1)];
    [encoder setComputePipelineState:type ? a : b];
    [encoder dispatchThreadgroups:MTLSizeMake(n, 1, 1) threadsPerThreadgroup:(MTLSize){64, 1, 1}];
}
"""
    assert summary(scan(scan_objc, text)) == [
        (10, "threadgroups", None, (1, 1, 1), None),
        (12, "threadgroups", "kernel_a", (32, 1, 1), None),
        (14, "threadgroups", None, (64, 1, 1), None),
    ]


def test_objc_helper_method_and_function_pass_the_name_through():
    text = """\
static id<MTLComputePipelineState> get_pipeline(Ctx *ctx, NSString *kernelName) {
    id<MTLComputePipelineState> pso = ctx.pipelines[kernelName];
    if (pso) return pso;
    id<MTLFunction> fn = [ctx.library newFunctionWithName:kernelName];
    pso = [ctx.device newComputePipelineStateWithFunction:fn error:nil];
    ctx.pipelines[kernelName] = pso;
    return pso;
}

@implementation Runner
- (id<MTLComputePipelineState>)pipelineNamed:(NSString *)name {
    return [_device newComputePipelineStateWithFunction:[_library newFunctionWithName:name] error:nil];
}
- (void)run:(id<MTLComputeCommandEncoder>)enc ctx:(Ctx *)ctx name:(NSString *)name {
    id<MTLComputePipelineState> p = get_pipeline(ctx, @"apply_gate");
    [enc setComputePipelineState:p];
    [enc dispatchThreads:MTLSizeMake(1024, 1, 1) threadsPerThreadgroup:MTLSizeMake(256, 1, 1)];
    [enc setComputePipelineState:[self pipelineNamed:@"reduce"]];
    [enc dispatchThreads:MTLSizeMake(1024, 1, 1) threadsPerThreadgroup:MTLSizeMake(256, 1, 1)];
    [enc setComputePipelineState:get_pipeline(ctx, name)];
    [enc dispatchThreads:MTLSizeMake(1024, 1, 1) threadsPerThreadgroup:MTLSizeMake(256, 1, 1)];
}
@end
"""
    assert [(x.kernel, x.grid) for x in scan(scan_objc, text)] == [
        ("apply_gate", (1024, 1, 1)),
        ("reduce", (1024, 1, 1)),
        (None, (1024, 1, 1)),
    ]


def test_objcpp_auto_declarations_are_read():
    # tree-sitter-objc reads C++ ``auto x = …`` as a declaration of type ``x`` with its name missing
    text = """\
static id<MTLComputePipelineState> get_pipeline(const std::string& name) {
    std::lock_guard<std::mutex> lock(g_mutex);
    id<MTLFunction> fn = [g_library newFunctionWithName:[NSString stringWithUTF8String:name.c_str()]];
    return [g_device newComputePipelineStateWithFunction:fn error:nil];
}

at::Tensor op(const at::Tensor& x) {
    @autoreleasepool {
        auto encoder = stream->commandEncoder();
        auto pipeline = get_pipeline("nf4_dequantize");
        [encoder setComputePipelineState:pipeline];
        MTLSize tg = MTLSizeMake(16, 16, 1);
        MTLSize grid = MTLSizeMake((N + 15) / 16 * 16, (M + 15) / 16 * 16, 1);
        [encoder dispatchThreads:grid threadsPerThreadgroup:tg];
    }
}
"""
    assert summary(scan(scan_objc, text, "q.mm")) == [(14, "threads", "nf4_dequantize", (16, 16, 1), None)]


# --------------------------------------------------------------------------------------------
# metal-cpp

CPP_ADDER = """\
#include <Metal/Metal.hpp>

class MetalAdder {
public:
    MetalAdder(MTL::Device* device) : _device(device->retain()), _addPSO(nullptr) {
        NS::Error* error = nullptr;
        MTL::Library* lib = _device->newDefaultLibrary();
        auto str = NS::String::string("add_arrays", NS::UTF8StringEncoding);
        MTL::Function* fn = lib->newFunction(str);
        _addPSO = _device->newComputePipelineState(fn, &error);
        fn->release();
        this->_scalePSO = _device->newComputePipelineState(lib->newFunction(MTLSTR("scale")), &error);
    }

    void encodeAdd(MTL::ComputeCommandEncoder* enc, NS::UInteger n) {
        enc->setComputePipelineState(_addPSO);
        MTL::Size grid = MTL::Size(n, 1, 1);
        NS::UInteger w = _addPSO->threadExecutionWidth();
        enc->dispatchThreads(grid, MTL::Size(w, 1, 1));
    }

    void encodeScale(MTL::ComputeCommandEncoder* enc, NS::UInteger n) {
        enc->setComputePipelineState(_scalePSO);
        MTL::Size tg(static_cast<NS::UInteger>(kTile), 1, 1);
        MTL::Size groups{(n + kTile - 1) / kTile, 1, 1};
        enc->dispatchThreadgroups(groups, tg);
        enc->dispatchThreadgroups(MTL::Size::Make(8, 4, 1), MTL::Size::Make(kTile, 2, 1));
    }

private:
    static constexpr int kTile = 32;
    MTL::Device* _device;
    MTL::ComputePipelineState* _addPSO;
    MTL::ComputePipelineState* _scalePSO;
};
"""


def test_metal_cpp_sample():
    assert summary(scan(scan_metal_cpp, CPP_ADDER, "adder.cpp")) == [
        (line_of(CPP_ADDER, "enc->dispatchThreads"), "threads", "add_arrays", None, None),
        (line_of(CPP_ADDER, "enc->dispatchThreadgroups(groups"), "threadgroups", "scale", (32, 1, 1), None),
        (line_of(CPP_ADDER, "enc->dispatchThreadgroups(MTL::Size::Make"), "threadgroups", "scale", (32, 2, 1), (8, 4, 1)),
    ]


def test_metal_cpp_pipeline_from_a_vector_or_an_escaping_encoder_has_no_kernel():
    text = """\
void Engine::run(MTL::ComputeCommandEncoder* enc, size_t i) {
    enc->setComputePipelineState(_pipelines[i]);
    enc->dispatchThreads(MTL::Size(1024, 1, 1), MTL::Size(64, 1, 1));
    MTL::ComputePipelineState* p = _device->newComputePipelineState(_lib->newFunction(MTLSTR("k")), nullptr);
    enc->setComputePipelineState(p);
    bindDefaults(enc);
    enc->dispatchThreads(MTL::Size(1024, 1, 1), MTL::Size(64, 1, 1));
    enc->setComputePipelineState(p);
    enc->setBuffer(buf, 0, 0);
    enc->dispatchThreads(MTL::Size(1024, 1, 1), MTL::Size(64, 1, 1));
}
"""
    assert [x.kernel for x in scan(scan_metal_cpp, text)] == [None, None, "k"]


def test_metal_cpp_scanner_ignores_cuda_and_vulkan_host_code():
    text = """\
__global__ void k(float* x);
void launch(float* x, int n) { k<<<(n + 255) / 256, 256>>>(x); vkCmdDispatch(cmd, 4, 4, 1); }
"""
    assert scan(scan_metal_cpp, text, "main.cpp") == []


# --------------------------------------------------------------------------------------------
# Registry and robustness


def test_registered_extensions():
    assert ALL_SCANNERS[".swift"] == [scan_swift]
    assert ALL_SCANNERS[".m"] == [scan_objc]
    assert ALL_SCANNERS[".mm"] == [scan_objc]


# The analysis itself, without the scanners' catch-all: a bug that raises shows here.
SWIFT, OBJC, CPP = ((metal._Swift, "swift"), (metal._ObjC, "objc"), (metal._Cpp, "cpp"))
SAMPLES = [(SWIFT, SWIFT_ADDER + SWIFT_AMBIGUOUS + SWIFT_IMAGE), (OBJC, OBJC_ADDER), (CPP, CPP_ADDER),
           (OBJC, CPP_ADDER), (CPP, OBJC_ADDER), (SWIFT, OBJC_ADDER)]


def analyse(lang, data: bytes) -> list[HostLaunch]:
    return metal._analyse("t", data, *lang)


@pytest.mark.parametrize("lang,text", SAMPLES)
def test_analysis_never_raises_on_truncated_or_mutated_input(lang, text):
    rng = random.Random(20)
    data = text.encode()
    for cut in range(0, len(data), max(1, len(data) // 60)):
        assert all(isinstance(x, HostLaunch) for x in analyse(lang, data[:cut]))
    for _ in range(60):
        buf = bytearray(data)
        for _ in range(rng.randint(1, 20)):
            k = rng.randrange(len(buf))
            buf[k : k + rng.randint(1, 3)] = bytes([rng.randrange(256)]) * rng.randint(0, 3)
        assert all(isinstance(x, HostLaunch) for x in analyse(lang, bytes(buf)))


@pytest.mark.parametrize("lang", [SWIFT, OBJC, CPP])
def test_analysis_never_raises_on_random_bytes_and_deep_nesting(lang):
    rng = random.Random(7)
    for _ in range(30):
        junk = bytes(rng.randrange(256) for _ in range(rng.randint(0, 400)))
        assert isinstance(analyse(lang, b"dispatchThreads" + junk), list)
    deep = b"x = " + b"(" * 5000 + b"1" + b")" * 5000 + b"; e.dispatchThreads(g, t);"
    assert isinstance(analyse(lang, deep), list)
    chain = "".join(f"let v{i} = v{i + 1}\n" for i in range(3000)) + "e.dispatchThreads(v0, threadsPerThreadgroup: v0)\n"
    assert isinstance(analyse(lang, chain.encode()), list)


def test_scanners_take_anything():
    for scanner in (scan_swift, scan_objc, scan_metal_cpp):
        assert scanner("n", None) == []  # type: ignore[arg-type]
        assert scanner("e", b"") == []
        assert scanner("b", b"\xff\xfe dispatchThreads \x00") == []


def test_budget_bounds_the_work(monkeypatch):
    monkeypatch.setattr(_metal_analysis, "MAX_STEPS", 5)
    (d,) = scan(scan_swift, SWIFT_ADDER)
    assert d.dispatch == "threads" and d.kernel is None and d.grid is None


# --------------------------------------------------------------------------------------------
# References: names the scanner sees but cannot account for


def test_linked_names_are_not_references():
    assert references(scan_swift, SWIFT_ADDER) == []
    assert references(scan_swift, SWIFT_TWO) == []
    assert references(scan_objc, OBJC_ADDER) == []
    assert references(scan_metal_cpp, CPP_ADDER) == []


def test_names_in_tables_ternaries_and_unlinked_binds_are_references():
    text = """\
class K {
    let names = ["gelu", "relu"]
    func encode(_ e: MTLComputeCommandEncoder, fast: Bool, device: MTLDevice, library: MTLLibrary) throws {
        let a = try device.makeComputePipelineState(function: library.makeFunction(name: "scale")!)
        let p = try device.makeComputePipelineState(function: library.makeFunction(name: fast ? "fast" : "slow")!)
        e.setComputePipelineState(a)
        e.dispatchThreads(MTLSize(width: 64, height: 1, depth: 1), threadsPerThreadgroup: MTLSize(width: 64, height: 1, depth: 1))
        e.setComputePipelineState(p)
        e.dispatchThreads(MTLSize(width: 64, height: 1, depth: 1), threadsPerThreadgroup: MTLSize(width: 64, height: 1, depth: 1))
        print("done: \\(a)")
    }
}
"""
    assert [x.kernel for x in scan(scan_swift, text)] == ["scale", None]
    # "scale" is linked once, but it is also bound before the unlinked second dispatch
    assert references(scan_swift, text) == ["gelu", "relu", "scale", "fast", "slow"]


def test_a_pipeline_also_dispatched_where_the_link_fails_is_a_reference():
    text = """\
static void run(id<MTLComputeCommandEncoder> enc, id<MTLDevice> dev, id<MTLLibrary> lib, BOOL flag) {
    id<MTLComputePipelineState> a = [dev newComputePipelineStateWithFunction:[lib newFunctionWithName:@"kernel_a"] error:nil];
    [enc setComputePipelineState:a];
    [enc dispatchThreadgroups:MTLSizeMake(4, 1, 1) threadsPerThreadgroup:MTLSizeMake(64, 1, 1)];
    prepare(enc);
    [enc dispatchThreadgroups:MTLSizeMake(4, 1, 1) threadsPerThreadgroup:MTLSizeMake(128, 1, 1)];
}
"""
    assert [x.kernel for x in scan(scan_objc, text)] == ["kernel_a", None]
    assert references(scan_objc, text) == ["kernel_a"]


def test_numbers_other_files_may_change_are_not_constants():
    swift = """\
var globalTile = 8
let fixedTile = 8
class T {
    var tile = 16
    private var privateTile = 32
    let pso: MTLComputePipelineState
    func encode(_ e: MTLComputeCommandEncoder) {
        e.dispatchThreadgroups(MTLSize(width: 1, height: 1, depth: 1), threadsPerThreadgroup: MTLSize(width: tile, height: 1, depth: 1))
        e.dispatchThreadgroups(MTLSize(width: 1, height: 1, depth: 1), threadsPerThreadgroup: MTLSize(width: privateTile, height: 1, depth: 1))
        e.dispatchThreadgroups(MTLSize(width: 1, height: 1, depth: 1), threadsPerThreadgroup: MTLSize(width: globalTile, height: 1, depth: 1))
        e.dispatchThreadgroups(MTLSize(width: 1, height: 1, depth: 1), threadsPerThreadgroup: MTLSize(width: fixedTile, height: 1, depth: 1))
    }
}
"""
    assert [x.group for x in scan(scan_swift, swift)] == [None, (32, 1, 1), None, (8, 1, 1)]
    objc = """\
int gTile = 16;
static int sTile = 32;
const int cTile = 64;
void encode(id<MTLComputeCommandEncoder> e) {
    [e dispatchThreadgroups:MTLSizeMake(1, 1, 1) threadsPerThreadgroup:MTLSizeMake(gTile, 1, 1)];
    [e dispatchThreadgroups:MTLSizeMake(1, 1, 1) threadsPerThreadgroup:MTLSizeMake(sTile, 1, 1)];
    [e dispatchThreadgroups:MTLSizeMake(1, 1, 1) threadsPerThreadgroup:MTLSizeMake(cTile, 1, 1)];
    [e dispatchThreadgroups:MTLSizeMake(1, 1, 1) threadsPerThreadgroup:MTLSizeMake(self.tile, 1, 1)];
}
"""
    assert [x.group for x in scan(scan_objc, objc)] == [None, (32, 1, 1), (64, 1, 1), None]


def test_static_constants_through_self_and_the_type_name():
    text = """\
final class MatVec {
    private static let rowsPerGroup = 8
    static var tunable = 4
    let pso: MTLComputePipelineState
    func encode(_ enc: MTLComputeCommandEncoder, rows: Int) {
        enc.setComputePipelineState(pso)
        enc.dispatchThreadgroups(MTLSize(width: (rows + Self.rowsPerGroup - 1) / Self.rowsPerGroup, height: 1, depth: 1),
                                 threadsPerThreadgroup: MTLSize(width: 32 * Self.rowsPerGroup, height: 1, depth: 1))
        enc.dispatchThreadgroups(MTLSize(width: 1, height: 1, depth: 1),
                                 threadsPerThreadgroup: MTLSize(width: 32 * MatVec.rowsPerGroup, height: 1, depth: 1))
        enc.dispatchThreadgroups(MTLSize(width: 1, height: 1, depth: 1),
                                 threadsPerThreadgroup: MTLSize(width: 32 * Other.rowsPerGroup, height: 1, depth: 1))
        enc.dispatchThreadgroups(MTLSize(width: 1, height: 1, depth: 1),
                                 threadsPerThreadgroup: MTLSize(width: Self.tunable, height: 1, depth: 1))
    }
}
"""
    assert [x.group for x in scan(scan_swift, text)] == [(256, 1, 1), (256, 1, 1), None, None]


def test_a_size_changed_field_by_field_is_not_constant():
    cpp = """\
void run(MTL::ComputeCommandEncoder* enc, Ctx* ctx, NS::UInteger w) {
    MTL::Size tg = MTL::Size(16, 16, 1);
    tg.width = 8;
    MTL::Size groups;
    groups.width = (w + 7) / 8;
    groups.height = 1;
    groups.depth = 1;
    ctx->pso = ctx->device->newComputePipelineState(ctx->lib->newFunction(MTLSTR("fill")), nullptr);
    enc->setComputePipelineState(ctx->pso);
    enc->dispatchThreadgroups(groups, tg);
}
"""
    # the pipeline field is written once in the file, from one name: linked through any receiver
    assert summary(scan(scan_metal_cpp, cpp)) == [(10, "threadgroups", "fill", None, None)]
    swift = """\
func run(enc: MTLComputeCommandEncoder) {
    var tg = MTLSize(width: 16, height: 16, depth: 1)
    tg.width = 8
    enc.dispatchThreadgroups(MTLSize(width: 1, height: 1, depth: 1), threadsPerThreadgroup: tg)
}
"""
    assert [x.group for x in scan(scan_swift, swift)] == [None]


def test_objc_setter_message_writes_the_property():
    text = """\
@implementation R
- (instancetype)initWithDevice:(id<MTLDevice>)device library:(id<MTLLibrary>)lib {
    self.pipeline = [device newComputePipelineStateWithFunction:[lib newFunctionWithName:@"first"] error:nil];
    return self;
}
- (void)swap:(id<MTLComputePipelineState>)other {
    [self setPipeline:other];
}
- (void)encode:(id<MTLComputeCommandEncoder>)enc {
    [enc setComputePipelineState:self.pipeline];
    [enc dispatchThreads:MTLSizeMake(64, 1, 1) threadsPerThreadgroup:MTLSizeMake(64, 1, 1)];
}
@end
"""
    assert [x.kernel for x in scan(scan_objc, text)] == [None]
    assert [x.kernel for x in scan(scan_objc, text.replace("[self setPipeline:other];", ""))] == ["first"]


def test_helper_with_an_external_label_and_a_file_without_dispatches():
    utilities = """\
import Metal

let metalDevice: MTLDevice? = MTLCreateSystemDefaultDevice()

/// Makes a compute pipeline for the compute function with the given name.
func makeComputePipeline(named name: String) -> MTLComputePipelineState? {
    guard let function = metalDevice?.makeDefaultLibrary()?.makeFunction(name: name) else {
        return nil
    }
    return try? metalDevice?.makeComputePipelineState(function: function)
}

let sharedBlur = makeComputePipeline(named: "blur_rows")
"""
    # no dispatch here, but the pipeline built from "blur_rows" may be dispatched anywhere
    assert scan(scan_swift, utilities) == []
    assert references(scan_swift, utilities) == ["blur_rows"]
    user = utilities + """\
func encode(_ encoder: MTLComputeCommandEncoder) {
    guard let pso = makeComputePipeline(named: "blur_cols") else { return }
    encoder.setComputePipelineState(pso)
    encoder.dispatchThreads(MTLSize(width: 512, height: 1, depth: 1), threadsPerThreadgroup: MTLSize(width: 64, height: 1, depth: 1))
}
"""
    assert [x.kernel for x in scan(scan_swift, user)] == ["blur_cols"]
    assert references(scan_swift, user) == ["blur_rows"]


def test_metal_cpp_is_scanned_with_the_other_cpp_scanners():
    from shaderlint.host import scanners_for
    from shaderlint.host.index import load_scanners

    load_scanners()
    found = [x for s in scanners_for("adder.cpp") for x in s("adder.cpp", CPP_ADDER.encode()
                                                              if isinstance(CPP_ADDER, str) else CPP_ADDER)]
    assert any(x.api == "metal" and x.kernel for x in found)
    plain = b"int main() { return 0; }\n"  # C++ without a dispatch is not parsed for Metal
    assert [x for s in scanners_for("main.cpp") for x in s("main.cpp", plain)] == []
