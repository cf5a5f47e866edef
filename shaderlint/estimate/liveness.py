"""The register estimator's walk: live values over a linearized kernel body.

The body is walked in source order as a compiler's straight-line schedule
would see it, with

* template arguments and the counters of loops the compiler unrolls bound to
  values (unrolled bodies are replicated, so ``acc[i][j]`` in an unrolled loop
  nest becomes one scalar value per element, as after scalar replacement);
* helper functions defined in the same file inlined at each call;
* every value (variable, array element kept in registers, thread-ID register)
  given an interval from its first definition to its last use. A value that is
  live into a runtime loop and used inside it is kept for the whole loop
  (loop-carried), as are loop-invariant values first read inside it;
* expression temporaries counted per statement with a Sethi–Ullman style
  ordering (a load needs its 64-bit address, a call holds its arguments);
* per runtime loop, one 64-bit address per memory stream indexed by a value
  that changes in the loop (strength-reduced pointers); per unrolled or small
  runtime loop, the loads of a few iterations in flight at once.

The result is :class:`WalkResult`: the peak of live registers (32-bit units,
fractional on targets with 16-bit register units), the thread-private arrays
that need stack memory, and notes. Coefficients come from
:class:`shaderlint.estimate.registers.Coefficients`.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import accumulate, repeat

import tree_sitter as ts

from shaderlint.estimate.static import (
    _MISSING, _dependencies, _evaluate_memo, binary_parts, evaluate, is_constant_array, is_thread_private,
    subscript_index,
)
from shaderlint.model.expr import mentions, unparen
from shaderlint.estimate.headers import header_callable, header_function, overload_for
from shaderlint.estimate.uniform import (
    DIVERGENT_BUILTINS, divergent_expression, divergent_vars, divergent_vars_in_call, uniform_component,
)
from shaderlint.model.callables import template_param_names, callable_of, display_name, functor_binding
from shaderlint.model.types import UNKNOWN, Type, parse_type_name

_MAX_VISITS = 250_000
_MAX_TRIPS = 4096
_STATEMENTS = frozenset({
    "compound_statement", "declaration", "expression_statement", "if_statement", "for_statement",
    "while_statement", "do_statement", "return_statement", "switch_statement", "case_statement",
    "labeled_statement", "break_statement", "continue_statement", "goto_statement", "for_range_loop",
    "preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "else_clause",
})
# Statements :meth:`Walker._stmt` walks as a sequence of their children, and those of them that are
# an ``#if`` group (GLSL: its undecided branches are alternatives)
_BLOCKS = frozenset({"compound_statement", "else_clause", "labeled_statement", "case_statement", "preproc_if",
                     "preproc_ifdef", "preproc_else", "preproc_elif", "translation_unit"})
_PREPROC_IFS = frozenset({"preproc_if", "preproc_ifdef", "preproc_elif"})
_BRANCHES = frozenset({
    "if_statement", "for_statement", "while_statement", "do_statement", "switch_statement", "return_statement",
    "break_statement", "continue_statement", "goto_statement", "for_range_loop",
})
_MEMORY_QUALIFIERS = frozenset({"__shared__", "__constant__", "static", "shared", "uniform", "buffer"})
_FREE_BUILTINS = frozenset({"blockDim", "gridDim", "gl_WorkGroupSize", "gl_NumWorkGroups", "warpSize"})
# Library functions whose expansion needs extra temporaries (CUDA libdevice, non-intrinsic).
_F32_SPECIAL = frozenset(
    "expf exp10f expm1f logf log10f log1pf log2f powf sinf cosf tanf sincosf sincospif sinpif cospif asinf "
    "acosf atanf atan2f sinhf coshf tanhf asinhf acoshf atanhf erff erfcf erfinvf erfcinvf lgammaf tgammaf "
    "cbrtf hypotf normcdff normcdfinvf fmodf remainderf j0f j1f y0f y1f".split())
_F64_SPECIAL = frozenset(
    "exp exp10 expm1 log log10 log1p log2 pow sin cos tan sincos sincospi sinpi cospi asin acos atan atan2 "
    "sinh cosh tanh asinh acosh atanh erf erfc erfinv erfcinv lgamma tgamma cbrt hypot normcdf normcdfinv "
    "fmod remainder j0 j1 y0 y1 sqrt rsqrt".split())
# Registers a libdevice function needs beyond its arguments, measured with ptxas (nvcc 13.0, sm_80 and
# sm_90 averaged, no fast math): a kernel ``y[i] = f(x[i])`` against ``y[i] = x[i] * 2`` (float) and the
# same for double (``f`` of double arguments). The trigonometric functions' slow-path argument
# reduction dominates: sinf costs 12 registers, expf 2. Names not listed cost Coefficients.special(_f64).
_F32_COST = {
    "expf": 2, "exp10f": 2, "expm1f": 2, "logf": 2, "log10f": 0, "log1pf": 2, "log2f": 1, "powf": 4.5,
    "sinf": 12, "cosf": 12, "tanf": 12, "sincosf": 12, "sinpif": 4.5, "cospif": 3.5, "asinf": 1, "acosf": 1,
    "atanf": 2, "atan2f": 9, "sinhf": 3.5, "coshf": 0, "tanhf": 4, "asinhf": 2, "acoshf": 1.5, "atanhf": 2.5,
    "erff": 2, "erfcf": 4.5, "erfinvf": 0, "erfcinvf": 0, "lgammaf": 5, "tgammaf": 9.5, "cbrtf": 4,
    "hypotf": 4.5, "normcdff": 6, "normcdfinvf": 0, "fmodf": 4, "remainderf": 7,
}
_F64_COST = {
    "exp": 2, "exp10": 2, "expm1": 5, "log": 10, "log10": 9, "log1p": 14.5, "log2": 9, "pow": 19, "sin": 16,
    "cos": 16, "tan": 15, "sincos": 16, "sinpi": 19.5, "cospi": 15, "asin": 9, "acos": 11, "atan": 2, "atan2": 18,
    "sinh": 19, "cosh": 3, "tanh": 7, "asinh": 16, "acosh": 14.5, "atanh": 18, "erf": 6.5, "erfc": 16,
    "erfinv": 9, "erfcinv": 13, "lgamma": 21, "tgamma": 21, "cbrt": 10, "hypot": 9, "normcdf": 18,
    "normcdfinv": 13, "fmod": 9, "remainder": 11, "sqrt": 7, "rsqrt": 2,
}
# Double-precision trig reduction keeps a small local array (Payne-Hanek) in CUDA's libdevice.
_F64_TRIG = frozenset("sin cos tan sincos".split())
# Calls the walk costs by rule or that cost nothing worth counting (intrinsics, atomics, math built-ins,
# casts, vector constructors): not "code the walk cannot see".
_COSTED = re.compile(
    r"^(__\w+|atomic\w+|make_\w+|min|max|f?absf?|fminf?|fmaxf?|sqrtf?|rsqrtf?|fmaf?|floorf?|ceilf?|roundf?|truncf?|"
    r"rintf?|exp2f?|copysignf?|isnan|isinf|isfinite|signbit|static_assert|sizeof|printf|clock|clock64|tex\w+|"
    r"surf\w+|\w+_cast|assert)$")
# Calls nvcc keeps as real calls with the ABI (Coefficients.abi_call): ``assert`` becomes a call of
# ``__assertfail`` when it fails, ``printf`` one of ``vprintf``.
_ABI_CALLS = frozenset({"assert", "__assertfail", "printf", "vprintf"})
# Warp collectives (convergent: a loop calling one is not unrolled with a remainder) and atomics
# (read-modify-write through memory: the loop's iterations are serialized on them).
_CONVERGENT = re.compile(r"^(__shfl\w*|__syncwarp|__ballot\w*|__any\w*|__all\w*|__match\w*|__reduce\w*|"
                         r"__activemask|__syncthreads\w*|atomic\w+|subgroup\w+|simd_\w+|quad_\w+)$")
_CONSTRUCTOR = re.compile(r"^(make_)?(u?(char|short|int|long|longlong)|float|double|half|bool|[biud]?vec|f16vec|"
                          r"[iu](8|16|32|64)vec|mat|dmat)\d?(x\d)?$")


class _Budget(Exception):
    pass


# Expression kinds :meth:`Walker.ev` dispatches on first: 0 no registers, 1 identifier, 2 field,
# 3 subscript, 4 binary, 5 unary.
_EV_KIND = {
    **dict.fromkeys(("number_literal", "true", "false", "string_literal", "char_literal", "sizeof_expression",
                     "null", "nullptr", "user_defined_literal", "concatenated_string", "alignof_expression",
                     "type_descriptor", "primitive_type", "comment"), 0),
    "identifier": 1, "qualified_identifier": 1, "field_expression": 2, "subscript_expression": 3,
    "binary_expression": 4, "unary_expression": 5, "pointer_expression": 5,
}


@dataclass
class VarInfo:
    """A variable's shape under the current bindings."""

    elem: Type  # element type (scalar, vector, struct, or pointer for pointer variables)
    dims: tuple[int | None, ...]
    pointer: bool

    @property
    def count(self) -> int | None:
        n = 1
        for d in self.dims:
            if d is None or d <= 0:
                return None
            n *= d
        return n if n < 1 << 62 else None  # `a[0xffffffffffffffff][...]...`: no array that big (float() overflowed)


@dataclass
class _Loop:
    start: int
    unrolled: bool
    trips: int = 1
    factor: int = 1  # copies of the body a partial unroll keeps
    streams: set = field(default_factory=set)
    loads: float = 0.0
    nested: bool = False
    counted: bool = False  # a counted loop (additive step, no barrier) the compiler may unroll at run time
    touched_from: int = 0  # Walker.touched index at the loop's start
    live_at_start: tuple = ()  # keys whose last use was already at or after ``start`` when it opened
    visits_from: int = 0  # Walker.visits at the loop's start: the walked size of its body at its end
    convergent: bool = False  # calls a warp-collective or atomic (the compiler does not unroll it at run time)
    #: a counted loop with a constant step (CUDA): unrolled at run time, ptxas batches its loads up to
    #: the registers that keep full occupancy (``Walker.fills``)
    fill: bool = False
    #: (CUDA) registers of one copy's address per memory stream when ptxas keeps every copy of a
    #: loop unrolled at run time with a step it does not know in flight: 2 with a 64-bit counter, else 1
    copy_address: float = 0.0
    #: (CUDA) a load of the body sits under a branch the walk cannot decide (``if``, ``?:``): the
    #: copies of a loop unrolled at run time are separate blocks, and ptxas does not keep every
    #: copy's loads and addresses in flight across them
    branchy: bool = False
    #: a `break` (or the kernel's `return`) the walk could not rule out: the copies of an unrolled
    #: loop are blocks that may end it, and ptxas does not move a copy's loads above the exit
    exits: bool = False
    #: loads of the unrolled loops in the body (kept with them for the hoists, but a constant-step
    #: loop around them is still batched up to the fill level)
    unrolled_loads: float = 0.0
    #: unrolled, its copies are separate basic blocks (AMD: branches or barriers in the body; ACO
    #: schedules, and so moves loads up, within one block only)
    blocks: bool = False
    #: (CUDA, runtime loops) the loop's node, and the ids of the variables assigned in it (lazily)
    node: object = None
    assigned: frozenset | None = None
    #: registers of values the unrolled copies in the body compute from loop-invariant operands
    #: through ``min``/``max``, hoisted out of the loop (``Walker.hoisted_clamp``)
    licm: float = 0.0


@dataclass
class _Frame:
    id: int
    alias: dict  # id(param) -> value key, or ("array", frame_id, Var)
    # a lambda's body: the frame it was defined in (its captures' values), its source span (what is
    # declared inside is the lambda's own), its parameters by name (the model has no Var for them)
    outer: "_Frame | None" = None
    span: tuple = ()
    names: dict | None = None
    consts: dict | None = None  # a lambda's parameters given a constant at this call: name -> value
    # function parameter packs by name (the model has no Var for them): their elements, each
    # ("alias", value key) or ("value", constant), or ("open", key prefix, start): the elements from
    # ``start`` on of a pack of unknown length (the kernel's own `Args... args`: kernel parameters)
    packs: dict | None = None


@dataclass
class WalkResult:
    peak: float  # live registers at the busiest point (without the ABI baseline)
    stack_arrays: dict  # Var -> bytes
    register_arrays: dict  # Var -> registers held by its elements at most
    notes: list[str]
    inlined: list[str]
    complete: bool = True
    unseen: list = field(default_factory=list)  # calls into code the walk could not see


class Walker:
    def __init__(self, model, kernel, target, coeffs, env: dict, type_env: dict[str, Type],
                 stack_vars: set[int], promote: set[int], demote: set[int],
                 cheap_divisions: frozenset = frozenset(), callables: dict | None = None,
                 callable_args: dict | None = None) -> None:
        self.m = model  # the model of the code being walked (a header's while inlining one of its helpers)
        self.home = model  # the kernel's
        self.foreign: list = []  # helpers of other models (headers) inlined
        # id(Var) -> Function: names bound by the template arguments to a function or a functor's
        # operator() (shaderlint.model.callables.bound_callables)
        self.callables = dict(callables or {})
        self.callable_env: dict[int, dict] = {}  # id(Var) -> template arguments of the bound function
        # id(Var) -> {parameter: argument} of a functor bound to an instance of a struct template
        self.callable_args: dict[int, dict] = dict(callable_args or {})
        # id(Var) -> (lambda_expression, its model, the frame it was defined in): a helper's parameter
        # bound to a lambda argument
        self.lambdas: dict[int, tuple] = {}
        self.lambda_depth = 0
        self.f = kernel
        self.target = target
        self.c = coeffs
        self.env = dict(env)
        self.type_env = type_env
        self.stack_vars = stack_vars  # ids of arrays known to live on the stack
        self.promote = promote  # ids of arrays forced into registers (what-if)
        self.demote = demote
        self.cheap = cheap_divisions  # operator offsets of divisions assumed constant (what-if)
        self.cheap_checked: set[int] = set()  # operator offsets of the divisions the walk costed
        # where each costed division can weigh on the peak: [position it was evaluated at, end of the
        # innermost statement around it] per evaluation (see ``peak_without``)
        self.division_spans: dict[int, list[list]] = {}
        self._open_spans: list[list] = []
        self._here: list[float] = []  # live registers plus temporaries at each position (``peak``)
        self.dynamic: dict[int, object] = {}  # id(array) -> Var, found indexed dynamically in this pass
        self.pos = 0
        self.first: dict = {}
        self.last: dict = {}
        self.cost: dict = {}
        self.invariant: set = set()
        self._assigned_in: dict = {}  # runtime loop node id -> ids of the variables assigned in it
        # keys in the order their ``last`` moved (a key again each time): the keys a runtime loop
        # must extend at its end are those touched since it opened, not every key of the kernel
        self.touched: list = []
        self.extra: dict[int, float] = defaultdict(float)
        self.regions: list[tuple[int, int, float]] = []
        # loads of further loop iterations in flight (latency hiding): kept apart so that the peak
        # without them (the demand before a scheduler moves loads up: ``peak_unhoisted``) is known
        self.hoists: list[tuple[int, int, float]] = []
        # those of loops unrolled at compile time (a block of independent loads; ``peak(nests=True)``)
        self.nest_hoists: list[tuple[int, int, float]] = []
        # (start, end) of the loops whose loads ptxas batches up to the full-occupancy registers:
        # measured with nvcc 13.0 (sm_80, sm_90), `for (int c = tid; c < n; c += 32) s += y[c];` takes
        # 29-31 registers whatever its loads (1-4 per iteration), 10 with `c += blockDim.x` (rolled)
        self.fills: list[tuple[int, int]] = []
        self.loops: list[_Loop] = []
        #: (CUDA) a run of statements copying global memory into shared memory (`sh[i] = g[j];`): its
        #: count and the position it started at (``staging``)
        self.staged = 0
        self.staged_from = 0
        #: ``len(self.loops)`` when each enclosing branch the walk could not decide opened
        self.branch_depths: list[int] = []
        self.frames: list[_Frame] = [_Frame(0, {})]
        pack = _pack_param(model, kernel.node)
        if pack is not None:  # `Args... args` of the kernel: as many parameters as a call takes
            self.frames[0].packs = {pack: [("open", ("pack", id(kernel), pack), 0)]}
        self.next_frame = 1
        self.active: list = []
        self.visits = 0
        self.notes: list[str] = []
        self.inlined: list[str] = []
        self.unseen: list[str] = []  # functions called that neither the file nor its headers define
        self.inlined_functions: list = []
        self.arrays: dict[int, object] = {}  # id -> Var for arrays seen in registers
        # ids of arrays the walk kept in registers other than by an element access or an initializer
        # (both in ``arrays``): a read of the whole array (``touch_array``), a pointer local into it
        # (``pointer_into_array``). An array in neither is one the walk would walk alike on the stack
        # (see ``registers._walk``).
        self.held: set[int] = set()
        # ids of thread-private arrays of 16-bit floats updated in place by arithmetic (CUDA): ptxas keeps
        # their elements in pairs, one register per two (half2 operations)
        self.packed: set[int] = set()
        # id(pointer local) -> (frame id, array Var, element offset): `T* it = buf + i * 8` into a
        # thread-private array kept in registers (deepspeed's iteration_buffer); `it[j]` is `buf[i * 8 + j]`
        self.ptr_alias: dict[int, tuple] = {}
        self._info: dict[int, VarInfo] = {}
        self.unit = target.register_unit_bits
        # AMD: integer values uniform across the wave live in scalar registers, not in the VGPRs counted
        self.scalar_file = target.vendor == "amd" and model.language == "glsl"
        # (AMD) the divergent variables of the helper being inlined at its call (None: the model's own,
        # :func:`divergent_vars`), and ``_var_shape`` per such context
        self.divergent: frozenset[int] | None = None
        self._shapes: dict = {}
        self._globals: dict[int, object] = {}  # id -> global Var of the keys handed out (``key``)
        self._uniform_reads: set = set()  # keys of helper parameters given a push constant (``uniform_read``)
        self.lang = model.language
        self.stack_bytes_extra = 0
        self.consumed: set[int] = set()  # statements walked as the detached body of a loop
        # Arrays not in registers: id -> the visits the walk would have made of their initializers had
        # they been (None: an initializer other than a list of literals), and the ids of those a
        # pointer local was initialized into. What a what-if keeping them in registers would walk
        # differently (registers._first_walk_dynamic).
        self.init_visits: dict[int, int | None] = {}
        self.pointed: set[int] = set()
        self.stmt_loads = 0.0  # load results of the statement being evaluated
        #: (CUDA) addresses the statement being evaluated has loaded from (``memory``): nvcc loads an
        #: address an expression reads twice once, when nothing in between may write memory
        self.stmt_seen: set = set()
        # Memoized per walker: answers that depend on the node or variable only (``info`` is fixed
        # at a variable's first use, promote/demote/stack_vars for the whole walk).
        self._wt: dict[int, float] = {}
        self._var_shape: dict[int, tuple] = {}  # id(var) -> (cost, table, elem cost, elem table)
        self._in_registers: dict[int, bool] = {}
        self._private_array: dict[int, bool] = {}  # array_target: a thread-private, non-constant array
        self._elements: dict[tuple, list[tuple]] = {}  # element_indices
        self._ident_kind: dict[int, int] = {}  # id(var) -> ident_kind(var)
        self._local_value: dict[int, bool] = {}  # is_register_var's tests on the variable alone
        # Shared by every walk of the model: the syntax of expressions (operator text, operands).
        self._syntax: dict = model.__dict__.setdefault("_walk_syntax", {})

    def body_of(self, n: ts.Node, field_name: str = "body") -> ts.Node | None:
        """A loop's body. tree-sitter reads ``for (...)`` followed by a ``#pragma unroll`` line
        and another statement as a loop with an empty (missing) body: take the statement after
        the pragma instead."""
        body = n.child_by_field_name(field_name)
        if body is None or body.end_byte > body.start_byte or body.type != "expression_statement":
            return body
        sib = n.next_named_sibling
        while sib is not None and sib.type in ("preproc_call", "comment"):
            sib = sib.next_named_sibling
        if sib is None:
            return body
        self.consumed.add(sib.id)
        return sib

    # ---- costs -------------------------------------------------------------------------------------
    def type_cost(self, t: Type) -> float:
        unit = self.unit
        if t.kind in ("int", "uint", "float"):
            units = math.ceil(t.width * max(t.bits, 16) / unit)
            return units * unit / 32
        if t.kind == "bool":
            return unit / 32 * t.width
        if t.kind == "pointer":
            return 2.0
        if t.kind == "struct":
            sd = self.m.structs.get(t.struct or "")
            if sd is None:
                return 1.0
            return sum(self.type_cost(ft) for _, ft, _ in sd.fields) or 1.0
        if t.kind == "array":
            return self.type_cost(t.pointee or UNKNOWN)
        if t.kind in ("texture", "void", "other"):
            return 0.0
        return 1.0

    def resolve_type_text(self, text: str) -> Type:
        bare = _TYPE_TEXTS.get(text)  # (the text without qualifiers, pointer and reference marks: per text)
        if bare is None:
            if len(_TYPE_TEXTS) > 65536:
                _TYPE_TEXTS.clear()
            bare = _TYPE_TEXTS[text] = " ".join(_TYPE_WORDS.sub(" ", text).replace("*", " ").replace("&", " ").split())
        text = bare
        if text in self.type_env:
            return self.type_env[text]
        t = parse_type_name(text)
        if t.is_known:
            return t
        if text in self.m.typedefs:
            return self.m.typedefs[text]
        if text.split("::")[-1] in self.m.structs:
            from shaderlint.model.types import struct_type
            return struct_type(text.split("::")[-1])
        return UNKNOWN

    def info(self, v) -> VarInfo:
        key = id(v)
        got = self._info.get(key)
        if got is not None:
            return got
        t = v.type
        dims: list[int | None] = []
        pointer = False
        # array and pointer declarators between the identifier and the declaration
        n = v.node.parent
        sizes: list[ts.Node | None] = []
        while n is not None and n != v.decl:
            if n.type == "array_declarator":
                sizes.append(n.child_by_field_name("size"))
            elif n.type == "pointer_declarator":
                pointer = True
            n = n.parent
        for s in reversed(sizes):
            val = evaluate(self.m, s, self.env) if s is not None else None
            dims.append(int(val) if isinstance(val, (int, float)) else None)
        if len(dims) < len(v.dims):
            dims = list(v.dims)
        elem = t
        while elem.kind == "array" and elem.pointee is not None:
            elem = elem.pointee
        if not elem.is_known or (elem.kind == "pointer" and not (elem.pointee and elem.pointee.is_known)):
            tnode = v.decl.child_by_field_name("type")
            base = self.resolve_type_text(self.m.text(tnode)) if tnode is not None else UNKNOWN
            if base.is_known:
                if pointer or elem.kind == "pointer":
                    from shaderlint.model.types import pointer_to
                    base = pointer_to(base)
                elem = base
        if elem.kind == "pointer":
            pointer = True
        got = VarInfo(elem, tuple(dims), pointer)
        self._info[key] = got
        return got

    def shape(self, v) -> tuple:
        """(registers of ``v``, its component table, registers of one element, an element's
        component table) under this walk's bindings."""
        got = self._var_shape.get(id(v))
        if got is None:
            inf = self.info(v)
            el = self.type_cost(inf.elem)
            el_table = self.comp_table(inf.elem)
            got = (2.0 if inf.pointer else el, None if inf.pointer or inf.dims else el_table, el, el_table)
            if self.lang == "cuda" and not inf.pointer and not inf.dims and inf.elem.kind in ("struct", "unknown") \
                    and v.decl is not None:
                got_array = self.array_struct(v.decl.child_by_field_name("type"))
                if got_array is not None:  # `AlignedArray<half, 8> r`: its elements, each live on its own
                    count, each = got_array
                    got = (count * each, {k: each for k in range(count)} if count <= 64 else None, count * each, None)
            if self.scalar_file and not inf.dims and not v.is_global and (
                    inf.elem.kind in ("int", "uint", "bool")
                    or (v.init is not None and not self._assigned(v) and self.uniform_read(v.init))) \
                    and id(v) not in (divergent_vars(self.m) if self.divergent is None else self.divergent):
                got = (0.0, None, el, el_table)  # the same in every invocation: a scalar register (SGPR)
            self._var_shape[id(v)] = got
        return got

    def var_cost(self, v) -> float:
        return self.shape(v)[0]

    def array_member(self, n: ts.Node):
        """The local ``s`` of ``s.v`` when ``v`` is the array of a struct kept element by element
        (:meth:`array_struct`), else None."""
        a = n.child_by_field_name("argument")
        op = n.child_by_field_name("operator")
        if a is None or a.type != "identifier" or op is None or self.m.text(op) != ".":
            return None
        v = self.m.resolve(a)
        if v is None or v.is_array or not self.is_register_var(v):
            return None
        table = self.var_table(v)
        return v if table and 0 in table else None

    def array_struct(self, tnode: ts.Node | None, depth: int = 0) -> tuple[int, float] | None:
        """(elements, registers of one) of a value of the type ``tnode`` names when it is a struct of the file whose one data
        member is an array of a size known under the bindings (deepspeed's ``AlignedArray<half, 8>``,
        CUTLASS's ``Array<T, N>``, also named through a ``using`` alias): nvcc's scalar replacement of
        aggregates keeps every element in a register of its own, as for the array alone (ptxas, nvcc 13.0:
        eight halves divided by a scale in such a struct, 33 registers on sm_80 and 37 on sm_90, as many
        as in a plain array); None for any other type."""
        if tnode is None or depth > 4:
            return None
        m = self.m
        if tnode.type == "type_descriptor":
            kids = [c for c in tnode.named_children if c.type not in ("type_qualifier", "comment")]
            if len(kids) != 1:
                return None
            tnode = kids[0]
        args: list[ts.Node] = []
        if tnode.type == "template_type":
            al = tnode.child_by_field_name("arguments")
            args = [c for c in al.named_children if c.type != "comment"] if al is not None else []
            tnode = tnode.child_by_field_name("name")
            if tnode is None:
                return None
        if tnode.type != "type_identifier":
            return None
        name = m.text(tnode)
        sd = m.structs.get(name)
        if sd is None:
            if args:
                return None
            alias = _alias_of(m, tnode, name)  # `using AccessType = AlignedArray<uint8_t, 8>;`
            return self.array_struct(alias, depth + 1) if alias is not None else None
        data = [fd for _, _, fd in sd.fields
                if not any(c.type == "storage_class_specifier" and m.text(c) == "static" for c in fd.children)]
        if len(data) != 1:
            return None
        decls = data[0].children_by_field_name("declarator")
        if len(decls) != 1 or decls[0].type != "array_declarator":
            return None
        size = decls[0].child_by_field_name("size")
        tmpl = sd.node.parent
        names = template_param_names(m, tmpl) if tmpl is not None and tmpl.type == "template_declaration" else []
        if names is None or len(names) != len(args) or None in names:
            return None
        values: dict = {}
        types: dict = {}
        for pname, a in zip(names, args):
            val = self.template_arg_value(a)
            if val is None and a.type == "type_descriptor" and m.text(a) in self.env:
                val = self.env[m.text(a)]  # a value parameter of the struct walked (`AlignedArray<T, N> ret`)
            if val is not None:
                values[pname] = val
                continue
            t = self.resolve_type_text(m.text(a))
            if not t.is_known:
                return None
            types[pname] = t
        count = evaluate(m, size, values) if size is not None else None
        if size is not None and count is None and m.text(size) in values:
            count = values[m.text(size)]
        if not isinstance(count, int) or count <= 0:
            return None
        etype = data[0].child_by_field_name("type")
        if etype is None:
            return None
        etext = m.text(etype)
        for _ in range(4):  # `using Element = T;` in the struct
            if etext in types:
                break
            inner = _alias_of(m, data[0], etext)
            if inner is None:
                break
            etext = m.text(inner)
        elem = types.get(etext) or self.resolve_type_text(etext)
        if not elem.is_known or elem.kind not in ("int", "uint", "float", "bool"):
            return None
        each = self.type_cost(elem)
        return (count, each) if count * each <= self.c.max_array_registers else None

    def comp_table(self, t: Type) -> dict[str, float] | None:
        """Independently live parts of a value: vector lanes, struct fields (None: one value)."""
        if t.kind in ("int", "uint", "float", "bool") and 2 <= t.width <= 4 and "x" not in t.name[-3:] \
                and not t.name.startswith(("mat", "dmat", "f16mat")):
            lane = self.type_cost(Type(t.kind, t.bits, 1, t.name))
            return {c: lane for c in "xyzw"[: t.width]}
        if t.kind == "struct":
            sd = self.m.structs.get(t.struct or "")
            if sd is not None and 1 < len(sd.fields) <= 16:
                return {name: self.type_cost(ft) for name, ft, _ in sd.fields}
        return None

    def var_table(self, v) -> dict[str, float] | None:
        return self.shape(v)[1]

    @staticmethod
    def pick(table: dict[str, float] | None, name: str) -> list[str] | None:
        """Components a field or swizzle names (None: all)."""
        if table is None:
            return None
        if name in table:
            return [name]
        if set(table) <= set("xyzw") and re.fullmatch(r"[xyzw]{1,4}|[rgba]{1,4}|[stpq]{1,4}", name):
            lanes = ["xyzw"["xyzwrgbastpq".index(ch) % 4] for ch in name]
            return [c for c in dict.fromkeys(lanes) if c in table] or None
        return None

    def use_keys(self, key, table, comps=None, cost: float = 1.0, invariant: bool = False) -> None:
        if table is None:
            self.use(key, cost, invariant)
            return
        for c in comps or table:
            self.use(key + (c,), table[c], invariant)

    def def_keys(self, key, table, comps=None, cost: float = 1.0) -> None:
        if table is None:
            self.define(key, cost)
            return
        for c in comps or table:
            self.define(key + (c,), table[c])

    def use_var(self, v, comps=None) -> None:
        shape = self._var_shape.get(id(v)) or self.shape(v)
        table = shape[1]
        if table is None:
            self.use(self.key(v), shape[0])
        else:
            self.use_keys(self.key(v), table, comps, shape[0])

    def def_var(self, v, comps=None) -> None:
        shape = self._var_shape.get(id(v)) or self.shape(v)
        table = shape[1]
        if table is None:
            self.define(self.key(v), shape[0])
        else:
            self.def_keys(self.key(v), table, comps, shape[0])

    def wt(self, n: ts.Node) -> float:
        """Registers holding the value of expression ``n``."""
        got = self._wt.get(n.id)
        if got is None:
            got = self._wt[n.id] = self._wt_uncached(n)
        return got

    def _wt_uncached(self, n: ts.Node) -> float:
        t = self.m.type_of(n)
        if t.is_known:
            if t.kind == "bool":
                return 0.0
            return self.type_cost(t)
        n = unparen(n)
        if n.type == "identifier":
            v = self.m.resolve(n)
            return self.var_cost(v) if v is not None else 1.0
        if n.type == "subscript_expression":
            v = self.m.base_var(n)
            if v is not None:
                inf = self.info(v)
                if inf.pointer and inf.elem.kind == "pointer" and inf.elem.pointee is not None:
                    return self.type_cost(inf.elem.pointee)
                return self.type_cost(inf.elem)
        if n.type == "binary_expression":
            op = self.m.text(n.child_by_field_name("operator"))
            if op in ("<", ">", "<=", ">=", "==", "!=", "&&", "||"):
                return 0.0
            return max(self.wt(n.child_by_field_name("left")), self.wt(n.child_by_field_name("right")))
        if n.type == "call_expression":
            name = self.m.callee_name(n)
            t = self.resolve_type_text(name)
            if t.is_known:
                return self.type_cost(t)
        if n.type == "cast_expression":
            tn = n.child_by_field_name("type")
            t = self.resolve_type_text(self.m.text(tn)) if tn is not None else UNKNOWN
            if t.is_known:
                return self.type_cost(t)
        return 1.0

    # ---- values ------------------------------------------------------------------------------------
    def key(self, v):
        """The value a variable names in the current (inlined) frame."""
        if v.is_global:
            self._globals[id(v)] = v
            return ("g", id(v))
        frame = self.frames[-1]
        got = frame.alias.get(id(v))
        if got is not None:
            return got
        while frame.outer is not None and not frame.span[0] <= v.node.start_byte < frame.span[1]:
            frame = frame.outer  # captured by a lambda: the value of the frame it was defined in
            got = frame.alias.get(id(v))
            if got is not None:
                return got
        return ("v", frame.id, id(v))

    def use(self, key, cost: float, invariant: bool = False) -> None:
        p = self.pos
        if key not in self.first:
            self.first[key] = p
            self.cost[key] = cost
            self.last[key] = p
            self.touched.append(key)
            if invariant:
                self.invariant.add(key)
        elif p > self.last[key]:
            self.last[key] = p
            self.touched.append(key)

    def define(self, key, cost: float) -> None:
        p = self.pos + 1
        if key not in self.first:
            self.first[key] = p
            self.cost[key] = cost
            self.last[key] = p
            self.touched.append(key)
        elif p > self.last[key]:
            self.last[key] = p
            self.touched.append(key)

    def step(self) -> None:
        self.pos += 2

    def record(self, peak: float) -> None:
        # independent loads of one statement are issued together (latency hiding)
        if self.stmt_loads:
            peak = max(peak, self.c.batch * self.stmt_loads + self.c.address)
            self.stmt_loads = 0.0
        if self.stmt_seen:
            self.stmt_seen.clear()
        extra, pos = self.extra, self.pos
        if peak > extra[pos]:
            extra[pos] = peak

    def tick(self) -> None:
        self.visits += 1
        if self.visits > _MAX_VISITS:
            raise _Budget

    # ---- statements --------------------------------------------------------------------------------
    def run(self) -> WalkResult:
        complete = True
        try:
            if self.f.body is not None:
                self.stmt(self.f.body)
            if self.staged:
                self.end_staging()
        except (_Budget, RecursionError):
            complete = False
            self.notes.append("kernel too large to walk completely; the estimate covers its first part")
        if self.packed:
            self.pack_pairs()
        self._walked = True  # (the values' intervals are final: ``peak`` keeps their sums)
        return WalkResult(self.peak(), {}, {}, self.notes, self.inlined, complete, list(self.unseen))

    def pack_pairs(self) -> None:
        """Half the cost of the elements of the arrays in ``packed``: nvcc computes arithmetic on a
        ``__half`` array two elements at a time (HADD2, HMUL2), each pair in one register (ptxas, nvcc
        13.0, sm_80/sm_90: 64 halves added to another array and scaled in place take 48-52 registers,
        the same in float 72-79; deepspeed's rms_norm<__half, 8> 48 where rms_norm<float, 8> takes 48
        for half the elements)."""
        cost, packed = self.cost, self.packed
        for k in cost:
            if type(k) is tuple and len(k) == 4 and k[0] == "e" and k[2] in packed:
                cost[k] *= 0.5

    def stmt(self, n: ts.Node) -> None:
        spans = self._open_spans
        mark = len(spans)
        self._stmt(n)
        if len(spans) > mark:  # divisions evaluated in this statement weigh on it up to its end
            end = self.pos + 1
            for span in spans[mark:]:
                span[1] = end
            del spans[mark:]

    def _stmt(self, n: ts.Node) -> None:
        self.visits += 1  # tick(), inlined
        if self.visits > _MAX_VISITS:
            raise _Budget
        t = n.type
        # (the most frequent kinds tested first)
        if t == "expression_statement":
            if self.lang == "cuda":
                try:  # (staging's memo read in place)
                    staging = self.m._staging[n.id]
                except (AttributeError, KeyError):
                    staging = self.staging(n)
            else:
                staging = False
            if not staging and self.staged and not self.has_barrier(n):  # (loads move above a barrier)
                self.end_staging()
            kids = self._syntax.get(("kids", n.id))  # (the same nodes at every walk of the statement)
            if kids is None:
                kids = self._syntax[("kids", n.id)] = n.named_children
            for c in kids:
                if c.type != "comment":
                    self.pos += 2  # step(), inlined
                    self.record(self.ev(c)[0])
            if staging:
                if not self.staged:
                    self.staged_from = self.pos
                self.staged += 1
        elif t in _BLOCKS:
            if t in _PREPROC_IFS and self.lang == "glsl" and n.child_by_field_name("alternative") is not None:
                self.preproc_alternatives(n)
                return
            kids = self._syntax.get(("kids", n.id))  # (the same nodes at every walk of the statement)
            if kids is None:
                kids = self._syntax[("kids", n.id)] = n.named_children
            spans = self._open_spans
            for c in kids:
                if t == "case_statement" and c == n.child_by_field_name("value") or c.id in self.consumed:
                    continue
                mark = len(spans)  # (stmt(), inlined)
                self._stmt(c)
                if len(spans) > mark:
                    end = self.pos + 1
                    for span in spans[mark:]:
                        span[1] = end
                    del spans[mark:]
        elif t == "declaration":
            self.declaration(n)
        elif t == "if_statement":
            cond = n.child_by_field_name("condition")
            value = cond
            if cond is not None and cond.type == "condition_clause":  # C++: `if (c)`, `if constexpr (c)`
                kids = cond.named_children
                value = kids[0] if len(kids) == 1 and kids[0].type != "declaration" else None
            c = evaluate(self.m, value, self.env) if value is not None else None
            cons, alt = self.body_of(n, "consequence"), n.child_by_field_name("alternative")
            if c is not None:
                branch = cons if c else alt
                if branch is not None:
                    self.stmt(branch)
                return
            if cond is not None:
                self.step()
                self.record(self.ev(cond)[0])
            before = dict(self.env)
            self.branch_depths.append(len(self.loops))
            if cons is not None:
                self.stmt(cons)
            after_cons = self.env
            self.env = dict(before)
            if alt is not None:
                self.stmt(alt)
            self.branch_depths.pop()
            # a variable keeps a known value only when both paths agree
            for k in set(after_cons) | set(self.env):
                if after_cons.get(k) != self.env.get(k) or k not in after_cons or k not in self.env:
                    self.env.pop(k, None)
                    v = self.var_by_id(k)
                    if v is not None:
                        self.def_var(v)
        elif t == "for_statement":
            self.for_loop(n)
        elif t in ("while_statement", "do_statement"):
            self.runtime_loop(n, None, n.child_by_field_name("condition"), None, self.body_of(n))
        elif t == "for_range_loop":
            self.range_loop(n)
        elif t == "return_statement":
            if len(self.frames) == 1 and not self.lambda_depth:  # the kernel's own return
                for lp in self.loops:
                    lp.exits = True
            if self.staged:
                self.end_staging()
            kids = [c for c in n.named_children if c.type != "comment"]
            if kids:
                self.step()
                self.record(self.ev(kids[0])[0])
        elif t == "switch_statement":
            cond = n.child_by_field_name("condition")
            if cond is not None:
                self.step()
                self.record(self.ev(cond)[0])
            body = n.child_by_field_name("body")
            if body is not None:
                self.stmt(body)
        elif t in ("parenthesized_expression", "condition_clause"):
            self.step()
            self.record(self.ev(n)[0])
        elif t == "break_statement":
            if self.loops:
                self.loops[-1].exits = True
            if self.staged:  # (no load moves above a possible exit)
                self.end_staging()
        elif t in ("comment", "continue_statement", "goto_statement", "preproc_call",
                   "preproc_def", "preproc_function_def", "type_definition", "struct_specifier", "ERROR"):
            return
        else:
            for c in n.named_children:
                if c.type in _STATEMENTS:
                    self.stmt(c)

    def preproc_alternatives(self, n: ts.Node) -> None:
        """An ``#if``/``#elif``/``#else`` group the preprocessing could not decide (GLSL): one branch is
        compiled, so its branches are walked as an if/else's are (from the same values, in turn) and
        the innermost loop counts the loads of the branch with the most, not of all of them."""
        alt = n.child_by_field_name("alternative")
        lp = self.loops[-1] if self.loops else None
        loads0 = lp.loads if lp is not None else 0.0
        before = dict(self.env)
        for c in n.named_children:
            if c != alt and c.id not in self.consumed:
                self.stmt(c)
        mine = lp.loads - loads0 if lp is not None else 0.0
        after = self.env
        self.env = dict(before)
        if lp is not None:
            lp.loads = loads0
        self.stmt(alt)
        if lp is not None:
            lp.loads = loads0 + max(mine, lp.loads - loads0)
        for k in set(after) | set(self.env):
            if after.get(k) != self.env.get(k) or k not in after or k not in self.env:
                self.env.pop(k, None)
                v = self.var_by_id(k)
                if v is not None:
                    self.def_var(v)

    def declaration(self, d: ts.Node) -> None:
        for decl in d.children_by_field_name("declarator"):
            name = decl
            for _ in range(8):
                if name.type in ("identifier",):
                    break
                nxt = name.child_by_field_name("declarator")
                if nxt is None:
                    break
                name = nxt
            v = self.m.resolve(name) if name.type == "identifier" else None
            init = decl.child_by_field_name("value") if decl.type == "init_declarator" else None
            if v is None:
                if init is not None:
                    self.step()
                    self.record(self.ev(init)[0])
                continue
            if v.address_space not in (None, "thread") or "__shared__" in v.qualifiers or "static" in v.qualifiers:
                continue  # shared/threadgroup memory is not a register
            inf = self.info(v)
            if inf.dims:
                self.array_init(v, inf, init)
                continue
            if init is None:
                continue
            if inf.pointer and self.lang == "cuda":
                got = self.pointer_into_array(v, init)
                if got is not None:
                    self.ptr_alias[id(v)] = got  # no register: the elements are the array's
                    continue
                self.ptr_alias.pop(id(v), None)
            if init.type != "argument_list" and self.var_table(v) is None:
                val = evaluate(self.m, init, self.env)
                if val is not None:
                    self.env[id(v)] = val  # a known constant (so far): no register
                    continue
            self.step()
            if init.type == "argument_list":  # `dim3 b(16, 16)` / `float4 v(a, b, c, d)`
                peak = self.ev_seq(list(init.named_children))[0]
            else:
                peak = self.ev(init)[0]
            self.record(peak)
            copied = self.copy_of(v, init) if self.lang == "glsl" else None
            if copied is not None:  # `const uint tid = gl_LocalInvocationID.x;`: the same register (SSA)
                self.frames[-1].alias[id(v)] = copied
                continue
            self.def_var(v)

    def hoisted_clamp(self, n: ts.Node) -> None:
        """A ``min``/``max`` an unrolled copy inside a runtime loop takes of values the loop does not
        change (``min(col0 + threadIdx.y + i, n - 1)``): NVVM's loop-invariant code motion computes
        every copy's value (with what it feeds: ``* stride``) once before the loop and holds it through
        the whole loop, one register per copy, where an affine index (``(col0 + threadIdx.y + i) *
        stride``) is a base and a constant step. Measured (nvcc 13.0, sm_80 and sm_90): 32
        accumulators fed from `y[c * stride + ib * 32 + tid]` in a runtime `ib` loop, `c = min(base +
        4 * i, n - 1)` in the 32 unrolled copies: the PTX holds the 32 `c * stride` from before the
        loop, ptxas 128 registers against 80 for `c = base + 4 * i`; mul_mat_q's shape (the nest test)
        with its y rows clamped so: 64 and 96 registers against 56 and 72 (8 and 16 copies);
        ctransformers' mul_mat_q8_0 holds 36 such values (255 registers, 12 bytes spilled; 239 and
        no spill when they are made to vary in the loop)."""
        parent = n.parent
        while parent is not None and parent.type in ("argument_list", "parenthesized_expression"):
            parent = parent.parent
        if parent is not None and parent.type == "call_expression" and self.m.callee_name(parent) in ("min", "max"):
            return  # the outer clamp holds the value
        runtime = self.invariant_loop(n)
        if runtime is not None and evaluate(self.m, n, self.env) is None:  # not a constant
            runtime.licm += 1.0

    def invariant_loop(self, e: ts.Node) -> "_Loop | None":
        """The innermost runtime loop around the current unrolled copy when expression ``e`` only reads
        values that loop does not change (and calls nothing but ``min``/``max``); else None."""
        runtime = next((lp for lp in reversed(self.loops) if not lp.unrolled), None)
        if runtime is None or runtime.node is None:
            return None
        if runtime.assigned is None:
            got = self._assigned_in.get(runtime.node.id)
            if got is None:
                got = self._assigned_in[runtime.node.id] = frozenset(id(a) for a in self.assigned_vars(runtime.node))
            runtime.assigned = got
        return runtime if self.invariant_in(e, runtime, 3) else None

    def invariant_in(self, e: ts.Node, runtime: "_Loop", depth: int) -> bool:
        m, node, first = self.m, runtime.node, self.first
        for x in _descendants(e):
            if x.type == "call_expression":
                if m.callee_name(x) not in ("min", "max"):
                    return False  # another call: may do anything
                continue
            if x.type != "identifier":
                continue
            u = m.resolve(x)
            if u is None or id(u) in self.env:
                continue  # the callee's name, a builtin (threadIdx), a constant (an unrolled counter)
            key = self.key(u)
            if id(u) in runtime.assigned or key[-1] in runtime.assigned or u.is_global and not u.is_const:
                return False  # changed in the loop (or memory others may write)
            fn = u.function.node if u.function is not None else None
            if fn is not None and fn.start_byte <= node.start_byte < fn.end_byte:
                if u.node.start_byte >= node.start_byte and not (  # computed in the loop: from invariant values?
                        u.is_const and u.init is not None and not u.dims and depth
                        and self.invariant_in(u.init, runtime, depth - 1)):
                    return False
            elif first.get(key, runtime.start) >= runtime.start:
                return False  # a helper's value (or parameter) computed in the loop
        return True

    def pointer_into_array(self, p, init: ts.Node):
        """(frame id, array, offset) when the pointer local ``p`` is initialized to point at a constant
        element of a one-dimensional thread-private array kept in registers (``buf``, ``buf + c``,
        ``&buf[c]``) and never assigned again; None otherwise."""
        a = unparen(init)
        off_node = None
        if a.type == "binary_expression" and self.m.text(a.child_by_field_name("operator")) == "+":
            left, right = unparen(a.child_by_field_name("left")), unparen(a.child_by_field_name("right"))
            a, off_node = (left, right) if left.type == "identifier" and self.m.resolve(left) is not None \
                and self.m.resolve(left).is_array else (right, left)
        elif a.type == "pointer_expression" and self.m.text(a.child_by_field_name("operator") or a) == "&":
            inner = unparen(a.child_by_field_name("argument"))
            if inner.type != "subscript_expression":
                return None
            base, idx = self.chain(inner)
            if len(idx) != 1 or idx[0] is None:
                return None
            a, off_node = base, idx[0]
        if a.type != "identifier":
            return None
        av = self.m.resolve(a)
        tgt = self.array_of(av) if av is not None and av.is_array else None
        if tgt is None or len(self.info(tgt[1]).dims) != 1:
            return None
        if not self.in_registers(tgt[1]):
            self.pointed.add(id(tgt[1]))  # (in registers, the pointer would name its elements)
            return None
        self.held.add(id(tgt[1]))
        off = 0
        if off_node is not None:
            val = evaluate(self.m, off_node, self.env)
            if not isinstance(val, int):
                return None
            off = val
        if self._assigned(p):
            return None
        return tgt[0], tgt[1], off
    def uniform_read(self, n: ts.Node) -> bool:
        """(AMD) Whether ``n`` only reads a push constant or a uniform block member (``p.attn_factor``,
        ``p.corr_dims[0]``): ACO loads it into scalar registers and the vector instructions read it
        there, so a float local or helper parameter holding it takes no VGPR (measured with RADV 22.3:
        eight such float locals, 5 VGPRs before scheduling, as with the push constants read in place)."""
        a = unparen(n)
        while a.type in ("field_expression", "subscript_expression"):
            if a.type == "subscript_expression":
                i = subscript_index(a)
                if i is not None and evaluate(self.m, i, self.env) is None \
                        and divergent_expression(self.m, i, self.divergent):
                    return False
            a = unparen(a.child_by_field_name("argument"))
        if a.type != "identifier":
            return False
        v = self.m.resolve(a)
        if v is not None and v.is_param:  # a helper's struct parameter bound to the push constants
            k = self.key(v)
            if k in self._uniform_reads:
                return True
            v = self._globals.get(k[1]) if k[0] == "g" else None
        elif v is None:  # a global of an included file (llama.cpp's `pc` of rope_head.glsl)
            v = _included_global(self.home, self.m.text(a))
        return v is not None and v.is_global and (v.address_space in ("push_constant", "uniform") or (
            v.address_space == "buffer" and "readonly" in v.qualifiers))

    def copy_of(self, v, init: ts.Node):
        """The key of the value ``v`` copies when its initializer is a plain copy of an invocation ID
        component or of another local, and neither is assigned again (the compiler names one value
        twice; the walk counted both), else None."""
        a = unparen(init)
        if self._assigned(v) or self.var_table(v) is not None:
            return None
        if a.type == "field_expression":
            arg, fld = a.child_by_field_name("argument"), a.child_by_field_name("field")
            if arg is None or fld is None or arg.type != "identifier" or self.m.resolve(arg) is not None:
                return None
            name, comp = self.m.text(arg), self.m.text(fld)
            if name not in ("gl_LocalInvocationID", "gl_GlobalInvocationID") or len(comp) != 1 \
                    or v.type.kind != "uint" or v.type.width != 1:
                return None  # (`float x = gl_LocalInvocationID.x;` converts: a new value)
            key = ("b", name + "." + comp)
            return key if key in self.first else None  # (uniform along the axis: no register, no key)
        if a.type == "identifier":
            w = self.m.resolve(a)
            if w is None or w.is_global or w is v or self._assigned(w) or self.var_table(w) is not None \
                    or self.info(w).dims or self.var_cost(w) != self.var_cost(v) \
                    or (w.type.kind, w.type.bits, w.type.width) != (v.type.kind, v.type.bits, v.type.width):
                return None  # (`float f = i;` converts: a new value)
            key = self.key(w)
            return key if key in self.first else None
        return None

    def _assigned(self, v) -> bool:
        from shaderlint.estimate.static import reassigned
        return reassigned(self.m, v)

    def array_init(self, v, inf: VarInfo, init: ts.Node | None) -> None:
        if init is None:
            return
        if self.in_registers(v):
            self.step()
            items = [c for c in init.named_children if c.type != "comment"] if init.type == "initializer_list" else []
            peak = self.ev_seq(items)[0] if items else 0.0
            self.record(peak)
            count = inf.count or 0
            el, table = self.shape(v)[2:]
            fid, vid = self.frames[-1].id, id(v)
            if table is None:  # (def_keys inlined: one key per element)
                define = self.define
                for idx in self.element_indices(inf.dims, ()):
                    define(("e", fid, vid, idx), el)
            else:
                for idx in self.element_indices(inf.dims, ()):
                    self.def_keys(("e", fid, vid, idx), table, None, el)
            self.arrays[id(v)] = v
            if count > 4096:
                self.notes.append(f"array '{v.name}' has {count} elements")
        else:
            self.step()
            self.record(self.ev(init)[0] if init.type != "initializer_list" else 1.0)
            # what walking its initializer in registers would visit (registers._first_walk_dynamic)
            n = _literal_visits(init) if init.type == "initializer_list" else None
            had = self.init_visits.get(id(v), 0)
            self.init_visits[id(v)] = None if n is None or had is None else had + n

    def element_indices(self, dims: tuple[int | None, ...], prefix: tuple) -> list[tuple]:
        """Every element index of an array of ``dims`` starting with ``prefix`` (memoized per
        walk: the answer is shared, not to be modified)."""
        key = (dims, prefix)
        got = self._elements.get(key)
        if got is None:
            got = self._elements[key] = self._element_indices(dims, prefix)
        return got

    def _element_indices(self, dims: tuple[int | None, ...], prefix: tuple) -> list[tuple]:
        out: list[tuple] = [tuple(prefix)]
        for d in dims[len(prefix):]:
            if d is None or len(out) * d > 65536:  # checked before building: `a[1 << 40]` ate memory
                return []
            out = [o + (i,) for o in out for i in range(d)]
            if len(out) > 65536:
                return []
        return out

    # ---- loops -------------------------------------------------------------------------------------
    def for_loop(self, n: ts.Node) -> None:
        init = n.child_by_field_name("initializer")
        cond = n.child_by_field_name("condition")
        update = n.child_by_field_name("update")
        body = self.body_of(n)
        var, values = self.trip_values(init, cond, update, body)
        pragma = self.pragma_unroll(n)
        if var is not None and values is not None and body is not None \
                and self.should_unroll(values, body, pragma, var):
            detached = body != n.child_by_field_name("body")
            counters = list(values[0]) if values else [var]
            saved = {id(v): self.env.get(id(v)) for v in counters}
            saved.update({v.name: self.env.get(v.name) for v in counters} if detached else {})
            lp = _Loop(self.pos, True, trips=len(values), blocks=self.scalar_file and self.branches(body))
            self.loops.append(lp)
            for state in values:
                for v, val in state.items():
                    self.env[id(v)] = val
                    if detached:  # counters do not resolve in a detached body: bind them by name
                        self.env[v.name] = val
                self.stmt(body)
            self.loops.pop()
            for k, old in saved.items():
                if old is None:
                    self.env.pop(k, None)
                else:
                    self.env[k] = old
            self.close_unrolled(lp)
            return
        factor = 1
        if self.target.vendor == "amd":
            pass  # NIR unrolls a loop only whole, when it knows the trip count: never in part at run time
        elif pragma is not None and pragma > 1:
            factor = pragma
        elif pragma == 0 and values is None:
            factor = 4
        counted = pragma != 1 and var is not None and update is not None and body is not None \
            and self.additive(update, var) and not self.has_barrier(body) and self.no_wrap(update, var, init)
        nvidia = counted and self.lang == "cuda" and self.target.vendor == "nvidia"
        fill = nvidia and self.constant_step(update, var)
        self.runtime_loop(n, init, cond, update, body, factor=factor, counted=counted, fill=fill,
                          copy_address=(2.0 if self.info(var).elem.bits == 64 else 1.0) if nvidia and not fill else 0.0)

    def additive(self, update: ts.Node, var) -> bool:
        """``i++``, ``i += s``: a counted loop the compiler may unroll at run time."""
        u = unparen(update)
        if u.type == "update_expression":
            return True
        if u.type == "assignment_expression":
            return self.m.text(u.child_by_field_name("operator")) in ("+=", "-=")
        return False

    def constant_step(self, update: ts.Node, var) -> bool:
        """A step the compiler knows (``c++``, ``c += 32``, ``c += block_size`` bound), on a counter other
        than an unsigned 64-bit one (``size_t c; c++``: no batching measured, 14 registers)."""
        counter = self.info(var).elem if var is not None else UNKNOWN
        if counter.kind == "uint" and counter.bits == 64:
            return False
        u = unparen(update)
        if u.type == "update_expression":
            return True
        step = u.child_by_field_name("right")
        return step is not None and evaluate(self.m, step, self.env) is not None

    def no_wrap(self, update: ts.Node, var, init: ts.Node | None = None) -> bool:
        """Whether the compiler can count the trips of a loop stepping ``var`` by ``update`` (CUDA:
        NVVM unrolls a runtime loop only then): see :func:`_no_wrap`. Also measured (nvcc 13.0, the
        cause not known): a 64-bit counter starting at a bare thread or block index and stepping by
        the bare block or grid dimension (``for (int64_t i = blockIdx.y; i < n; i += gridDim.y)``,
        llama.cpp's convert_unary) stays rolled, where ``blockIdx.y * 2``, ``threadIdx.x + o`` or a
        step ``blockDim.x * 2`` is unrolled."""
        if self.lang != "cuda":
            return True
        counter = self.info(var).elem if var is not None else UNKNOWN
        if counter.bits == 64 and init is not None:
            start = None
            if init.type == "declaration":
                d = init.child_by_field_name("declarator")
                start = d.child_by_field_name("value") if d is not None and d.type == "init_declarator" else None
            u = unparen(update)
            step = u.child_by_field_name("right") if u.type == "assignment_expression" else None
            if start is not None and step is not None and _GEOMETRY_INDEX.match(_uncast(self.m, start)) \
                    and _GEOMETRY_DIM.match(_uncast(self.m, step)):
                return False
        return _no_wrap(self.m, update, counter, self.env)

    def branches(self, body: ts.Node) -> bool:
        """The body has control flow or a barrier (each unrolled copy is a block of its own)."""
        if self.has_barrier(body):
            return True
        stack = [body]
        while stack:
            n = stack.pop()
            if n.type in _BRANCHES:
                return True
            stack.extend(n.named_children)
        return False

    def has_barrier(self, body: ts.Node) -> bool:
        return any(body.start_byte <= b.node.start_byte < body.end_byte for b in self.f.barriers)

    def range_loop(self, n: ts.Node) -> None:
        """``for (auto i : range) body`` as C++ defines it: ``auto b = range.begin(), e = range.end();
        for (; b != e; ++b) { auto i = *b; body }``. When the range is an object of a class the file or
        its headers define (dlib's ``grid_stride_range``), its ``begin()`` iterator is a loop-carried
        value and its ``end()`` one is live through the loop, each costing the iterator's fields, and
        the loop variable has the type ``operator*`` returns (no register of its own when it returns
        one of the iterator's fields: the compiler propagates the copy). Other ranges (arrays, library
        containers) stay a runtime loop over the range expression with the variable's declared type."""
        right = n.child_by_field_name("right")
        body = self.body_of(n)
        it = range_iterator(self.m, self.home, right) if right is not None and self.lang == "cuda" else None
        if it is None:
            self.runtime_loop(n, None, right, None, body)
            return
        fields, elem, alias, counted, step_type = it
        cost = sum(self.type_cost(t) for t in fields) or 1.0
        self.step()
        self.record(self.ev(right)[0])
        frame = self.frames[-1].id
        kb, ke = ("range-begin", frame, n.id), ("range-end", frame, n.id)
        self.define(kb, cost)
        self.define(ke, cost)
        self.step()
        decl = n.child_by_field_name("declarator")
        while decl is not None and decl.type != "identifier":
            decl = decl.child_by_field_name("declarator") or next(
                (c for c in decl.named_children if c.type == "identifier"), None)
        v = self.m.resolve(decl) if decl is not None else None
        if v is not None and not v.type.is_known:
            if alias:
                self._var_shape[id(v)] = (0.0, None, 0.0, None)
            elif elem is not None and elem.is_known:
                self._info[id(v)] = VarInfo(elem, (), elem.kind == "pointer")
        step = (("step", frame, n.id), self.type_cost(step_type)) if step_type is not None else None
        self.runtime_loop(n, None, None, None, body, counted=counted, carried=((kb, cost), (ke, cost)), step=step)

    def runtime_loop(self, n, init, cond, update, body, factor: int = 1, counted: bool = False,
                     carried: tuple = (), fill: bool = False, copy_address: float = 0.0, step=None) -> None:
        if init is not None:
            if init.type == "declaration":
                self.declaration(init)
            else:
                self.step()
                self.record(self.ev(init)[0])
        self.forget(n)
        if body is not None and not (n.start_byte <= body.start_byte < n.end_byte):
            self.forget(body)
        if self.staged:
            self.end_staging()
        for lp in self.loops:
            lp.nested = True
        lp = _Loop(self.pos + 1, False, factor=factor, counted=counted, touched_from=len(self.touched),
                   live_at_start=self._last_at_least(self.pos + 1), visits_from=self.visits, fill=fill,
                   copy_address=copy_address, node=n if self.lang == "cuda" else None)
        self.loops.append(lp)
        step = step or self.invariant_step(update, n)
        if step is not None:  # computed once before the loop and held through it (LICM)
            self.use(*step)
        if cond is not None:
            self.step()
            self.record(self.ev(cond)[0])
        for k, cost in carried:  # values the loop's own header reads every iteration (a range's iterators)
            self.use(k, cost)
        if body is not None:
            self.stmt(body)
        if update is not None:
            self.step()
            self.record(self.ev(update)[0])
            if step is not None:
                self.use(*step)
        if carried:
            self.step()
            self.use(carried[0][0], carried[0][1])
            self.define(carried[0][0], carried[0][1])
            if step is not None:
                self.use(*step)
        self.loops.pop()
        self.close_runtime(lp)

    def invariant_step(self, update: ts.Node | None, n: ts.Node):
        """(key, registers) of a runtime loop's step when it is computed (``i += (size_t)gridDim.x *
        blockDim.x``, ``i += 2 * stride``): CUDA compilers compute it once before the loop and keep it
        in a register through it (ptxas, nvcc 13.0: a size_t grid-stride loop takes 2 registers more
        than the walk's figure without it, for 1 to 4 loads); None for a constant, a name or a
        built-in read alone."""
        if update is None or self.lang != "cuda":
            return None
        u = unparen(update)
        if u.type != "assignment_expression" or self.m.text(u.child_by_field_name("operator")) not in ("+=", "-="):
            return None
        st = u.child_by_field_name("right")
        inner = unparen(st) if st is not None else None
        while inner is not None and inner.type == "cast_expression":
            inner = unparen(inner.child_by_field_name("value"))
        if inner is None or inner.type != "binary_expression" or evaluate(self.m, st, self.env) is not None:
            return None
        t = self.m.type_of(st)
        return ("step", self.frames[-1].id, n.id), (self.type_cost(t) if t.is_known else 1.0)

    def staging(self, n: ts.Node) -> bool:
        """Whether the statement ``n`` is `shared[i] = global[j];` (a copy into shared memory, casts
        allowed; memoized per model)."""
        try:
            memo = self.m._staging
        except AttributeError:
            memo = self.m._staging = {}
        got = memo.get(n.id)
        if got is None:
            got = False
            kids = [c for c in n.named_children if c.type != "comment"]
            a = unparen(kids[0]) if len(kids) == 1 else None
            if a is not None and a.type == "assignment_expression" and self.m.text(a.child_by_field_name("operator")) == "=":
                left, right = unparen(a.child_by_field_name("left")), unparen(a.child_by_field_name("right"))
                while right is not None and right.type == "cast_expression":
                    right = unparen(right.child_by_field_name("value"))
                if left is not None and right is not None and left.type == "subscript_expression" \
                        and right.type in ("subscript_expression", "pointer_expression"):
                    lv, rv = self.m.base_var(left), self.m.base_var(right)
                    got = bool(lv is not None and rv is not None and _is_shared(lv) and not _is_shared(rv)
                               and not (rv.is_array and is_thread_private(rv) and not rv.is_param))
            memo[n.id] = got
        return got

    def end_staging(self) -> None:
        """Close a run of copies into shared memory: ptxas issues their loads together (measured, nvcc
        13.0 sm_80: 2 to 16 such statements take 14 to 24 registers, 22-24 for 10 with a
        `__syncthreads()` after each; llama.cpp's rwkv_wkv7_f32_t1_warp_row 32 with 10; the walk
        gave 11 to 12 and 17)."""
        if self.staged > 1:
            self.hoists.append((self.staged_from, self.pos + 1, min(float(self.staged - 1), self.c.hoist_cap)))
        self.staged = 0

    def close_runtime(self, lp: _Loop) -> None:
        if self.staged:
            self.end_staging()
        end = self.pos + 1
        start = lp.start
        first, lasts, touched = self.first, self.last, self.touched
        # only keys whose last use is at or after ``start`` can change: those touched since the loop
        # opened and those already live at its start (every other key ended before the loop)
        for k in dict.fromkeys(lp.live_at_start + tuple(touched[lp.touched_from:])):
            s = first[k]
            last = lasts[k]
            if s < start <= last:
                if last < end:
                    lasts[k] = end
                    touched.append(k)
            elif k in self.invariant and start <= s <= end:
                first[k] = start
                lasts[k] = max(last, end)
                touched.append(k)
        if lp.streams:
            self.regions.append((start, end, self.c.stream * len(lp.streams)))
        if lp.licm:
            self.regions.append((start, end, lp.licm))
        copies = lp.factor
        if not lp.nested and copies == 1 and lp.counted and not lp.convergent \
                and self.visits - lp.visits_from <= self.c.runtime_unroll_budget:
            copies = self.c.runtime_unroll  # a small counted loop: unrolled at run time (with a remainder)
        if copies > 1 and lp.loads:
            amount = (min(copies, self.c.hoist) - 1) * lp.loads * self.c.hoist_weight
            if lp.copy_address and lp.factor == 1 and lp.branchy:
                # loads under a branch: each copy is its own block, only its counter and one value
                # ahead (measured, nvcc 13.0 sm_80: `long i; i += (long)blockDim.x * gridDim.x` with
                # `if (i < s) d[i] = x[i]; else d[i] = y[i - s];`, 1-3 loads, 2-4 streams, `?:`
                # too: +8 to +11 registers over the rolled loop, not every copy's loads and addresses)
                amount = (copies - 1) * (lp.copy_address + 1)
            elif lp.copy_address and lp.factor == 1:
                # every copy's loads and addresses in flight (measured: `long c; c += blockDim.x *
                # gridDim.x` or `c += st`, one load: +10 to +12 registers over the rolled loop, +16 for a
                # copy; `int c; c += st` with 1-4 loads: 16, 24, 32, 32 against 10-16 rolled)
                amount = max(amount, (copies - 1) * (lp.loads + lp.copy_address * len(lp.streams)))
            self.hoists.append((start, end, min(amount, self.c.hoist_cap)))
            if lp.fill and copies == self.c.runtime_unroll:
                self.fills.append((start, end))
        elif copies > 1 and lp.copy_address and lp.factor == 1 and lp.streams and not lp.unrolled_loads:
            # stores only: every copy's address (and value) still computed ahead (measured, nvcc 13.0
            # sm_80: `for (long i = threadIdx.x + s; i < n; i += blockDim.x) d[i] = 0.f` 20 registers,
            # 12 rolled; `d[i] = v` 22 against 14; `int i; i += st` 18 against 8)
            amount = (copies - 1) * (1 + lp.copy_address * len(lp.streams))
            self.hoists.append((start, end, min(amount, self.c.hoist_cap)))
        elif copies == self.c.runtime_unroll and lp.fill and lp.unrolled_loads:
            # its loads all in `#pragma unroll` loops of the body (measured, nvcc 13.0 sm_80: `for (i = 0;
            # i < n; i += 64)` around `for (j = 0; j < V; j += 2)` with two loads per copy: 32 and 31
            # registers for V = 2 and 4, the walk 17 and 21 without the fill)
            self.fills.append((start, end))

    def close_unrolled(self, lp: _Loop) -> None:
        if lp.trips > 1 and lp.loads and not lp.blocks and not (lp.exits and self.lang == "cuda"):
            per_iter = lp.loads / lp.trips
            amount = min((min(lp.trips, self.c.hoist) - 1) * per_iter * self.c.hoist_weight, self.c.hoist_cap)
            if amount > 0:
                self.hoists.append((lp.start, self.pos + 1, amount))
                if lp.unrolled_loads or (self.loops and self.loops[-1].unrolled):  # in a nest
                    self.nest_hoists.append(self.hoists[-1])
        if self.loops:
            self.loops[-1].loads += 0  # loads of an unrolled loop stay with it
            outer = self.loops[-1]
            outer.unrolled_loads += lp.loads + lp.unrolled_loads
            outer.streams |= lp.streams

    def trip_values(self, init, cond, update, body):
        """(first counter, one {Var: value} per iteration) for a loop the compiler can count
        (several counters allowed: ``for (int b = 1, kk = k; b < R; b <<= 1, kk >>= 1)``);
        (first counter or None, None) otherwise. Memoized per model on the loop and the values
        the bindings give the identifiers in its header (an inner loop of an unrolled nest is
        counted once, not once per outer iteration); the answer is shared, not to be modified."""
        parts = (init, cond, update, body)
        cache = self.m.__dict__.setdefault("_trip_cache", {})
        entry = cache.get(tuple(x.id if x is not None else None for x in parts))
        if entry is None:
            deps = tuple(dict.fromkeys(d for x in parts[:3] if x is not None for d in _dependencies(self.m, x)))
            entry = cache[tuple(x.id if x is not None else None for x in parts)] = (deps, {})
        deps, results = entry
        env = self.env
        vals = tuple(map(env.get, deps, repeat(_MISSING)))
        key = (vals, tuple(map(type, vals)))  # (as evaluate's memo: 1, 1.0 and True apart)
        got = results.get(key)
        if got is None:
            got = results[key] = self._trip_values(init, cond, update, body)
        return got

    def _trip_values(self, init, cond, update, body):
        m = self.m
        start: dict = {}
        order: list = []
        if init is not None and init.type == "declaration":
            for d in init.children_by_field_name("declarator"):
                name = d.child_by_field_name("declarator") if d.type == "init_declarator" else None
                if name is None or name.type != "identifier" or m.resolve(name) is None:
                    return None, None
                v = m.resolve(name)
                order.append(v)
                start[v] = evaluate(m, d.child_by_field_name("value"), {**self.env, **{id(k): x for k, x in start.items()}})
        elif init is not None:
            parts = [unparen(init)]
            while parts and parts[0].type == "comma_expression":
                c = parts.pop(0)
                parts[:0] = [c.child_by_field_name("left"), c.child_by_field_name("right")]
            for a in parts:
                if a is None or a.type != "assignment_expression" or m.text(a.child_by_field_name("operator")) != "=":
                    return None, None
                left = a.child_by_field_name("left")
                v = m.resolve(left) if left is not None and left.type == "identifier" else None
                if v is None:
                    return None, None
                order.append(v)
                start[v] = evaluate(m, a.child_by_field_name("right"), self.env)
        var = order[0] if order else None
        if var is None or any(x is None for x in start.values()) or cond is None or update is None or body is None:
            return var, None
        if any(self.modified_in(v, body) for v in order):
            return var, None
        updates = [unparen(update)]
        while any(u.type == "comma_expression" for u in updates):
            u = next(x for x in updates if x.type == "comma_expression")
            i = updates.index(u)
            updates[i:i + 1] = [unparen(u.child_by_field_name("left")), unparen(u.child_by_field_name("right"))]
        states: list[dict] = []
        state = dict(start)
        saved = {id(v): self.env.get(id(v)) for v in order}
        try:
            for _ in range(_MAX_TRIPS + 1):
                for v, x in state.items():
                    self.env[id(v)] = x
                c = evaluate(m, cond, self.env)
                if c is None:
                    return var, None
                if not c:
                    return var, states
                states.append(dict(state))
                for u in updates:
                    target = self.update_target(u)
                    if target not in state:
                        return var, None
                    nxt = self.next_value(u, target, state[target])
                    if nxt is None:
                        return var, None
                    state[target] = nxt
                    self.env[id(target)] = nxt
            return var, None
        finally:
            for k, old in saved.items():
                if old is None:
                    self.env.pop(k, None)
                else:
                    self.env[k] = old

    def update_target(self, u: ts.Node):
        n = u.child_by_field_name("argument") if u.type == "update_expression" else u.child_by_field_name("left")
        return self.m.resolve(unparen(n)) if n is not None and unparen(n).type == "identifier" else None

    def next_value(self, update: ts.Node, var, val):
        m = self.m
        u = unparen(update)
        if u.type == "update_expression":
            return val + 1 if "++" in m.text(u) else val - 1
        if u.type == "assignment_expression":
            op = m.text(u.child_by_field_name("operator"))
            rhs = evaluate(m, u.child_by_field_name("right"), self.env)
            if rhs is None:
                return None
            if op == "=":
                return rhs
            from shaderlint.model.consteval import c_binary
            try:
                return c_binary(op[:-1], val, rhs)
            except (ValueError, ArithmeticError):
                return None
        return None

    def modified_in(self, var, body: ts.Node) -> bool:
        return any(body.start_byte <= a.start_byte < body.end_byte for a in self.m.direct_writes(var))

    def pragma_unroll(self, node: ts.Node) -> int | None:
        got = self._syntax.get(("unroll", node.id))  # (the pragma's text before the loop: per model)
        if got is None:
            text = self.m.pragma_before(node)  # pragmas are masked by the front end
            mm = _UNROLL_PRAGMA.match(text) if text is not None else None
            got = self._syntax[("unroll", node.id)] = (mm is not None, mm.group(2) if mm else None)
        if not got[0]:
            return None
        num = got[1]
        if num is None:
            return 0
        if num.isdigit():
            return int(num) if len(num) <= 9 else None
        val = self.m.macros.get(num)
        for v in self.f.template_params.values():
            if v.name == num and id(v) in self.env:
                val = self.env[id(v)]
        return int(val) if isinstance(val, (int, float)) and abs(val) < 1 << 31 else 0

    def should_unroll(self, values: list, body: ts.Node, pragma: int | None, var=None) -> bool:
        trips = len(values)
        if trips == 0:
            return True
        if pragma == 1:
            return False
        if pragma is not None and pragma > 1:
            return pragma >= trips
        if pragma == 0:
            return trips <= self.c.max_full_unroll
        sizes = self.m.__dict__.setdefault("_body_sizes", {})  # per model: every unrolled copy asks again
        size = sizes.get(body.id)
        if size is None:
            size = sizes[body.id] = _size(body)
        budget = self.c.unroll_budget
        if var is not None and trips * size > budget and self.indexes_private_array(body, var):
            # unrolling turns the array's accesses into registers (no local memory): the compiler's
            # unroller credits the loads and stores that fold away and unrolls much larger bodies
            budget *= self.c.array_unroll_boost
        return trips * size <= budget

    def indexes_private_array(self, body: ts.Node, var) -> bool:
        """Whether ``body`` indexes a thread-private array with the loop counter ``var`` (memoized
        per model on the body and the counter)."""
        memo = self.m.__dict__.setdefault("_indexes_private", {})
        key = (body.id, id(var))
        got = memo.get(key)
        if got is None:
            got = False
            stack = [body]
            while stack and not got:
                n = stack.pop()
                if n.type == "subscript_expression":
                    base, idx = self.chain(n)
                    if base.type == "identifier":
                        v = self.m.resolve(base)
                        if v is not None and v.is_array and is_thread_private(v) and not v.is_param \
                                and not is_constant_array(self.m, v) \
                                and any(i is not None and mentions(self.m, i, var) for i in idx):
                            got = True
                            break
                stack.extend(n.named_children)
            memo[key] = got
        return got

    # ---- expressions -------------------------------------------------------------------------------
    def ev_seq(self, nodes: list[ts.Node]) -> tuple[float, float]:
        held = 0.0
        peak = 0.0
        for a in nodes:
            p, w = self.ev(a)
            peak = max(peak, held + p)
            held += w
        return max(peak, held), held

    def ev(self, n: ts.Node | None) -> tuple[float, float]:
        """(registers needed while evaluating beyond live values, registers of the result)."""
        if n is None:
            return 0.0, 0.0
        self.visits += 1  # tick(), inlined: the walk's hottest path
        if self.visits > _MAX_VISITS:
            raise _Budget
        t = n.type
        if t == "parenthesized_expression":
            n = unparen(n)
            t = n.type
        kind = _EV_KIND.get(t)
        if kind is not None:
            if kind == 0:
                return 0.0, 0.0
            if kind == 1:
                return self.ev_ident(n)
            if kind == 2:
                return self.ev_field(n)
            if kind == 3:
                return self.access(n, write=False)
            if kind == 4:
                return self.ev_binary(n)
            return self.ev_unary(n)
        if self.stmt_seen and t in ("update_expression", "assignment_expression", "call_expression"):
            self.stmt_seen.clear()  # (it may change an address or write memory)
        if t == "update_expression":
            arg = n.child_by_field_name("argument")
            a = unparen(arg) if arg is not None else None
            if a is not None and a.type == "identifier":
                v = self.m.resolve(a)
                if v is not None and id(v) in self.env and not v.template_param:
                    self.env[id(v)] = self.env[id(v)] + (1 if "++" in self.m.text(n) else -1)
                    return 0.0, 0.0
            return self.assign_to(arg, None, compound=True)
        if t == "assignment_expression":
            try:  # (binary_parts' memo read in place; the same fields as a binary expression's)
                op, opn, left, right = self.m._binary_parts[n.id]
            except (AttributeError, KeyError):
                op, opn, left, right = binary_parts(self.m, n)
            if opn is None:
                op = self.m.text(opn)
            return self.assign_to(left, right, compound=op != "=", op=op)
        if t == "conditional_expression":
            pc, wc = self.ev(n.child_by_field_name("condition"))
            self.branch_depths.append(len(self.loops))
            seen = set(self.stmt_seen)
            pa, wa = self.ev(n.child_by_field_name("consequence"))
            self.stmt_seen = set(seen)
            pb, wb = self.ev(n.child_by_field_name("alternative"))
            self.stmt_seen = seen  # (what one arm loaded is not loaded on the other path)
            self.branch_depths.pop()
            res = self.wt(n)
            return max(pc, wc + pa, wc + wa + pb, res), res
        if t == "cast_expression":
            p, w = self.ev(n.child_by_field_name("value"))
            res = self.wt(n)
            return max(p, res), (res if w or res > w else w)
        if t == "call_expression":
            got = self.ev_call(n)
            if self.stmt_seen:
                self.stmt_seen.clear()  # (the call may have written what its arguments read)
            return got
        if t in ("initializer_list", "argument_list", "comma_expression", "compound_literal_expression"):
            return self.ev_seq([c for c in n.named_children if c.type != "comment"])
        if t in ("lambda_expression",):
            return 0.0, 0.0
        return self.ev_seq([c for c in n.named_children if c.type != "comment"])

    def ev_ident(self, n: ts.Node) -> tuple[float, float]:
        try:  # (resolve's memo read in place)
            v = self.m._resolve_cache[n.id]
        except KeyError:
            v = self.m.resolve(n)
        if v is None:
            name = self.m.text(n)
            if self.lambda_depth:
                got = self.lambda_param(name)
                if got is not None:
                    self.use(*got)
                    return 0.0, 0.0
            if name.startswith("gl_") and name not in _FREE_BUILTINS and self.m.type_of(n).is_known \
                    and not (self.scalar_file and name not in DIVERGENT_BUILTINS):
                self.use(("b", name), self.type_cost(self.m.type_of(n)), invariant=True)
            return 0.0, 0.0
        vid = id(v)
        if vid in self.env:
            return 0.0, 0.0
        if self.ptr_alias and vid in self.ptr_alias:  # a pointer into a private array: its elements
            self.touch_array(self.ptr_alias[vid][1], None)
            return 0.0, 0.0
        kind = self._ident_kind.get(vid)
        if kind is None:
            kind = self._ident_kind[vid] = self.ident_kind(v)
        if kind == 0:
            return 0.0, 0.0
        if kind == 1:
            self.touch_array(v, None)
            return 0.0, 0.0
        k = self.key(v)
        if isinstance(k, tuple) and k and k[0] == "array":
            return 0.0, 0.0
        if kind == 2:
            cost = self.param_cost(v)
            if cost:
                self.use(k, cost, invariant=True)
            return 0.0, 0.0
        if kind == 3:
            val = evaluate(self.m, n, self.env)
            if val is not None:
                return 0.0, 0.0
        shape = self._var_shape.get(vid) or self.shape(v)  # (use_var with the key found above)
        if shape[1] is None:
            self.use(k, shape[0])
        else:
            self.use_keys(k, shape[1], None, shape[0])
        return 0.0, 0.0

    def ident_kind(self, v) -> int:
        """What reading ``v`` (not a known constant) does, as far as it depends on the variable alone
        (memoized per walk in ``_ident_kind``): 0 nothing (a template parameter, a function constant,
        memory), 1 touches a thread-private array, 2 a kernel parameter or global (``param_cost``),
        3 a constant with an initializer (nothing when it folds), 4 uses the value."""
        if v.template_param or v.function_constant:
            return 0
        if v.address_space not in (None, "thread", "in") and not (v.is_param and v.role) \
                or v.qualifiers & _MEMORY_QUALIFIERS:
            return 0  # lives in memory: its address is a constant
        if v.is_array and is_thread_private(v) and not v.is_param:
            return 1
        if v.is_global or (v.is_param and v.function is self.f):
            return 2
        if (v.is_const or v.is_constexpr) and v.init is not None:
            return 3
        return 4

    def var_by_id(self, k):
        if not isinstance(k, int):
            return None
        if not hasattr(self, "_by_id"):
            self._by_id = {id(v): v for vs in self.m._vars_by_name.values() for v in vs}
        return self._by_id.get(k)

    def is_register_var(self, v) -> bool:
        """A local scalar/vector/struct value of this frame (not memory, not a folded constant)."""
        if id(v) in self.env:
            return False
        local = self._local_value.get(id(v))  # (the tests on the variable alone: memoized per walk)
        if local is None:
            local = self._local_value[id(v)] = not (
                v.template_param or v.function_constant or v.is_global or v.is_array
                or v.address_space not in (None, "thread") or v.qualifiers & _MEMORY_QUALIFIERS
                or v.is_param and v.function is self.f)
        if not local:
            return False
        k = self.key(v)
        return not (isinstance(k, tuple) and k and k[0] == "array")

    def param_cost(self, v) -> float:
        """Kernel parameters sit in a constant bank / uniform registers; thread-position
        attributes and interpolated inputs are per-thread registers."""
        if v.role is not None:
            from shaderlint.model.builtins import METAL_ROLES
            if METAL_ROLES.get(v.role):
                return self.var_cost(v)
            return 0.0
        if v.is_global and self.lang == "glsl" and v.address_space == "in" and self.m.stage not in ("compute", None):
            return self.var_cost(v)
        if v.is_param and self.f.kind in ("vertex", "fragment") and self.lang == "metal":
            return self.var_cost(v)
        return 0.0

    def ev_field(self, n: ts.Node) -> tuple[float, float]:
        parts = self._syntax.get(("field", n.id))  # (the expression's syntax: the same at every walk of it)
        if parts is None:
            parts = self._syntax[("field", n.id)] = self._field_parts(n)
        arg, a, fld, arrow, fname, indexed = parts
        if arg is None or fld is None:
            return 0.0, 0.0
        if a.type == "identifier" and self.m.resolve(a) is None:
            name = self.m.text(a)
            if name in _FREE_BUILTINS:
                return 0.0, 0.0
            if self.scalar_file and name.startswith("gl_") and (
                    name not in DIVERGENT_BUILTINS or uniform_component(self.m, name, fname)):
                return 0.0, 0.0  # gl_WorkGroupID, gl_NumSubgroups, gl_GlobalInvocationID.y of a 1-high group: SGPRs
            if name in ("threadIdx", "blockIdx") or name.startswith("gl_"):
                self.use(("b", name + "." + fname), self.unit / 32 if name.startswith("gl_") else 1.0,
                         invariant=True)
            return 0.0, 0.0
        if arrow:
            return self.memory(n, a, [], write=False)
        if a.type == "identifier":
            v = self.m.resolve(a)
            if v is not None and self.is_register_var(v):
                self.use_var(v, self.pick(self.var_table(v), fname))
                return 0.0, 0.0
        if a.type == "subscript_expression":
            if indexed:
                # `data_a[ib].qs[j]` (GLSL), `x[b].qs[j]` (CUDA): an array member indexed further, its
                # address only (one load, not two)
                return self.access(a, write=False, address_only=True, field=fname)
            return self.access(a, write=False, field=fname)
        p, w = self.ev(arg)
        if w:
            res = self.wt(n)
            return max(p, res), res
        return p, 0.0

    def _field_parts(self, n: ts.Node) -> tuple:
        """(argument, argument unparenthesized, field node, ``->``, field name, indexed further: the
        argument of a subscript) of the field expression ``n`` (memoized per model by ``ev_field``)."""
        arg = n.child_by_field_name("argument")
        fld = n.child_by_field_name("field")
        op = n.child_by_field_name("operator")
        if arg is None or fld is None:
            return arg, None, fld, False, "", False
        a = unparen(arg)
        indexed = False
        if a.type == "subscript_expression":
            up = n.parent
            indexed = up is not None and up.type == "subscript_expression" and up.child_by_field_name("argument") == n
        return arg, a, fld, op is not None and self.m.text(op) == "->", self.m.text(fld), indexed

    def ev_binary(self, n: ts.Node) -> tuple[float, float]:
        try:  # (binary_parts' memo read in place: the walk's most frequent expression)
            op, opn, left, right = self.m._binary_parts[n.id]
        except (AttributeError, KeyError):
            op, opn, left, right = binary_parts(self.m, n)
        pa, wa = self.ev(left)
        pb, wb = self.ev(right)
        # min(max(pa, wa + pb), max(pb, wb + pa)) without the builtins' calls: max(a, b) is
        # ``b if b > a else a`` and min(a, b) ``b if b < a else a`` (the first argument on ties)
        x = wa + pb
        first = x if x > pa else pa
        x = wb + pa
        second = x if x > pb else pb
        peak = second if second < first else first
        res = self._wt.get(n.id)
        if res is None:
            res = self.wt(n)
        if not (op in ("/", "%") and right is not None):  # (no division: max(peak, wa + wb, res), inlined)
            x = wa + wb
            if x > peak:
                peak = x
            return (res if res > peak else peak) + 0.0, res
        extra = 0.0
        if opn is None or self.costly_division(opn):  # (a division: the test above)
            lt = self.m.type_of(left) if left is not None else UNKNOWN
            rt = self.m.type_of(right)
            divisor = evaluate(self.m, right, self.env)
            if divisor is None:
                if lt.is_integer and rt.is_integer:
                    extra = self.c.int_div * (2 if max(lt.bits, rt.bits) > 32 else 1)
                elif self.lang == "cuda" and (lt.is_float or rt.is_float):
                    extra = self.c.fdiv * (self.c.fdiv_f64 if max(lt.bits, rt.bits) > 32 else 1)
            elif self.lang == "cuda" and op == "/" and (lt.is_float or rt.is_float) and not _power_of_two(divisor):
                # a float divided by a constant is still an IEEE division (x / 6.f: ptxas 13 registers
                # against 10 for x * 2.f); only a power of two becomes a multiplication
                extra = self.c.fdiv * (self.c.fdiv_f64 if max(lt.bits, rt.bits) > 32 else 1)
        return max(peak, wa + wb, res) + extra, res

    def ev_unary(self, n: ts.Node) -> tuple[float, float]:
        arg = n.child_by_field_name("argument")
        op = n.child_by_field_name("operator")
        ops = self.m.text(op) if op is not None else ""
        if n.type == "pointer_expression" and ops == "*" and arg is not None:
            return self.memory(n, unparen(arg), [], write=False)
        if n.type == "pointer_expression" and ops == "&" and arg is not None:
            return self.address_of(unparen(arg))
        p, w = self.ev(arg)
        res = self.wt(n) if ops not in ("!",) else 0.0
        return max(p, res), res

    def address_of(self, a: ts.Node) -> tuple[float, float]:
        if a.type == "subscript_expression":
            v = self.m.base_var(a)
            if v is not None and v.is_array and is_thread_private(v) and not is_constant_array(self.m, v):
                self.mark_dynamic(v)
                return 1.0, 1.0
            peak, _ = self.access(a, write=False, address_only=True)
            return peak, 2.0
        if a.type == "identifier":
            v = self.m.resolve(a)
            if v is not None and not v.is_global and v.address_space in (None, "thread") and not v.is_param:
                self.use_var(v)  # out-parameter: kept in registers once inlined
                self.def_var(v)
            return 0.0, 0.0
        return self.ev(a)

    def ev_call(self, n: ts.Node) -> tuple[float, float]:
        m = self.m
        parts = self._syntax.get(("call", n.id))  # (the call's syntax: the same at every walk of it)
        if parts is None:
            fn = n.child_by_field_name("function")
            while fn is not None and fn.type == "qualified_identifier" and fn.child_by_field_name("name") is not None:
                fn = fn.child_by_field_name("name")  # `reduce::partitioned<Add, N>(x)`: its template arguments bind
            parts = self._syntax[("call", n.id)] = (
                m.callee_name(n), tuple([a for a in m.call_args(n) if a.type != "comment"]), fn)
        name, args, fn = parts
        args = list(args)
        if name in ("min", "max") and self.lang == "cuda" and self.loops and self.loops[-1].unrolled:
            self.hoisted_clamp(n)
        g = callable_of(m, n, self.callables) if self.callables else None
        bound = g is not None
        bound_env = None
        bound_types = None
        if g is not None and fn is not None and fn.type == "identifier":
            tv = m.resolve(fn)
            bound_env = self.callable_env.get(id(tv)) if tv is not None else None
            targs = self.callable_args.get(id(tv)) if tv is not None else None
            if targs:  # `normal_functor<double>`: its type parameters for the operator's body
                bound_types = {k: t for k, t in ((k, self.resolve_type_text(a)) for k, a in targs.items())
                               if t.is_known}
        if g is None and fn is not None and fn.type == "call_expression" and self.lang == "cuda":
            got = self.temporary_functor(fn, len(args))
            if got is not None:  # `Op()(a, b)`, `divide<half, 8>()(x, s)`: the temporary's operator()
                return self.inline(n, got[0], args, fn, got[1], bound_types=got[2])
        if g is None and fn is not None and fn.type == "identifier":
            lam = self.lambda_of(fn)
            if lam is not None:
                return self.inline_lambda(n, args, *lam)
        if g is None:
            g = m.function_by_name.get(name)
            if g is not None and name in _overloaded(m):  # several definitions: the one the arguments take
                cands = [h for h in _overloaded(m)[name] if len(h.params) == len(args)]
                if len(cands) > 1:
                    cands = overload_for(cands, [self.arg_type(a) for a in args])
                if len(cands) == 1:
                    g = cands[0]
            if g is not None and self.lang == "glsl" and len(g.params) != len(args):
                # GLSL overloads by arity (llama.cpp's get_indices(idx, i00..i03) calls its 9-argument
                # namesake): the one of this file with as many parameters, else the headers'
                same = [h for h in m.functions if h.name == name and len(h.params) == len(args)]
                g = same[0] if len(same) == 1 else None
        if g is not None and g.body is not None and not g.is_entry and g is not self.f \
                and fn is not None and fn.type != "field_expression":
            return self.inline(n, g, args, fn, bound_env, model=self.callable_model(g) if bound else None,
                               bound_types=bound_types)
        if g is None and self.lang in ("cuda", "glsl") and fn is not None and fn.type != "field_expression" \
                and name not in _F32_SPECIAL and name not in _F64_SPECIAL and not name.startswith("__") \
                and not _CONSTRUCTOR.match(name):
            hit = header_function(self.home, name, len(args),  # a helper of the project's headers
                                  lambda: [self.arg_type(a) for a in args])
            if hit is not None:
                return self.inline(n, hit[1], args, fn, bound_env, model=hit[0])
        if fn is not None and fn.type == "field_expression" and self.lang == "cuda":
            got = self.method_of(fn, len(args))
            if got is not None:  # `s.f(x)`, `p->f(x)` of a class the file or its headers define
                obj = fn.child_by_field_name("argument")
                p0, w0 = self.ev(obj) if obj is not None else (0.0, 0.0)
                self.record(p0)
                return self.inline(n, got[1], args, fn.child_by_field_name("field"),
                                   model=got[0] if got[0] is not self.m else None)
        if fn is not None and fn.type == "field_expression":
            obj = fn.child_by_field_name("argument")
            p0, w0 = self.ev(obj) if obj is not None else (0.0, 0.0)
            peak, held = self.ev_seq(args)
            res = self.wt(n)
            return max(p0, w0 + peak, res), res
        outs = _GLSL_OUT_ARGS.get(name) if g is None and self.lang == "glsl" else None
        if outs:  # a result never read (umulExtended's low half, fastdiv's `lsbs`): NIR drops it
            args = [a for i, a in enumerate(args) if i not in outs or not self.dead_out(a)]
        peak, held = self.ev_seq(args)
        res = self.wt(n)
        extra = 0.0
        if self.loops and _CONVERGENT.match(name):
            for lp in self.loops:
                lp.convergent = True
        if self.lang == "cuda":
            if name in _F32_SPECIAL:
                extra = _F32_COST.get(name, self.c.special)
            elif name in _F64_SPECIAL and any(m.type_of(a).bits == 64 and m.type_of(a).is_float for a in args):
                extra = _F64_COST.get(name, self.c.special_f64)
                if name in _F64_TRIG:
                    self.stack_bytes_extra = max(self.stack_bytes_extra, 40)
            elif name in _F64_SPECIAL and not any(m.type_of(a).is_float for a in args):
                extra = self.c.special if args else 0.0
            elif name in _ABI_CALLS and g is None and not (name == "assert" and "NDEBUG" in m.macros):
                extra = self.c.abi_call
        elif name not in m.function_by_name and not _CONSTRUCTOR.match(name) and not res:
            extra = 0.0
        if g is None and not _CONSTRUCTOR.match(name) and res == 0 and name not in _F32_SPECIAL:
            res = 0.0
        if g is None and name and self.lang == "cuda" and not extra:
            plain = _plain_name(m.text(fn)) if fn is not None else name
            if plain and plain not in self.unseen and not _CONSTRUCTOR.match(plain) and not _COSTED.match(plain) \
                    and not parse_type_name(plain).is_known:  # `int64_t(x)`, `uint8_t(v)`: a cast, not code
                self.unseen.append(plain)  # code the walk cannot see: its registers are not counted
        return max(peak, held, res) + extra, res

    def temporary_functor(self, fn: ts.Node, nargs: int):
        """(operator(), its struct template's value arguments and its type arguments, by parameter name)
        of a call on a temporary functor ``T()`` / ``T<A, N>()`` whose struct the file defines, with one
        ``operator()`` of ``nargs`` parameters (nvcc inlines it as any helper); None otherwise."""
        if [a for a in self.m.call_args(fn) if a.type != "comment"]:
            return None  # a constructor with arguments: the object's state is not modelled
        inner = fn.child_by_field_name("function")
        if inner is None or inner.type not in ("identifier", "template_function", "qualified_identifier",
                                                "type_identifier"):
            return None
        got = functor_binding(self.m, self.m.text(inner))
        if got is None or len(got[0].params) != nargs:
            return None
        op, targs = got
        values: dict = {}  # by name: the struct's parameters are no Vars of the operator's model
        types: dict = {}
        tl = inner.child_by_field_name("arguments") if inner.type == "template_function" else None
        nodes = [c for c in tl.named_children if c.type != "comment"] if tl is not None else []
        if len(nodes) != len(targs):
            return None
        for name, a in zip(targs, nodes):
            val = self.template_arg_value(a)
            if val is not None:
                values[name] = val
                continue
            t = self.resolve_type_text(self.m.text(a))
            if t.is_known:
                types[name] = t
        return op, values, types

    def method_of(self, fn: ts.Node, nargs: int):
        """(model, method) a member call ``obj.f(...)`` / ``p->f(...)`` runs: the one definition of
        ``f`` with ``nargs`` parameters in the body of the class ``obj``'s type names (under this
        walk's bindings: cupy's ``state->rk_double()`` with ``S* state`` bound), in the file or the
        headers next to it; None when there is not exactly one."""
        obj = fn.child_by_field_name("argument")
        field = fn.child_by_field_name("field")
        if obj is None or field is None or field.type != "field_identifier":
            return None
        v = self.m.resolve(obj) if obj.type == "identifier" else None
        t = self.info(v).elem if v is not None else self.arg_type(obj)  # (`R* state`: R as bound)
        if t.kind == "pointer" and t.pointee is not None:
            t = t.pointee
        if t.kind != "struct" or not t.struct:
            return None
        name = self.m.text(field)
        cls = _one_class(self.m, t.struct)
        if cls is not None:
            nodes = {c.start_byte for c in _methods(self.m, cls, name)}
            got = [(self.m, g) for g in self.m.functions if g.node.start_byte in nodes and g.body is not None
                   and len(g.params) == nargs]
        elif self.home is self.m and t.struct not in self.m.structs:
            from shaderlint.estimate.headers import _lookup
            got = []
            from shaderlint.model.callables import _owner
            for hm, g in _lookup(self.home, name):
                owner = _owner(g)
                oname = owner.child_by_field_name("name") if owner is not None and owner.type in (
                    "struct_specifier", "class_specifier") else None
                if oname is not None and hm.text(oname) == t.struct and len(g.params) == nargs:
                    got.append((hm, g))
        else:
            return None
        return got[0] if len(got) == 1 else None

    def dead_out(self, a: ts.Node) -> bool:
        """Whether argument ``a`` of a GLSL built-in's out parameter is a local its function never reads
        (written only through such out parameters): the compiler removes the value (memoized per model)."""
        a = unparen(a)
        if a.type != "identifier":
            return False
        v = self.m.resolve(a)
        if v is None or v.is_global or v.init is not None or v.qualifiers & _OUT_QUALIFIERS:
            return False
        memo = self.m.__dict__.setdefault("_dead_out", {})
        got = memo.get(id(v))
        if got is None:
            fn = a.parent
            while fn is not None and fn.type != "function_definition":
                fn = fn.parent
            got = fn is not None
            stack = [fn] if fn is not None else []
            while got and stack:
                x = stack.pop()
                if x.type == "identifier" and x.id != a.id and self.m.text(x) == v.name and self.m.resolve(x) is v:
                    up = x.parent
                    if up is not None and up.type in ("init_declarator", "declaration") \
                            and any(d.id == x.id for d in up.children_by_field_name("declarator")):
                        continue  # the declaration
                    call = up.parent if up is not None and up.type == "argument_list" else None
                    outs = _GLSL_OUT_ARGS.get(self.m.callee_name(call)) if call is not None else None
                    kids = [c for c in up.named_children if c.type != "comment"] if outs else []
                    if not outs or next(i for i, c in enumerate(kids) if c.id == x.id) not in outs:
                        got = False
                    continue
                stack.extend(x.named_children)
            memo[id(v)] = got
        return got

    def template_arg_value(self, a: ts.Node):
        """The value of a template argument: a constant expression, or a name the parser reads as a
        type (``g<mmq_y>``) that is a local constant or a value the walk knows."""
        val = evaluate(self.m, a, self.env)
        if val is None and a.type == "type_descriptor":
            kids = a.named_children
            if len(kids) == 1 and kids[0].type == "type_identifier":
                v = self.m.resolve(a)
                if v is not None and not v.is_array:
                    if id(v) in self.env:
                        return self.env[id(v)]
                    if (v.is_const or v.is_constexpr) and v.init is not None:
                        return evaluate(self.m, v.init, self.env)
        return val

    def bind_function_arg(self, tv, a: ts.Node) -> bool:
        """Bind the function-pointer template parameter ``tv`` of a callee to the function the argument
        ``a`` names (``g<load_tiles<mmq_y, nwarps>>(x)``, ``g<&f>(x)``): the file's one function of that
        name, with the argument's own template arguments evaluated here. False when it names nothing
        the file defines once (the call stays unknown)."""
        a = unparen(a)
        if a.type == "pointer_expression":
            a = a.child_by_field_name("argument")
            if a is None:
                return False
        targs = None
        node = a
        if node.type == "type_descriptor" and node.named_child_count == 1:
            node = node.named_children[0]
        if node.type in ("template_type", "template_function"):
            name_node = node.child_by_field_name("name")
            targs = node.child_by_field_name("arguments")
        elif node.type in ("type_identifier", "identifier"):
            name_node = node
        else:
            return False
        if name_node is None:
            return False
        name = self.m.text(name_node)
        got = [h for h in self.m.functions if h.name == name and h.body is not None and not h.is_entry]
        if not got and not any(h.name == name for h in self.m.functions):
            h = header_callable(self.home, name, templates=True)  # a function of the headers next to the file
            got = [h] if h is not None else []
        if len(got) != 1:
            return False
        h = got[0]
        env = {}
        if targs is not None:
            for tp, x in zip(h.template_params.values(), [c for c in targs.named_children if c.type != "comment"]):
                val = self.template_arg_value(x)
                if val is not None:
                    env[id(tp)] = val
        self.callables[id(tv)] = h
        self.callable_env[id(tv)] = env
        return True

    def callable_model(self, g):
        """The model a function bound to a template parameter belongs to: the kernel's file, one of the
        headers next to it (:func:`header_callable`), or None (the walk's current model)."""
        if self.home.function_by_name.get(g.name) is g:
            return self.home
        hit = header_function(self.home, g.name, -1)
        return hit[0] if hit is not None and hit[1] is g else None

    def inline(self, n: ts.Node, g, args: list[ts.Node], fn: ts.Node, bound_env: dict | None = None,
               model=None, bound_types: dict | None = None) -> tuple[float, float]:
        """Walk ``g``'s body at the call ``n``; ``model``: the model ``g`` belongs to when it is not the
        walk's current one (a header's: :mod:`shaderlint.estimate.headers`)."""
        if len(self.active) >= 6 or g in self.active:
            peak, held = self.ev_seq(args)
            res = self.type_cost(g.return_type) if g.return_type.is_known else 1.0
            return max(peak, held, res), res
        if (model is not None and model is not self.m) or self.m is not self.home:
            if g not in self.foreign:  # a header's helper (or one it calls): not the kernel model's
                self.foreign.append(g)
                self.inlined.append(display_name(model or self.m, g))
        elif g not in self.inlined_functions and g not in self.foreign:
            self.inlined_functions.append(g)
            self.inlined.append(display_name(self.m, g))
        frame = _Frame(self.next_frame, {})
        self.next_frame += 1
        saved_env = {}
        saved_callables = {}
        for k, val in (bound_env or {}).items():  # `F(x)` with F bound to `f<4>`: f's arguments
            saved_env[k] = self.env.get(k)
            self.env[k] = val
        # template arguments of the callee: `f<4>(x)`, `f<BM>(x)`, `f<4, load<BM>>(x)`
        if fn.type == "template_function":
            targs = fn.child_by_field_name("arguments")
            kids = [c for c in targs.named_children if c.type != "comment"] if targs is not None else []
            for tv, a in zip(g.template_params.values(), kids):
                val = self.template_arg_value(a)
                if val is not None:
                    saved_env[id(tv)] = self.env.get(id(tv))
                    self.env[id(tv)] = val
                    continue
                # a function-pointer parameter (declared as such or through a typedef)
                prev = (self.callables.get(id(tv)), self.callable_env.get(id(tv)))
                if self.bind_function_arg(tv, a):
                    saved_callables[id(tv)] = prev
        # value parameters the call leaves to their defaults (`template <int nbytes, int alignment = 0>`
        # called as `f<8>(...)`): the compiler instantiates the default
        for tv in g.template_params.values():
            if id(tv) in self.env or tv.decl is None or tv.decl.type != "optional_parameter_declaration":
                continue
            default = tv.decl.child_by_field_name("default_value")
            val = evaluate(model or self.m, default, self.env) if default is not None else None
            if val is not None:
                saved_env[id(tv)] = self.env.get(id(tv))
                self.env[id(tv)] = val
        saved_types = self.deduce_types(g, fn, args, model or self.m)
        items, pack_items = self.pack_arguments(g, args, model or self.m)
        for name, t in (bound_types or {}).items():  # a struct template's parameters (functor instance)
            saved_types.setdefault(name, self.type_env.get(name, _MISSING))
            self.type_env[name] = t
        peak = 0.0
        held = 0.0
        pending = []
        saved_lambdas: dict = {}
        written_back: list = []  # (caller's constant, reference parameter bound to it)
        for p, a in zip(g.params, items):
            if isinstance(a, tuple):  # an element of a parameter pack the call expands (`f(args...)`)
                if a[0] == "value":
                    saved_env[id(p)] = self.env.get(id(p))
                    self.env[id(p)] = a[1]
                else:
                    frame.alias[id(p)] = a[1]
                    if a[1][0] == "pack" and a[1] in self.cost:  # a value a variadic caller held: sized by the parameter
                        self.cost[a[1]] = max(self.cost[a[1]], self.var_cost(p))
                continue
            a0 = unparen(a)
            lam = self.lambda_of(a0)
            if lam is not None:  # `each(n, [&](int i) {...})`: calls of the parameter walk the lambda
                saved_lambdas.setdefault(id(p), self.lambdas.get(id(p)))
                self.lambdas[id(p)] = lam
                continue
            if a0.type == "identifier":
                v = self.m.resolve(a0)
                if v is not None and id(v) in self.env:
                    saved_env[id(p)] = self.env.get(id(p))
                    self.env[id(p)] = self.env[id(v)]
                    if _by_reference(p):  # `int& n` / GLSL `inout`: the callee's writes are the caller's
                        written_back.append((v, p))
                    continue
                if v is not None and v.is_array and is_thread_private(v):
                    frame.alias[id(p)] = ("array", self.frames[-1].id, v)
                    continue
                if v is not None:
                    frame.alias[id(p)] = self.key(v)
                    continue
            val = evaluate(self.m, a, self.env)
            if val is not None:
                saved_env[id(p)] = self.env.get(id(p))
                self.env[id(p)] = val
                continue
            if a0.type == "pointer_expression" and self.m.text(a0.child_by_field_name("operator") or a0) == "&":
                inner = unparen(a0.child_by_field_name("argument"))
                if inner.type == "identifier":
                    v = self.m.resolve(inner)
                    if v is not None:
                        frame.alias[id(p)] = self.key(v)
                        continue
            pa, wa = self.ev(a)
            peak = max(peak, held + pa)
            held += wa
            read = self.scalar_file and self.uniform_read(a)
            if read:
                self._uniform_reads.add(("v", frame.id, id(p)))
            pending.append((p, self.scalar_file and (p.type.kind in ("int", "uint", "bool") or read)
                            and not divergent_expression(self.m, a, self.divergent)))
        if pack_items is not None:  # `template <typename... A> f(A... a)`: the arguments `a` names
            packed = []
            for i, a in enumerate(pack_items):
                if isinstance(a, tuple):
                    packed.append(a)
                    continue
                a0 = unparen(a)
                v = self.m.resolve(a0) if a0.type == "identifier" else None
                if v is not None and not v.is_array:
                    packed.append(("value", self.env[id(v)]) if id(v) in self.env else ("alias", self.key(v)))
                    continue
                val = evaluate(self.m, a, self.env)
                if val is not None:
                    packed.append(("value", val))
                    continue
                pa, wa = self.ev(a)
                peak = max(peak, held + pa)
                held += wa
                key = ("pack", frame.id, i)
                pending.append((key, self.type_cost(self.arg_type(a)) or 1.0))
                packed.append(("alias", key))
            frame.packs = {_pack_param(model or self.m, g.node): packed}
        self.record(max(peak, held))
        saved_divergent = (self.divergent, self._var_shape)
        if self.scalar_file:
            # the helper's own values are uniform where this call's arguments are (NIR inlines it
            # before deciding what is uniform), whatever the helper's other calls pass
            lam = {id(p) for p in g.params if id(p) in self.lambdas}
            div = frozenset(id(p) for p, a in zip(g.params, args) if id(p) not in lam
                            and divergent_expression(self.m, a, self.divergent))
            key = (id(model or self.m), id(g), div)
            self.divergent = divergent_vars_in_call(model or self.m, g, div)
            self._var_shape = self._shapes.setdefault(key, {})
        self.frames.append(frame)
        self.active.append(g)
        caller_model, caller_syntax = self.m, self._syntax
        if model is not None:
            self.m, self._syntax = model, model.__dict__.setdefault("_walk_syntax", {})
        try:
            for p, uniform in pending:  # (AMD: an integer argument the same in every invocation is an SGPR)
                if isinstance(p, tuple):  # a value of the callee's parameter pack: (key, registers)
                    self.define(p, uniform)
                    continue
                self.define(("v", frame.id, id(p)), 0.0 if uniform else self.var_cost(p))
            self.stmt(g.body)
            rt = g.return_type
            if not rt.is_known and bound_types and g.node.child_by_field_name("type") is not None:
                rt = self.resolve_type_text(self.m.text(g.node.child_by_field_name("type")))  # `T`, bound
            res = self.type_cost(rt) if rt.is_known else (0.0 if self.m.text(
                g.node.child_by_field_name("type") or g.node) == "void" else 1.0)
            if self.lang == "cuda" and rt.kind in ("struct", "unknown"):
                got_array = self.array_struct(g.node.child_by_field_name("type"))
                if got_array is not None:  # `AlignedArray<half, N> f(...)`: its elements
                    res = got_array[0] * got_array[1]
                    # the value returned is the callee's local, live up to its `return`: the caller holds
                    # it from the next position on (not both at once)
                    self.step()
            for v, p in written_back:  # the value the callee left in it, or unknown from here on
                after = self.env.get(id(p))
                saved_env.pop(id(v), None)
                if after is None:
                    self.env.pop(id(v), None)
                else:
                    self.env[id(v)] = after
        finally:
            self.m, self._syntax = caller_model, caller_syntax
            self.divergent, self._var_shape = saved_divergent
            self.frames.pop()
            self.active.pop()
            for k, (prev, prev_env) in saved_callables.items():
                if prev is None:
                    self.callables.pop(k, None)
                    self.callable_env.pop(k, None)
                else:
                    self.callables[k] = prev
                    self.callable_env[k] = prev_env
            for k, old in saved_env.items():
                if old is None:
                    self.env.pop(k, None)
                else:
                    self.env[k] = old
            for k, old in saved_types.items():
                if old is _MISSING:
                    self.type_env.pop(k, None)
                else:
                    self.type_env[k] = old
            for k, old in saved_lambdas.items():
                if old is None:
                    self.lambdas.pop(k, None)
                else:
                    self.lambdas[k] = old
        return res, res

    def pack_arguments(self, g, args: list[ts.Node], gm) -> tuple[list, list | None]:
        """The arguments of a call of ``g`` paired with its parameters, with each expansion of a
        function parameter pack (``f(s, args...)``, ``std::forward<A>(a)...``) replaced by the pack's
        elements (see ``_Frame.packs``); and the arguments ``g``'s own pack takes (None: ``g`` has
        none). A pack of unknown length (the kernel's) gives the parameters the other arguments
        leave, as the compiler's instance does."""
        items: list = []
        for a in args:
            name = _expanded_pack(self.m, a) if a.type == "parameter_pack_expansion" else None
            elements = self.pack_elements(name) if name is not None else None
            if elements is None:
                items.append(a)
            else:
                items.extend(elements)
        own = _pack_param(gm, g.node) is not None
        n = len(g.params)
        j = next((i for i, a in enumerate(items) if isinstance(a, tuple) and a[0] == "open"), None)
        if j is not None and j < n:  # the open pack's first elements fill the parameters it reaches
            _, prefix, start = items[j]
            fill = n - j if own else max(0, n - j - (len(items) - j - 1))
            rest = [("open", prefix, start + fill)] if own else []
            items[j:j + 1] = [("alias", prefix + (start + i,)) for i in range(fill)] + rest
        if not own:
            return [a for a in items if not (isinstance(a, tuple) and a[0] == "open")], None
        return items[:n], items[n:]

    def pack_elements(self, name: str) -> list | None:
        """The elements of the function parameter pack ``name`` in the current frame (or a lambda's
        enclosing one), None when no such pack is known."""
        frame = self.frames[-1]
        while frame is not None:
            if frame.packs and name in frame.packs:
                return list(frame.packs[name])
            frame = frame.outer
        return None

    def deduce_types(self, g, fn: ts.Node, args: list[ts.Node], gm) -> dict:
        """Bind ``g``'s type template parameters for its body's walk, as the compiler deduces them: from
        explicit arguments (``f<float2>(x)``) or from the arguments given for parameters declared with
        the bare parameter (``T val``, ``T * p``; llama.cpp's ``block_reduce(mean_var, s_sum2)``
        with a float2). Returns the previous bindings (``_MISSING``: none) to restore."""
        types = {name: tv for name, tv in g.template_params.items()
                 if tv.decl is not None and "type_parameter" in tv.decl.type and "variadic" not in tv.decl.type}
        if not types:
            return {}
        got: dict = {}
        if fn.type == "template_function":
            targs = fn.child_by_field_name("arguments")
            kids = [c for c in targs.named_children if c.type != "comment"] if targs is not None else []
            for (name, tv), a in zip(g.template_params.items(), kids):
                if name in types and a.type == "type_descriptor":
                    t = self.resolve_type_text(self.m.text(a))
                    if t.is_known:
                        got[name] = t
        for p, a in zip(g.params, args):
            tnode = p.decl.child_by_field_name("type") if p.decl is not None else None
            if tnode is None:
                continue
            name = _bare_type_name(gm.text(tnode))
            if name not in types or name in got:
                continue
            t = self.arg_type(a)
            if self.info_pointer(p):
                t = t.pointee if t.kind == "pointer" and t.pointee is not None else UNKNOWN
            if t.is_known and t.kind != "pointer":
                got[name] = t
        saved = {}
        for name, t in got.items():
            saved[name] = self.type_env.get(name, _MISSING)
            self.type_env[name] = t
        return saved

    @staticmethod
    def info_pointer(p) -> bool:
        """Whether parameter ``p`` is declared as a pointer (``T * p``) or array."""
        n = p.node.parent
        while n is not None and n is not p.decl:
            if n.type in ("pointer_declarator", "array_declarator", "abstract_pointer_declarator"):
                return True
            n = n.parent
        return False

    def arg_type(self, a: ts.Node) -> Type:
        """An argument's type, a variable's as this walk binds it (``T x`` with ``T`` bound)."""
        t = self.m.type_of(a)
        if t.is_known:
            return t
        a = unparen(a)
        if a.type == "identifier":
            v = self.m.resolve(a)
            if v is not None:
                inf = self.info(v)
                if inf.pointer or inf.dims:
                    from shaderlint.model.types import pointer_to
                    return pointer_to(inf.elem)
                return inf.elem
        return UNKNOWN

    def lambda_of(self, n: ts.Node):
        """(lambda_expression, its model, the frame it was defined in) when ``n`` is a lambda, a local
        initialised with one (``auto f = [&](int i) {...};``) or a helper's parameter bound to one;
        None otherwise."""
        if n.type == "lambda_expression":
            return n, self.m, self.frames[-1]
        if n.type != "identifier":
            return None
        v = self.m.resolve(n)
        if v is None:
            return None
        got = self.lambdas.get(id(v))
        if got is not None:
            return got
        init = unparen(v.init) if v.init is not None else None
        if init is None or init.type != "lambda_expression" or v.is_param:
            return None
        k = self.key(v)
        frame = next((fr for fr in reversed(self.frames) if isinstance(k, tuple) and len(k) == 3
                      and k[1] == fr.id), self.frames[-1])
        return init, self.m, frame

    def lambda_value(self, n: ts.Node, depth: int = 0):
        """The constant value of integer expression ``n`` where a lambda's parameters given constants
        at its call count as such (``sh[KC ? g : g - 1]``, ``int k2 = k % 2; frag[k2][0]``), and
        single-assignment locals are followed to their initialisers; None if unknown."""
        val = evaluate(self.m, n, self.env)
        if val is not None or depth > 8:
            return val
        if not self.lambda_depth and depth == 0:
            return None
        n = unparen(n)
        t = n.type
        if t == "identifier":
            v = self.m.resolve(n)
            if v is None:
                name = self.m.text(n)
                for fr in reversed(self.frames):
                    if fr.consts and name in fr.consts:
                        return fr.consts[name]
                    if fr.names and name in fr.names or fr.outer is None:
                        return None
                return None
            if v.init is not None and not v.is_array and not v.is_param:
                from shaderlint.estimate.static import reassigned
                if not reassigned(self.m, v):
                    return self.lambda_value(v.init, depth + 1)
            return None
        if t == "binary_expression":
            a = self.lambda_value(n.child_by_field_name("left"), depth + 1)
            b = self.lambda_value(n.child_by_field_name("right"), depth + 1) if a is not None else None
            if a is None or b is None or not isinstance(a, int) or not isinstance(b, int):
                return None
            op = self.m.text(n.child_by_field_name("operator"))
            try:
                return {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
                        "/": lambda: int(a / b), "%": lambda: a - int(a / b) * b, "&": lambda: a & b,
                        "|": lambda: a | b, "^": lambda: a ^ b, "<<": lambda: a << b if 0 <= b < 64 else None,
                        ">>": lambda: a >> b if 0 <= b < 64 else None, "<": lambda: int(a < b),
                        ">": lambda: int(a > b), "<=": lambda: int(a <= b), ">=": lambda: int(a >= b),
                        "==": lambda: int(a == b), "!=": lambda: int(a != b)}.get(op, lambda: None)()
            except ZeroDivisionError:
                return None
        if t == "conditional_expression":
            c = self.lambda_value(n.child_by_field_name("condition"), depth + 1)
            if c is None:
                return None
            return self.lambda_value(n.child_by_field_name("consequence" if c else "alternative"), depth + 1)
        return None

    def lambda_param(self, name: str):
        """(key, registers) of the parameter ``name`` of a lambda being walked."""
        for fr in reversed(self.frames):
            if fr.names and name in fr.names:
                return fr.names[name]
            if fr.outer is None:
                return None
        return None

    def inline_lambda(self, n: ts.Node, args: list[ts.Node], lam: ts.Node, model, home: _Frame
                      ) -> tuple[float, float]:
        """Walk a lambda's body at its call ``n`` (nvcc inlines it): its parameters hold the
        arguments, the variables it captures are the values of the frame it was defined in."""
        body = lam.child_by_field_name("body")
        if body is None or len(self.active) >= 6 or lam in self.active:
            peak, held = self.ev_seq(args)
            return max(peak, held, 1.0), 1.0
        decl = lam.child_by_field_name("declarator")
        plist = decl.child_by_field_name("parameters") if decl is not None else None
        params = [c for c in plist.named_children if c.type in ("parameter_declaration",
                                                                "optional_parameter_declaration")] \
            if plist is not None else []
        frame = _Frame(self.next_frame, {}, outer=home, span=(lam.start_byte, lam.end_byte), names={})
        self.next_frame += 1
        peak = held = 0.0
        for p, a in zip(params, args):
            d = p.child_by_field_name("declarator")
            while d is not None and d.type != "identifier":
                d = d.child_by_field_name("declarator") or next(
                    (c for c in d.named_children if c.type == "identifier"), None)
            pa, wa = self.ev(a)
            peak = max(peak, held + pa)
            held += wa
            if d is None:
                continue
            val = self.lambda_value(a)
            if val is not None:  # `dot(0, e)` in an unrolled loop: constant in the body, as inlined
                frame.consts = frame.consts or {}
                frame.consts[model.text(d)] = val
            tnode = p.child_by_field_name("type")
            t = self.resolve_type_text(model.text(tnode)) if tnode is not None else UNKNOWN
            pointer = any(c.type in ("pointer_declarator", "abstract_pointer_declarator") for c in p.named_children)
            cost = 2.0 if pointer else (self.type_cost(t) if t.is_known else max(wa, 1.0))
            frame.names[model.text(d)] = (("l", frame.id, model.text(d)), cost)
        self.record(max(peak, held))
        self.frames.append(frame)
        self.active.append(lam)
        self.lambda_depth += 1
        caller_model, caller_syntax = self.m, self._syntax
        if model is not self.m:
            self.m, self._syntax = model, model.__dict__.setdefault("_walk_syntax", {})
        try:
            for key, cost in frame.names.values():
                self.define(key, cost)
            if body.type == "compound_statement":
                self.stmt(body)
            else:
                self.step()
                self.record(self.ev(body)[0])
            returns = self._syntax.get(("returns", body.id))  # (the lambda's syntax: per model)
            if returns is None:
                returns = self._syntax[("returns", body.id)] = _returns_value(body)
            res = 1.0 if returns else 0.0
        finally:
            self.m, self._syntax = caller_model, caller_syntax
            self.lambda_depth -= 1
            self.active.pop()
            self.frames.pop()
        return res, res

    # ---- assignments and memory ------------------------------------------------------------------------
    def assign_to(self, left: ts.Node | None, right: ts.Node | None, compound: bool, op: str = "=") -> tuple[float, float]:
        if left is None:
            return self.ev(right)
        if left.type == "parenthesized_expression":
            left = unparen(left)
        pr, wr = self.ev(right) if right is not None else (0.0, 0.0)
        extra = 0.0
        if op in ("/=", "%=") and right is not None and evaluate(self.m, right, self.env) is None:
            opn = left.parent.child_by_field_name("operator") if left.parent is not None else None
            if opn is None or self.costly_division(opn):
                lt, rt = self.m.type_of(left), self.m.type_of(right)
                if lt.is_integer and rt.is_integer:
                    extra = self.c.int_div
        if left.type == "identifier":
            try:  # (resolve's memo read in place)
                v = self.m._resolve_cache[left.id]
            except KeyError:
                v = self.m.resolve(left)
            if v is None or v.template_param:
                return pr + extra, 0.0
            register = self.is_register_var(v)  # (nothing below changes it before it is read again)
            if register or id(v) in self.env:
                # constant propagation through straight-line code (and unrolled iterations)
                val = self.assigned_value(v, right, op)
                if val is not None:
                    self.env[id(v)] = val
                    return pr + extra, 0.0
                if id(v) in self.env:
                    self.env.pop(id(v), None)
                    self.def_var(v)
                    return max(pr, wr) + extra, 0.0
            if not register:
                return max(pr, wr) + extra + (1.0 if v.is_global or v.address_space else 0.0), 0.0
            if compound:
                self.use_var(v)
            self.def_var(v)
            return max(pr, wr) + extra, 0.0
        if left.type == "subscript_expression":
            p, w = self.access(left, write=True, rhs=(pr, wr), compound=compound)
            return p + extra, w
        if left.type == "field_expression":
            arg = left.child_by_field_name("argument")
            opn = left.child_by_field_name("operator")
            if arg is not None and opn is not None and self.m.text(opn) == "->":
                p, w = self.memory(left, unparen(arg), [], write=True, rhs=(pr, wr))
                return p + extra, w
            base = unparen(arg) if arg is not None else None
            fname = self.m.text(left.child_by_field_name("field") or left)
            if base is not None and base.type == "subscript_expression":
                p, w = self.access(base, write=True, rhs=(pr, wr), compound=compound, field=fname)
                return p + extra, w
            if base is not None and base.type == "identifier":
                v = self.m.resolve(base)
                if v is not None and self.is_register_var(v):
                    comps = self.pick(self.var_table(v), fname)
                    if compound or comps is None:
                        self.use_var(v, comps)
                    self.def_var(v, comps)
                    return max(pr, wr) + extra, 0.0
                return max(pr, wr) + extra + (1.0 if v is not None and (v.is_global or v.address_space) else 0.0), 0.0
            if base is not None and base.type == "field_expression":
                return self.assign_to(base, right, compound=True)
            return pr + extra, 0.0
        if left.type == "pointer_expression":
            arg = left.child_by_field_name("argument")
            if arg is not None:
                return self.memory(left, unparen(arg), [], write=True, rhs=(pr, wr))
        return max(pr, wr) + extra, 0.0

    def costly_division(self, opn: ts.Node) -> bool:
        """False when a what-if makes the divisor of the operator ``opn`` a constant."""
        self.cheap_checked.add(opn.start_byte)
        span = [self.pos, None]
        self.division_spans.setdefault(opn.start_byte, []).append(span)
        self._open_spans.append(span)
        return opn.start_byte not in self.cheap

    def peak_without(self, cheap) -> bool:
        """True when making the divisions at operator offsets ``cheap`` constant provably leaves the
        peak as it is: the positions where they were costed can only go down, and the peak is
        reached at a position none of them weighs on. (False: walk again to know.)"""
        here = self._here
        if not here:
            return False
        end = len(here) - 1
        spans = sorted((max(0, a), min(end, b if b is not None else end))
                       for d in cheap for a, b in self.division_spans.get(d, ()))
        best = 0.0
        at = 0
        for a, b in spans:
            if a > at:
                best = max(best, max(here[at:a]))
            at = max(at, b + 1)
        if at <= end:
            best = max(best, max(here[at:]))
        return best >= max(here)

    def assigned_value(self, v, right: ts.Node | None, op: str):
        """The constant ``v`` holds after ``v op right``, or None."""
        if right is None:
            return None
        rhs = evaluate(self.m, right, self.env)
        if rhs is None:
            return None
        if op == "=":
            return rhs
        cur = self.env.get(id(v))
        if cur is None:
            return None
        from shaderlint.model.consteval import c_binary
        try:
            return c_binary(op[:-1], cur, rhs)
        except (ValueError, ArithmeticError):
            return None

    def assigned_vars(self, node: ts.Node) -> list:
        """Variables assigned (``=``, ``op=``, ``++``) inside ``node`` (memoized per model: shared, not to
        be modified)."""
        got = self._syntax.get(("assigned", node.id))
        if got is None:
            got = self._syntax[("assigned", node.id)] = self._assigned_vars(node)
        return got

    def _assigned_vars(self, node: ts.Node) -> list:
        out = []
        for a in self.m.nodes("assign") + self.m.nodes("update"):
            if node.start_byte <= a.start_byte < node.end_byte:
                target = a.child_by_field_name("left") or a.child_by_field_name("argument")
                if target is not None and unparen(target).type == "identifier":
                    v = self.m.resolve(unparen(target))
                    if v is not None and not v.template_param:
                        out.append(v)
        return out

    def forget(self, node: ts.Node | None) -> None:
        """Variables assigned in ``node`` (a runtime loop, a branch) no longer hold a known constant."""
        if node is None:
            return
        for v in self.assigned_vars(node):
            if id(v) in self.env:
                self.env.pop(id(v), None)
                self.def_var(v)

    def chain(self, n: ts.Node) -> tuple[ts.Node, list[ts.Node | None]]:
        """Base expression and indices (outermost first) of ``a[i][j]`` (shared: not to be modified)."""
        key = ("chain", n.id)
        got = self._syntax.get(key)
        if got is None:
            got = self._syntax[key] = self._chain(n)
        return got

    @staticmethod
    def _chain(n: ts.Node) -> tuple[ts.Node, list[ts.Node | None]]:
        idx: list[ts.Node | None] = []
        while n.type == "subscript_expression":
            idx.append(subscript_index(n))
            n = unparen(n.child_by_field_name("argument"))
        idx.reverse()
        return n, idx

    def array_target(self, base: ts.Node):
        """(frame id, Var) when ``base`` names a thread-private array (directly or via an inlined parameter)."""
        if base.type != "identifier":
            return None
        v = self.m.resolve(base)
        if v is None:
            return None
        return self.array_of(v)

    def array_of(self, v):
        """:meth:`array_target` of the variable ``v``."""
        if v.is_param:  # (``inline`` aliases parameters only)
            for fr in reversed(self.frames):
                a = fr.alias.get(id(v))
                if isinstance(a, tuple) and a and a[0] == "array":
                    return a[1], a[2]
        private = self._private_array.get(id(v))  # (a property of the variable: memoized per walk)
        if private is None:
            private = self._private_array[id(v)] = v.is_array and is_thread_private(v) and not v.is_param \
                and not is_constant_array(self.m, v)
        if private:
            return self.frames[-1].id, v
        return None

    def access(self, n: ts.Node, write: bool, rhs: tuple[float, float] | None = None, compound: bool = False,
               address_only: bool = False, field: str | None = None) -> tuple[float, float]:
        """``a[i]…`` read or written; ``field`` when only ``a[i].x`` is touched."""
        parts = self._syntax.get(("access", n.id))  # (base, indices, the base's variable: per model)
        if parts is None:
            base, idx = self.chain(n)
            parts = self._syntax[("access", n.id)] = (
                base, idx, self.m.resolve(base) if base.type == "identifier" else None)
        base, idx, bv = parts
        if bv is None and base.type == "field_expression" and self.lang == "cuda":
            bv = self.array_member(base)  # `yv.v[j]`: element j of an array in a struct (``array_struct``)
            base = base.child_by_field_name("argument") if bv is not None else base
        if bv is not None:
            private = None if bv.is_param else self._private_array.get(id(bv))
            if private is None:
                tgt = self.array_of(bv)
            else:  # (array_of's answer from its memo, read in place)
                tgt = (self.frames[-1].id, bv) if private else None
        else:
            tgt = None
        if tgt is None and bv is not None and self.ptr_alias:
            tgt = self.ptr_alias.get(id(bv))
        rp, rw = rhs if rhs else (0.0, 0.0)
        if tgt is None:
            if bv is not None and self.is_register_var(bv) and bv.type.kind != "pointer":
                # a vector/matrix component of a local value
                vals = [evaluate(self.m, i, self.env) if i is not None else None for i in idx]
                peak, _ = self.ev_seq([i for i, x in zip(idx, vals) if i is not None and x is None])
                table = self.var_table(bv)
                comps = ["xyzw"[int(vals[0])]] if table and len(vals) == 1 and vals[0] is not None \
                    and 0 <= int(vals[0]) < min(len(table), 4) else None
                if comps and 0 in table:  # an array in a struct (``array_struct``): element k
                    comps = [int(vals[0])]
                if write:
                    if compound or comps is None:
                        self.use_var(bv, comps)
                    self.def_var(bv, comps)
                    return max(peak, rp), 0.0
                self.use_var(bv, comps)
                return peak, 0.0
            if bv is not None and is_constant_array(self.m, bv):
                vals = [evaluate(self.m, i, self.env) if i is not None else None for i in idx]
                if all(v is not None for v in vals):
                    return 0.0, 0.0
            return self.memory(n, base, idx, write, rhs, compound=compound, address_only=address_only)
        frame_id, v = tgt[:2]
        vid = id(v)
        inf = self._info.get(vid) or self.info(v)
        m, env = self.m, self.env
        if len(idx) == 1:  # (the one index of most accesses)
            i = idx[0]
            vals = [_evaluate_memo(m, i, env) if i is not None else None]
        else:
            vals = [_evaluate_memo(m, i, env) if i is not None else None for i in idx]
        if len(tgt) == 3 and vals and isinstance(vals[0], int):
            vals[0] += tgt[2]  # through a pointer into the array
        if self.lambda_depth and None in vals:
            vals = [x if x is not None or i is None else self.lambda_value(i) for x, i in zip(vals, idx)]
        dynamic = None in vals
        if dynamic:
            idx_peak, idx_w = self.ev_seq([i for i, x in zip(idx, vals) if i is not None and x is None])
        else:  # (every index constant: nothing to evaluate)
            idx_peak = idx_w = 0.0
        el, table = (self._var_shape.get(vid) or self.shape(v))[2:]
        if field is not None and table is not None and not dynamic:
            el = sum(table[c] for c in (self.pick(table, field) or table))
        in_registers = self._in_registers.get(vid)  # (in_registers' memo read in place)
        if in_registers is None:
            in_registers = self.in_registers(v)
        if not in_registers or (dynamic and vid not in self.promote and not self.indexed_in_registers(v)):
            if dynamic:
                self.mark_dynamic(v)
            peak = max(idx_peak, idx_w + 1.0)
            if write:
                return max(peak, rp + 1.0 + idx_w, rw + 1.0), 0.0
            return max(peak, el), el
        self.arrays[vid] = v
        if write and compound and self.unit == 32 and self.lang == "cuda" and inf.elem.kind == "float" \
                and inf.elem.bits == 16 and inf.elem.width == 1 and table is None:
            self.packed.add(vid)  # `buf[j] += r[j]`, `buf[j] *= g` in half: pairs (pack_pairs)
        elif not write and vid not in self.packed and self.unit == 32 and self.lang == "cuda" \
                and inf.elem.kind == "float" and inf.elem.bits == 16 and inf.elem.width == 1 and table is None \
                and self.half_operand(n):
            self.packed.add(vid)  # `a[k] * q[k] + b[k] * p[k]` in half: pairs too (pack_pairs)
        if dynamic:
            elems = self.element_indices(inf.dims, ())
        else:
            nd = len(inf.dims)
            prefix = tuple([int(x) for x in vals[:nd]])
            # (every dimension indexed: the one element, as element_indices would list it)
            elems = (prefix,) if len(vals) >= nd else self.element_indices(inf.dims, prefix)
        comps = self.pick(table, field) if field is not None else None
        if table is None:  # (one key per element: use_keys and def_keys, inlined)
            use, define = self.use, self.define
            if write and not compound:
                for i in elems:
                    define(("e", frame_id, vid, i), el)
            else:
                for i in elems:
                    k = ("e", frame_id, vid, i)
                    use(k, el)
                    if write:
                        define(k, el)
        else:
            for i in elems:
                k = ("e", frame_id, vid, i)
                if write and not compound and (comps is not None or field is None):
                    self.def_keys(k, table, comps, el)
                else:
                    self.use_keys(k, table, comps, el)
                    if write:
                        self.def_keys(k, table, comps, el)
        if write:
            return max(idx_peak, rp), 0.0
        return idx_peak, 0.0

    def half_operand(self, n: ts.Node) -> bool:
        """Whether the element ``n`` is an operand of a ``+``, ``-`` or ``*`` whose other operand is a
        16-bit float too (half arithmetic, which nvcc computes on pairs: ptxas, nvcc 13.0, sm_80/sm_90,
        four arrays of 8 halves loaded 16 bytes at a time and combined as `a[k] = a[k] * q[k] + b[k] *
        p[k]` take 24/26 registers, the same on 4 floats 28/30)."""
        p = n.parent
        while p is not None and p.type == "parenthesized_expression":
            n, p = p, p.parent
        if p is None or p.type != "binary_expression":
            return False
        op, _, left, right = binary_parts(self.m, p)
        if op not in ("+", "-", "*"):
            return False
        other = unparen(right if left is not None and left.id == n.id else left) if left is not None \
            and right is not None else None
        if other is None:
            return False
        base = self.chain(other)[0] if other.type == "subscript_expression" else other
        v = self.m.resolve(base) if base.type == "identifier" else None
        t = self.info(v).elem if v is not None and (other.type == "subscript_expression" or not v.is_array) \
            else self.m.type_of(other)
        return t.kind == "float" and t.bits == 16 and t.width == 1

    def touch_array(self, v, prefix) -> None:
        if not self.in_registers(v):
            return
        self.held.add(id(v))
        inf = self.info(v)
        el, table = self.shape(v)[2:]
        for i in self.element_indices(inf.dims, ()):
            self.use_keys(("e", self.frames[-1].id, id(v), i), table, None, el)

    def memory(self, n: ts.Node, base: ts.Node, idx: list, write: bool, rhs=None, compound: bool = False,
               address_only: bool = False) -> tuple[float, float]:
        pb, wb = self.ev(base) if base.type not in ("identifier",) else self.ev_ident(base)
        m, env = self.m, self.env
        consts = [_evaluate_memo(m, i, env) if i is not None else None for i in idx]
        var_idx = [i for i, c in zip(idx, consts) if i is not None and c is None]
        ip, iw = self.ev_seq(var_idx) if var_idx else (0.0, 0.0)
        bv = self.m.base_var(base) if base is not None else None
        space = (bv.address_space if bv is not None else None) or ""
        if space in ("threadgroup", "shared") or (bv is not None and "__shared__" in bv.qualifiers):
            addr = 1.0
        elif space in ("constant", "uniform", "push_constant") and not var_idx:
            addr = 0.0
        else:
            addr = self.c.address
        if var_idx and bv is not None and addr >= 2:
            for lp in reversed(self.loops):
                if not lp.unrolled:
                    lp.streams.add(id(bv))
                    break
        el = self.wt(n) if not address_only else 0.0
        if not write and not address_only and self.lang == "cuda" and not (
                bv is not None and "volatile" in bv.qualifiers):
            # the same address read again in the statement (`q[l] & 3 ... (q[l] >> 2) & 3`, ctransformers'
            # dequantize_mul_mat_vec_q2_k): nvcc loads it once; the value is a register, no load in flight
            syn = self._syntax.get(("seen", n.id))  # (the expression's text and dependencies: per model)
            if syn is None:
                syn = self._syntax[("seen", n.id)] = (m.text(n), _dependencies(m, n))
            key = (syn[0], self.frames[-1].id, tuple([env.get(d) for d in syn[1]]))
            if key in self.stmt_seen:
                return max(pb, el), el
            self.stmt_seen.add(key)
        peak = max(pb, wb + ip, wb + iw + addr)  # computing the address
        if write:
            rp, rw = rhs if rhs else (0.0, 0.0)
            if compound:  # load through the address, combine, store back
                return max(peak, addr + max(rp, el + rw), addr + el), 0.0
            # value first or address first, whichever needs fewer registers
            order = min(max(peak, addr + rp), max(rp, rw + peak))
            return max(order, addr + rw), 0.0
        if address_only:
            return peak, addr
        if self.loops:
            self.loops[-1].loads += el
            if self.branch_depths and self.branch_depths[-1]:
                # under a branch inside the loops opened before it: the innermost loop unrolled at
                # run time among them (and the unrolled ones inside it) has a branchy body
                for lp in reversed(self.loops[:self.branch_depths[-1]]):
                    lp.branchy = True
                    if not lp.unrolled:
                        break
        self.stmt_loads += el
        return max(peak, el), el

    # ---- arrays: registers or stack ------------------------------------------------------------------
    def in_registers(self, v) -> bool:
        got = self._in_registers.get(id(v))  # (fixed for the walk: the sets and ``info`` are)
        if got is None:
            got = self._in_registers[id(v)] = self._in_registers_uncached(v)
        return got

    def _in_registers_uncached(self, v) -> bool:
        if id(v) in self.promote:
            return True
        if id(v) in self.stack_vars or id(v) in self.demote:
            return False
        inf = self.info(v)
        count = inf.count
        return count is not None and count * self.type_cost(inf.elem) <= self.c.max_array_registers

    def mark_dynamic(self, v) -> None:
        if id(v) not in self.promote and not self.indexed_in_registers(v):
            self.dynamic[id(v)] = v

    def indexed_in_registers(self, v) -> bool:
        """AMD: a thread-private array indexed at run time stays in VGPRs up to ``amd_indexed_array``
        registers (ACO indexes registers; measured with RADV 22.3: 64 floats in VGPRs, 65 in scratch)."""
        if self.target.vendor != "amd":
            return False
        inf = self.info(v)
        count = inf.count
        return count is not None and count * self.type_cost(inf.elem) <= self.c.amd_indexed_array

    # ---- the peak ---------------------------------------------------------------------------------------
    def _last_at_least(self, at: int) -> tuple:
        """Keys whose last use is at or after ``at`` (at most ``pos + 1``): they were all touched at
        the current position, so they are found at the end of ``touched``."""
        out = []
        lasts, pos = self.last, self.pos
        for k in reversed(self.touched):
            last = lasts[k]
            if last < pos:
                break
            if last >= at:
                out.append(k)
        return tuple(out)

    def peak(self, hoisted: bool = True, nests: bool = False) -> float:
        """The most registers live at once; ``hoisted=False``: without the loads of further loop
        iterations in flight (``hoists``), and without recording ``_here``; ``nests=True`` (with
        ``hoisted=False``): with the loads in flight of the loops unrolled at compile time only."""
        keys = self.__dict__.get("_key_diff")
        if keys is None:
            end = max([self.pos + 2] + list(self.last.values())) + 2
            diff = [0.0] * (end + 2)
            cost, last = self.cost, self.last
            for k, s in self.first.items():
                c = cost[k]
                if not c:
                    continue
                diff[s] += c
                diff[last[k] + 1] -= c
            if self.__dict__.get("_walked"):  # (after the walk: the same sums for every peak asked)
                self._key_diff = (end, diff)
                diff = list(diff)
        else:
            end, diff = keys[0], list(keys[1])
        for s, e, amount in (self.regions + self.hoists if hoisted else
                             self.regions + self.nest_hoists if nests else self.regions):
            diff[max(0, s)] += amount
            diff[min(end, e) + 1] -= amount
        # the running sum of ``diff`` (the same additions in the same order as a loop would make), plus
        # the temporaries recorded at the few positions ``extra`` holds (adding 0.0 elsewhere changes nothing)
        out = list(accumulate(diff[:end + 1], initial=0.0))
        del out[0]
        if hoisted:
            self._here = out
        for p, x in self.extra.items():
            if p <= end:
                out[p] += x
        if hoisted and self.fills:
            level = self.fill_level()
            for s, e in self.fills:
                a, b = max(0, s), min(end, e) + 1
                if a < b:  # (each position below the level raised to it, in one pass over the span)
                    out[a:b] = [level if x < level else x for x in out[a:b]]
        return max(0.0, max(out))

    def fill_level(self) -> float:
        """The live registers ptxas lets a loop's batched loads reach: the registers per thread of
        full occupancy in whole allocation units, at most 40, less one, less ``base``. Measured with
        nvcc 13.0 (one to four loads per iteration): sm_80/sm_90 (65536 / 2048 = 32) 29-31, sm_86/sm_89
        (65536 / 1536: 40) 35-39, sm_75 (64) 38-62."""
        t = self.target
        unit = max(1, t.register_alloc_unit // max(1, t.simd_width))
        full = min(40, t.registers_per_core // max(1, t.max_threads_per_core) // unit * unit)
        return max(0.0, full - 1 - self.c.base)


_TEMPLATE_ARGS = re.compile(r"<[^<>]*>")


def _literal_visits(init: ts.Node) -> int | None:
    """The visits :meth:`Walker.ev_seq` makes of the items of the initializer list ``init`` when they
    are literals or lists of literals (nothing else happens then), else None."""
    n = 0
    for c in init.named_children:
        if c.type == "comment":
            continue
        if c.type == "initializer_list":
            inner = _literal_visits(c)
            if inner is None:
                return None
            n += 1 + inner
        elif _EV_KIND.get(c.type) == 0:
            n += 1
        else:
            return None
    return n


def _descendants(n: ts.Node):
    """``n`` and every node below it (preorder)."""
    stack = [n]
    while stack:
        x = stack.pop()
        yield x
        stack.extend(x.children)


def _included_global(model, name: str):
    """The global ``name`` of a file ``model`` includes (the first header declaring it; memoized)."""
    memo = model.__dict__.setdefault("_included_globals", {})
    if name not in memo:
        from shaderlint.estimate.headers import _load, header_paths

        memo[name] = None
        for hp in header_paths(model):
            hm = _load(hp, model)
            got = next((g for g in hm.globals if g.name == name), None) if hm is not None else None
            if got is not None:
                memo[name] = got
                break
    return memo[name]


#: GLSL built-ins with out parameters: their positions (GLSL 4.60 spec, 8.3 and 8.8).
_GLSL_OUT_ARGS = {"umulExtended": (2, 3), "imulExtended": (2, 3), "uaddCarry": (2,), "usubBorrow": (2,),
                  "frexp": (1,), "modf": (1,)}
_OUT_QUALIFIERS = frozenset({"out", "inout"})


def _alias_of(model, at: ts.Node, name: str) -> ts.Node | None:
    """The type a ``using name = ...;`` alias visible at ``at`` stands for (the innermost block, struct
    body or the file declaring it), or None."""
    try:
        memo = model._walk_aliases
    except AttributeError:
        memo = model._walk_aliases = {}
    n = at.parent
    while n is not None:
        if n.type in ("compound_statement", "field_declaration_list", "translation_unit", "declaration_list"):
            aliases = memo.get(n.id)
            if aliases is None:  # (a scope's aliases, found once per model)
                aliases = memo[n.id] = {}
                for c in n.named_children:
                    if c.type == "alias_declaration":
                        nm = c.child_by_field_name("name")
                        if nm is not None:
                            aliases[model.text(nm)] = c.child_by_field_name("type")
            got = aliases.get(name)
            if got is not None:
                return got
        n = n.parent
    return None


def _overloaded(model) -> dict:
    """Names ``model`` defines more than once (with a body, not kernels) -> their definitions
    (memoized per model)."""
    got = model.__dict__.get("_overloads")
    if got is None:
        by: dict = defaultdict(list)
        for g in model.functions:
            if g.body is not None and not g.is_entry:
                by[g.name].append(g)
        got = model._overloads = {k: v for k, v in by.items() if len(v) > 1}
    return got


def _returns_value(body: ts.Node) -> bool:
    """Whether a lambda's body returns a value (not counting lambdas nested in it)."""
    stack = [body]
    while stack:
        c = stack.pop()
        if c.type == "return_statement" and c.named_child_count and c.named_children[0].type != "comment":
            return True
        if c.type != "lambda_expression":
            stack.extend(c.named_children)
    return body.type != "compound_statement"


def _classes(model) -> dict:
    """Class and struct definitions (with a body) of ``model`` by name (memoized per model)."""
    got = model.__dict__.get("_class_defs")
    if got is None:
        got = model._class_defs = {}
        stack = [model.root]
        while stack:
            c = stack.pop()
            if c.type in ("class_specifier", "struct_specifier"):
                name, body = c.child_by_field_name("name"), c.child_by_field_name("body")
                if name is not None and body is not None:
                    got.setdefault(model.text(name).split("::")[-1], []).append(c)
            if c.type in ("translation_unit", "namespace_definition", "declaration_list", "class_specifier",
                          "struct_specifier", "field_declaration_list", "template_declaration",
                          "preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "linkage_specification",
                          "field_declaration", "declaration", "type_definition"):
                stack.extend(c.named_children)
    return got


def _methods(model, cls: ts.Node, name: str) -> list[ts.Node]:
    """Definitions of method ``name`` in the body of class ``cls``."""
    body = cls.child_by_field_name("body")
    out = []
    for c in body.named_children if body is not None else ():
        if c.type == "template_declaration":
            c = next((x for x in c.named_children if x.type == "function_definition"), c)
        if c.type != "function_definition":
            continue
        d = c.child_by_field_name("declarator")
        while d is not None and d.type in ("reference_declarator", "pointer_declarator"):
            d = next((x for x in d.named_children if x.type.endswith("declarator")), None)
        inner = d.child_by_field_name("declarator") if d is not None else None
        if inner is not None and model.text(inner).replace(" ", "") == name:
            out.append(c)
    return out


def _one_class(model, name: str, inside: ts.Node | None = None) -> ts.Node | None:
    """The one definition of class ``name`` in ``model`` (nested in ``inside`` first)."""
    cands = _classes(model).get(name.split("::")[-1].split("<")[0].strip(), [])
    if inside is not None:
        nested = [c for c in cands if inside.start_byte < c.start_byte < inside.end_byte]
        if len(nested) == 1:
            return nested[0]
    return cands[0] if len(cands) == 1 else None


def range_iterator(model, home, right: ts.Node):
    """(iterator field types, loop variable type or None, the variable is one of the iterator's fields)
    for a range-based ``for`` over ``right``: an object of a class the file (``model``) or the headers
    next to it (``home``'s) define once, built in place (``grid_stride_range(0, n)``) or a variable of
    that class, whose ``begin()`` returns a class with fields or a pointer. None otherwise
    (memoized per kernel model, model and node)."""
    # on the kernel's model: a header's model is shared by its includers, whose headers differ
    memo = home.__dict__.setdefault("_range_iterators", {})
    key = (id(model), right.id)
    if key in memo:
        return memo[key][1]
    got = _range_iterator(model, home, right)
    memo[key] = (model, got)  # the model kept alive with its answer: its id is not reused
    return got


def _range_iterator(model, home, right: ts.Node):
    r = unparen(right)
    if r.type == "call_expression":
        fn = r.child_by_field_name("function")
        cname = model.text(fn) if fn is not None and fn.type in ("identifier", "qualified_identifier",
                                                                  "template_function") else None
    elif r.type == "identifier":
        v = model.resolve(r)
        tnode = v.decl.child_by_field_name("type") if v is not None and v.decl is not None else None
        cname = model.text(tnode) if tnode is not None else None
    else:
        return None
    if not cname:
        return None
    cname = cname.split("<")[0].split("::")[-1].strip()
    owner_model, cls = model, _one_class(model, cname)
    if cls is None:
        from shaderlint.estimate.headers import _lookup
        hits = {id(c): (hm, c) for hm, g in _lookup(home, cname) for c in [g.node.parent.parent]
                if g.node.parent is not None and g.node.parent.type == "field_declaration_list"
                and c.type in ("class_specifier", "struct_specifier")}
        if len(hits) != 1:
            return None
        owner_model, cls = next(iter(hits.values()))
    m = owner_model
    begin = _methods(m, cls, "begin")
    if len(begin) != 1:
        return None
    rtype = begin[0].child_by_field_name("type")
    decl = begin[0].child_by_field_name("declarator")
    if rtype is None:
        return None
    if decl is not None and decl.type == "pointer_declarator":  # `T* begin()`: a pointer pair
        return (pointer_of(),), m.parse_type(rtype), False, True, None
    it = _one_class(m, m.text(rtype), inside=cls)
    if it is None:
        return None
    fields = []
    body = it.child_by_field_name("body")
    for fd in body.named_children if body is not None else ():
        if fd.type != "field_declaration" or fd.child_by_field_name("declarator") is None:
            continue
        if any(c.type == "function_declarator" for c in fd.children_by_field_name("declarator")):
            continue
        if "static" in m.text(fd).split("(")[0].split():
            continue
        for d in fd.children_by_field_name("declarator"):
            fields.append(pointer_of() if d.type == "pointer_declarator" else m.parse_type(fd.child_by_field_name("type")))
    if not fields:
        return None
    elem, alias = None, False
    star = _methods(m, it, "operator*")
    if len(star) == 1:
        st = star[0].child_by_field_name("type")
        elem = m.parse_type(st) if st is not None else None
        fbody = star[0].child_by_field_name("body")
        stmts = [c for c in fbody.named_children if c.type != "comment"] if fbody is not None else []
        if len(stmts) == 1 and stmts[0].type == "return_statement" and stmts[0].named_child_count == 1:
            ret = unparen(stmts[0].named_children[0])
            if ret.type == "field_expression" and model.text(ret.child_by_field_name("argument")) == "this":
                ret = ret.child_by_field_name("field")
            names = {m.text(d) for fd in body.named_children if fd.type == "field_declaration"
                     for d in fd.children_by_field_name("declarator")}
            alias = ret is not None and ret.type in ("identifier", "field_identifier") and m.text(ret) in names
    return tuple(fields), elem, alias, _additive_increment(m, it), _computed_step(m, it)


def _additive_increment(m, it: ts.Node) -> bool:
    """Whether the iterator class ``it``'s ``operator++`` only adds to one of its fields (``p += s;
    return *this;``): the loop is then a counted loop like ``for (i = b; i < e; i += s)``."""
    inc = _methods(m, it, "operator++")
    if not inc:
        return False
    body = inc[0].child_by_field_name("body")
    stmts = [c for c in body.named_children if c.type != "comment"] if body is not None else []
    ops = [c.named_children[0] for c in stmts if c.type == "expression_statement" and c.named_child_count == 1]
    rest = [c for c in stmts if c.type != "expression_statement"]
    if len(ops) != 1 or any(c.type != "return_statement" for c in rest):
        return False
    op = ops[0]
    if op.type == "update_expression":
        return True
    if op.type == "assignment_expression":
        o = op.child_by_field_name("operator")
        left = op.child_by_field_name("left")
        return o is not None and m.text(o) in ("+=", "-=") \
            and _no_wrap(m, op, m.type_of(left) if left is not None else UNKNOWN, {})
    return False


_GEOMETRY_INDEX = re.compile(r"^(threadIdx|blockIdx)\.[xyz]$")
_GEOMETRY_DIM = re.compile(r"^(blockDim|gridDim)\.[xyz]$")


def _uncast(m, n: ts.Node) -> str:
    """``n``'s text without parentheses and casts (``(int64_t) blockDim.x`` -> ``blockDim.x``)."""
    n = unparen(n)
    while n.type == "cast_expression" and n.child_by_field_name("value") is not None:
        n = unparen(n.child_by_field_name("value"))
    return "".join(m.text(n).split())


def _computed_step(m, it: ts.Node) -> Type | None:
    """The type of the step an iterator class's ``operator++`` adds when it is computed (``p_ +=
    (size_t)gridDim.x * blockDim.x``: held in a register through the loop, see
    ``Walker.invariant_step``), else None."""
    inc = _methods(m, it, "operator++")
    body = inc[0].child_by_field_name("body") if inc else None
    for c in body.named_children if body is not None else ():
        if c.type == "expression_statement" and c.named_child_count == 1 \
                and c.named_children[0].type == "assignment_expression":
            st = c.named_children[0].child_by_field_name("right")
            inner = unparen(st) if st is not None else None
            while inner is not None and inner.type == "cast_expression":
                inner = unparen(inner.child_by_field_name("value"))
            if inner is not None and inner.type == "binary_expression" and m.const_value(st) is None:
                t = m.type_of(st)
                return t if t.is_known else UNKNOWN
    return None


def _no_wrap(m, update: ts.Node, counter: Type, env: dict) -> bool:
    """Whether ``update`` (``c++``, ``c += s``) steps a counter of type ``counter`` without wrapping, so
    that the compiler can count the loop's trips (CUDA: NVVM unrolls a runtime loop only then): a step
    of one, or a signed addition — a signed counter, and a step that does not make the sum unsigned
    (C's conversions: ``int c; c += blockDim.x`` adds in unsigned, ``long c; c += blockDim.x *
    gridDim.x`` in signed 64 bits). Measured with nvcc 13.0: ``unsigned c; c += 32``, ``size_t c; c +=
    stride`` and ``int c; c += blockDim.x`` are left rolled (one load per iteration in the PTX), ``int
    c; c += st`` and ``long c; c += blockDim.x * gridDim.x`` are unrolled by 4. (Unknown types: counted.)"""
    u = unparen(update)
    if u.type == "update_expression":
        return True
    step = u.child_by_field_name("right")
    if step is None or evaluate(m, step, env) in (1, -1):
        return True
    st = m.type_of(step)
    if counter.kind == "uint":
        return False
    return not (st.kind == "uint" and (not counter.is_known or st.bits >= counter.bits))


def pointer_of():
    from shaderlint.model.types import pointer_to
    return pointer_to(UNKNOWN)


def _power_of_two(x) -> bool:
    """Whether the constant ``x`` is ±2**k (a float division by it is exact as a multiplication)."""
    try:
        m, _ = math.frexp(abs(float(x)))
    except (TypeError, ValueError, OverflowError):
        return False
    return m == 0.5


def _by_reference(p) -> bool:
    """Whether parameter ``p`` is bound to its argument's storage: a C++ reference (``int& n``, not
    ``const``) or a GLSL ``out``/``inout`` parameter, so the callee's writes reach the caller's variable."""
    from shaderlint.model.memory import is_reference

    quals = getattr(p, "qualifiers", frozenset())
    if "out" in quals or "inout" in quals:
        return True
    return not (p.is_const or "const" in quals) and is_reference(p)


def _pack_param(model, fn: ts.Node) -> str | None:
    """The name of the function parameter pack of the function defined at ``fn`` (``A... a``,
    ``A&&... a``), or None (memoized per model)."""
    memo = model.__dict__.setdefault("_pack_params", {})
    key = fn.start_byte
    if key in memo:
        return memo[key]
    d = fn.child_by_field_name("declarator")
    while d is not None and d.type != "function_declarator":
        d = d.child_by_field_name("declarator")
    name = None
    plist = d.child_by_field_name("parameters") if d is not None else None
    for p in plist.named_children if plist is not None else ():
        if p.type == "variadic_parameter_declaration":
            stack = [p]
            while stack and name is None:
                n = stack.pop()
                if n.type == "variadic_declarator":
                    ids = [c for c in n.named_children if c.type == "identifier"]
                    name = model.text(ids[0]) if ids else None
                stack.extend(n.named_children)
    memo[key] = name
    return name


def _expanded_pack(model, a: ts.Node) -> str | None:
    """The parameter pack an argument ``args...`` or ``std::forward<A>(args)...`` expands."""
    kids = [c for c in a.named_children if c.type != "comment"]
    if len(kids) != 1:
        return None
    x = kids[0]
    if x.type == "call_expression":  # std::forward<A>(a), std::move(a): the element itself
        fn = x.child_by_field_name("function")
        inner = [c for c in model.call_args(x) if c.type != "comment"]
        if fn is None or _plain_name(model.text(fn)) not in ("forward", "move") or len(inner) != 1:
            return None
        x = unparen(inner[0])
    return model.text(x) if x.type == "identifier" else None


def _plain_name(text: str) -> str:
    """``reduce::init<rop::Add, float>`` -> ``init`` ("" when it is not a name; memoized)."""
    got = _PLAIN_NAMES.get(text)
    if got is None:
        if len(_PLAIN_NAMES) > 65536:
            _PLAIN_NAMES.clear()
        got = _PLAIN_NAMES[text] = _plain_name_uncached(text)
    return got


_PLAIN_NAMES: dict[str, str] = {}
_TYPE_TEXTS: dict[str, str] = {}
_TYPE_WORDS = re.compile(r"\b(const|volatile|__restrict__|restrict|typename|struct|thread|device|constant)\b")
_UNROLL_PRAGMA = re.compile(r"\s*(?:#\s*pragma|_Pragma\s*\(\s*\")\s*unroll\s*(\(?\s*(\w+)\s*\)?)?")
_QUALIFIER_WORDS = re.compile(r"\b(const|volatile|__restrict__)\b")
_BARE_TYPE_NAMES: dict[str, str] = {}


def _bare_type_name(text: str) -> str:
    """A parameter's type text without ``const``, ``volatile`` and ``__restrict__`` (memoized)."""
    got = _BARE_TYPE_NAMES.get(text)
    if got is None:
        if len(_BARE_TYPE_NAMES) > 65536:
            _BARE_TYPE_NAMES.clear()
        got = _BARE_TYPE_NAMES[text] = _QUALIFIER_WORDS.sub(" ", text).strip()
    return got


def _plain_name_uncached(text: str) -> str:
    for _ in range(8):
        stripped = _TEMPLATE_ARGS.sub("", text)
        if stripped == text:
            break
        text = stripped
    name = text.split("::")[-1].strip()
    return name if name.isidentifier() else ""


def _size(node: ts.Node) -> int:
    """Named nodes under ``node``: a proxy for the instructions of a loop body."""
    count = 0
    stack = [node]
    while stack:
        n = stack.pop()
        count += 1
        stack.extend(n.named_children)
    return count


def _is_shared(v) -> bool:
    return v.address_space in ("shared", "threadgroup") or "__shared__" in v.qualifiers
