"""A small type system for shader expressions: scalars, vectors, pointers, structs.

"Unknown" is a first-class answer: :data:`UNKNOWN` is returned whenever the
type cannot be told, and rules stay silent on it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

# kind: "int" | "uint" | "float" | "bool" | "void" | "struct" | "pointer" | "array" | "texture" | "other" | "unknown"


@dataclass(frozen=True, slots=True)
class Type:
    kind: str
    bits: int = 32
    width: int = 1  # vector lanes (columns*rows for matrices)
    name: str = ""
    pointee: "Type | None" = None  # element type of pointers and arrays
    address_space: str | None = None  # for pointers/references
    struct: str | None = None  # struct name for kind == "struct"

    @property
    def is_known(self) -> bool:
        return self.kind != "unknown"

    @property
    def is_integer(self) -> bool:
        return self.kind in ("int", "uint")

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_half(self) -> bool:
        return self.kind == "float" and self.bits == 16

    @property
    def is_scalar(self) -> bool:
        return self.kind in ("int", "uint", "float", "bool") and self.width == 1

    @property
    def is_arithmetic(self) -> bool:
        return self.kind in ("int", "uint", "float", "bool")

    def element(self) -> "Type":
        """Scalar element of a vector, element of an array/pointer."""
        if self.kind in ("pointer", "array"):
            return self.pointee or UNKNOWN
        if self.width > 1:
            return scalar(self.kind, self.bits)
        return self

    def with_width(self, width: int) -> "Type":
        return Type(self.kind, self.bits, width, _vector_name(self.kind, self.bits, width))


UNKNOWN = Type("unknown", 0, 1, "?")
VOID = Type("void", 0, 1, "void")


def _vector_name(kind: str, bits: int, width: int) -> str:
    base = {("float", 16): "half", ("float", 32): "float", ("float", 64): "double", ("int", 8): "char",
            ("uint", 8): "uchar", ("int", 16): "short", ("uint", 16): "ushort", ("int", 32): "int",
            ("uint", 32): "uint", ("int", 64): "long", ("uint", 64): "ulong", ("bool", 8): "bool"}.get((kind, bits), kind)
    return base if width == 1 else f"{base}{width}"


def scalar(kind: str, bits: int) -> Type:
    return Type(kind, bits, 1, _vector_name(kind, bits, 1))


BOOL = scalar("bool", 8)
INT = scalar("int", 32)
UINT = scalar("uint", 32)
FLOAT = scalar("float", 32)
HALF = scalar("float", 16)
DOUBLE = scalar("float", 64)

_SCALARS: dict[str, Type] = {}
for _names, _t in (
    (("bool",), BOOL),
    (("char", "signed char", "int8_t", "int8", "char8_t"), scalar("int", 8)),
    (("uchar", "unsigned char", "uint8_t", "uint8"), scalar("uint", 8)),
    (("short", "signed short", "short int", "int16_t", "int16"), scalar("int", 16)),
    (("ushort", "unsigned short", "unsigned short int", "uint16_t", "uint16"), scalar("uint", 16)),
    (("int", "signed", "signed int", "int32_t", "int32", "GLint"), INT),
    (("uint", "unsigned", "unsigned int", "uint32_t", "uint32", "GLuint"), UINT),
    (("long", "long int", "long long", "long long int", "int64_t", "int64", "ptrdiff_t", "ssize_t", "intptr_t", "longlong"), scalar("int", 64)),
    (("ulong", "unsigned long", "unsigned long int", "unsigned long long", "unsigned long long int", "uint64_t",
      "uint64", "size_t", "uintptr_t", "ulonglong"), scalar("uint", 64)),
    (("half", "__half", "float16_t", "_Float16", "__nv_half", "bfloat", "__nv_bfloat16", "bfloat16_t"), HALF),
    (("float", "float32_t", "GLfloat"), FLOAT),
    (("double", "float64_t"), DOUBLE),
    (("void",), VOID),
):
    for _n in _names:
        _SCALARS[_n] = _t

_METAL_VEC = re.compile(r"^(?:packed_)?(bool|char|uchar|short|ushort|int|uint|long|ulong|half|float|double|bfloat)([234])$")
_CUDA_VEC = re.compile(r"^(char|uchar|short|ushort|int|uint|long|ulong|longlong|ulonglong|float|double)([1234])$")
_MATRIX = re.compile(r"^(half|float|double)([234])x([234])$")
_GLSL_VEC = re.compile(r"^(b|i|u|d|f16|f32|f64|i8|u8|i16|u16|i32|u32|i64|u64)?vec([234])$")
_GLSL_MAT = re.compile(r"^(d|f16|f32|f64)?mat([234])(?:x([234]))?$")
_GLSL_PREFIX = {None: FLOAT, "b": BOOL, "i": INT, "u": UINT, "d": DOUBLE, "f16": HALF, "f32": FLOAT, "f64": DOUBLE,
                "i8": scalar("int", 8), "u8": scalar("uint", 8), "i16": scalar("int", 16), "u16": scalar("uint", 16),
                "i32": INT, "u32": UINT, "i64": scalar("int", 64), "u64": scalar("uint", 64)}
_CUDA_NAMES = {"uchar": "uchar", "ushort": "ushort", "uint": "uint", "ulong": "ulong", "longlong": "long", "ulonglong": "ulong"}

_QUALIFIERS = re.compile(
    r"\b(const|constexpr|volatile|static|inline|restrict|__restrict__|__restrict|struct|typename|"
    r"metal|simd|std|highp|mediump|lowp|in|out|inout|uniform|flat|noperspective|smooth|coherent|readonly|writeonly)\b(::)?"
)


@lru_cache(maxsize=4096)
def parse_type_name(text: str) -> Type:
    """Type of a (qualifier-stripped) type spelling; UNKNOWN if not a known arithmetic type."""
    t = _QUALIFIERS.sub(" ", text)
    t = " ".join(t.replace("::", " ").split()) if "::" in t else " ".join(t.split())
    if t in _SCALARS:
        return _SCALARS[t]
    if t.startswith("vec<") or t.startswith("metal vec<"):
        m = re.match(r"(?:metal )?vec<\s*([\w ]+?)\s*,\s*([234])\s*>", t)
        if m:
            base = _SCALARS.get(m.group(1))
            if base is not None:
                return base.with_width(int(m.group(2)))
        return UNKNOWN
    if t == "__half2" or t == "half2" or t == "__nv_bfloat162":
        return HALF.with_width(2)
    m = _METAL_VEC.match(t)
    if m:
        return _SCALARS[m.group(1)].with_width(int(m.group(2)))
    m = _CUDA_VEC.match(t)
    if m:
        base = _SCALARS[_CUDA_NAMES.get(m.group(1), m.group(1))]
        return base.with_width(int(m.group(2))) if m.group(2) != "1" else base
    m = _GLSL_VEC.match(t)
    if m:
        return _GLSL_PREFIX[m.group(1)].with_width(int(m.group(2)))
    m = _MATRIX.match(t)
    if m:
        base = _SCALARS[m.group(1)]
        return Type(base.kind, base.bits, int(m.group(2)) * int(m.group(3)), t)
    m = _GLSL_MAT.match(t)
    if m:
        base = _GLSL_PREFIX[m.group(1)]
        cols = int(m.group(2))
        rows = int(m.group(3) or m.group(2))
        return Type(base.kind, base.bits, cols * rows, t)
    if t.startswith(("texture", "depth", "image", "sampler", "uimage", "iimage", "usampler", "isampler", "texture_buffer")):
        return Type("texture", 0, 1, t)
    return UNKNOWN


def pointer_to(t: Type, address_space: str | None = None) -> Type:
    return Type("pointer", 64, 1, t.name + "*", t, address_space)


def array_of(t: Type) -> Type:
    return Type("array", 0, 1, t.name + "[]", t)


def struct_type(name: str) -> Type:
    return Type("struct", 0, 1, name, struct=name)


def arithmetic_result(a: Type, b: Type, language: str) -> Type:
    """Usual arithmetic conversions, simplified; UNKNOWN when either side is."""
    if not (a.is_arithmetic and b.is_arithmetic):
        return UNKNOWN
    width = max(a.width, b.width)
    ea, eb = a.element(), b.element()
    if a.width > 1 and b.width == 1 and language == "metal":
        return a  # Metal: a scalar combined with a vector converts to the element type
    if b.width > 1 and a.width == 1 and language == "metal":
        return b
    if a.width > 1 and a == b:
        return a  # two vectors of one type: component-wise, no integer promotion (char4 + char4 is char4)
    if ea.kind == "float" or eb.kind == "float":
        if ea.kind == "float" and eb.kind == "float":
            bits = max(ea.bits, eb.bits)
        else:
            bits = ea.bits if ea.kind == "float" else eb.bits
        return scalar("float", bits).with_width(width) if width > 1 else scalar("float", bits)
    # Integers: promotion to at least 32 bits (C/C++/Metal), unsigned wins at equal rank.
    bits = max(ea.bits, eb.bits, 32) if language != "glsl" else max(ea.bits, eb.bits)
    kind = "uint" if (ea.kind == "uint" and ea.bits >= bits) or (eb.kind == "uint" and eb.bits >= bits) else "int"
    if ea.kind == "bool" and eb.kind == "bool":
        kind, bits = "int", 32
    res = scalar(kind, bits)
    return res.with_width(width) if width > 1 else res
