"""The kernel model's data: functions, variables, loops, barriers, memory accesses, launches.

Built once per file by :mod:`shaderlint.model.build` and shared by every rule.
Positions are byte offsets into the original file; nodes are tree-sitter nodes
of the (masked, same-length) parse.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import tree_sitter as ts

from shaderlint.model.types import UNKNOWN, Type


@dataclass(eq=False)
class Var:
    name: str
    node: ts.Node  # the declared identifier
    decl: ts.Node  # declaration / parameter_declaration / field
    type: Type = UNKNOWN
    address_space: str | None = None  # device constant threadgroup thread shared global local uniform buffer image push_constant
    is_const: bool = False
    is_constexpr: bool = False
    init: ts.Node | None = None
    dims: tuple[int | None, ...] = ()
    is_param: bool = False
    is_global: bool = False
    role: str | None = None  # thread-ID role of a parameter (Metal attribute name)
    attributes: tuple[tuple[str, tuple[str, ...]], ...] = ()
    scope: tuple[int, int] = (0, 0)
    function: "Function | None" = None
    qualifiers: frozenset[str] = frozenset()
    function_constant: bool = False  # Metal [[function_constant]] / GLSL constant_id
    template_param: bool = False

    @property
    def is_array(self) -> bool:
        return bool(self.dims)

    @property
    def start(self) -> int:
        return self.node.start_byte

    def attribute(self, name: str) -> tuple[str, ...] | None:
        for n, args in self.attributes:
            if n == name:
                return args
        return None


@dataclass(frozen=True)
class GroupSize:
    dims: tuple[int, int, int]
    start: int  # where it is declared (the report position for SL501/502/506)
    end: int
    origin: str  # local_size | launch_bounds | max_total_threads | annotation | launch | dim3 | host | config
    exact: bool = True  # False for upper bounds (launch bounds, max_total_threads_per_threadgroup)
    #: origin "host": where host code sets the size (a shaderlint.host.Span in another file); start/end
    #: are then the kernel's name.
    host: Any = None

    @property
    def total(self) -> int:
        return self.dims[0] * self.dims[1] * self.dims[2]


@dataclass(eq=False)
class Loop:
    node: ts.Node
    var: Var | None
    start: int | float | None = None
    bound: int | float | None = None
    step: int | float | None = None
    trip_count: int | None = None
    unroll: int | None = None  # `#pragma unroll N` (0 = full unroll requested, 1 = no unroll)
    counter_modified: bool = False
    # Start, bound and step are compile-time constants (values may be unknown here, e.g. template
    # parameters or function constants): the compiler knows the trip count and can unroll.
    constant_trip: bool = False


@dataclass(eq=False)
class Barrier:
    node: ts.Node
    name: str
    scope: str  # "group" | "simd" | "memory" (memory fence only)
    orders: frozenset[str]  # address spaces it orders: threadgroup, device, texture
    function: "Function | None" = None


@dataclass(eq=False)
class Access:
    node: ts.Node  # the subscript/field/call expression
    var: Var
    space: str | None
    is_write: bool
    index: ts.Node | None


@dataclass(eq=False)
class LaunchSite:
    node: ts.Node
    kernel: str
    grid: ts.Node | None
    block: ts.Node | None
    shared: ts.Node | None
    stream: ts.Node | None
    function: "Function | None" = None


@dataclass(eq=False)
class Function:
    name: str
    node: ts.Node  # function_definition
    name_node: ts.Node
    body: ts.Node | None
    kind: str  # kernel vertex fragment compute device host ...
    is_entry: bool
    is_device_code: bool
    return_type: Type = UNKNOWN
    params: list[Var] = field(default_factory=list)
    vars: list[Var] = field(default_factory=list)
    attributes: tuple[tuple[str, tuple[str, ...]], ...] = ()
    template_params: dict[str, Var] = field(default_factory=dict)
    group_size: GroupSize | None = None
    loops: list[Loop] = field(default_factory=list)
    barriers: list[Barrier] = field(default_factory=list)
    accesses: list[Access] = field(default_factory=list)
    has_error: bool = False
    outer: ts.Node | None = None  # template_declaration wrapping the definition, if any
    facts: dict[str, str] = field(default_factory=dict)  # `// shaderlint: key=value` annotations above it
    #: Facts from the host code that launches it (shaderlint.host.index): key -> (value, host Span);
    #: below every fact the source states, above configuration.
    host_facts: dict[str, tuple[str, Any]] = field(default_factory=dict)
    #: Template arguments of its launches in host code (constants resolved there), one tuple per launch.
    host_template_args: tuple[tuple[str, ...], ...] = ()
    #: Every host launch of the kernel is `<<<1, 1>>>` (shaderlint.host.index): one thread on purpose.
    host_one_thread: bool = False
    launch_bounds: tuple[int, ...] | None = None
    launch_bounds_node: ts.Node | None = None

    def attribute(self, name: str) -> tuple[str, ...] | None:
        for n, args in self.attributes:
            if n == name:
                return args
        return None

    @property
    def start(self) -> int:
        return self.name_node.start_byte


@dataclass(eq=False)
class StructDef:
    name: str
    node: ts.Node
    fields: list[tuple[str, Type, ts.Node]] = field(default_factory=list)

    def field_index(self, name: str) -> int | None:
        for i, (n, _, _) in enumerate(self.fields):
            if n == name:
                return i
        return None

    def field_type(self, name: str) -> Type:
        for n, t, _ in self.fields:
            if n == name:
                return t
        return UNKNOWN


@dataclass(frozen=True)
class ParseError:
    start: int
    end: int
    message: str


def parse_dims(text: str) -> tuple[int, int, int] | None:
    """``"16x16"`` → (16, 16, 1), ``"256"`` → (256, 1, 1); None for anything else."""
    parts = text.strip().lower().split("x")
    try:
        nums = [int(p) for p in parts]
    except ValueError:
        return None
    if not 1 <= len(nums) <= 3 or any(n <= 0 for n in nums):
        return None
    nums += [1] * (3 - len(nums))
    return (nums[0], nums[1], nums[2])
