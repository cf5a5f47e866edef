"""Child process of :mod:`shaderlint.estimate.radv`: compute pipelines on one Vulkan device.

Run as ``python -m shaderlint.estimate._vulkan_worker``, never imported by the
linter itself: a driver may abort() or crash on an input (RADV does on some),
and that must end this process only. The parent chooses the device through the
environment (``RADV_FORCE_FAMILY``, ``VK_ICD_FILENAMES``) and writes one JSON
request to stdin::

    {"jobs": [{"id": "...", "spv": "/path/x.spv", "entry": "main",
               "sets": [[[binding, descriptor_type, count], ...], ...],
               "push_constant_bytes": 16, "subgroup_size": 64 or null,
               "specialization": [[constant_id, uint32 value], ...]}]}

The worker prints one JSON line describing the device, then one line per job
as soon as the job is done (so the parent knows which job a crash hit)::

    {"device": "...", "driver_version": "22.3.6", "api_version": "1.3.230", ...}
    {"id": "...", "executables": [{"name": ..., "subgroup_size": 64,
                                   "statistics": {"VGPRs": 24, ...}}]}
    {"id": "...", "error": "vkCreateComputePipelines returned -13"}

It talks to the Vulkan loader through :mod:`ctypes` with the few structures it
needs declared here (field order from the Vulkan specification). ctypes needs
neither a C compiler nor Vulkan headers nor a package from PyPI: the Debian
packages ``libvulkan1`` and ``mesa-vulkan-drivers`` are all it needs.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import sys

# VkStructureType
APPLICATION_INFO = 0
INSTANCE_CREATE_INFO = 1
DEVICE_QUEUE_CREATE_INFO = 2
DEVICE_CREATE_INFO = 3
SHADER_MODULE_CREATE_INFO = 16
PIPELINE_SHADER_STAGE_CREATE_INFO = 18
COMPUTE_PIPELINE_CREATE_INFO = 29
PIPELINE_LAYOUT_CREATE_INFO = 30
DESCRIPTOR_SET_LAYOUT_CREATE_INFO = 32
PHYSICAL_DEVICE_VULKAN_1_1_FEATURES = 49
PHYSICAL_DEVICE_VULKAN_1_2_FEATURES = 51
PHYSICAL_DEVICE_VULKAN_1_2_PROPERTIES = 52
PHYSICAL_DEVICE_VULKAN_1_3_FEATURES = 53
PHYSICAL_DEVICE_FEATURES_2 = 1000059000
PHYSICAL_DEVICE_PROPERTIES_2 = 1000059001
PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO = 1000225001
PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES = 1000269000
PIPELINE_INFO_KHR = 1000269001
PIPELINE_EXECUTABLE_PROPERTIES_KHR = 1000269002
PIPELINE_EXECUTABLE_INFO_KHR = 1000269003
PIPELINE_EXECUTABLE_STATISTIC_KHR = 1000269004

SHADER_STAGE_COMPUTE = 0x20
QUEUE_COMPUTE = 0x2
CAPTURE_STATISTICS = 0x40
VK_SUCCESS = 0
VK_INCOMPLETE = 5

u32 = ctypes.c_uint32
u64 = ctypes.c_uint64  # non-dispatchable handles
ptr = ctypes.c_void_p  # dispatchable handles and pointers


class Base(ctypes.Structure):
    pass


class ApplicationInfo(Base):
    _fields_ = [("sType", u32), ("pNext", ptr), ("pApplicationName", ctypes.c_char_p),
                ("applicationVersion", u32), ("pEngineName", ctypes.c_char_p), ("engineVersion", u32),
                ("apiVersion", u32)]


class InstanceCreateInfo(Base):
    _fields_ = [("sType", u32), ("pNext", ptr), ("flags", u32), ("pApplicationInfo", ptr),
                ("enabledLayerCount", u32), ("ppEnabledLayerNames", ptr),
                ("enabledExtensionCount", u32), ("ppEnabledExtensionNames", ptr)]


class DeviceQueueCreateInfo(Base):
    _fields_ = [("sType", u32), ("pNext", ptr), ("flags", u32), ("queueFamilyIndex", u32),
                ("queueCount", u32), ("pQueuePriorities", ctypes.POINTER(ctypes.c_float))]


class DeviceCreateInfo(Base):
    _fields_ = [("sType", u32), ("pNext", ptr), ("flags", u32), ("queueCreateInfoCount", u32),
                ("pQueueCreateInfos", ptr), ("enabledLayerCount", u32), ("ppEnabledLayerNames", ptr),
                ("enabledExtensionCount", u32), ("ppEnabledExtensionNames", ptr),
                ("pEnabledFeatures", ptr)]


class ExtensionProperties(Base):
    _fields_ = [("extensionName", ctypes.c_char * 256), ("specVersion", u32)]


class QueueFamilyProperties(Base):
    _fields_ = [("queueFlags", u32), ("queueCount", u32), ("timestampValidBits", u32),
                ("minImageTransferGranularity", u32 * 3)]


class ShaderModuleCreateInfo(Base):
    _fields_ = [("sType", u32), ("pNext", ptr), ("flags", u32), ("codeSize", ctypes.c_size_t),
                ("pCode", ptr)]


class DescriptorSetLayoutBinding(Base):
    _fields_ = [("binding", u32), ("descriptorType", u32), ("descriptorCount", u32),
                ("stageFlags", u32), ("pImmutableSamplers", ptr)]


class DescriptorSetLayoutCreateInfo(Base):
    _fields_ = [("sType", u32), ("pNext", ptr), ("flags", u32), ("bindingCount", u32),
                ("pBindings", ptr)]


class PushConstantRange(Base):
    _fields_ = [("stageFlags", u32), ("offset", u32), ("size", u32)]


class PipelineLayoutCreateInfo(Base):
    _fields_ = [("sType", u32), ("pNext", ptr), ("flags", u32), ("setLayoutCount", u32),
                ("pSetLayouts", ptr), ("pushConstantRangeCount", u32), ("pPushConstantRanges", ptr)]


class RequiredSubgroupSizeCreateInfo(Base):
    _fields_ = [("sType", u32), ("pNext", ptr), ("requiredSubgroupSize", u32)]


class SpecializationMapEntry(Base):
    _fields_ = [("constantID", u32), ("offset", u32), ("size", ctypes.c_size_t)]


class SpecializationInfo(Base):
    _fields_ = [("mapEntryCount", u32), ("pMapEntries", ptr), ("dataSize", ctypes.c_size_t), ("pData", ptr)]


class PipelineShaderStageCreateInfo(Base):
    _fields_ = [("sType", u32), ("pNext", ptr), ("flags", u32), ("stage", u32), ("module", u64),
                ("pName", ctypes.c_char_p), ("pSpecializationInfo", ptr)]


class ComputePipelineCreateInfo(Base):
    _fields_ = [("sType", u32), ("pNext", ptr), ("flags", u32), ("stage", PipelineShaderStageCreateInfo),
                ("layout", u64), ("basePipelineHandle", u64), ("basePipelineIndex", ctypes.c_int32)]


class PipelineInfo(Base):
    _fields_ = [("sType", u32), ("pNext", ptr), ("pipeline", u64)]


class PipelineExecutableProperties(Base):
    _fields_ = [("sType", u32), ("pNext", ptr), ("stages", u32), ("name", ctypes.c_char * 256),
                ("description", ctypes.c_char * 256), ("subgroupSize", u32)]


class PipelineExecutableInfo(Base):
    _fields_ = [("sType", u32), ("pNext", ptr), ("pipeline", u64), ("executableIndex", u32)]


class StatisticValue(ctypes.Union):
    _fields_ = [("b32", u32), ("i64", ctypes.c_int64), ("u64", ctypes.c_uint64), ("f64", ctypes.c_double)]


class PipelineExecutableStatistic(Base):
    _fields_ = [("sType", u32), ("pNext", ptr), ("name", ctypes.c_char * 256),
                ("description", ctypes.c_char * 256), ("format", u32), ("value", StatisticValue)]


class Chained(Base):
    """Head of any extensible structure: sType and pNext, then the body."""

    _fields_ = [("sType", u32), ("pNext", ptr)]


def _chain_struct(stype: int, size: int = 1024) -> ctypes.Array:
    """A zeroed buffer of ``size`` bytes that starts as a structure of type ``stype``.

    Feature structures are only sType, pNext and VkBool32s: a buffer larger
    than the structure lets the driver fill what it knows without a declaration
    of every member here.
    """
    buf = (ctypes.c_uint8 * size)()
    Chained.from_buffer(buf).sType = stype
    return buf


def _version(v: int) -> str:
    return f"{v >> 22}.{(v >> 12) & 0x3FF}.{v & 0xFFF}"


class VulkanError(Exception):
    pass


class Device:
    """Instance, physical device 0 and a logical device with everything but robustness enabled."""

    def __init__(self) -> None:
        name = ctypes.util.find_library("vulkan") or "libvulkan.so.1"
        try:
            self.lib = ctypes.CDLL(name)
        except OSError:
            self.lib = ctypes.CDLL("libvulkan.so.1")
        gipa = self.lib.vkGetInstanceProcAddr
        gipa.restype = ptr
        gipa.argtypes = [ptr, ctypes.c_char_p]
        self._gipa = gipa
        self._keep: list[object] = []
        app = ApplicationInfo(APPLICATION_INFO, None, b"shaderlint", 1, b"shaderlint", 1, (1 << 22) | (3 << 12))
        ici = InstanceCreateInfo(INSTANCE_CREATE_INFO, None, 0, ctypes.cast(ctypes.pointer(app), ptr), 0, None, 0, None)
        self.instance = ptr()
        create_instance = self._fn(None, "vkCreateInstance", [ptr, ptr, ptr])
        self._check(create_instance(ctypes.byref(ici), None, ctypes.byref(self.instance)), "vkCreateInstance")
        enum_pd = self._fn(self.instance, "vkEnumeratePhysicalDevices", [ptr, ptr, ptr])
        count = u32(0)
        self._check(enum_pd(self.instance, ctypes.byref(count), None), "vkEnumeratePhysicalDevices")
        if count.value == 0:
            raise VulkanError("no Vulkan device (is RADV_FORCE_FAMILY set and mesa-vulkan-drivers installed?)")
        devices = (ptr * count.value)()
        res = enum_pd(self.instance, ctypes.byref(count), devices)
        if res not in (VK_SUCCESS, VK_INCOMPLETE):
            self._check(res, "vkEnumeratePhysicalDevices")
        self.physical = ptr(devices[0])

        props = (ctypes.c_uint8 * 4096)()
        get_props = self._fn(self.instance, "vkGetPhysicalDeviceProperties", [ptr, ptr], restype=None)
        get_props(self.physical, props)
        words = (u32 * 5).from_buffer(props)
        self.api_version = words[0]
        self.driver_version = words[1]
        self.device_name = bytes(props[20:276]).split(b"\0", 1)[0].decode("utf-8", "replace")
        # VkPhysicalDeviceLimits begins at byte 296 of VkPhysicalDeviceProperties;
        # maxComputeSharedMemorySize is at 216 in it, maxComputeWorkGroupInvocations at 232.
        limits = (u32 * 3).from_buffer(props, 296 + 216)
        self.max_shared = limits[0]
        self.max_invocations = (u32 * 1).from_buffer(props, 296 + 232)[0]
        self.driver_info = ""
        props2 = _chain_struct(PHYSICAL_DEVICE_PROPERTIES_2, 4096)
        v12 = _chain_struct(PHYSICAL_DEVICE_VULKAN_1_2_PROPERTIES, 4096)
        Chained.from_buffer(props2).pNext = ctypes.addressof(v12)
        if self.api_version >= (1 << 22) | (2 << 12):
            get_props2 = self._fn(self.instance, "vkGetPhysicalDeviceProperties2", [ptr, ptr], restype=None)
            get_props2(self.physical, props2)
            # VkPhysicalDeviceVulkan12Properties: sType, pNext, driverID, driverName[256], driverInfo[256]
            self.driver_info = bytes(v12[16 + 4 + 256:16 + 4 + 512]).split(b"\0", 1)[0].decode("utf-8", "replace")

        # Queue family with compute.
        get_qf = self._fn(self.instance, "vkGetPhysicalDeviceQueueFamilyProperties", [ptr, ptr, ptr], restype=None)
        qcount = u32(0)
        get_qf(self.physical, ctypes.byref(qcount), None)
        qprops = (QueueFamilyProperties * max(qcount.value, 1))()
        get_qf(self.physical, ctypes.byref(qcount), qprops)
        family = next((i for i in range(qcount.value) if qprops[i].queueFlags & QUEUE_COMPUTE), 0)

        # Every device extension but the robustness ones (they change code generation).
        enum_ext = self._fn(self.instance, "vkEnumerateDeviceExtensionProperties", [ptr, ctypes.c_char_p, ptr, ptr])
        ecount = u32(0)
        self._check(enum_ext(self.physical, None, ctypes.byref(ecount), None), "vkEnumerateDeviceExtensionProperties")
        exts = (ExtensionProperties * max(ecount.value, 1))()
        res = enum_ext(self.physical, None, ctypes.byref(ecount), exts)
        if res not in (VK_SUCCESS, VK_INCOMPLETE):
            self._check(res, "vkEnumerateDeviceExtensionProperties")
        names = [exts[i].extensionName for i in range(ecount.value)]
        self.extensions = sorted(n.decode() for n in names)
        enabled = [n for n in names if b"robustness" not in n.lower()]
        ext_array = (ctypes.c_char_p * max(len(enabled), 1))(*enabled)

        # Every supported core feature, robustBufferAccess and robustImageAccess off.
        feats = _chain_struct(PHYSICAL_DEVICE_FEATURES_2)
        chain = [feats]
        for stype, since in ((PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, 2), (PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, 2),
                             (PHYSICAL_DEVICE_VULKAN_1_3_FEATURES, 3)):
            if self.api_version >= (1 << 22) | (since << 12):
                chain.append(_chain_struct(stype))
        if b"VK_KHR_pipeline_executable_properties" not in names:
            raise VulkanError("the device lacks VK_KHR_pipeline_executable_properties")
        chain.append(_chain_struct(PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES))
        for a, b in zip(chain, chain[1:]):
            Chained.from_buffer(a).pNext = ctypes.addressof(b)
        get_feats2 = self._fn(self.instance, "vkGetPhysicalDeviceFeatures2", [ptr, ptr], restype=None)
        get_feats2(self.physical, feats)
        (u32 * 1).from_buffer(feats, 16)[0] = 0  # VkPhysicalDeviceFeatures.robustBufferAccess
        if len(chain) > 3 and Chained.from_buffer(chain[3]).sType == PHYSICAL_DEVICE_VULKAN_1_3_FEATURES:
            (u32 * 1).from_buffer(chain[3], 16)[0] = 0  # VkPhysicalDeviceVulkan13Features.robustImageAccess
        (u32 * 1).from_buffer(chain[-1], 16)[0] = 1  # pipelineExecutableInfo
        self._keep += [chain, ext_array]

        priority = ctypes.c_float(1.0)
        qci = DeviceQueueCreateInfo(DEVICE_QUEUE_CREATE_INFO, None, 0, family, 1, ctypes.pointer(priority))
        dci = DeviceCreateInfo(DEVICE_CREATE_INFO, ctypes.addressof(feats), 0, 1,
                               ctypes.cast(ctypes.pointer(qci), ptr), 0, None, len(enabled),
                               ctypes.cast(ext_array, ptr), None)
        self.device = ptr()
        create_device = self._fn(self.instance, "vkCreateDevice", [ptr, ptr, ptr, ptr])
        self._check(create_device(self.physical, ctypes.byref(dci), None, ctypes.byref(self.device)), "vkCreateDevice")

        gdpa = self._fn(self.instance, "vkGetDeviceProcAddr", [ptr, ctypes.c_char_p], restype=ptr)
        self._gdpa = gdpa
        self.create_shader_module = self._dfn("vkCreateShaderModule", [ptr, ptr, ptr, ptr])
        self.destroy_shader_module = self._dfn("vkDestroyShaderModule", [ptr, u64, ptr], restype=None)
        self.create_set_layout = self._dfn("vkCreateDescriptorSetLayout", [ptr, ptr, ptr, ptr])
        self.destroy_set_layout = self._dfn("vkDestroyDescriptorSetLayout", [ptr, u64, ptr], restype=None)
        self.create_layout = self._dfn("vkCreatePipelineLayout", [ptr, ptr, ptr, ptr])
        self.destroy_layout = self._dfn("vkDestroyPipelineLayout", [ptr, u64, ptr], restype=None)
        self.create_compute = self._dfn("vkCreateComputePipelines", [ptr, u64, u32, ptr, ptr, ptr])
        self.destroy_pipeline = self._dfn("vkDestroyPipeline", [ptr, u64, ptr], restype=None)
        self.get_exec_props = self._dfn("vkGetPipelineExecutablePropertiesKHR", [ptr, ptr, ptr, ptr])
        self.get_exec_stats = self._dfn("vkGetPipelineExecutableStatisticsKHR", [ptr, ptr, ptr, ptr])

    # -- function pointers ------------------------------------------------------------------------
    def _fn(self, instance, name: str, argtypes, restype=ctypes.c_int32):
        address = self._gipa(instance, name.encode())
        if not address:
            raise VulkanError(f"the Vulkan loader has no {name}")
        return ctypes.CFUNCTYPE(restype, *argtypes)(address)

    def _dfn(self, name: str, argtypes, restype=ctypes.c_int32):
        address = self._gdpa(self.device, name.encode())
        if not address:
            raise VulkanError(f"the device has no {name}")
        return ctypes.CFUNCTYPE(restype, *argtypes)(address)

    @staticmethod
    def _check(result: int, what: str) -> None:
        if result != VK_SUCCESS:
            raise VulkanError(f"{what} returned VkResult {result}")

    # -- one pipeline -----------------------------------------------------------------------------
    def compile(self, job: dict) -> list[dict]:
        with open(job["spv"], "rb") as fh:
            code = fh.read()
        if len(code) % 4:
            raise VulkanError("SPIR-V size is not a multiple of 4")
        words = (ctypes.c_uint32 * (len(code) // 4)).from_buffer_copy(code)
        module = u64(0)
        smci = ShaderModuleCreateInfo(SHADER_MODULE_CREATE_INFO, None, 0, len(code), ctypes.addressof(words))
        self._check(self.create_shader_module(self.device, ctypes.byref(smci), None, ctypes.byref(module)),
                    "vkCreateShaderModule")
        set_layouts: list[int] = []
        layout = u64(0)
        pipeline = u64(0)
        try:
            for bindings in job.get("sets", []):
                arr = (DescriptorSetLayoutBinding * max(len(bindings), 1))()
                for i, (binding, dtype, count) in enumerate(bindings):
                    arr[i] = DescriptorSetLayoutBinding(binding, dtype, count, SHADER_STAGE_COMPUTE, None)
                info = DescriptorSetLayoutCreateInfo(DESCRIPTOR_SET_LAYOUT_CREATE_INFO, None, 0, len(bindings),
                                                     ctypes.addressof(arr))
                handle = u64(0)
                self._check(self.create_set_layout(self.device, ctypes.byref(info), None, ctypes.byref(handle)),
                            "vkCreateDescriptorSetLayout")
                set_layouts.append(handle.value)
            handles = (u64 * max(len(set_layouts), 1))(*set_layouts)
            push = int(job.get("push_constant_bytes") or 0)
            pcr = PushConstantRange(SHADER_STAGE_COMPUTE, 0, push)
            plci = PipelineLayoutCreateInfo(PIPELINE_LAYOUT_CREATE_INFO, None, 0, len(set_layouts),
                                            ctypes.addressof(handles), 1 if push else 0,
                                            ctypes.addressof(pcr) if push else None)
            self._check(self.create_layout(self.device, ctypes.byref(plci), None, ctypes.byref(layout)),
                        "vkCreatePipelineLayout")
            entry = job.get("entry", "main").encode()
            size_info = None
            if job.get("subgroup_size"):
                size_info = RequiredSubgroupSizeCreateInfo(PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO,
                                                           None, int(job["subgroup_size"]))
            spec = job.get("specialization") or []
            entries = (SpecializationMapEntry * max(len(spec), 1))()
            data = (u32 * max(len(spec), 1))()
            for i, (constant_id, value) in enumerate(spec):
                entries[i] = SpecializationMapEntry(int(constant_id), 4 * i, 4)
                data[i] = int(value) & 0xFFFFFFFF
            spec_info = SpecializationInfo(len(spec), ctypes.addressof(entries), 4 * len(spec), ctypes.addressof(data))
            stage = PipelineShaderStageCreateInfo(PIPELINE_SHADER_STAGE_CREATE_INFO,
                                                  ctypes.addressof(size_info) if size_info is not None else None,
                                                  0, SHADER_STAGE_COMPUTE, module.value, entry,
                                                  ctypes.addressof(spec_info) if spec else None)
            cpci = ComputePipelineCreateInfo(COMPUTE_PIPELINE_CREATE_INFO, None, CAPTURE_STATISTICS, stage,
                                             layout.value, 0, -1)
            self._check(self.create_compute(self.device, 0, 1, ctypes.byref(cpci), None, ctypes.byref(pipeline)),
                        "vkCreateComputePipelines")
            return self._statistics(pipeline.value)
        finally:
            if pipeline.value:
                self.destroy_pipeline(self.device, pipeline.value, None)
            if layout.value:
                self.destroy_layout(self.device, layout.value, None)
            for h in set_layouts:
                self.destroy_set_layout(self.device, h, None)
            self.destroy_shader_module(self.device, module.value, None)

    def _statistics(self, pipeline: int) -> list[dict]:
        pinfo = PipelineInfo(PIPELINE_INFO_KHR, None, pipeline)
        count = u32(0)
        self._check(self.get_exec_props(self.device, ctypes.byref(pinfo), ctypes.byref(count), None),
                    "vkGetPipelineExecutablePropertiesKHR")
        execs = (PipelineExecutableProperties * max(count.value, 1))()
        for i in range(count.value):
            execs[i].sType = PIPELINE_EXECUTABLE_PROPERTIES_KHR
        self._check(self.get_exec_props(self.device, ctypes.byref(pinfo), ctypes.byref(count), execs),
                    "vkGetPipelineExecutablePropertiesKHR")
        out = []
        for i in range(count.value):
            einfo = PipelineExecutableInfo(PIPELINE_EXECUTABLE_INFO_KHR, None, pipeline, i)
            n = u32(0)
            self._check(self.get_exec_stats(self.device, ctypes.byref(einfo), ctypes.byref(n), None),
                        "vkGetPipelineExecutableStatisticsKHR")
            stats = (PipelineExecutableStatistic * max(n.value, 1))()
            for j in range(n.value):
                stats[j].sType = PIPELINE_EXECUTABLE_STATISTIC_KHR
            self._check(self.get_exec_stats(self.device, ctypes.byref(einfo), ctypes.byref(n), stats),
                        "vkGetPipelineExecutableStatisticsKHR")
            values: dict[str, object] = {}
            for j in range(n.value):
                s = stats[j]
                fmt = s.format
                value = (bool(s.value.b32) if fmt == 0 else s.value.i64 if fmt == 1
                         else s.value.u64 if fmt == 2 else s.value.f64)
                values[s.name.decode("utf-8", "replace")] = value
            out.append({
                "name": execs[i].name.decode("utf-8", "replace"),
                "description": execs[i].description.decode("utf-8", "replace"),
                "subgroup_size": execs[i].subgroupSize,
                "statistics": values,
            })
        return out


def _emit(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main() -> int:
    try:
        request = json.loads(sys.stdin.read() or "{}")
    except ValueError as exc:
        _emit({"fatal": f"bad request: {exc}"})
        return 2
    try:
        device = Device()
    except (VulkanError, OSError, AttributeError) as exc:
        _emit({"fatal": str(exc)})
        return 1
    _emit({"device": device.device_name, "driver_version": _version(device.driver_version),
           "driver_info": device.driver_info, "api_version": _version(device.api_version),
           "max_compute_shared_memory": device.max_shared, "max_compute_workgroup_invocations": device.max_invocations})
    for job in request.get("jobs", []):
        try:
            _emit({"id": job.get("id"), "executables": device.compile(job)})
        except (VulkanError, OSError, ValueError, TypeError) as exc:
            _emit({"id": job.get("id"), "error": str(exc)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
