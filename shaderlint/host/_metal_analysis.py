"""Metal host scanners: the language-neutral evaluator and the dispatch-to-pipeline link.

Subclasses (:mod:`._metal_swift`, :mod:`._metal_c`) read their grammar's nodes into
declarations, assignments and calls; this class resolves names by scope, evaluates
expressions to numbers, strings, sizes and kernel names, and links each dispatch to the
pipeline bound before it. See :mod:`shaderlint.host.metal`.
"""

from __future__ import annotations

import bisect

import tree_sitter as ts

from shaderlint.host import HostLaunch, Span
from shaderlint.host._metal_values import (
    _NAME_RE,
    MAX_DEPTH,
    MAX_DISPATCHES,
    MAX_STEPS,
    _Budget,
    _Call,
    _combine,
    _Decl,
    _Kernel,
    _Param,
    _Size,
    _Str,
)
from shaderlint.host._truncation import read as read_truncations
from shaderlint.model.source import Source


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

    def truncation_reader(self):
        """How :mod:`shaderlint.host._truncation` reads this grammar's expressions."""
        from shaderlint.host._truncation import AnalysisReader

        return AnalysisReader(self)

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
        reader = None
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
            truncations: tuple = ()
            if kind == "threadgroups" and grid_node is not None and not exhausted:
                try:
                    reader = reader or self.truncation_reader()
                    truncations = read_truncations(reader, grid_node, group_node)
                except (_Budget, RecursionError):
                    truncations = ()
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
                    truncations=truncations,
                )
            )
        for start, end, text in self.literals:
            if exhausted or start not in accounted or start in unaccounted:
                out.append(HostLaunch(at=self.span(start, end), api="reference", kernel=text))
        return out
