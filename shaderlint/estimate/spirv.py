"""The little SPIR-V reflection a compute pipeline layout needs.

:func:`reflect` reads a SPIR-V module (the binary glslangValidator writes) and
returns its GLCompute entry point, the workgroup size, every descriptor binding
(set, binding, Vulkan descriptor type, count) and the size of the push-constant
block. That is what :mod:`shaderlint.estimate.radv` needs to build descriptor
set and pipeline layouts that match the shader, so that the driver compiles the
shader as an application would.

Semantics:

* Workgroup size: a constant decorated ``BuiltIn WorkgroupSize`` wins over the
  ``LocalSize`` / ``LocalSizeId`` execution modes (SPIR-V specification).
  Specialization constants keep their default values, as they do when an
  application passes no specialization info, with one exception: GLSL's
  ``layout(local_size_x_id = N) in;`` makes glslang emit a workgroup-size
  constant of default 1 next to the shader's own ``layout(constant_id = N)``
  constant (``BLOCK_SIZE = 32``), and an application that sets constant N sets
  both. A driver given no value compiles a one-thread group, where every value
  is uniform and lives in scalar registers: no shader runs like that. So when
  another constant shares the dimension's specialization id, its default is the
  size, and ``specialization`` holds that id and value for the pipeline. A size
  with no such default stays 1, with a note.
* Descriptor arrays multiply their lengths; a runtime-sized (unsized) array has
  no count in the module and gets :data:`RUNTIME_ARRAY_COUNT`, with a note.
* Two variables at one (set, binding) (aliasing) give one binding: the first.

Malformed input never raises: :func:`reflect` returns a :class:`Reflection`
whose ``error`` says what is wrong.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

MAGIC = 0x07230203

#: Descriptor count given to an unsized descriptor array (``uniform sampler2D t[];``).
RUNTIME_ARRAY_COUNT = 16

# Opcodes
_OP_ENTRY_POINT = 15
_OP_EXECUTION_MODE = 16
_OP_TYPE_BOOL = 20
_OP_TYPE_INT = 21
_OP_TYPE_FLOAT = 22
_OP_TYPE_VECTOR = 23
_OP_TYPE_MATRIX = 24
_OP_TYPE_IMAGE = 25
_OP_TYPE_SAMPLER = 26
_OP_TYPE_SAMPLED_IMAGE = 27
_OP_TYPE_ARRAY = 28
_OP_TYPE_RUNTIME_ARRAY = 29
_OP_TYPE_STRUCT = 30
_OP_TYPE_POINTER = 32
_OP_CONSTANT = 43
_OP_CONSTANT_COMPOSITE = 44
_OP_SPEC_CONSTANT_TRUE = 48
_OP_SPEC_CONSTANT = 50
_OP_SPEC_CONSTANT_COMPOSITE = 51
_OP_VARIABLE = 59
_OP_DECORATE = 71
_OP_MEMBER_DECORATE = 72
_OP_EXECUTION_MODE_ID = 331
_OP_TYPE_ACCELERATION_STRUCTURE = 5341

_MODEL_GLCOMPUTE = 5
_MODE_LOCAL_SIZE = 17
_MODE_LOCAL_SIZE_ID = 38

_DEC_SPEC_ID = 1
_DEC_BLOCK = 2
_DEC_BUFFER_BLOCK = 3
_DEC_ROW_MAJOR = 4
_DEC_ARRAY_STRIDE = 6
_DEC_MATRIX_STRIDE = 7
_DEC_BUILTIN = 11
_DEC_BINDING = 33
_DEC_DESCRIPTOR_SET = 34
_DEC_OFFSET = 35
_BUILTIN_WORKGROUP_SIZE = 25

_SC_UNIFORM_CONSTANT = 0
_SC_UNIFORM = 2
_SC_PUSH_CONSTANT = 9
_SC_STORAGE_BUFFER = 12

_DIM_BUFFER = 5
_DIM_SUBPASS = 6

# VkDescriptorType
SAMPLER = 0
COMBINED_IMAGE_SAMPLER = 1
SAMPLED_IMAGE = 2
STORAGE_IMAGE = 3
UNIFORM_TEXEL_BUFFER = 4
STORAGE_TEXEL_BUFFER = 5
UNIFORM_BUFFER = 6
STORAGE_BUFFER = 7
INPUT_ATTACHMENT = 10
ACCELERATION_STRUCTURE = 1000150000


@dataclass(frozen=True)
class Binding:
    set: int
    binding: int
    descriptor_type: int
    count: int


@dataclass
class Reflection:
    entry_point: str | None = None
    #: Threads per workgroup along x, y, z (None when the module declares none).
    local_size: tuple[int, int, int] | None = None
    bindings: list[Binding] = field(default_factory=list)
    push_constant_bytes: int = 0
    #: Specialization constant id -> 32-bit value to pass with the pipeline (see the module docstring).
    specialization: dict[int, int] = field(default_factory=dict)
    #: True when a workgroup dimension is a specialization constant with no default but 1.
    local_size_unknown: bool = False
    notes: list[str] = field(default_factory=list)
    #: None when the module could be read, else why not.
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def sets(self) -> list[list[tuple[int, int, int]]]:
        """Bindings per set index, 0 .. highest set (empty lists for unused sets)."""
        if not self.bindings:
            return []
        out: list[list[tuple[int, int, int]]] = [[] for _ in range(max(b.set for b in self.bindings) + 1)]
        for b in self.bindings:
            out[b.set].append((b.binding, b.descriptor_type, b.count))
        return out


def _words(data: bytes) -> list[int] | None:
    if len(data) < 20 or len(data) % 4:
        return None
    for order in ("<", ">"):
        words = list(struct.unpack(f"{order}{len(data) // 4}I", data))
        if words[0] == MAGIC:
            return words
    return None


def _string(words: list[int], start: int, end: int) -> tuple[str, int]:
    """A nul-terminated literal string starting at word ``start``; also the word after it."""
    raw = bytearray()
    i = start
    while i < end:
        chunk = struct.pack("<I", words[i])
        i += 1
        if 0 in chunk:
            raw += chunk[: chunk.index(0)]
            break
        raw += chunk
    return raw.decode("utf-8", "replace"), i


def reflect(data: bytes, specialization: dict[int, int] | None = None) -> Reflection:
    """Entry point, workgroup size, descriptor bindings and push-constant size of a SPIR-V module.

    ``specialization``: the constants the application sets (id -> 32-bit value), when known (read
    from its host code): the pipeline is then built with exactly these, and a workgroup dimension
    taken from one of them has its value; None: the module docstring's defaults."""
    try:
        return _reflect(data, specialization)
    except (IndexError, KeyError, ValueError, struct.error, RecursionError) as exc:
        return Reflection(error=f"malformed SPIR-V: {type(exc).__name__}: {exc}")


def _reflect(data: bytes, specialization: dict[int, int] | None = None) -> Reflection:
    words = _words(data)
    if words is None:
        return Reflection(error="not a SPIR-V module (bad magic number or size)")
    types: dict[int, tuple] = {}
    constants: dict[int, int] = {}
    composites: dict[int, list[int]] = {}
    decorations: dict[int, dict[int, list[int]]] = {}
    member_decorations: dict[tuple[int, int], dict[int, list[int]]] = {}
    variables: list[tuple[int, int, int]] = []  # (pointer type, id, storage class)
    entries: list[tuple[int, int, str]] = []
    spec_constants: list[int] = []
    modes: dict[int, list[tuple[int, list[int]]]] = {}
    i = 5
    n = len(words)
    while i < n:
        count = words[i] >> 16
        op = words[i] & 0xFFFF
        if count == 0 or i + count > n:
            return Reflection(error="malformed SPIR-V: bad instruction length")
        args = words[i + 1: i + count]
        if op == _OP_ENTRY_POINT:
            name, _ = _string(words, i + 3, i + count)
            entries.append((args[0], args[1], name))
        elif op in (_OP_EXECUTION_MODE, _OP_EXECUTION_MODE_ID):
            modes.setdefault(args[0], []).append((args[1], args[2:]))
        elif op == _OP_DECORATE:
            decorations.setdefault(args[0], {})[args[1]] = args[2:]
        elif op == _OP_MEMBER_DECORATE:
            member_decorations.setdefault((args[0], args[1]), {})[args[2]] = args[3:]
        elif op in (_OP_TYPE_BOOL, _OP_TYPE_INT, _OP_TYPE_FLOAT, _OP_TYPE_VECTOR, _OP_TYPE_MATRIX, _OP_TYPE_IMAGE,
                    _OP_TYPE_SAMPLER, _OP_TYPE_SAMPLED_IMAGE, _OP_TYPE_ARRAY, _OP_TYPE_RUNTIME_ARRAY,
                    _OP_TYPE_STRUCT, _OP_TYPE_POINTER, _OP_TYPE_ACCELERATION_STRUCTURE):
            types[args[0]] = (op, *args[1:])
        elif op in (_OP_CONSTANT, _OP_SPEC_CONSTANT) and len(args) >= 3:
            constants[args[1]] = args[2]
            if op == _OP_SPEC_CONSTANT:
                spec_constants.append(args[1])
        elif op in (_OP_CONSTANT_COMPOSITE, _OP_SPEC_CONSTANT_COMPOSITE):
            composites[args[1]] = list(args[2:])
        elif op == _OP_VARIABLE and len(args) >= 3:
            variables.append((args[0], args[1], args[2]))
        i += count

    compute = [e for e in entries if e[0] == _MODEL_GLCOMPUTE]
    if not compute:
        return Reflection(error="the module has no GLCompute entry point (not a compute shader)")
    _, entry_id, entry_name = compute[0]
    result = Reflection(entry_point=entry_name)
    if len(compute) > 1:
        result.notes.append(f"{len(compute)} compute entry points: the first ({entry_name}) is used")

    size_ids: list[int] | None = None
    for mode, operands in modes.get(entry_id, []):
        if mode == _MODE_LOCAL_SIZE and len(operands) >= 3:
            result.local_size = (operands[0], operands[1], operands[2])
        elif mode == _MODE_LOCAL_SIZE_ID and len(operands) >= 3:
            size_ids = list(operands[:3])
    for target, decs in decorations.items():
        if decs.get(_DEC_BUILTIN) == [_BUILTIN_WORKGROUP_SIZE] and len(composites.get(target, ())) >= 3:
            size_ids = composites[target][:3]
    if specialization is not None:
        result.specialization = dict(specialization)
    if size_ids is not None:
        _spec_local_size(result, size_ids, constants, decorations, spec_constants, specialization)

    seen: set[tuple[int, int]] = set()
    for pointer, var, storage in variables:
        ptype = types.get(pointer)
        if ptype is None or ptype[0] != _OP_TYPE_POINTER:
            continue
        pointee = ptype[2]
        if storage == _SC_PUSH_CONSTANT:
            size = _size(pointee, types, constants, decorations, member_decorations)
            result.push_constant_bytes = max(result.push_constant_bytes, (size + 3) // 4 * 4)
            continue
        if storage not in (_SC_UNIFORM_CONSTANT, _SC_UNIFORM, _SC_STORAGE_BUFFER):
            continue
        decs = decorations.get(var, {})
        if _DEC_BINDING not in decs:
            continue
        set_index = decs.get(_DEC_DESCRIPTOR_SET, [0])[0]
        binding = decs[_DEC_BINDING][0]
        count = 1
        base = pointee
        while types.get(base, (None,))[0] in (_OP_TYPE_ARRAY, _OP_TYPE_RUNTIME_ARRAY):
            t = types[base]
            if t[0] == _OP_TYPE_ARRAY:
                count *= constants.get(t[2], 1)
            else:
                count *= RUNTIME_ARRAY_COUNT
                result.notes.append(f"set {set_index} binding {binding} is an unsized descriptor array: "
                                    f"{RUNTIME_ARRAY_COUNT} descriptors assumed")
            base = t[1]
        dtype = _descriptor_type(base, storage, types, decorations)
        if dtype is None or (set_index, binding) in seen:
            continue
        seen.add((set_index, binding))
        result.bindings.append(Binding(set_index, binding, dtype, max(count, 1)))
    result.bindings.sort(key=lambda b: (b.set, b.binding))
    return result


def _spec_local_size(result: Reflection, ids: list[int], constants: dict[int, int], decorations: dict,
                     spec_constants: list[int], given: dict[int, int] | None = None) -> None:
    """Workgroup size from constant ids, specialization constants resolved as the module docstring says,
    or to the values ``given`` by the application (the others keep their defaults, as in a driver)."""
    if given is not None:
        size = []
        for cid in ids:
            sid = decorations.get(cid, {}).get(_DEC_SPEC_ID)
            value = constants.get(cid, 1)
            if sid is not None and cid in spec_constants and sid[0] in given:
                value = given[sid[0]]
            size.append(value)
        result.local_size = (size[0], size[1], size[2])
        return
    by_spec_id: dict[int, list[int]] = {}
    for c in spec_constants:
        sid = decorations.get(c, {}).get(_DEC_SPEC_ID)
        if sid:
            by_spec_id.setdefault(sid[0], []).append(c)
    size = []
    for axis, cid in zip("xyz", ids):
        value = constants.get(cid, 1)
        sid = decorations.get(cid, {}).get(_DEC_SPEC_ID)
        if sid is not None and cid in spec_constants:
            others = [constants[o] for o in by_spec_id.get(sid[0], []) if o != cid and constants.get(o, 0) > 0]
            if others and others[0] != value:
                value = others[0]
                result.specialization[sid[0]] = value
                result.notes.append(f"workgroup size {axis} is specialization constant {sid[0]}: compiled with "
                                    f"{value}, the default of the constant that shares its id")
            elif value == 1:
                result.local_size_unknown = True
                result.notes.append(f"workgroup size {axis} is specialization constant {sid[0]} without a default: "
                                    "compiled as 1, as a driver does without specialization")
        size.append(value)
    result.local_size = (size[0], size[1], size[2])


def _descriptor_type(type_id: int, storage: int, types: dict, decorations: dict) -> int | None:
    t = types.get(type_id)
    if t is None:
        return None
    if storage == _SC_STORAGE_BUFFER:
        return STORAGE_BUFFER
    if storage == _SC_UNIFORM:
        return STORAGE_BUFFER if _DEC_BUFFER_BLOCK in decorations.get(type_id, {}) else UNIFORM_BUFFER
    op = t[0]
    if op == _OP_TYPE_SAMPLER:
        return SAMPLER
    if op == _OP_TYPE_SAMPLED_IMAGE:
        image = types.get(t[1])
        if image is not None and image[0] == _OP_TYPE_IMAGE and image[2] == _DIM_BUFFER:
            return UNIFORM_TEXEL_BUFFER  # samplerBuffer
        return COMBINED_IMAGE_SAMPLER
    if op == _OP_TYPE_ACCELERATION_STRUCTURE:
        return ACCELERATION_STRUCTURE
    if op == _OP_TYPE_IMAGE:
        # OpTypeImage: sampled type, Dim, Depth, Arrayed, MS, Sampled, format
        dim, sampled = t[2], t[6]
        if dim == _DIM_BUFFER:
            return STORAGE_TEXEL_BUFFER if sampled == 2 else UNIFORM_TEXEL_BUFFER
        if dim == _DIM_SUBPASS:
            return INPUT_ATTACHMENT
        return STORAGE_IMAGE if sampled == 2 else SAMPLED_IMAGE
    return None


def _size(type_id: int, types: dict, constants: dict, decorations: dict, member_decorations: dict,
          depth: int = 0) -> int:
    """Bytes a value of the type occupies with its explicit layout (Offset, ArrayStride, MatrixStride)."""
    t = types.get(type_id)
    if t is None or depth > 64:
        return 0
    op = t[0]
    if op in (_OP_TYPE_INT, _OP_TYPE_FLOAT):
        return t[1] // 8
    if op == _OP_TYPE_BOOL:
        return 4
    if op == _OP_TYPE_VECTOR:
        return t[2] * _size(t[1], types, constants, decorations, member_decorations, depth + 1)
    if op == _OP_TYPE_MATRIX:
        return t[2] * _size(t[1], types, constants, decorations, member_decorations, depth + 1)
    if op == _OP_TYPE_ARRAY:
        length = constants.get(t[2], 1)
        stride = decorations.get(type_id, {}).get(_DEC_ARRAY_STRIDE)
        if stride:
            return length * stride[0]
        return length * _size(t[1], types, constants, decorations, member_decorations, depth + 1)
    if op == _OP_TYPE_RUNTIME_ARRAY:
        return 0
    if op == _OP_TYPE_STRUCT:
        end = 0
        for index, member in enumerate(t[1:]):
            decs = member_decorations.get((type_id, index), {})
            offset = decs.get(_DEC_OFFSET, [end])[0]
            member_type = types.get(member)
            stride = decs.get(_DEC_MATRIX_STRIDE)
            if member_type is not None and member_type[0] == _OP_TYPE_MATRIX and stride:
                column = types.get(member_type[1])
                rows = column[2] if column is not None and column[0] == _OP_TYPE_VECTOR else 1
                size = stride[0] * (rows if _DEC_ROW_MAJOR in decs else member_type[2])
            else:
                size = _size(member, types, constants, decorations, member_decorations, depth + 1)
            end = max(end, offset + size)
        return end
    return 0
