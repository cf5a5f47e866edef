"""Metal host code: the dispatches Swift, Objective-C(++) and metal-cpp code encodes.

A Metal kernel runs with the pipeline, threadgroup size and dispatch mode that host
code picks: a pipeline is built from a function name (``makeFunction(name:)``,
``newFunctionWithName:``, ``library->newFunction(…)``), bound with
``setComputePipelineState`` and dispatched with ``dispatchThreads`` (the grid counts
threads) or ``dispatchThreadgroups`` (the grid counts whole threadgroups). The
scanners here read one host file and return one :class:`~shaderlint.host.HostLaunch`
per dispatch call, with what can be traced *within that file*:

* ``dispatch`` — from the call itself, always known;
* ``group`` / ``grid`` — when the ``MTLSize`` is constant: literals, locals
  (``let``/``var``, C declarations), constants no other file can write (Swift ``let``
  and ``private`` properties, ``Self.x``, C ``const``/``constexpr``/``static``,
  ``#define``), through integer arithmetic and casts (``(n + 15) / 16`` with ``n``
  unknown, ``pso.threadExecutionWidth`` and anything else read at run time: None);
* ``kernel`` — the function name when the pipeline bound by the last
  ``setComputePipelineState`` on the same encoder, in the same function and on every
  path to the dispatch (not in a branch, a ``case`` or a loop that binds again; the
  encoder not handed to a call in between), traces back to exactly one
  ``makeFunction`` name (through locals, stored properties set anywhere in the file,
  and same-file helpers whose parameter is the function name, ``getPipeline("name")``).

A name with more than one value in the file (two assignments, a parameter, a loop or
closure variable, a subscript of an array or dictionary, a field write, anything passed
by address or through a setter) is unknown; an unknown value leaves the field None.
Precision first: a record never claims what the file does not show.

After the dispatches come ``reference`` records: one per name-like string literal that
no linked dispatch accounts for (a name in a table or a ternary, a pipeline whose
dispatch could not be linked or that is also bound before such a dispatch). A kernel
named by one may run with any configuration, so the index derives no fact for it.

The analysis is one language-neutral evaluator over three tree-sitter grammars:
tree-sitter-swift, tree-sitter-objc (``.m``, and ``.mm`` whose C++ the grammar reads
as far as it can) and tree-sitter-cpp for metal-cpp (:func:`scan_metal_cpp`, which the
C++ host index combines with the CUDA and Vulkan scanners).
"""

from __future__ import annotations

import bisect
import re
import warnings
from dataclasses import dataclass, field

import tree_sitter as ts

from shaderlint.host import HostLaunch, Span, register
from shaderlint.model.source import Source

#: Files larger than this are not scanned (host files are small; this bounds the work).
MAX_BYTES = 4 * 1024 * 1024
#: Evaluation steps per file before every further value is unknown.
MAX_STEPS = 200_000
#: Nesting depth of one evaluation (expressions, names, helper calls).
MAX_DEPTH = 48
#: Dispatch calls read per file.
MAX_DISPATCHES = 5_000

#: A file is parsed only when it dispatches or builds a function by name (the latter gives
#: ``reference`` records: a pipeline built here may be dispatched anywhere).
_TRIGGER = (b"dispatchThread", b"makeFunction", b"newFunctionWithName", b"newFunction(")


class _Null:
    """``nil`` / ``nullptr``: a pipeline that is not there yet, dropped when values are combined."""

    def __repr__(self) -> str:
        return "NULL"


NULL = _Null()


@dataclass(frozen=True)
class _Str:
    text: str
    #: Where the literal is written (-1: built from several).
    start: int = field(default=-1, compare=False)


@dataclass(frozen=True)
class _Kernel:
    """A function or a pipeline built from it: both stand for the function's name."""

    name: str
    #: Where the name's literal is written (-1: built from several).
    start: int = field(default=-1, compare=False)


@dataclass(frozen=True)
class _Param:
    func: int
    index: int


@dataclass(frozen=True)
class _Size:
    dims: tuple[int, int, int]
    start: int = field(compare=False)
    end: int = field(compare=False)


def _combine(values: list) -> object:
    """One value when every binding agrees (NULLs aside), else None (unknown)."""
    out = None
    seen = False
    for v in values:
        if v is NULL:
            continue
        if v is None:
            return None
        if not seen:
            out, seen = v, True
        elif v != out:
            return None
    return out if seen else None


@dataclass
class _Decl:
    name: str
    pos: int
    scope: tuple[int, int]
    value: object  # a node, None (no initial value) or "unknown"
    param: _Param | None = None
    size_ctor: bool = False  # C++ ``MTL::Size g(1, 2, 3)`` / ``MTL::Size g{…}``


@dataclass
class _Call:
    name: str  # method / function name (Swift base name, ObjC full selector, C++ name)
    labels: tuple[str, ...]
    args: list  # nodes
    receiver: object  # node or None
    node: ts.Node


_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_INT_RE = re.compile(r"^(0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|[0-9][0-9_']*)([uUlLzZ]*)$")


def _parse_int(text: str) -> int | None:
    t = text.strip()
    while t.startswith("(") and t.endswith(")"):
        t = t[1:-1].strip()
    m = _INT_RE.match(t)
    if not m:
        return None
    body = m.group(1).replace("_", "").replace("'", "")
    try:
        if body[:2] in ("0x", "0X"):
            return int(body[2:], 16)
        if body[:2] in ("0b", "0B"):
            return int(body[2:], 2)
        if body[:2] in ("0o", "0O"):
            return int(body[2:], 8)
        if len(body) > 1 and body.startswith("0"):
            return int(body, 8)
        return int(body)
    except ValueError:
        return None


def _arith(op: str, a: int, b: int) -> int | None:
    if op == "+":
        r = a + b
    elif op == "-":
        r = a - b
    elif op == "*":
        r = a * b
    elif op in ("/", "%"):
        if b == 0:
            return None
        q = abs(a) // abs(b)
        if (a < 0) != (b < 0):
            q = -q
        r = q if op == "/" else a - q * b
    elif op == "<<":
        if not 0 <= b < 64:
            return None
        r = a << b
    elif op == ">>":
        if not 0 <= b < 64:
            return None
        r = a >> b
    else:
        return None
    return r if -(1 << 64) < r < (1 << 64) else None


class _Budget(Exception):
    pass


class _Analysis:
    """Shared evaluator; subclasses read their grammar's nodes into declarations and calls."""

    language_name = ""
    FUNCTIONS: frozenset[str] = frozenset()
    SEQUENCES: frozenset[str] = frozenset()
    CONTROL: frozenset[str] = frozenset()
    LOOPS: frozenset[str] = frozenset()
    IDENT = "identifier"

    def __init__(self, path: str, data: bytes, tree: ts.Tree) -> None:
        self.path = path
        self.data = data
        self.source = Source(path, data)
        self.root = tree.root_node
        self.decls: dict[str, list[_Decl]] = {}
        self.assigns: dict[str, list[tuple[int, object]]] = {}  # bare name -> (pos, value node | "unknown")
        self.props: dict[str, list[tuple[int, object]]] = {}  # property key -> (pos, value node | "unknown")
        self.functions: dict[str, list[ts.Node]] = {}
        self.idents: dict[str, list[int]] = {}
        self.sets: list[_Call] = []
        self.dispatches: list[tuple[_Call, str]] = []
        self.make_functions: list[tuple[ts.Node, ts.Node]] = []  # (call node, name arg)
        self.memo: dict[int, object] = {}
        self.prop_memo: dict[str, object] = {}
        self.summary_memo: dict[int, int | None] = {}
        self.active: set = set()
        self.func_memo: dict[int, ts.Node | None] = {}
        self.set_starts: list[int] = []
        self.literals: list[tuple[int, int, str]] = []
        self.scoped: dict[tuple[str, int, int], list[_Decl]] = {}
        self.assign_index: dict[str, dict] = {}
        #: Property and global keys declared constant or file-private (``let``, ``const``, ``static``,
        #: ``#define``) and those declared where other files may write them.
        self.closed: set[str] = set()
        self.open: set[str] = set()
        self.steps = 0

    # -- small helpers -------------------------------------------------------------------------

    def text(self, node: ts.Node | None) -> str:
        if node is None:
            return ""
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def span(self, start: int, end: int) -> Span:
        line, column = self.source.position(start)
        return Span(self.path, start, end, line, column)

    def func_of(self, node: ts.Node) -> ts.Node | None:
        key = node.id
        if key in self.func_memo:
            return self.func_memo[key]
        result = self.find_func(node)
        self.func_memo[key] = result
        return result

    def find_func(self, node: ts.Node) -> ts.Node | None:
        n = node.parent
        while n is not None:
            if n.type in self.FUNCTIONS:
                return n
            n = n.parent
        return None

    def add_decl(self, decl: _Decl) -> None:
        self.decls.setdefault(decl.name, []).append(decl)

    def add_assign(self, name: str, pos: int, value: object) -> None:
        self.assigns.setdefault(name, []).append((pos, value))

    def add_prop(self, name: str, pos: int, value: object) -> None:
        self.props.setdefault(name.lstrip("_"), []).append((pos, value))

    def declare_global(self, name: str, closed: bool) -> None:
        (self.closed if closed else self.open).add(name.lstrip("_"))

    def scope_of(self, node: ts.Node) -> tuple[int, int]:
        p = node.parent
        if p is None:
            return (0, len(self.data))
        return (p.start_byte, p.end_byte)

    # -- the walk --------------------------------------------------------------------------------

    def collect(self) -> None:
        stack = [self.root]
        while stack:
            node = stack.pop()
            self.visit(node)
            stack.extend(reversed(node.named_children))
        self.set_starts = [s.node.start_byte for s in self.sets]
        self.index_scopes()

    def visit(self, node: ts.Node) -> None:
        raise NotImplementedError

    def call_of(self, node: ts.Node) -> _Call | None:
        raise NotImplementedError

    def note_literal(self, node: ts.Node, content: ts.Node) -> None:
        text = self.text(content)
        if _NAME_RE.match(text):
            self.literals.append((node.start_byte, node.end_byte, text))

    def note_call(self, node: ts.Node) -> None:
        call = self.call_of(node)
        if call is None:
            return
        kind = self.dispatch_kind(call)
        if kind is not None:
            if len(self.dispatches) < MAX_DISPATCHES:
                self.dispatches.append((call, kind))
            return
        if self.is_set_pipeline(call):
            self.sets.append(call)
        elif self.function_name_arg(call) is not None:
            self.make_functions.append((node, self.function_name_arg(call)))

    # -- what calls mean (shared: Swift base names, ObjC selectors, C++ names) -------------------

    def dispatch_kind(self, call: _Call) -> str | None:
        """``threads`` / ``threadgroups`` for the encoder's dispatch methods, by their full
        signature (a user's own ``dispatchThreads(count)`` is not one)."""
        n = call.name
        if n == "dispatchThreads:threadsPerThreadgroup:":
            return "threads"
        if n.startswith("dispatchThreadgroups") and n.endswith("threadsPerThreadgroup:"):
            return "threadgroups"
        if n not in ("dispatchThreads", "dispatchThreadgroups") or call.receiver is None:
            return None
        if self.language_name == "swift":
            if not call.labels or call.labels[-1] != "threadsPerThreadgroup":
                return None
        elif len(call.args) not in (2, 3) or (n == "dispatchThreads" and len(call.args) != 2):
            return None
        return "threads" if n == "dispatchThreads" else "threadgroups"

    def dispatch_parts(self, call: _Call) -> tuple[ts.Node | None, ts.Node | None]:
        """(grid, group) argument nodes; grid None for indirect dispatches."""
        args = call.args
        if "indirectBuffer" in call.labels or "WithIndirectBuffer" in call.name or len(args) == 3:
            return None, (args[-1] if args else None)
        if len(args) != 2:
            return None, None
        return args[0], args[1]

    def is_set_pipeline(self, call: _Call) -> bool:
        return call.name in ("setComputePipelineState", "setComputePipelineState:") and len(call.args) == 1

    def function_name_arg(self, call: _Call) -> ts.Node | None:
        n = call.name
        if not call.args:
            return None
        if n == "makeFunction" and call.labels and call.labels[0] == "name":
            return call.args[0]
        if n.startswith("newFunctionWithName:"):
            return call.args[0]
        if n == "newFunction" and call.receiver is not None:
            return call.args[0]
        return None

    def pipeline_function_arg(self, call: _Call) -> ts.Node | None:
        n = call.name
        if not call.args:
            return None
        if n == "makeComputePipelineState" and call.labels and call.labels[0] == "function":
            return call.args[0]
        if n.startswith("newComputePipelineStateWithFunction:"):
            return call.args[0]
        if n == "newComputePipelineState" and call.receiver is not None:
            return call.args[0]
        return None

    _STRING_WRAPPERS = frozenset(
        {
            "stringWithUTF8String:",
            "stringWithCString:encoding:",
            "stringWithString:",
            "initWithUTF8String:",
            "NS::String::string",
            "NS::MakeConstantString",
            "MTLSTR",
            "std::string",
            "String",
        }
    )
    _STRING_PASSTHROUGH = frozenset({"c_str", "UTF8String", "data"})
    _SIZE_CTORS = frozenset({"MTLSizeMake", "MTLSize", "MTL::Size", "MTL::Size::Make", "MTL::Size::make"})
    _INT_CONVERSIONS = frozenset(
        {"Int", "UInt", "Int32", "UInt32", "Int64", "UInt64", "Int16", "UInt16", "NSUInteger", "NS::UInteger"}
    )

    def eval_call(self, call: _Call, depth: int) -> object:
        n = call.name
        fa = self.function_name_arg(call)
        if fa is not None:
            v = self.eval(fa, depth)
            if isinstance(v, _Str):
                return _Kernel(v.text, v.start)
            if isinstance(v, _Param):
                return v
            return None
        pa = self.pipeline_function_arg(call)
        if pa is not None:
            v = self.eval(pa, depth)
            return v if isinstance(v, (_Kernel, _Param)) else None
        if n in self._STRING_WRAPPERS and call.args:
            v = self.eval(call.args[0], depth)
            return v if isinstance(v, (_Str, _Param)) else None
        if n in self._STRING_PASSTHROUGH and call.receiver is not None and not call.args:
            v = self.eval(call.receiver, depth)
            return v if isinstance(v, (_Str, _Param)) else None
        if n in self._SIZE_CTORS and call.receiver is None:
            return self.size_from(call.args, call.labels, call.node, depth)
        if n in self._INT_CONVERSIONS and len(call.args) == 1 and call.receiver is None:
            v = self.eval(call.args[0], depth)
            return v if isinstance(v, int) else None
        if n in ("static_cast", "size_t", "uint32_t", "uint64_t", "int", "unsigned") and len(call.args) == 1:
            v = self.eval(call.args[0], depth)
            return v if isinstance(v, int) else None
        return self.eval_helper(call, depth)

    def size_from(self, args: list, labels: tuple[str, ...], node: ts.Node, depth: int) -> object:
        if len(args) != 3:
            return None
        if labels and any(labels) and labels != ("width", "height", "depth"):
            return None
        dims = []
        for a in args:
            v = self.eval(a, depth)
            if not isinstance(v, int) or v < 0:
                return None
            dims.append(v)
        return _Size((dims[0], dims[1], dims[2]), node.start_byte, node.end_byte)

    # -- same-file helpers: getPipeline("name") -------------------------------------------------

    def helper_key(self, call: _Call) -> str | None:
        return call.name if call.receiver is None or self.is_self(call.receiver) else None

    def is_self(self, node: ts.Node) -> bool:
        return node.type in ("self_expression", "this") or (node.type == "identifier" and self.text(node) == "self")

    def eval_helper(self, call: _Call, depth: int) -> object:
        key = self.helper_key(call)
        if key is None:
            return None
        defs = self.functions.get(key)
        if not defs or len(defs) != 1:
            return None
        func = defs[0]
        index = self.summary(func, depth)
        if index is None or index >= len(call.args):
            return None
        v = self.eval(call.args[index], depth)
        return _Kernel(v.text, v.start) if isinstance(v, _Str) else None

    def summary(self, func: ts.Node, depth: int) -> int | None:
        """The parameter a helper passes, unchanged, as the one function name it builds."""
        if func.id in self.summary_memo:
            return self.summary_memo[func.id]
        self.summary_memo[func.id] = None  # recursion guard
        inside = [arg for call, arg in self.make_functions if func.start_byte <= call.start_byte < func.end_byte]
        result = None
        if len(inside) == 1:
            v = self.eval(inside[0], depth)
            if isinstance(v, _Param) and v.func == func.id:
                result = v.index
        self.summary_memo[func.id] = result
        return result

    # -- names ----------------------------------------------------------------------------------

    def tick(self, n: int = 1) -> None:
        self.steps += n
        if self.steps > MAX_STEPS:
            raise _Budget

    def index_scopes(self) -> None:
        whole = (0, len(self.data))
        for name, decls in self.decls.items():
            for d in decls:
                if d.value != "global" and d.scope != whole:
                    self.scoped.setdefault((name, d.scope[0], d.scope[1]), []).append(d)

    def local_decl(self, name: str, pos: int) -> _Decl | None:
        """The innermost local declaration of ``name`` in scope at ``pos`` (None: a property or global)."""
        if name not in self.decls:
            return None
        n = self.root.descendant_for_byte_range(pos, pos)
        while n is not None:
            self.tick()
            found = self.scoped.get((name, n.start_byte, n.end_byte))
            if found:
                best = None
                for d in found:
                    if (d.param is not None or d.pos <= pos) and (best is None or d.pos > best.pos):
                        best = d
                if best is not None:
                    return best
            n = n.parent
        return None

    def assignments_of(self, name: str, decl: _Decl | None) -> list:
        """The assignments to ``name`` that write ``decl`` (None: the property or global)."""
        index = self.assign_index.get(name)
        if index is None:
            index = {}
            for pos, value in self.assigns.get(name, ()):
                d = self.local_decl(name, pos)
                index.setdefault(id(d) if d is not None else None, []).append(value)
            self.assign_index[name] = index
        return index.get(id(decl) if decl is not None else None, [])

    def eval_name(self, name: str, node: ts.Node, depth: int) -> object:
        d = self.local_decl(name, node.start_byte)
        if d is None:
            return self.eval_property(name, depth)
        key = ("decl", name, d.pos)
        if key in self.active:
            return None
        self.active.add(key)
        try:
            values: list = []
            if d.param is not None:
                values.append(d.param)
            elif d.value == "unknown":
                return None
            elif d.value is not None:
                if d.size_ctor:
                    values.append(self.eval_size_init(d.value, depth))
                else:
                    values.append(self.eval(d.value, depth))
            for value in self.assignments_of(name, d):
                values.append(None if value == "unknown" else self.eval(value, depth))
            return _combine(values)
        finally:
            self.active.discard(key)

    def eval_property(self, name: str, depth: int) -> object:
        key = name.lstrip("_")
        if key in self.prop_memo:
            return self.prop_memo[key]
        if ("prop", key) in self.active:
            return None
        self.active.add(("prop", key))
        try:
            values: list = []
            for cand in {name, key, "_" + key}:
                for value in self.assignments_of(cand, None):
                    values.append(None if value == "unknown" else self.eval(value, depth))
            for pos, value in self.props.get(key, ()):
                if value == "unknown":
                    values.append(None)
                elif isinstance(value, tuple):
                    values.append(self.eval_size_init(value[1], depth))
                else:
                    values.append(self.eval(value, depth))
            result = _combine(values)
            if isinstance(result, (int, _Size)) and (key not in self.closed or key in self.open):
                # A number other files may change (a ``var``, a non-const global, an ObjC property)
                # is not a constant; a pipeline property set once from one name still is.
                result = None
        finally:
            self.active.discard(("prop", key))
        self.prop_memo[key] = result
        return result

    def eval_size_init(self, node: ts.Node, depth: int) -> object:
        args = [c for c in node.named_children if c.type != "comment"]
        return self.size_from(args, (), node, depth)

    # -- expressions ------------------------------------------------------------------------------

    def eval(self, node: ts.Node | None, depth: int = 0) -> object:
        if node is None:
            return None
        if depth > MAX_DEPTH:
            return None
        self.tick()
        cached = self.memo.get(node.id, self)
        if cached is not self:
            return cached
        value = self.eval_node(node, depth + 1)
        self.memo[node.id] = value
        return value

    def eval_node(self, node: ts.Node, depth: int) -> object:
        raise NotImplementedError

    # -- linking a dispatch to its pipeline -------------------------------------------------------

    def receiver_key(self, node: ts.Node | None) -> str | None:
        """The encoder a call is made on, when it is a plain variable (``encoder``, ``encoder?``)."""
        if node is not None and node.type == self.IDENT:
            return self.text(node)
        return None

    def is_receiver_position(self, node: ts.Node) -> bool:
        raise NotImplementedError

    def binds_before(self, call: _Call) -> list[_Call]:
        """The ``setComputePipelineState`` calls on the dispatch's encoder earlier in its function, last first."""
        rkey = self.receiver_key(call.receiver)
        if rkey is None:
            return []
        d = call.node
        func = self.func_of(d)
        fid = func.id if func is not None else None
        out = []
        i = bisect.bisect_left(self.set_starts, d.start_byte) - 1
        while i >= 0:
            self.tick()
            s = self.sets[i]
            i -= 1
            if func is not None and s.node.start_byte < func.start_byte:
                break
            sf = self.func_of(s.node)
            if (sf.id if sf is not None else None) == fid and self.receiver_key(s.receiver) == rkey:
                out.append(s)
        return out

    def linked_kernel(self, call: _Call) -> _Kernel | None:
        rkey = self.receiver_key(call.receiver)
        if rkey is None:
            return None
        d = call.node
        func = self.func_of(d)
        binds = self.binds_before(call)
        last = binds[0] if binds else None
        if last is None or not self.dominates(last.node, d):
            return None
        # No later bind on the same encoder that a loop could carry back to this dispatch.
        loop = d.parent
        while loop is not None and loop.type not in self.LOOPS and (func is None or loop.id != func.id):
            loop = loop.parent
        if loop is not None and loop.type in self.LOOPS:
            i = bisect.bisect_left(self.set_starts, d.end_byte)
            while i < len(self.sets) and self.sets[i].node.start_byte < loop.end_byte:
                self.tick()
                if self.receiver_key(self.sets[i].receiver) == rkey:
                    return None
                i += 1
        # The encoder must not escape (passed to a call, reassigned) between the bind and the dispatch.
        positions = self.idents.get(rkey, [])
        for k in range(bisect.bisect_left(positions, last.node.end_byte), len(positions)):
            pos = positions[k]
            self.tick()
            if pos >= d.start_byte:
                break
            ident = self.root.descendant_for_byte_range(pos, pos + len(rkey.encode()))
            if ident is None or not self.is_receiver_position(ident):
                return None
        v = self.eval(last.args[0])
        return v if isinstance(v, _Kernel) else None

    def dominates(self, a: ts.Node, b: ts.Node) -> bool:
        """Whether ``a`` runs on every path to ``b``: their common ancestor is a statement
        sequence and nothing on ``a``'s way up to it is conditional or a loop."""
        ancestors = set()
        n = b
        while n is not None:
            ancestors.add(n.id)
            n = n.parent
        n = a.parent
        while n is not None and n.id not in ancestors:
            if n.type in self.CONTROL or n.type in self.LOOPS or n.type in self.FUNCTIONS:
                return False
            n = n.parent
        return n is not None and n.type in self.SEQUENCES

    # -- results ----------------------------------------------------------------------------------

    def launches(self) -> list[HostLaunch]:
        """One ``metal`` record per dispatch, then one ``reference`` record per name-like string
        literal that no linked dispatch accounts for: a function name in a table, a ternary, a
        pipeline whose dispatch is not linked, or one also bound before an unlinked dispatch. The
        index derives no fact for a kernel with a reference, since it may run with any size."""
        out = []
        accounted: set[int] = set()
        unaccounted: set[int] = set()
        exhausted = False
        for call, kind in self.dispatches:
            grid_node, group_node = self.dispatch_parts(call)
            try:
                group = self.eval(group_node)
                grid = self.eval(grid_node) if grid_node is not None else None
                kernel = self.linked_kernel(call)
                if kernel is not None:
                    accounted.add(kernel.start)
                else:
                    # every pipeline bound earlier on this encoder may be the one dispatched here
                    for bind in self.binds_before(call):
                        v = self.eval(bind.args[0])
                        if isinstance(v, _Kernel):
                            unaccounted.add(v.start)
            except (_Budget, RecursionError):
                group = grid = kernel = None
                exhausted = True
            node = call.node
            out.append(
                HostLaunch(
                    at=self.span(node.start_byte, node.end_byte),
                    api="metal",
                    kernel=kernel.name if kernel is not None else None,
                    group=group.dims if isinstance(group, _Size) else None,
                    group_at=self.span(group.start, group.end) if isinstance(group, _Size) else None,
                    dispatch=kind,
                    grid=grid.dims if isinstance(grid, _Size) else None,
                    grid_at=self.span(grid.start, grid.end) if isinstance(grid, _Size) else None,
                )
            )
        for start, end, text in self.literals:
            if exhausted or start not in accounted or start in unaccounted:
                out.append(HostLaunch(at=self.span(start, end), api="reference", kernel=text))
        return out


# ---------------------------------------------------------------------------------------------
# Swift


class _Swift(_Analysis):
    language_name = "swift"
    FUNCTIONS = frozenset(
        {"function_declaration", "init_declaration", "deinit_declaration", "lambda_literal", "computed_property",
         "computed_getter", "computed_setter", "subscript_declaration"}
    )
    SEQUENCES = frozenset({"statements", "function_body", "source_file", "class_body"})
    CONTROL = frozenset(
        {"if_statement", "guard_statement", "switch_statement", "switch_entry", "ternary_expression",
         "conjunction_expression", "disjunction_expression", "catch_block", "do_statement"}
    )
    LOOPS = frozenset({"for_statement", "while_statement", "repeat_while_statement"})
    IDENT = "simple_identifier"
    global_closed = False
    type_names: set[str] | None = None
    _TYPE_SCOPES = frozenset({"class_body", "protocol_body", "enum_class_body", "source_file"})

    def decl_scope(self, node: ts.Node) -> tuple[tuple[int, int], bool]:
        """(scope, global) for a declaration at ``node``."""
        p = node.parent
        if p is None or p.type in self._TYPE_SCOPES or self.func_of(node) is None:
            return (0, len(self.data)), True
        return (p.start_byte, p.end_byte), False

    def visit(self, node: ts.Node) -> None:
        t = node.type
        if t == "simple_identifier":
            self.idents.setdefault(self.text(node), []).append(node.start_byte)
        elif t == "line_string_literal":
            kids = node.named_children
            if len(kids) == 1 and kids[0].type == "line_str_text":
                self.note_literal(node, kids[0])
        elif t == "call_expression":
            self.note_call(node)
        elif t == "property_declaration":
            self.visit_property(node)
        elif t == "assignment":
            self.visit_assignment(node)
        elif t in ("if_statement", "guard_statement", "while_statement"):
            self.visit_conditional_binding(node)
        elif t == "parameter":
            self.visit_parameter(node)
        elif t == "lambda_parameter":
            name = node.child_by_field_name("name")
            if name is not None and name.type == "simple_identifier":
                self.local_unknown(name, node)
        elif t == "pattern" and (node.parent is None or node.parent.type != "property_declaration"):
            for ident in self.pattern_names(node):
                self.local_unknown(ident, node)
        elif t == "prefix_expression":
            op = node.child_by_field_name("operation")
            target = node.child_by_field_name("target")
            if op is not None and self.text(op) == "&" and target is not None:
                self.unknown_write(target)
        elif t == "function_declaration":
            name = node.child_by_field_name("name")
            if name is not None:
                self.functions.setdefault(self.text(name), []).append(node)

    def pattern_names(self, node: ts.Node) -> list[ts.Node]:
        out = []
        stack = [node]
        while stack:
            n = stack.pop()
            if n.type == "simple_identifier":
                out.append(n)
            elif n.type not in ("user_type", "type_annotation"):
                stack.extend(n.children)
        return out

    _BINDING_SCOPES = frozenset(
        {"lambda_literal", "for_statement", "switch_entry", "catch_block", "if_statement", "while_statement",
         "statements", "function_body", "function_declaration", "init_declaration", "source_file"}
    )

    def local_unknown(self, ident: ts.Node, at: ts.Node) -> None:
        """A name bound by a closure parameter, a loop, a ``case let`` or a catch: unknown value."""
        p = at.parent
        while p is not None and p.type not in self._BINDING_SCOPES:
            p = p.parent
        if p is not None and p.type == "statements" and at.parent is not None and at.parent.type == "guard_statement":
            p = p.parent if p.parent is not None else p
        if p is None or p.type == "source_file":
            return
        self.add_decl(_Decl(self.text(ident), ident.start_byte, (p.start_byte, p.end_byte), "unknown"))

    def visit_property(self, node: ts.Node) -> None:
        scope, is_global = self.decl_scope(node)
        if is_global:
            binding = next((c for c in node.children if c.type == "value_binding_pattern"), None)
            modifiers = next((c for c in node.children if c.type == "modifiers"), None)
            private = modifiers is not None and re.search(r"\b(private|fileprivate)\b", self.text(modifiers))
            self.global_closed = (binding is not None and self.text(binding).strip() == "let") or bool(private)
        current = None
        for i, child in enumerate(node.children):
            f = node.field_name_for_child(i)
            if f == "name":
                if current is not None:
                    self.finish_decl(current, None, scope, is_global)
                current = child
            elif f == "value" and current is not None:
                self.finish_decl(current, child, scope, is_global)
                current = None
            elif child.type in ("computed_property",) and current is not None:
                self.finish_decl(current, "unknown", scope, is_global)
                current = None
        if current is not None:
            self.finish_decl(current, None, scope, is_global)

    def finish_decl(self, pattern: ts.Node, value, scope, is_global: bool) -> None:
        bound = pattern.child_by_field_name("bound_identifier")
        if bound is None:
            for ident in self.pattern_names(pattern):
                self.add_decl(_Decl(self.text(ident), ident.start_byte, scope, "global" if is_global else "unknown"))
                if is_global:
                    self.add_prop(self.text(ident), ident.start_byte, "unknown")
            return
        name = self.text(bound)
        if is_global:
            self.declare_global(name, self.global_closed)
            self.add_decl(_Decl(name, bound.start_byte, scope, "global"))
            if value is not None:
                self.add_prop(name, bound.start_byte, value)
        else:
            self.add_decl(_Decl(name, bound.start_byte, scope, value))

    def visit_parameter(self, node: ts.Node) -> None:
        func = self.func_of(node)
        name = None
        for i, child in enumerate(node.children):
            if node.field_name_for_child(i) == "name" and child.type == "simple_identifier":
                name = child
                break
        if name is None or func is None:
            return
        index = sum(1 for c in node.parent.named_children if c.type == "parameter" and c.start_byte < node.start_byte) if node.parent else 0
        self.add_decl(_Decl(self.text(name), name.start_byte, (func.start_byte, func.end_byte), None, _Param(func.id, index)))

    def visit_conditional_binding(self, node: ts.Node) -> None:
        children = node.children
        for i, child in enumerate(children):
            if node.field_name_for_child(i) != "bound_identifier":
                continue
            value = None
            j = i + 1
            if j < len(children) and children[j].type == "=":
                j += 1
                value = children[j] if j < len(children) else None
            if node.type == "guard_statement":
                scope = self.scope_of(node)
            else:
                scope = (node.start_byte, node.end_byte)
            self.add_decl(_Decl(self.text(child), child.start_byte, scope, value if value is not None else "unknown"))

    def visit_assignment(self, node: ts.Node) -> None:
        target = node.child_by_field_name("target")
        op = node.child_by_field_name("operator")
        result = node.child_by_field_name("result")
        if target is None:
            return
        inner = target.named_children[0] if target.named_children else None
        if inner is None:
            return
        value = result if (op is not None and self.text(op) == "=" and result is not None) else "unknown"
        if inner.type == "simple_identifier":
            self.add_assign(self.text(inner), node.start_byte, value)
        elif inner.type == "navigation_expression" and self.self_member(inner) is not None:
            self.add_prop(self.self_member(inner), node.start_byte, value)
        else:
            self.unknown_write(inner)

    _TYPE_DECL = re.compile(rb"\b(?:class|struct|enum|actor|extension)\s+([A-Za-z_][A-Za-z0-9_]*)")

    def self_member(self, nav: ts.Node) -> str | None:
        """``x`` in ``self.x``, ``Self.x`` or ``T.x`` for a type ``T`` this file declares."""
        target = nav.child_by_field_name("target")
        suffix = nav.child_by_field_name("suffix")
        if target is None or suffix is None:
            return None
        if target.type != "self_expression":
            if target.type != "simple_identifier":
                return None
            if self.type_names is None:
                self.type_names = {m.group(1).decode() for m in self._TYPE_DECL.finditer(self.data)}
            name = self.text(target)
            if name != "Self" and name not in self.type_names:
                return None
        ident = suffix.child_by_field_name("suffix")
        return self.text(ident) if ident is not None and ident.type == "simple_identifier" else None

    def unknown_write(self, node: ts.Node) -> None:
        """``x.width = …``, ``x[i] = …``, ``&x``: ``x`` (or ``self.x``) is unknown from here on."""
        n = node
        for _ in range(64):
            if n.type == "simple_identifier":
                self.add_assign(self.text(n), node.start_byte, "unknown")
                return
            if n.type == "navigation_expression" and self.self_member(n) is not None:
                self.add_prop(self.self_member(n), node.start_byte, "unknown")
                return
            kids = n.named_children
            if not kids:
                return
            n = kids[0]

    def call_of(self, node: ts.Node) -> _Call | None:
        if node.type != "call_expression" or node.named_child_count < 2:
            return None
        callee = node.named_children[0]
        suffix = node.named_children[1]
        if suffix.type != "call_suffix":
            return None
        receiver = None
        if callee.type == "navigation_expression":
            nsuffix = callee.child_by_field_name("suffix")
            ident = nsuffix.child_by_field_name("suffix") if nsuffix is not None else None
            if ident is None:
                return None
            name = self.text(ident)
            receiver = callee.child_by_field_name("target")
        elif callee.type == "simple_identifier":
            name = self.text(callee)
        else:
            return None
        labels, args = [], []
        va = next((c for c in suffix.named_children if c.type == "value_arguments"), None)
        if va is not None:
            for arg in va.named_children:
                if arg.type != "value_argument":
                    continue
                label = arg.child_by_field_name("name")
                value = arg.child_by_field_name("value")
                labels.append(self.text(label).strip() if label is not None else "")
                args.append(value)
        if any(a is None for a in args):
            return None
        return _Call(name, tuple(labels), args, receiver, node)

    def helper_key(self, call: _Call) -> str | None:
        if call.receiver is None or call.receiver.type == "self_expression":
            return call.name
        return None

    def is_receiver_position(self, node: ts.Node) -> bool:
        p = node.parent
        return p is not None and p.type == "navigation_expression" and p.named_children and p.named_children[0].id == node.id and p.parent is not None and p.parent.type == "call_expression"

    _PASS = frozenset({"try_expression", "await_expression"})

    def eval_node(self, node: ts.Node, depth: int) -> object:
        t = node.type
        if t == "integer_literal":
            return _parse_int(self.text(node))
        if t == "line_string_literal":
            kids = node.named_children
            if len(kids) == 1 and kids[0].type == "line_str_text":
                return _Str(self.text(kids[0]), node.start_byte)
            if not kids:
                return _Str("")
            return None
        if t == "simple_identifier":
            name = self.text(node)
            if name == "nil":
                return NULL
            return self.eval_name(name, node, depth)
        if t == "call_expression":
            call = self.call_of(node)
            return self.eval_call(call, depth) if call is not None else None
        if t in self._PASS:
            e = node.child_by_field_name("expr")
            return self.eval(e, depth) if e is not None else None
        if t == "postfix_expression":
            op = node.child_by_field_name("operation")
            if op is not None and self.text(op) in ("!", "?"):
                return self.eval(node.child_by_field_name("target"), depth)
            return None
        if t == "as_expression":
            v = self.eval(node.child_by_field_name("expr"), depth)
            return v if isinstance(v, (int, _Kernel)) else None
        if t == "tuple_expression":
            kids = node.named_children
            return self.eval(kids[0], depth) if len(kids) == 1 else None
        if t in ("additive_expression", "multiplicative_expression", "bitwise_operation"):
            op = node.child_by_field_name("op")
            a = self.eval(node.child_by_field_name("lhs"), depth)
            b = self.eval(node.child_by_field_name("rhs"), depth)
            if isinstance(a, int) and isinstance(b, int) and op is not None:
                return _arith(self.text(op), a, b)
            return None
        if t == "prefix_expression":
            op = node.child_by_field_name("operation")
            v = self.eval(node.child_by_field_name("target"), depth)
            if isinstance(v, int) and op is not None and self.text(op) in ("-", "+"):
                return -v if self.text(op) == "-" else v
            return None
        if t == "navigation_expression":
            member = self.self_member(node)
            if member is not None:
                return self.eval_property(member, depth)
            return None
        return None


# ---------------------------------------------------------------------------------------------
# Objective-C and C++ (metal-cpp): the C family


class _CFamily(_Analysis):
    FUNCTIONS = frozenset({"function_definition", "method_definition", "block_literal", "lambda_expression"})
    SEQUENCES = frozenset({"compound_statement", "translation_unit", "declaration_list", "implementation_definition"})
    CONTROL = frozenset(
        {"if_statement", "switch_statement", "case_statement", "conditional_expression", "else_clause",
         "try_statement", "catch_clause", "@try", "preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif"}
    )
    LOOPS = frozenset({"for_statement", "while_statement", "do_statement", "for_range_loop", "for_in_statement"})
    _TYPE_SCOPES = frozenset(
        {"translation_unit", "field_declaration_list", "declaration_list", "class_implementation",
         "class_interface", "instance_variables", "implementation_definition"}
    )

    def visit(self, node: ts.Node) -> None:
        t = node.type
        if t == "identifier":
            self.idents.setdefault(self.text(node), []).append(node.start_byte)
        elif t == "string_literal":
            kids = node.named_children
            if len(kids) == 1 and kids[0].type == "string_content":
                self.note_literal(node, kids[0])
        elif t in ("call_expression", "message_expression"):
            self.note_call(node)
            if t == "message_expression":
                self.note_setter(node)
        elif t == "declaration" or t == "field_declaration":
            self.visit_declaration(node)
        elif t == "assignment_expression":
            self.visit_assignment(node)
        elif t == "update_expression":
            self.unknown_write(node.child_by_field_name("argument"))
        elif t == "pointer_expression":
            op = node.child_by_field_name("operator")
            if op is not None and self.text(op) == "&":
                self.unknown_write(node.child_by_field_name("argument"))
        elif t in ("parameter_declaration", "method_parameter"):
            self.visit_parameter(node)
        elif t == "for_range_loop":
            d = node.child_by_field_name("declarator")
            ident = self.declarator_name(d) if d is not None else None
            if ident is not None:
                self.add_decl(_Decl(self.text(ident), ident.start_byte, (node.start_byte, node.end_byte), "unknown"))
        elif t == "preproc_def":
            name = node.child_by_field_name("name")
            value = node.child_by_field_name("value")
            if name is not None:
                self.declare_global(self.text(name), True)
                self.add_decl(_Decl(self.text(name), name.start_byte, (0, len(self.data)), "global"))
                self.add_prop(self.text(name), name.start_byte, value if value is not None else "unknown")
        elif t == "field_initializer":
            kids = node.named_children
            if len(kids) == 2 and kids[0].type == "field_identifier":
                args = [c for c in kids[1].named_children if c.type != "comment"]
                self.add_prop(self.text(kids[0]), node.start_byte, args[0] if len(args) == 1 else "unknown")
        elif t == "function_definition":
            d = node.child_by_field_name("declarator")
            while d is not None and d.type in ("pointer_declarator", "reference_declarator", "function_declarator"):
                d = d.child_by_field_name("declarator")
            if d is not None and d.type in ("identifier", "field_identifier"):
                self.functions.setdefault(self.text(d), []).append(node)
        elif t == "method_definition":
            sel = self.method_selector(node)
            if sel:
                self.functions.setdefault(sel, []).append(node)

    _SETTER = re.compile(r"^set([A-Z][A-Za-z0-9_]*):$")

    def note_setter(self, node: ts.Node) -> None:
        """``[obj setPipeline:p]`` writes the property ``pipeline`` as ``obj.pipeline = p`` would."""
        call = self.call_of(node)
        m = self._SETTER.match(call.name) if call is not None and len(call.args) == 1 else None
        if m:
            name = m.group(1)
            self.add_prop(name[0].lower() + name[1:], node.start_byte, "unknown")

    def method_selector(self, node: ts.Node) -> str:
        parts = []
        has_params = False
        for child in node.children:
            if child.type == "identifier":
                parts.append(self.text(child))
            elif child.type == "method_parameter":
                has_params = True
                if parts:
                    parts[-1] += ":"
        if not has_params:
            return parts[0] if parts else ""
        return "".join(p for p in parts if p.endswith(":"))

    def declarator_name(self, d: ts.Node) -> ts.Node | None:
        for _ in range(32):
            if d is None:
                return None
            if d.type in ("identifier", "field_identifier"):
                return d
            if d.type in ("pointer_declarator", "reference_declarator", "init_declarator", "parenthesized_declarator",
                          "attributed_declarator", "block_pointer_declarator"):
                inner = d.child_by_field_name("declarator")
                if inner is None:
                    kids = [c for c in d.named_children if c.type in ("identifier", "field_identifier")]
                    inner = kids[0] if kids else None
                d = inner
            else:
                return None
        return None

    def is_global_scope(self, node: ts.Node) -> bool:
        # Not func_of: where the grammar cannot read a file (C++ in a ``.mm``) function
        # definitions come out as ERROR nodes, but their bodies are still compound statements.
        n = node.parent
        while n is not None:
            if n.type == "compound_statement" or n.type in self.FUNCTIONS:
                return False
            n = n.parent
        return True

    def find_func(self, node: ts.Node) -> ts.Node | None:
        n = node.parent
        outer = None
        while n is not None:
            if n.type in self.FUNCTIONS:
                return n
            if n.type == "compound_statement":
                outer = n
            n = n.parent
        return outer

    def visit_declaration(self, node: ts.Node) -> None:
        is_global = self.is_global_scope(node)
        scope = (0, len(self.data)) if is_global else self.scope_of(node)
        typ = node.child_by_field_name("type")
        auto = any(c.type == "storage_class_specifier" and self.text(c) == "auto" for c in node.children)
        size_type = typ is not None and self.text(typ).replace(" ", "") in ("MTL::Size", "MTLSize")
        quals = {self.text(c) for c in node.children if c.type in ("type_qualifier", "storage_class_specifier")}
        # const/constexpr, or a file-static variable (every write to it is in this file)
        closed = bool(quals & {"const", "constexpr"}) or ("static" in quals and node.type == "declaration")
        for i, child in enumerate(node.children):
            f = node.field_name_for_child(i)
            if f == "declarator":
                value = None
                size_ctor = False
                if child.type == "init_declarator":
                    value = child.child_by_field_name("value")
                    if value is not None and value.type in ("argument_list", "initializer_list"):
                        if size_type:
                            size_ctor = True
                        elif value.type == "argument_list" or len(value.named_children) != 1:
                            value = "unknown"
                        else:
                            value = value.named_children[0]
                elif child.type in ("array_declarator", "function_declarator"):
                    value = "unknown"
                ident = self.declarator_name(child)
                if ident is not None and ident.is_missing and auto and typ is not None and typ.type == "type_identifier":
                    # tree-sitter-objc reads C++ ``auto x = …`` in a ``.mm`` as type ``x``, name missing.
                    ident = typ
                if ident is None or ident.is_missing:
                    continue
                if child.type == "function_declarator":
                    continue
                name = self.text(ident)
                if is_global:
                    self.declare_global(name, closed)
                    self.add_decl(_Decl(name, ident.start_byte, scope, "global"))
                    if value is not None:
                        if size_ctor:
                            self.add_prop(name, ident.start_byte, ("size", value))
                        else:
                            self.add_prop(name, ident.start_byte, value)
                else:
                    self.add_decl(_Decl(name, ident.start_byte, scope, value, size_ctor=size_ctor))
            elif f == "default_value" and is_global:
                # ``static constexpr int kTile = 32;`` in a class
                ident = None
                for j in range(i - 1, -1, -1):
                    if node.field_name_for_child(j) == "declarator":
                        ident = self.declarator_name(node.children[j])
                        break
                if ident is not None:
                    self.declare_global(self.text(ident), closed)
                    self.add_prop(self.text(ident), ident.start_byte, child)

    def visit_parameter(self, node: ts.Node) -> None:
        func = self.func_of(node)
        if func is None:
            return
        if node.type == "method_parameter":
            idents = [c for c in node.named_children if c.type == "identifier"]
            ident = idents[-1] if idents else None
            siblings = [c for c in func.named_children if c.type == "method_parameter"]
        else:
            ident = self.declarator_name(node.child_by_field_name("declarator"))
            siblings = [c for c in node.parent.named_children if c.type == "parameter_declaration"] if node.parent else []
        if ident is None:
            return
        index = next((k for k, c in enumerate(siblings) if c.id == node.id), -1)
        if index < 0:
            return
        self.add_decl(_Decl(self.text(ident), ident.start_byte, (func.start_byte, func.end_byte), None, _Param(func.id, index)))

    def member_of_self(self, node: ts.Node) -> str | None:
        if node.type != "field_expression":
            return None
        arg = node.child_by_field_name("argument")
        fld = node.child_by_field_name("field")
        if arg is None or fld is None:
            return None
        return self.text(fld)

    def visit_assignment(self, node: ts.Node) -> None:
        left = node.child_by_field_name("left")
        right = node.child_by_field_name("right")
        op = node.child_by_field_name("operator")
        if left is None:
            return
        value = right if (op is not None and self.text(op) == "=" and right is not None) else "unknown"
        if left.type == "identifier":
            self.add_assign(self.text(left), node.start_byte, value)
        elif left.type == "field_expression" and self.member_of_self(left) is not None:
            # ``self.x = …``, ``this->x = …`` and ``ctx->x = …``: the stored property ``x``.
            self.add_prop(self.member_of_self(left), node.start_byte, value)
            arg = left.child_by_field_name("argument")
            op = left.child_by_field_name("operator")
            if arg is not None and not self.is_self(arg) and (op is None or self.text(op) != "->" or arg.type != "identifier"):
                # ``tg.width = 8`` changes the value ``tg``; ``ctx->pso = …`` leaves the pointer ``ctx`` as it was
                self.unknown_write(arg)
        else:
            self.unknown_write(left)

    def unknown_write(self, node: ts.Node | None) -> None:
        n = node
        for _ in range(64):
            if n is None:
                return
            if n.type == "identifier":
                self.add_assign(self.text(n), node.start_byte, "unknown")
                return
            if n.type == "field_expression":
                member = self.member_of_self(n)
                arg = n.child_by_field_name("argument")
                if member is not None and arg is not None and self.is_self(arg):
                    self.add_prop(member, node.start_byte, "unknown")
                    return
                n = arg
                continue
            kids = n.named_children
            if not kids:
                return
            n = kids[0]

    def call_of(self, node: ts.Node) -> _Call | None:
        if node.type == "message_expression":
            receiver = node.child_by_field_name("receiver")
            parts: list[str] = []
            args: list = []
            expect_arg = False
            for i, child in enumerate(node.children):
                f = node.field_name_for_child(i)
                if f == "method":
                    parts.append(self.text(child))
                elif child.type == ":":
                    if parts:
                        parts[-1] += ":"
                    expect_arg = True
                elif expect_arg and child.is_named and child.type != "comment":
                    args.append(child)
                    expect_arg = False
            name = "".join(parts) if args else (parts[0] if parts else "")
            labels = tuple(p.rstrip(":") for p in parts)
            return _Call(name, labels, args, receiver, node)
        if node.type != "call_expression":
            return None
        fn = node.child_by_field_name("function")
        arglist = node.child_by_field_name("arguments")
        if fn is None or arglist is None:
            return None
        args = [c for c in arglist.named_children if c.type != "comment"]
        receiver = None
        if fn.type == "field_expression":
            receiver = fn.child_by_field_name("argument")
            fld = fn.child_by_field_name("field")
            name = self.text(fld) if fld is not None else ""
        elif fn.type == "template_function":
            name = self.text(fn.child_by_field_name("name"))
        elif fn.type in ("identifier", "qualified_identifier"):
            name = re.sub(r"\s+", "", self.text(fn))
        else:
            return None
        return _Call(name, (), args, receiver, node)

    def helper_key(self, call: _Call) -> str | None:
        if call.receiver is None:
            return call.name
        if call.node.type == "message_expression" and self.is_self(call.receiver):
            return call.name
        return None

    def is_receiver_position(self, node: ts.Node) -> bool:
        p = node.parent
        if p is None:
            return False
        if p.type == "message_expression":
            r = p.child_by_field_name("receiver")
            return r is not None and r.id == node.id
        if p.type == "field_expression":
            a = p.child_by_field_name("argument")
            return a is not None and a.id == node.id and p.parent is not None and p.parent.type == "call_expression"
        return False

    def eval_node(self, node: ts.Node, depth: int) -> object:
        t = node.type
        if t == "number_literal":
            return _parse_int(self.text(node))
        if t == "preproc_arg":
            return _parse_int(self.text(node))
        if t == "string_literal":
            kids = [c for c in node.named_children]
            if not kids:
                return _Str("")
            if len(kids) == 1 and kids[0].type == "string_content":
                return _Str(self.text(kids[0]), node.start_byte)
            return None
        if t == "concatenated_string":
            parts = [self.eval(c, depth) for c in node.named_children]
            if parts and all(isinstance(p, _Str) for p in parts):
                return _Str("".join(p.text for p in parts))
            return None
        if t in ("null", "nullptr"):
            return NULL
        if t == "identifier":
            name = self.text(node)
            if name in ("nil", "NULL", "Nil"):
                return NULL
            return self.eval_name(name, node, depth)
        if t in ("call_expression", "message_expression"):
            call = self.call_of(node)
            return self.eval_call(call, depth) if call is not None else None
        if t == "parenthesized_expression":
            kids = node.named_children
            return self.eval(kids[0], depth) if len(kids) == 1 else None
        if t == "cast_expression":
            v = self.eval(node.child_by_field_name("value"), depth)
            return v if isinstance(v, (int, _Kernel, _Str)) else None
        if t == "compound_literal_expression":
            typ = node.child_by_field_name("type")
            value = node.child_by_field_name("value")
            if typ is not None and value is not None and self.text(typ).replace(" ", "") in ("MTLSize", "MTL::Size"):
                return self.eval_size_init(value, depth)
            return None
        if t == "binary_expression":
            op = node.child_by_field_name("operator")
            a = self.eval(node.child_by_field_name("left"), depth)
            if not isinstance(a, int):
                return None
            b = self.eval(node.child_by_field_name("right"), depth)
            if isinstance(b, int) and op is not None:
                return _arith(self.text(op), a, b)
            return None
        if t == "unary_expression":
            op = node.child_by_field_name("operator")
            v = self.eval(node.child_by_field_name("argument"), depth)
            if isinstance(v, int) and op is not None and self.text(op) in ("-", "+"):
                return -v if self.text(op) == "-" else v
            return None
        if t == "field_expression":
            arg = node.child_by_field_name("argument")
            member = self.member_of_self(node)
            if member is None or arg is None:
                return None
            v = self.eval_property(member, depth)
            if self.is_self(arg):
                return v
            # ``ctx->pipeline``: any receiver, only for a pipeline every such assignment agrees on.
            return v if isinstance(v, _Kernel) else None
        if t == "qualified_identifier":
            return None
        return None

class _ObjC(_CFamily):
    language_name = "objc"


class _Cpp(_CFamily):
    language_name = "cpp"




# ---------------------------------------------------------------------------------------------
# Grammars and entry points

_LANGUAGES: dict[str, ts.Language] = {}


def _language(name: str) -> ts.Language | None:
    lang = _LANGUAGES.get(name)
    if lang is not None:
        return lang
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            if name == "swift":
                import tree_sitter_swift as mod
            elif name == "objc":
                import tree_sitter_objc as mod
            else:
                import tree_sitter_cpp as mod
            lang = ts.Language(mod.language())
    except Exception:  # grammar not installed or incompatible: no Metal host facts from this language
        return None
    _LANGUAGES[name] = lang
    return lang


def _analyse(path: str, data: bytes, cls: type[_Analysis], grammar: str) -> list[HostLaunch]:
    """The scan itself; may raise on a bug (the tests call it directly to see one)."""
    if not isinstance(data, (bytes, bytearray)) or len(data) > MAX_BYTES:
        return []
    data = bytes(data)
    if not any(t in data for t in _TRIGGER):
        return []
    lang = _language(grammar)
    if lang is None:
        return []
    analysis = cls(path, data, ts.Parser(lang).parse(data))
    analysis.collect()
    return analysis.launches()


def _scan(path: str, data: bytes, cls: type[_Analysis], grammar: str) -> list[HostLaunch]:
    try:
        return _analyse(path, data, cls, grammar)
    except Exception:  # never raise: a host file that cannot be read gives no facts
        return []


def scan_swift(path: str, data: bytes) -> list[HostLaunch]:
    """Dispatches in a Swift file."""
    return _scan(path, data, _Swift, "swift")


def scan_objc(path: str, data: bytes) -> list[HostLaunch]:
    """Dispatches in an Objective-C or Objective-C++ file."""
    return _scan(path, data, _ObjC, "objc")


def scan_metal_cpp(path: str, data: bytes) -> list[HostLaunch]:
    """Dispatches in a C++ file using metal-cpp (``MTL::ComputeCommandEncoder``)."""
    return _scan(path, data, _Cpp, "cpp")


register((".swift",), scan_swift)
register((".m", ".mm"), scan_objc)
