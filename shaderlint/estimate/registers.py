"""Static estimate of a kernel's registers, stack, threadgroup memory and occupancy.

``estimate_kernel(model, function, target) -> KernelEstimate`` works on the
kernel model alone (no compiler). The method, its coefficients and its blind
spots are documented in ``docs/register-model.md``; in short:

1. **Live values** (:mod:`shaderlint.estimate.liveness`): the body is walked in
   source order with template arguments and unrolled loop counters bound,
   helpers inlined; the peak of simultaneously live values plus expression
   temporaries, in 32-bit register units by type width (64-bit pointers and
   doubles cost two, vectors their width; on targets with 16-bit register units
   a ``half``/``short`` costs half).
2. **Arrays**: a thread-private array indexed only statically (after
   unrolling) is kept in registers element by element; one indexed
   dynamically (or too large) goes to the stack (its bytes count as
   ``stack_bytes``).
3. **Calibration**: ``registers = max(floor, base + scale × peak)`` with the
   :class:`Coefficients` fitted on ptxas (sm_80, ``bench/calibrate.py``), then
   clamped to the target's (or ``__launch_bounds__``'s) per-thread maximum, the
   excess assumed spilled (4 bytes of stack per register).
4. **Occupancy** from :func:`shaderlint.estimate.occupancy.occupancy` with the
   threads per group the kernel declares (or the launches in the file use); when
   unknown, the best case over group sizes is reported as an upper bound.

Every estimate carries ``notes`` naming what was assumed. Estimates are
labelled as such, with the target they assume.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict

import math
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

import tree_sitter as ts

from shaderlint.estimate import aco, liveness
from shaderlint.estimate.headers import header_callable
from shaderlint.estimate.liveness import Walker
from shaderlint.estimate.occupancy import Occupancy, occupancy, same_occupancy_registers
from shaderlint.estimate.static import evaluate, is_constant_array, is_thread_private
from shaderlint.estimate.targets import Target
from shaderlint.model.types import UNKNOWN, Type, parse_type_name
from shaderlint.model.callables import bound_callables, deduced_args, is_function_param, named_function


@dataclass(frozen=True)
class Coefficients:
    """The estimator's tunable numbers (fitted on ptxas for sm_80; see docs/register-model.md)."""

    #: Registers every kernel needs besides its live values (ABI, indices, predicates' spill-over).
    base: float = 4.0
    #: Multiplier on the live-value peak.
    scale: float = 1.0
    #: Smallest register count the compiler reports (ptxas never reports fewer than 8 on sm_80).
    floor: float = 8.0
    #: Registers of a 64-bit address temporary per global memory access.
    address: float = 2.0
    #: Registers per memory stream (distinct base pointer) indexed by a loop-variant value in a runtime loop.
    stream: float = 1.0
    #: Loop iterations whose loads are in flight at once (unrolled loops, small runtime loops).
    hoist: int = 3
    #: Weight of the extra in-flight loads.
    hoist_weight: float = 1.0
    #: Most registers the extra in-flight loads of one loop take.
    hoist_cap: float = 24.0
    #: Copies of an innermost runtime loop the compiler makes (NVIDIA unrolls by 4).
    runtime_unroll: int = 4
    #: Walked size of a runtime loop's body (statements and expressions, unrolled copies included) up
    #: to which the compiler unrolls it at run time; a larger body, or one calling a warp collective or
    #: an atomic, runs one iteration at a time (no extra loads in flight).
    runtime_unroll_budget: int = 200
    #: Trip count × body size (AST nodes) up to which a constant-trip loop without pragma is unrolled.
    unroll_budget: int = 1200
    #: Factor on ``unroll_budget`` for a loop whose body indexes a thread-private array with its counter
    #: (unrolled, the array's accesses fold into registers: LLVM's unroller boosts its threshold by up to 4x
    #: for the instructions that simplify away).
    array_unroll_boost: float = 8.0
    #: Trip count up to which ``#pragma unroll`` fully unrolls.
    max_full_unroll: int = 1024
    #: Temporaries of a float libdevice function (expf, sinf, powf …).
    special: float = 4.0
    #: Temporaries of a double-precision libdevice function (exp, sin, lgamma …).
    special_f64: float = 12.0
    #: Share of one statement's loads in flight together (0: one at a time, 1: all).
    batch: float = 1.0
    #: Registers added when an array lives on the stack (local-memory addressing, copy loops).
    stack_array: float = 16.0
    #: Temporaries of an integer division or modulo by a run-time value.
    int_div: float = 3.0
    #: Temporaries of an IEEE float division (CUDA without fast math), also by a constant that is not a
    #: power of two (ptxas, nvcc 13.0, sm_80/sm_90, against a multiplication: x / y +5, x / 6.f +3,
    #: 1.f / (1.f + x) +4 in a kernel of 10 registers; 0 to +3 beside 4 to 16 live floats).
    fdiv: float = 3.0
    #: Factor on ``fdiv`` for a double division (ptxas: +10 to +14 registers against a multiplication,
    #: beside 4 or 16 live doubles: x / y takes 30 and 54 where x * y takes 20 and 40-44).
    fdiv_f64: float = 4.0
    #: CUDA: registers a real call adds on top of the values live across it (``assert``, which nvcc
    #: lowers to a call of ``__assertfail``, and ``printf``, a call of ``vprintf``): the ABI's
    #: caller-saved argument registers R0–R15 hold no value across the call, plus the call's set-up
    #: (ptxas, nvcc 13.0, sm_80 and sm_90: a kernel of 10 registers takes 24 with an ``assert``, one
    #: keeping 16 floats live across it 40, 32 floats 56).
    abi_call: float = 18.0
    #: ``base`` on AMD targets (VGPRs: nothing reserved besides the values counted).
    amd_base: float = 0.0
    #: ``address`` on AMD targets (a 32-bit buffer offset; the 128-bit descriptor is in SGPRs).
    amd_address: float = 1.0
    #: ``runtime_unroll`` on AMD targets: NIR unrolls only loops whose trip count it knows.
    amd_runtime_unroll: int = 1
    #: ``hoist`` on AMD targets: ACO's scheduler moves the loads of an unrolled loop's later copies
    #: up within the block (up to its register budget, :mod:`shaderlint.estimate.aco`).
    amd_hoist: int = 64
    #: ``hoist_cap`` on AMD targets (the scheduler's budget is the cap).
    amd_hoist_cap: float = 256.0
    #: AMD: registers up to which a thread-private array indexed at run time stays in VGPRs (RADV 22.3,
    #: measured: ``float a[64]`` indexed by a run-time value takes 72 VGPRs and no scratch, ``a[65]`` scratch).
    amd_indexed_array: float = 64.0
    #: ``stack_array`` on AMD targets: a scratch array costs the VGPRs of its accesses' offsets only (RADV
    #: 22.3, measured: ``float a[65..128]`` indexed at run time, 32 VGPRs as the same loads without it).
    amd_stack_array: float = 0.0
    #: Arrays larger than this many registers are never kept in registers.
    max_array_registers: float = 384.0


#: The fitted values (bench/calibrate.py --fit, sm_80).
DEFAULT_COEFFICIENTS = Coefficients()


@dataclass(frozen=True)
class Adjustment:
    """A what-if change to the kernel, applied by :func:`estimate_kernel` (see
    :mod:`shaderlint.estimate.whatif`)."""

    #: Arrays (Var objects) kept in registers whatever their indexing.
    promote: tuple = ()
    #: Arrays forced onto the stack.
    demote: tuple = ()
    #: Registers added (negative: removed) after calibration.
    registers: float = 0.0
    #: Stack bytes added (negative: removed).
    stack_bytes: int = 0
    #: Threads per group the kernel would use.
    threads_per_group: int | None = None
    #: Threadgroup memory bytes added.
    shared_bytes: int = 0
    #: Byte offsets of ``/``/``%`` operators whose divisor becomes a compile-time constant.
    cheap_divisions: frozenset = frozenset()
    description: str = field(default="", compare=False)


@dataclass
class KernelEstimate:
    """Registers, memory and occupancy of one kernel (or template instance) on one target."""

    kernel: str
    function: object
    target: str
    #: Registers per thread (32-bit units, rounded up; capped at the target's maximum).
    registers: int
    #: Unrounded registers (fractional on targets with 16-bit register units).
    registers_exact: float
    #: Live-value peak before calibration and clamping.
    peak: float
    stack_bytes: int
    spill_bytes: int
    #: Static plus known dynamic threadgroup/shared memory per group, bytes.
    shared_bytes: int
    #: True when part of the threadgroup memory is sized at dispatch and not known here.
    shared_unknown: bool
    threads_per_group: int | None
    occupancy: Occupancy | None
    #: True when the occupancy is a best case over unknown group sizes.
    occupancy_is_bound: bool = False
    notes: list[str] = field(default_factory=list)
    bindings: dict[str, str] = field(default_factory=dict)
    stack_arrays: dict[str, int] = field(default_factory=dict)
    register_arrays: list[str] = field(default_factory=list)
    register_cap: int = 0
    source: str = "estimate"
    #: False when the kernel was too large to walk completely (the figures cover its first part).
    complete: bool = True
    #: Functions the kernel calls that neither the file nor the headers next to it define (CUDA): their
    #: registers are not counted, so the figure is likely low (a lower bound; the report may say so).
    unseen_calls: tuple = ()

    @property
    def name(self) -> str:
        if not self.bindings:
            return self.kernel
        params = list(getattr(self.function, "template_params", {}) or self.bindings)
        return f"{self.kernel}<{', '.join(self.bindings.get(p, p) for p in params)}>"

    @property
    def lower_bound(self) -> bool:
        """The estimate leaves out code it knows is there -- calls it cannot see (``unseen_calls``), or
        the part of a kernel past the walk's visit limit (not ``complete``) -- so the registers are a
        floor (``~N+``): the interval measured against the compiler for complete estimates does not
        describe it, and its occupancy is a ceiling."""
        return bool(self.unseen_calls) or not self.complete

    @property
    def occupancy_value(self) -> float | None:
        return self.occupancy.occupancy if self.occupancy is not None else None

    @property
    def limiter(self) -> str | None:
        return self.occupancy.limiter if self.occupancy is not None else None


# ---- sizes ----------------------------------------------------------------------------------------------
def type_bytes(model, t: Type, language: str | None = None) -> int | None:
    """Bytes of a value of type ``t`` in memory (Metal 3-vectors take 4 lanes)."""
    language = language or model.language
    if t.kind in ("int", "uint", "float", "bool"):
        lanes = t.width
        if lanes == 3 and language in ("metal", "glsl") and not t.name.startswith("packed_"):
            lanes = 4
        return max(t.bits, 8) // 8 * lanes
    if t.kind == "pointer":
        return 8
    if t.kind == "struct":
        sd = model.structs.get(t.struct or "")
        if sd is None:
            return None
        total = 0
        align = 1
        for _, ft, _ in sd.fields:
            b = type_bytes(model, ft, language)
            if b is None:
                return None
            a = min(b, 16) if ft.kind != "struct" else 4
            a = 1 << (max(a, 1).bit_length() - 1)
            align = max(align, a)
            total = -(-total // a) * a + b
        return -(-total // align) * align
    return None


def _group_threads(model, f, facts: Mapping[str, str] | None,
                   bindings: Mapping[str, str] | None = None) -> tuple[int | None, str]:
    """Threads per group and where the number comes from."""
    if f.group_size is not None:
        origin = {"launch_bounds": "__launch_bounds__", "max_total_threads": "max_total_threads_per_threadgroup",
                  "local_size": "local_size", "annotation": "annotation"}.get(f.group_size.origin, f.group_size.origin)
        return f.group_size.total, origin
    from shaderlint.estimate.uniform import included_workgroup_size

    included = included_workgroup_size(model)  # ``layout(local_size_…) in;`` in a file the shader includes
    if included:
        return math.prod(included), "local_size in an included file"
    for key in ("threadgroup-size",):
        val = (facts or {}).get(key)
        if val:
            dims = [int(x) for x in val.lower().split("x") if x.isdigit() and len(x) <= 9]
            if dims:
                return math.prod(dims), "configuration"
    if "launches-disagree" in getattr(f, "host_facts", ()):
        return None, ""  # launches in host code use other sizes than this file's (shaderlint.host.index)
    sizes = set()
    for ls in model.launches:
        if ls.kernel != f.name:
            continue
        fn = ls.node.child_by_field_name("function")
        if bindings and fn is not None and fn.type == "template_function" \
                and _instance_args(model, f, fn.child_by_field_name("arguments")) != dict(bindings):
            continue  # another instance's launch
        n = launch_threads(model, ls.block)
        if n is None:
            return None, ""
        sizes.add(n)
    if len(sizes) == 1:
        return sizes.pop(), "launch"
    return None, ""


def launch_threads(model, node: ts.Node | None) -> int | None:
    """Threads in a launch's block argument: ``256``, ``dim3(16, 16)``, a ``dim3 b(16, 16)`` variable."""
    if node is None:
        return None
    val = evaluate(model, node)
    if isinstance(val, (int, float)):
        return int(val)
    n = node
    if n.type == "identifier":
        v = model.resolve(n)
        if v is None:
            return None
        decl_args = None
        for d in v.decl.children_by_field_name("declarator"):
            if d.type == "init_declarator" and d.child_by_field_name("declarator") is not None \
                    and model.text(d.child_by_field_name("declarator")) == v.name:
                decl_args = d.child_by_field_name("value")
        if decl_args is None:
            return None
        n = decl_args
        if n.type == "call_expression":
            n = n.child_by_field_name("arguments")
    elif n.type == "call_expression" and model.callee_name(n) == "dim3":
        n = n.child_by_field_name("arguments")
    if n is None or n.type not in ("argument_list", "initializer_list"):
        return None
    total = 1
    for a in n.named_children:
        val = evaluate(model, a)
        if not isinstance(val, (int, float)):
            return None
        total *= int(val)
    return total


def _used_globals(model, f, seen: set | None = None) -> set:
    """Globals referenced by ``f`` and the helpers it calls (memoized per model and function:
    every estimate of a kernel asks; the answer is shared, not to be modified)."""
    if seen is None:
        cache = model.__dict__.setdefault("_used_globals_cache", {})
        got = cache.get(id(f))
        if got is None or got[0] is not f:
            got = cache[id(f)] = (f, _used_globals_walk(model, f, set()))
        return got[1]
    return _used_globals_walk(model, f, seen)


def _shared_globals(model) -> bool:
    """Whether the model declares a global in shared/threadgroup memory (memoized per model): the
    globals :func:`_used_globals` finds are variables of the model (``model.resolve``)."""
    got = model.__dict__.get("_has_shared_globals")
    if got is None:
        got = model._has_shared_globals = any(v.is_global and v.address_space in ("shared", "threadgroup")
                                              for vs in model._vars_by_name.values() for v in vs)
    return got


def _used_globals_walk(model, f, seen: set) -> set:
    if f.body is None or id(f) in seen:
        return set()
    seen.add(id(f))
    out = set()
    stack = [f.body]
    while stack:
        n = stack.pop()
        if n.type == "identifier":
            v = model.resolve(n)
            if v is not None and v.is_global:
                out.add(v)
            elif v is None:
                g = model.function_by_name.get(model.text(n))
                if g is not None and g is not f:
                    out |= _used_globals_walk(model, g, seen)
            continue
        stack.extend(n.children)
    return out


def _array_bytes(model, walker: Walker, v) -> int | None:
    inf = walker.info(v)
    count = inf.count
    if count is None:
        return None
    el = type_bytes(model, inf.elem)
    return None if el is None else count * el


def shared_memory(model, f, walker: Walker, notes: list[str]) -> tuple[int, bool]:
    """(bytes of threadgroup memory known, whether some is sized at dispatch)."""
    total = 0
    unknown = False
    candidates = [v for v in f.vars if v.address_space in ("shared", "threadgroup") or "__shared__" in v.qualifiers]
    if _shared_globals(model):  # (else none of the globals the kernel uses is one: no need to find them)
        candidates += sorted((g for g in _used_globals(model, f) if g.address_space in ("shared", "threadgroup")),
                             key=lambda g: g.node.start_byte)  # in source order (notes are stable)
    for v in candidates:
        size = _array_bytes(model, walker, v)
        if size is None and not v.is_array:
            size = type_bytes(model, walker.info(v).elem)
        if size is None:
            if "extern" in v.qualifiers or v.is_array:
                unknown = True
                dyn = _dynamic_shared(model, f)
                if dyn is not None:
                    total += dyn
                    unknown = False
                    notes.append(f"dynamic shared memory '{v.name}': {dyn} bytes from the launch")
                else:
                    notes.append(f"'{v.name}' is sized at launch: its threadgroup memory is not counted")
            continue
        total += size
    for p in f.params:
        if p.address_space == "threadgroup":
            unknown = True
            notes.append(f"threadgroup parameter '{p.name}' is sized by the host: not counted")
    return total, unknown


def _dynamic_shared(model, f) -> int | None:
    sizes = set()
    for ls in model.launches:
        if ls.kernel != f.name:
            continue
        if ls.shared is None:
            return None
        val = evaluate(model, ls.shared)
        if not isinstance(val, (int, float)):
            return None
        sizes.add(int(val))
    return sizes.pop() if len(sizes) == 1 else None


# ---- template instances ----------------------------------------------------------------------------------
def _instance_args(model, f, args_node: ts.Node | None) -> dict[str, str] | None:
    """Template arguments at an instantiation or launch, by parameter name; arguments
    that are not constants or known types (an enclosing template's ``T``) are left out."""
    if args_node is None:
        return None
    names = list(f.template_params)
    kids = [c for c in args_node.named_children if c.type != "comment"]
    if len(kids) != len(names):
        return None
    binding: dict[str, str] = {}
    for name, k in zip(names, kids):
        text = " ".join(model.text(k).split())
        val = evaluate(model, k)
        if val is None and k.type == "type_descriptor" and text.isidentifier():
            v = model.resolve(k)  # `f<BM>` parses as a type: a constexpr named BM
            if v is not None and (v.is_const or v.is_constexpr) and v.init is not None:
                val = evaluate(model, v.init)
        if isinstance(val, bool) or text in ("true", "false"):
            binding[name] = text
        elif isinstance(val, (int, float)):
            binding[name] = str(int(val)) if float(val).is_integer() else repr(val)
        elif parse_type_name(text).is_known or text.split("::")[-1] in model.structs \
                or text in model.typedefs:
            binding[name] = text
        elif is_function_param(f.template_params[name]) and named_function(model, text.lstrip("&").strip()):
            binding[name] = text.lstrip("&").strip()  # `k<my_fn>` / `k<&my_fn>`
    return binding


def template_instances(model, f) -> list[dict[str, str]]:
    """Template arguments of every explicit instantiation or launch of ``f`` in the file."""
    if not f.template_params:
        return []
    found: list[dict[str, str]] = []

    def add(args_node: ts.Node | None) -> None:
        binding = _instance_args(model, f, args_node)
        if binding and binding not in found:
            found.append(binding)

    stack = [model.root]
    while stack:
        n = stack.pop()
        if n.type == "template_instantiation":
            for c in n.named_children:
                if c.type == "function_declarator":
                    tf = c.child_by_field_name("declarator")
                    if tf is not None and tf.type == "template_function":
                        nm = tf.child_by_field_name("name")
                        if nm is not None and model.text(nm).split("::")[-1] == f.name:
                            add(tf.child_by_field_name("arguments"))
            continue
        if n.type == "function_definition":
            continue
        stack.extend(reversed(n.named_children))
    for ls in model.launches:
        fn = ls.node.child_by_field_name("function")
        if ls.kernel != f.name or fn is None:
            continue
        explicit = _instance_args(model, f, fn.child_by_field_name("arguments")) \
            if fn.type == "template_function" else {}
        if explicit is None:
            continue
        # `k<<<g, b>>>(p, AddOp())`: Op deduced from the argument (explicit arguments first)
        binding = {**deduced_args(model, f, ls.node), **explicit}
        if binding and binding not in found:
            found.append(binding)
    for args in getattr(f, "host_template_args", ()):  # launches in host code (shaderlint.host.index)
        binding = _host_instance_args(model, f, args)
        if binding and binding not in found:
            found.append(binding)
    return found


def _host_instance_args(model, f, args: tuple[str, ...]) -> dict[str, str] | None:
    """:func:`_instance_args` for template arguments written in host code (text, constants already
    resolved there): numbers, ``true``/``false`` and types this file knows."""
    names = list(f.template_params)
    if len(args) != len(names):
        return None
    binding: dict[str, str] = {}
    for name, raw in zip(names, args):
        text = " ".join(raw.split())
        num = text.rstrip("uUlL")
        if text in ("true", "false"):
            binding[name] = text
        elif num.isdigit() or (num.startswith("-") and num[1:].isdigit()):
            binding[name] = str(int(num))
        elif parse_type_name(text).is_known or text.split("::")[-1] in model.structs or text in model.typedefs:
            binding[name] = text
        elif is_function_param(f.template_params[name]) and named_function(model, text.lstrip("&").strip()):
            binding[name] = text.lstrip("&").strip()
    return binding


def _bind(model, f, bindings: Mapping[str, str] | None) -> tuple[dict, dict[str, Type]]:
    env: dict = {}
    types: dict[str, Type] = {}
    for name, text in (bindings or {}).items():
        tv = f.template_params.get(name)
        if tv is None:
            continue
        s = text.strip()
        if s in ("true", "false"):
            env[id(tv)] = 1 if s == "true" else 0
            continue
        from shaderlint.model.consteval import eval_text
        val = eval_text(s, lambda n: model.macros.get(n, model.enums.get(n)))
        if isinstance(val, (int, float)) and not isinstance(val, bool):
            env[id(tv)] = val
            continue
        t = parse_type_name(s)
        if not t.is_known:
            t = model.parse_type_text(s) if hasattr(model, "parse_type_text") else UNKNOWN
        base = s.split("<")[0].strip() if s.endswith(">") else s
        if not t.is_known and (s.split("::")[-1] in model.structs
                               or model.language == "cuda" and re.fullmatch(r"[A-Za-z_][\w:]*", base)):
            # a class of the file, or one a header defines, or an instance of a class template (its
            # methods: Walker.method_of)
            from shaderlint.model.types import struct_type
            t = struct_type(base.split("::")[-1])
        types[name] = t
        if t.kind in ("int", "uint", "float", "bool") and t.bits:
            env[("sizeof", id(tv))] = max(t.bits, 8) // 8 * t.width  # `sizeof(T)` (static.evaluate)
    if model.language == "glsl":
        env.update(specialization_values(model))
    return env, types


_CONSTANT_ID = re.compile(r"\bconstant_id\s*=\s*(\d+)")


def specialization_values(model) -> dict:
    """GLSL specialization constants (``layout(constant_id = N) const T x = default;``) by variable id (and by
    name for those of the headers the shader includes),
    at the value the shader is compiled with: the one the host's pipelines set
    (``model.pipeline_specialization``, from the host index) or else the declared default, as a
    driver compiles it when the application passes no specialization info (Vulkan spec,
    VkSpecializationInfo). Memoized on the model."""
    spec = getattr(model, "pipeline_specialization", None)
    got = model.__dict__.get("_specialization_values")
    if got is not None and got[0] == spec:
        return got[1]
    host = dict(spec or ())
    out: dict = {}
    _specialization_of(model, model, host, out)
    # those of the headers the shader includes (llama.cpp declares NUM_ROWS in mul_mat_vec_base.glsl): by
    # id for the helpers inlined from them, by name for the shader's own code, where they do not resolve
    from shaderlint.estimate.headers import _load, header_paths

    for hp in header_paths(model):
        if not _mentions_constant_id(hp):
            continue
        hm = _load(hp, model)
        if hm is not None:
            _specialization_of(hm, model, host, out, by_name=True)
    model.__dict__["_specialization_values"] = (spec, out)
    return out


_CONSTANT_ID_FILES: dict[tuple, bool] = {}


def _mentions_constant_id(path: str) -> bool:
    """Whether a header declares a specialization constant (a byte search, memoized on size and mtime)."""
    try:
        st = os.stat(path)
        key = (path, st.st_size, st.st_mtime_ns)
        got = _CONSTANT_ID_FILES.get(key)
        if got is None:
            with open(path, "rb") as fh:
                got = _CONSTANT_ID_FILES[key] = b"constant_id" in fh.read(1 << 20)
            if len(_CONSTANT_ID_FILES) > 4096:
                _CONSTANT_ID_FILES.clear()
        return got
    except OSError:
        return False


def _specialization_of(model, home, host: dict, out: dict, by_name: bool = False) -> None:
    """The values of ``model``'s specialization constants into ``out`` (see :func:`specialization_values`);
    ``by_name``: also under their names, for the code of ``home`` where they do not resolve."""
    for v in model.globals:
        if not v.function_constant or v.init is None or v.is_array:
            continue
        m = _CONSTANT_ID.search(model.text(v.decl)) if v.decl is not None else None
        if m is not None and int(m.group(1)) in host:
            raw = host[int(m.group(1))] & 0xFFFFFFFF  # the 32-bit word the pipeline passes
            kind = v.type.kind
            if kind == "bool":
                val: int | float | None = 1 if raw else 0
            elif kind == "int":
                val = raw - (1 << 32) if raw >= 1 << 31 else raw
            elif kind == "uint":
                val = raw
            else:
                continue  # a float constant's bits: not decoded, stays unknown
        else:
            val = evaluate(model, v.init)
            if isinstance(val, bool):
                val = int(val)
        if isinstance(val, (int, float)):
            out[id(v)] = val
            if by_name and v.name not in home._vars_by_name:
                out[v.name] = val


# ---- the estimate -----------------------------------------------------------------------------------------
def register_cap(target: Target, f) -> int:
    """Registers per thread the compiler may use: the target's maximum, or what
    ``__launch_bounds__(threads, min_blocks)`` leaves (NVIDIA)."""
    cap = target.max_registers_per_thread
    lb = getattr(f, "launch_bounds", None)
    if lb and target.vendor == "nvidia":
        threads = -(-lb[0] // target.simd_width) * target.simd_width
        blocks = lb[1] if len(lb) > 1 and lb[1] > 0 else 1
        per_thread = target.registers_per_core // max(1, threads * blocks)
        per_thread = (per_thread // 8) * 8
        cap = max(16, min(cap, per_thread))
    return cap


def expand_statement_macros(model, f):
    """``(model, function)`` re-parsed with the statement macros in ``f``'s body expanded
    (``{ BODY }`` with ``#define BODY float acc[8][8]; ...``), or None when there are none.
    The front end masks such uses to parse the file; the estimate needs the statements.
    The uses in every entry point's body are expanded together, so a file is re-parsed once,
    not once per kernel; a helper estimated on its own gets an expansion of its own."""
    cache = model.__dict__.setdefault("_expanded_cache", {})
    if id(f) in cache:
        return cache[id(f)]
    cache[id(f)] = None
    if f.body is None:
        return None
    uses = _macro_uses(model)
    if not any(f.body.start_byte <= mk.start < f.body.end_byte for mk in uses):
        return None
    group = [k for k in model.kernels if k.body is not None] if f.is_entry else [f]
    bodies = [(k.body.start_byte, k.body.end_byte) for k in group]
    picked = [mk for mk in uses if any(s <= mk.start < e for s, e in bodies)]
    defs = {}
    for d in model.nodes("define"):
        name, body = d.child_by_field_name("name"), model.macro_body(d)
        if name is not None and body is not None:
            defs[model.text(name)] = body
    data = model.source.data
    edits: list[tuple[int, int]] = []  # (start, length change) of each expansion
    for mk in sorted(picked, key=lambda m: -m.start):
        body = defs.get(mk.text.rstrip(";").strip())
        if body is None:
            continue
        body = re.sub(r'_Pragma\s*\(\s*"([^"]*)"\s*\)', lambda m: "\n#pragma " + m.group(1) + "\n", body)
        text = body.encode() + b"\n"
        data = data[:mk.start] + text + data[mk.end:]
        edits.append((mk.start, len(text) - (mk.end - mk.start)))
    if not edits:
        return None
    try:
        from shaderlint.languages import FRONT_ENDS
        from shaderlint.model.build import build_model
        from shaderlint.model.source import Source

        from shaderlint.deadline import Deadline

        with Deadline(5.0) as dl:  # the expanded text gets the default per-file budget of its own
            m2 = build_model(FRONT_ENDS[model.language].parse(Source(model.source.path, data), deadline=dl,
                                                              predefined=model.parsed.predefined,
                                                              extra_macros=model.parsed.macros,
                                                              headers=model.parsed.headers,
                                                              expand=False))  # (data holds the expansions)
    except Exception:
        return None
    by_start = {(g.name, g.name_node.start_byte): g for g in m2.functions}
    for k in group:
        at = k.name_node.start_byte
        g = by_start.get((k.name, at + sum(d for s, d in edits if s < at)))
        expanded = any(k.body.start_byte <= s < k.body.end_byte for s, _ in edits)
        cache[id(k)] = (m2, g) if g is not None and expanded else None
    return cache[id(f)]


def _macro_uses(model) -> list:
    got = model.__dict__.get("_macro_uses")
    if got is None:
        got = model.__dict__["_macro_uses"] = [mk for mk in model.parsed.masks if mk.kind == "macro-invocation"]
    return got


def estimate_kernel(model, function, target: Target, *, bindings: Mapping[str, str] | None = None,
                    adjust: Adjustment | None = None, coefficients: Coefficients | None = None,
                    facts: Mapping[str, str] | None = None) -> KernelEstimate:
    """Estimate one kernel on ``target``. ``bindings`` gives template arguments by
    parameter name (``{"TM": "8", "T": "float"}``); ``adjust`` applies a what-if."""
    c = coefficients or DEFAULT_COEFFICIENTS
    if target.vendor == "amd":
        # VGPRs: no registers reserved besides the values the walk counts (the invocation ID is one),
        # and a buffer access needs a 32-bit offset, its descriptor being in scalar registers
        c = replace(c, base=c.amd_base, address=c.amd_address, floor=float(aco.vgpr_granule(target)),
                    runtime_unroll=c.amd_runtime_unroll, hoist=c.amd_hoist, hoist_cap=c.amd_hoist_cap,
                    stack_array=c.amd_stack_array)
    f = function
    adj = adjust or Adjustment()
    expanded = expand_statement_macros(model, f)
    if expanded is not None:
        model, f = expanded
    env, types = _bind(model, f, bindings)
    notes: list[str] = []
    if expanded is not None:
        notes.append("statement macros in the body expanded")
    unbound = [n for n in f.template_params if n not in (bindings or {})]
    if unbound:
        notes.append(f"template parameters {', '.join(unbound)} unbound: loops over them are treated as runtime loops")
    promote = {id(v) for v in adj.promote}
    demote = {id(v) for v in adj.demote}
    walker, result, stack_vars = _walk(model, f, target, c, bindings, env, types, promote, demote,
                                       adj.cheap_divisions,
                                       uninitialized=frozenset(id(v) for v in adj.promote
                                                               if getattr(v, "init", None) is None))
    notes.extend(result.notes)
    if result.inlined:
        notes.append(f"inlined: {', '.join(result.inlined)}")
    opaque, unfound = classify_unseen(model, f, walker, result.unseen)
    if opaque:
        shown = ", ".join(opaque[:6]) + (", ..." if len(opaque) > 6 else "")
        notes.append(f"calls code not seen ({shown}): its registers are not counted, the estimate is likely low")
    if unfound:
        shown = ", ".join(unfound[:6]) + (", ..." if len(unfound) > 6 else "")
        notes.append(f"calls {shown}: not found in the file or the headers next to it, not counted")
    # arrays on the stack
    stack_bytes = 0
    stack_arrays: dict[str, int] = {}
    for v in _private_arrays(model, f, walker):
        if id(v) in promote:
            continue
        if id(v) in stack_vars or id(v) in demote or not walker.in_registers(v):
            if id(v) not in stack_vars and id(v) not in demote and not _touched(walker, v):
                continue
            size = _array_bytes(model, walker, v)
            if size is None:
                notes.append(f"array '{v.name}' has an unknown size: its stack bytes are not counted")
                continue
            stack_arrays[v.name] = size
            stack_bytes += size
    if walker.stack_bytes_extra:
        stack_bytes += walker.stack_bytes_extra
        notes.append(f"{walker.stack_bytes_extra} bytes of stack for double-precision trigonometric reduction")
    for name, size in stack_arrays.items():
        notes.append(f"array '{name}' is indexed dynamically: {size} bytes on the stack")
    on_stack = bool(stack_vars - promote) or bool(demote)
    peak = result.peak
    if target.vendor == "amd":  # ACO: loads moved up within the scheduler's budget
        peak = aco.scheduled_vgprs(target, walker.peak(hoisted=False), peak)
    elif target.vendor == "nvidia" and peak > 0:
        # ptxas moves loads up only as far as the occupancy the demand without them allows
        before = walker.peak(hoisted=False)
        budget = same_occupancy_registers(target, c.base + c.scale * before) - c.base
        peak = max(before, min(peak, budget / c.scale if c.scale else peak))
        if walker.nest_hoists and c.scale and c.base + c.scale * before > same_occupancy_registers(target, 1):
            # above full occupancy, the loads of loops unrolled at compile time (one block of
            # independent loads) go past that step: ptxas takes the top of the step the demand with
            # them reaches (see ``nest_step``)
            peak = max(peak, nest_step(target, walker, c, budget))
    regs = max(c.floor, c.base + c.scale * peak + (c.stack_array if on_stack else 0.0)) + adj.registers
    regs = max(regs, 1.0)
    unit = 32 / target.register_unit_bits
    regs = math.ceil(regs * unit) / unit  # whole allocation units
    cap = register_cap(target, f)
    spill = 0
    if regs > cap:
        spill = int(math.ceil(regs - cap)) * 4
        notes.append(f"estimated {regs:g} registers exceed the {cap} available: about {spill} bytes spilled to the stack")
        regs = float(cap)
    stack_bytes = max(0, stack_bytes + spill + adj.stack_bytes)
    shared, shared_unknown = shared_memory(model, f, walker, notes)
    shared = max(0, shared + adj.shared_bytes)
    threads, origin = _group_threads(model, f, facts, bindings)
    if adj.threads_per_group is not None:
        threads, origin = adj.threads_per_group, "what-if"
    occ, bound = _occupancy(target, threads, regs, shared, notes, f)
    if origin in ("__launch_bounds__", "max_total_threads_per_threadgroup"):
        notes.append(f"threads per group from {origin} (an upper bound)")
    elif origin == "local_size in an included file":
        notes.append("threads per group from `layout(local_size_…) in;` in a file the shader includes")
    return KernelEstimate(
        kernel=f.name, function=function, target=target.name, registers=int(math.ceil(regs - 1e-9)), registers_exact=regs,
        peak=result.peak, stack_bytes=stack_bytes, spill_bytes=spill, shared_bytes=shared,
        shared_unknown=shared_unknown, threads_per_group=threads, occupancy=occ, occupancy_is_bound=bound,
        notes=notes, bindings=dict(bindings or {}), stack_arrays=stack_arrays,
        register_arrays=sorted({v.name for v in walker.arrays.values()} - set(stack_arrays)), register_cap=cap,
        complete=result.complete, unseen_calls=tuple(opaque),
    )


def nest_step(target: Target, walker: Walker, c: Coefficients, budget: float) -> float:
    """The live registers ptxas fills to when the loads of the kernel's loops unrolled at compile
    time, in flight, take the demand past the occupancy step of the demand without them
    (``budget``): the top of the step they reach (0 when they stay within ``budget``). Measured with
    nvcc 13.0 (sm_80, sm_90) on kernels written here with ``mul_mat_q``'s shape (a runtime loop
    around an unrolled nest of 4-int dot products from shared tiles, 4 to 64 accumulators): ptxas
    takes 32-128 registers, mostly a step top one or two steps above the demand it can do without
    spilling (``-maxrregcount``: 27-98). Over 17 such kernels (1-8 ints per product) this gives 9
    exactly (4 when the loads stopped at the step of the demand without them), median |error| 0 %
    (14 %); it over-shoots where the loads barely cross a step (1-2 ints per product: 128 against
    95-96). A loop unrolled at run time (its copies' loads in flight) stays within the step of the
    demand without them instead (48 registers with 43 needed), as session 14 measured on small
    kernels."""
    nest = walker.peak(hoisted=False, nests=True)
    if nest <= budget / c.scale:
        return 0.0
    return (same_occupancy_registers(target, c.base + c.scale * nest) - c.base) / c.scale


#: Toolkit device libraries whose functions are large inline code, not costed by rule: cuRAND's
#: generators and their initialisation (``curand_init``'s skip-ahead walks precomputed matrices).
_LIBRARY = re.compile(r"^(curand_init|skipahead\w*)$")


def classify_unseen(model, f, walker, unseen) -> tuple[list[str], list[str]]:
    """The calls the walk could not see, split into those whose code exists and is known not to be
    counted — a call through a functor object or function pointer (a parameter, local or non-type
    template parameter of the kernel or a helper it inlined), a function the file declares without
    its body, a toolkit library function with a large body — and the names found nowhere (a helper
    of a header not read, a macro, a library): the first make the estimate likely low (the report
    marks it "+"); of the second the walk cannot tell, so it claims nothing (a note names them).
    Type names called as casts are neither."""
    if not unseen:
        return [], []
    functions = [f] + [g for g in getattr(walker, "inlined_functions", ()) if g is not None]
    values: set[str] = set()
    types: set[str] = set(model.typedefs) | set(model.structs)
    for g in functions:
        values.update(v.name for v in g.params)
        values.update(v.name for v in g.vars)
        for name, tv in (getattr(g, "template_params", None) or {}).items():
            (values if _is_value_param(tv) else types).add(name)
    declared = None
    opaque: list[str] = []
    unfound: list[str] = []
    for name in unseen:
        if name in types:  # (the toolkit's scalar types the walk already leaves out: parse_type_name)
            continue
        if name in values or _LIBRARY.match(name):
            opaque.append(name)
            continue
        if declared is None:
            declared = _declared_functions(model)
        (opaque if name in declared else unfound).append(name)
    return opaque, unfound


def _is_value_param(tv) -> bool:
    """A non-type template parameter (``int N``, ``dequantize_kernel_t f``), not ``typename T``."""
    decl = getattr(tv, "decl", None)
    return decl is not None and "type_parameter" not in decl.type


def _declared_functions(model) -> set[str]:
    """Names the file declares as functions without defining them here (``__device__ float f(float);``)."""
    out: set[str] = set()
    for d in model.nodes("declaration"):
        decl = d.child_by_field_name("declarator")
        while decl is not None and decl.type in ("pointer_declarator", "reference_declarator"):
            decl = decl.child_by_field_name("declarator")
        if decl is not None and decl.type == "function_declarator":
            name = decl.child_by_field_name("declarator")
            if name is not None:
                out.add(model.text(name).split("::")[-1])
    return out


def occupancy_ceiling(model, function, target: Target, *, bindings: Mapping[str, str] | None = None,
                      facts: Mapping[str, str] | None = None) -> Occupancy | None:
    """The occupancy :func:`estimate_kernel` would report with registers left out: the group size
    and threadgroup memory the estimate would use, without walking the body (cheap). Every
    estimate of the kernel (any register count) has this occupancy or less, and a lower one only
    with ``registers`` as the limiter. None when the threads per group are unknown (the estimate
    is then a best case over group sizes, which registers shape: :func:`occupancy_shape`) or give
    no occupancy."""
    shape = occupancy_shape(model, function, target, bindings=bindings, facts=facts)
    if shape is None or shape[0] is None or shape[0] < 1:
        return None
    try:
        return occupancy(target, shape[0], None, shape[1])
    except ValueError:
        return None


def occupancy_shape(model, function, target: Target, *, bindings: Mapping[str, str] | None = None,
                    facts: Mapping[str, str] | None = None) -> tuple[int | None, int, int]:
    """(threads per group or None when unknown, threadgroup bytes, register cap) as
    :func:`estimate_kernel` would use them (no adjustment), found without walking the body: the
    estimate's occupancy is a function of these and of its register count alone."""
    f = function
    expanded = expand_statement_macros(model, f)
    if expanded is not None:
        model, f = expanded
    threads, _ = _group_threads(model, f, facts, bindings)
    env, types = _bind(model, f, bindings)
    # threadgroup array sizes as the walk's ``info`` reads them: under the bindings (sizes are
    # constant expressions, so the values the walk propagates into its environment do not change them)
    walker = Walker(model, f, target, DEFAULT_COEFFICIENTS, env, types, set(), set(), set())
    shared, _ = shared_memory(model, f, walker, [])
    return threads, max(0, shared), register_cap(target, f)


def register_occupancies(target: Target, threads: int | None, shared: int, cap: int) -> list[Occupancy | None] | None:
    """Every occupancy :func:`estimate_kernel` can report for ``threads`` per group (None: the best
    case over group sizes) and ``shared`` bytes, whatever the register count the walk finds: one per
    class of counts the target allocates alike (counts are whole allocation units from 1 to
    ``cap``). None in the list where the estimate would have no occupancy; None for a target whose
    register unit is not modelled here. Memoized."""
    key = (id(target), target.name, threads, shared, cap)
    got = _OCCUPANCIES.get(key)
    if got is not None:
        return got
    if target.register_unit_bits not in (8, 16, 32):
        return None
    unit = 32 // target.register_unit_bits  # an estimate's count is a whole number of these units
    max_units = target.max_registers_per_thread * unit
    out: list[Occupancy | None] = []
    seen = set()
    for k in range(unit, cap * unit + 1):
        # all the register limit reads of a count of k units (shaderlint.estimate.occupancy._register_limit)
        cls = (-(-max(k, 1) * target.simd_width // target.register_alloc_unit), k > max_units)
        if cls in seen:
            continue
        seen.add(cls)
        regs = k / unit
        try:
            if threads is not None and threads >= 1:
                out.append(occupancy(target, threads, regs, shared))
                continue
            if threads is not None:
                out.append(None)  # (an estimate with a group size below 1 takes the best case; not modelled here)
                continue
            best = None
            for t in range(target.simd_width, target.max_threads_per_group + 1, target.simd_width):
                o = occupancy(target, t, regs, shared)
                if best is None or o.occupancy > best.occupancy:
                    best = o
            out.append(best)
        except ValueError:
            out.append(None)
    if len(_OCCUPANCIES) >= 4096:
        _OCCUPANCIES.clear()
    _OCCUPANCIES[key] = out
    return out


_OCCUPANCIES: dict[tuple, list] = {}


def _walk(model, f, target: Target, c: Coefficients, bindings, env, types, promote: set[int], demote: set[int],
          cheap: frozenset, uninitialized: frozenset = frozenset()) -> tuple[Walker, "object", set[int]]:
    """(walker, result, ids of arrays on the stack) of the walk, iterated until the arrays found
    indexed dynamically are all on the stack (a walk cut at the visit limit is not repeated: the
    arrays it found go on the stack, its figures are kept). Memoized on the model: the walk depends only on the
    kernel, the bindings, the register unit, the coefficients and the array/division parts of an
    :class:`Adjustment` (registers, stack, threads and shared-memory deltas are applied after it),
    so a what-if that changes none of those reuses the walk of the kernel as written. A what-if
    naming only divisions the walk never costed (``Walker.cheap_checked``) reuses it too, and so
    does one whose divisions weigh only on positions below the peak (``Walker.peak_without``):
    constant divisors lower those positions and nothing else.

    A what-if that keeps arrays in registers (``promote`` alone) starts from the first walk of the
    kernel as written when that walk was complete and had every such array in registers, or declared
    without an initializer (``uninitialized``: ids of the promoted arrays that are): that walk
    and the what-if's first one visit the same nodes under the same values, the promoted arrays'
    accesses only counting their elements instead of marking them indexed at run time (see
    :func:`_first_walk_dynamic`), so the what-if's first walk finds the same arrays indexed at run
    time but the promoted ones, and its second walk is the first to be made.

    A walk whose arrays newly found indexed at run time were never kept in registers in it (no element
    keyed, no initializer walked in registers, no read of the whole array, no pointer into it:
    ``Walker.arrays`` and ``Walker.held``) is not repeated with them on the stack: their accesses all
    took the stack's path already (an array in registers takes it when indexed at run time), and
    nothing else asks where an array lives (``Walker.in_registers``), so the next walk would visit
    the same nodes under the same values and find the same figures and the same arrays indexed at
    run time, none new.

    A what-if that keeps in registers (``promote`` alone) only arrays that every walk of the kernel
    as written kept in registers when it asked (``Walker.in_registers`` never False) and never found
    indexed at run time reuses the walks as written: a promoted array changes a walk only where it is
    asked about -- ``in_registers`` (True either way), an access indexed at run time (none) and
    ``mark_dynamic`` (never reached for it) -- so each of the what-if's walks is the walk as written
    with the same arrays on the stack, and the figures are the same (the rule saw an array indexed at
    run time that the walk resolves, e.g. in an unrolled loop)."""
    cache = model.__dict__.setdefault("_walk_cache", {})
    base_key = (id(f), target.register_unit_bits, tuple(sorted((bindings or {}).items())), c)
    key = base_key + (frozenset(promote), frozenset(demote), cheap)
    got = cache.get(key)
    if got is not None:
        return got
    as_written = base_key + (frozenset(), frozenset(), frozenset())
    if cheap and not promote and not demote:
        base = cache.get(as_written)
        if base is not None and (not (cheap & base[0].cheap_checked)
                                 or (base[1].complete and base[0].peak_without(cheap))):
            cache[key] = base
            return base
    if promote and not demote and not cheap:
        base, kept = cache.get(as_written), model.__dict__.get("_walk_arrays", {}).get(base_key)
        if base is not None and kept is not None and base[1].complete and not (promote & kept):
            cache[key] = base
            return base
    stack_vars: set[int] = set()
    walker = result = None
    callable_args: dict = {}
    callables = _kernel_callables(model, f, bindings, callable_args)
    first_key = base_key + ("first walk", target.name)
    walks = 4
    if promote and not demote and not cheap:
        known = _first_walk_dynamic(cache.get(first_key), promote, uninitialized)
        if known:
            stack_vars |= known  # what the what-if's first walk would find (see above)
            walks -= 1
    plain = not promote and not demote and not cheap
    touched: set[int] = set()  # (as written) arrays some walk found indexed at run time or kept off registers
    for i in range(walks):
        walker = Walker(model, f, target, c, env, types, stack_vars, promote, demote, cheap,
                        callables=callables, callable_args=callable_args)
        result = walker.run()
        if plain:
            if i == 0 and not stack_vars:
                cache[first_key] = (frozenset(walker.dynamic), result.complete,
                                    frozenset(k for k, v in walker._in_registers.items() if v),
                                    walker.visits, dict(walker.init_visits), frozenset(walker.pointed))
            touched.update(walker.dynamic)
            touched.update(k for k, v in walker._in_registers.items() if not v)
        new = set(walker.dynamic) - stack_vars
        if not new:
            break
        stack_vars |= new
        if not result.complete:
            break  # (stopped at the visit limit: another walk would cover a first part of its own)
        if not any(k in walker.arrays or k in walker.held for k in new):
            break  # the next walk would be this one again (see the docstring)
    assert walker is not None
    if plain:  # (beside the walk cache, whose values are all walks and records of walks)
        model.__dict__.setdefault("_walk_arrays", {})[base_key] = frozenset(touched)
    cache[key] = (walker, result, stack_vars)
    return cache[key]


def _first_walk_dynamic(first, promote: set[int], uninitialized: frozenset = frozenset()) -> set[int] | None:
    """The arrays the first walk of a what-if promoting the arrays ``promote`` finds indexed at run
    time, from ``first``, (arrays found indexed at run time, complete, arrays answered in registers,
    visits, ``Walker.init_visits``, ``Walker.pointed``) of the first walk of the kernel as written;
    None when it cannot tell (no such walk, cut at the visit limit, a promoted array not in registers
    there with an initializer other than a list of literals or with a pointer local initialized into
    it, or the visits of such lists would take the what-if's walk past the visit limit).

    The two walks differ only where a promoted array is asked about (``Walker.in_registers``,
    ``Walker.mark_dynamic``): in the what-if, an access counts its elements (no visit, no value of
    the environment) where the walk as written may mark the array indexed at run time and count a
    stack load; an initializer is walked alike when the array is in registers in both. An array
    that was not in registers as written had its initializer list skipped there: in the what-if its
    literals are visited (``init_visits``: visits, nothing else). Every node is visited in the same
    order under the same values, so every other array is marked at the same accesses."""
    if first is None:
        return None
    dynamic, complete, in_registers, visits, init_visits, pointed = first
    if not complete:
        return None
    extra = 0
    for k in promote:
        if k in in_registers:
            continue
        if k in pointed:
            return None
        n = 0 if k in uninitialized else init_visits.get(k, 0)
        if n is None:
            return None
        extra += n
    if visits + extra > liveness._MAX_VISITS:
        return None
    return set(dynamic) - promote


def _kernel_callables(model, f, bindings, struct_args: dict | None = None) -> dict:
    """:func:`bound_callables`, plus the non-type template parameters declared with a typedef of a
    function-pointer type (``template <int qk, dequantize_kernel_t dequantize_kernel>``, ggml) bound to
    a function the file defines once. ``struct_args`` receives the struct template arguments of
    functors bound to a struct template's instance (:func:`bound_callables`)."""
    out = dict(bound_callables(model, f, bindings, struct_args))
    for name, text in (bindings or {}).items():
        tv = f.template_params.get(name)
        if tv is None or id(tv) in out or tv.decl is None:
            continue
        fn_param = is_function_param(tv)
        if not fn_param and tv.decl.type != "parameter_declaration":
            continue
        fname = text.strip().lstrip("&").strip()
        g = named_function(model, fname) if not fn_param else None
        if g is None and not any(h.name == fname for h in model.functions):
            g = header_callable(model, fname)  # llama.cpp's dequantize_q4_0 of dequantize.cuh
        if g is not None:
            out[id(tv)] = g
    return out



def _touched(walker: Walker, v) -> bool:
    if id(v) in walker.dynamic:
        return True
    # the arrays whose elements the walk keyed (``("e", frame, id(array), index)``), found once per walk
    # (the walk is over: its keys no longer change)
    got = walker.__dict__.get("_element_arrays")
    if got is None:
        got = walker._element_arrays = {k[2] for k in walker.first if isinstance(k, tuple) and len(k) == 4}
    return id(v) in got


def _private_arrays(model, f, walker: Walker) -> Iterable:
    seen = set()
    funcs = [f] + walker.inlined_functions
    for g in funcs:
        for v in g.vars:
            if id(v) in seen:
                continue
            if v.is_array and is_thread_private(v) and not is_constant_array(model, v):
                seen.add(id(v))
                yield v


def _occupancy(target: Target, threads: int | None, regs: float, shared: int, notes: list[str], f
               ) -> tuple[Occupancy | None, bool]:
    try:
        if threads is not None and threads >= 1:
            return occupancy(target, threads, regs, shared), False
        best = None
        limit = target.max_threads_per_group
        for t in range(target.simd_width, limit + 1, target.simd_width):
            o = occupancy(target, t, regs, shared)
            if best is None or o.occupancy > best.occupancy:
                best = o
        if best is not None:
            notes.append(f"threads per group unknown: best case over group sizes ({best.threads_per_group} threads)")
        return best, True
    except ValueError:
        return None, False


def cached_estimate(model, function, target: Target, *, bindings: Mapping[str, str] | None = None,
                    adjust: Adjustment | None = None, facts: Mapping[str, str] | None = None) -> KernelEstimate:
    """:func:`estimate_kernel` with the default coefficients, memoized on the model (the
    report, SL505 and the engine's impact step estimate the same kernels) and across models by
    content (:func:`_content_key`): when an editor re-lints a file after an edit inside one
    kernel, the other kernels' estimates are reused."""
    cache = getattr(model, "_estimate_cache", None)
    if cache is None:
        cache = {}
        model._estimate_cache = cache
    key = (id(function), target.name, tuple(sorted((bindings or {}).items())),
           tuple(sorted((facts or {}).items())), adjust)
    got = cache.get(key)
    if got is not None:
        return got
    shared_key = _content_key(model, function, key[1:4], adjust)
    hit = _SHARED.get(shared_key) if shared_key is not None else None
    if hit is not None:
        _SHARED.move_to_end(shared_key)
        got = replace(hit, function=function, bindings=dict(hit.bindings), notes=list(hit.notes))
    else:
        got = estimate_kernel(model, function, target, bindings=bindings, adjust=adjust, facts=facts)
        if shared_key is not None:
            _SHARED[shared_key] = replace(got, function=None)  # the LRU must not keep whole models alive
            if len(_SHARED) > _SHARED_MAX:
                _SHARED.popitem(last=False)
    cache[key] = got
    return got


#: Estimates shared between models of successive versions of a file (an LRU keyed by content).
_SHARED: "OrderedDict[tuple, KernelEstimate]" = OrderedDict()
_SHARED_MAX = 4096


def _context_key(model) -> str:
    """A hash of everything an estimate may depend on besides the entry point's own body: the
    file outside entry-point bodies (declarations, structs, macros, helpers, host launches,
    annotations), the language and the shader stage."""
    k = model.__dict__.get("_estimate_context")
    if k is None:
        data = model.source.data
        h = hashlib.blake2b(digest_size=16)
        h.update(f"{model.language}\0{model.stage}\0".encode())
        pos = 0
        for f in sorted((f for f in model.functions if f.is_entry and f.body is not None),
                        key=lambda f: f.body.start_byte):
            if f.body.start_byte < pos:
                continue
            h.update(data[pos:f.body.start_byte])
            h.update(b"\0{body}\0")
            pos = f.body.end_byte
        h.update(data[pos:])
        from shaderlint.estimate.headers import header_stamp
        h.update(repr(header_stamp(model)).encode())  # helpers the walk inlines from the project's headers
        k = model._estimate_context = h.hexdigest()
    return k


def _content_key(model, f, rest: tuple, adjust: Adjustment | None) -> tuple | None:
    """A position-independent key for an estimate, or None when one cannot be formed."""
    if f.body is None:
        return None
    base = f.node.start_byte
    adj = None
    if adjust is not None:
        try:
            def rel(vs):
                out = []
                for v in vs:
                    node = getattr(v, "node", None)
                    if node is None or not (f.node.start_byte <= node.start_byte < f.node.end_byte):
                        raise ValueError("variable outside the kernel")
                    out.append((v.name, node.start_byte - base))
                return tuple(out)
            adj = (rel(adjust.promote), rel(adjust.demote), adjust.registers, adjust.stack_bytes,
                   adjust.threads_per_group, adjust.shared_bytes,
                   tuple(sorted(o - base for o in adjust.cheap_divisions)))
        except (ValueError, TypeError):
            return None
    data = model.source.data
    same_name = [g for g in model.functions if g.name == f.name]
    ordinal = same_name.index(f) if f in same_name else 0
    gs = f.group_size  # (host code may set it: shaderlint.host.index; the file's text does not say)
    host = (gs.dims if gs is not None else None, gs.origin if gs is not None else None,
            tuple(sorted((k, v[0]) for k, v in getattr(f, "host_facts", {}).items())))
    return (_context_key(model), f.name, ordinal, hashlib.blake2b(data[f.node.start_byte:f.node.end_byte],
                                                                  digest_size=16).digest(), rest, adj, host)


def estimate_file(model, target: Target, *, facts: Mapping[str, str] | None = None,
                  instances: bool = True, coefficients: Coefficients | None = None) -> list[KernelEstimate]:
    """One estimate per entry point (per template instance found in the file when ``instances``)."""
    out: list[KernelEstimate] = []
    for f in model.kernels:
        if not f.is_device_code:
            continue
        merged = dict(facts or {})
        merged.update(f.facts)
        insts = template_instances(model, f) if instances else []
        for b in insts or [None]:
            out.append(estimate_kernel(model, f, target, bindings=b, facts=merged, coefficients=coefficients))
    return out


def with_coefficients(**kw) -> Coefficients:
    return replace(DEFAULT_COEFFICIENTS, **kw)
