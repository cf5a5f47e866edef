"""Expression analysis over the kernel model: name resolution, types, constants, thread dependence.

Mixed into :class:`shaderlint.model.build.FileModel`. Every answer may be
"unknown" (``UNKNOWN`` type, ``None`` value) and rules stay silent on it.
"""

from __future__ import annotations

import bisect
import re
from functools import lru_cache
from typing import TYPE_CHECKING

import tree_sitter as ts

from shaderlint.model import builtins as B
from shaderlint.model.consteval import c_binary, parse_number
from shaderlint.model.kernel import Function, Var
from shaderlint.model.types import (
    BOOL, DOUBLE, FLOAT, HALF, INT, UINT, UNKNOWN, Type, arithmetic_result, parse_type_name, pointer_to, scalar,
    struct_type,
)

if TYPE_CHECKING:
    from shaderlint.model.build import FileModel

ARITH_OPS = frozenset("+ - * / %".split())
COMPARE_OPS = frozenset("< > <= >= == != && ||".split())
BIT_OPS = frozenset("& | ^ << >>".split())
#: How deep type_of/const_value/is_constant/deps follow an expression (they recurse on its tree, sharing
#: one counter). Deeper, the answer is "unknown" (UNKNOWN, None, False, {unknown}) rather than a
#: RecursionError near the interpreter's limit: 10,000 nested parentheses must not take a rule down.
MAX_EXPR_DEPTH = 200
#: Library shape queries (CuTe's size<I>(t), shape, rank, depth, cosize; .size()): a thread-partitioned
#: tensor (local_partition(g, layout, threadIdx.x)) has a thread-dependent data pointer but the same
#: shape in every thread, so `for (k = 0; k < size<2>(tAgA); ++k) { ... __syncthreads(); }` is uniform.
#: Functions of these names defined in the file are analysed as written.
_SHAPE_QUERIES = frozenset({"size", "shape", "rank", "depth", "cosize"})
_SWIZZLE = re.compile(r"^(?:[xyzw]{1,4}|[rgba]{1,4}|[stpq]{1,4})$")
_NOT_CONST = object()
_UNRESOLVED = object()  # (not in the resolve cache yet)


_TYPE_WORDS = re.compile(r"\b(const|volatile|struct|metal|thread|device|constant)\b")


@lru_cache(maxsize=4096)
def _type_text(text: str) -> tuple[int, Type, str | None]:
    """What :meth:`ExprAnalysis.parse_type` reads from a type's text alone: (pointer depth, the type
    its name gives, the name to look up among the file's typedefs and structs when that is unknown,
    else None). A pure function of the text, computed once per distinct spelling."""
    stars = text.count("*")
    base_text = text.replace("*", " ").replace("&", " ")
    base = parse_type_name(base_text)
    if base.is_known:
        return stars, base, None
    return stars, base, " ".join(_TYPE_WORDS.sub(" ", base_text.replace("::", " ")).split())


@lru_cache(maxsize=4096)
def _type_bytes(raw: bytes) -> tuple[int, Type, str | None]:
    """:func:`_type_text` of a type node's text as it stands in the file (what ``ExprAnalysis.text``
    decodes): a repeated spelling is not decoded again."""
    return _type_text(raw.decode("utf-8", "replace"))


def subscript_index(sub: ts.Node) -> ts.Node | None:
    """The single index expression of ``a[i]`` (None for ``a[i, j]`` or an empty subscript)."""
    idx = sub.child_by_field_name("indices") or sub.child_by_field_name("index")
    if idx is not None and idx.type == "subscript_argument_list":
        kids = [c for c in idx.named_children if c.type != "comment"]
        return kids[0] if len(kids) == 1 else None
    return idx


def descendants(node: ts.Node, node_type: str) -> list[ts.Node]:
    """Every named node of ``node_type`` in the subtree of ``node`` (itself included), iteratively."""
    out, stack = [], [node]
    while stack:
        n = stack.pop()
        if n.type == node_type:
            out.append(n)
        stack.extend(n.named_children)
    return out


def unparen(node: ts.Node) -> ts.Node:
    while node.type == "parenthesized_expression" and node.named_child_count == 1:
        node = node.named_children[0]
    return node


def mentions(model, node: ts.Node, var) -> bool:
    """Whether the expression ``node`` names the variable ``var`` (an identifier resolving to it)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "identifier" and model.resolve(n) is var:
            return True
        stack.extend(n.named_children)
    return False


def compared_with(model, cond: ts.Node, var) -> ts.Node | None:
    """The other side of ``cond`` when it compares the variable ``var`` (``<``, ``<=``, ``>``, ``>=``,
    ``!=``) with something, as a loop condition does; None otherwise."""
    c = unparen(cond)
    if c.type != "binary_expression" or model.text(c.child_by_field_name("operator")) not in ("<", "<=", ">", ">=", "!="):
        return None
    left, right = c.child_by_field_name("left"), c.child_by_field_name("right")
    if left is None or right is None:
        return None
    if unparen(left).type == "identifier" and model.resolve(unparen(left)) is var:
        return right
    if unparen(right).type == "identifier" and model.resolve(unparen(right)) is var:
        return left
    return None


def _scope_start(v: Var) -> int:
    return v.scope[0]


class ExprAnalysis:
    """Answers questions about expressions. Requires the FileModel attributes."""

    # ---- text -----------------------------------------------------------------
    def text(self: "FileModel", node: ts.Node) -> str:
        return self.source.data[node.start_byte:node.end_byte].decode("utf-8", "replace")

    def macro_body(self: "FileModel", define: ts.Node) -> str | None:
        """The replacement text of a ``#define`` (object- or function-like) as the preprocessor reads
        it, without comments and line splices (``#define N 4 // items``: ``4``); None if empty."""
        value = define.child_by_field_name("value")
        return self.source.code_text(value.start_byte, value.end_byte) if value is not None else None

    # ---- functions and names -----------------------------------------------------
    def function_at(self: "FileModel", offset: int) -> Function | None:
        i = bisect.bisect_right(self._function_starts, offset) - 1
        if i >= 0 and offset < self._function_ends[i]:  # (the function at i starts at or before offset)
            return self.functions[i]
        return None

    def resolve(self: "FileModel", ident: ts.Node) -> Var | None:
        """The variable an identifier refers to (innermost visible declaration), or None."""
        key = ident.id
        got = self._resolve_cache.get(key, _UNRESOLVED)
        if got is not _UNRESOLVED:
            return got  # (one lookup; a miss raises no exception)
        name = self.text(ident) if ident.type != "qualified_identifier" else self.text(ident).split("::")[-1]
        best: Var | None = None
        found = self._vars_by_name.get(name)
        if found:
            # The visible declaration whose scope starts last (of several starting at one offset, the
            # last declared): the declarations by scope start (stable), tried from the last one starting
            # at or before the use backwards; the first visible one is it.
            index = self.__dict__.get("_resolve_index")
            if index is None:
                index = self._resolve_index = {}
            got = index.get(name)
            if got is None or got[0] != len(found):  # (declarations are only appended, while the model is built)
                ordered = sorted(found, key=_scope_start)
                got = index[name] = (len(found), [v.scope[0] for v in ordered], ordered)
            _, starts, ordered = got
            pos = ident.start_byte
            i = bisect.bisect_right(starts, pos) - 1
            while i >= 0:
                v = ordered[i]
                s, e = v.scope
                if e <= pos and s < pos and v.function is not None and not v.is_param:
                    e = self._branch_scope_end(v, e)
                if pos < e and (v.is_param or v.is_global or v.node.start_byte <= pos or v.template_param):
                    best = v
                    break
                i -= 1
        self._resolve_cache[key] = best
        return best

    def _branch_scope_end(self: "FileModel", v: Var, end: int) -> int:
        """Where a local declared directly in a preprocessor branch goes out of scope: the end of the
        block around the ``#if``/``#ifdef`` group, not the ``#endif``. Only one branch is compiled and
        its declarations stay visible after the directive (llama.cpp fattn-tile.cuh:
        ``#ifdef FAST_FP16_AVAILABLE constexpr int KQ_cs = ...; #else constexpr int KQ_cs = ...; #endif``
        then ``jc0 += KQ_cs``). With a declaration in several branches the last one before the use
        wins, as for any redeclaration. Memoized per (variable, end): ``Node.parent`` walks down
        from the root each time."""
        cache = self.__dict__.get("_branch_end_cache")
        if cache is None:
            cache = self._branch_end_cache = {}
        key = (v, end)
        got = cache.get(key)
        if got is None:
            got = cache[key] = self._branch_scope_end_uncached(v, end)
        return got

    def _branch_scope_end_uncached(self: "FileModel", v: Var, end: int) -> int:
        p = v.decl.parent
        if p is None or not p.type.startswith("preproc_"):
            return end
        while p is not None and p.type.startswith("preproc_"):
            p = p.parent
        return p.end_byte if p is not None else end

    # ---- types ------------------------------------------------------------------------
    def type_of(self: "FileModel", node: ts.Node) -> Type:
        key = node.id
        t = self._type_cache.get(key)
        if t is None:
            depth = self.__dict__.get("_expr_depth", 0)
            if depth >= MAX_EXPR_DEPTH:
                return UNKNOWN  # not cached: a shallower question about this node may still be answered
            self._expr_depth = depth + 1
            try:
                t = self._type_of(node)
            except RecursionError:
                t = UNKNOWN
            finally:
                self._expr_depth = depth
            self._type_cache[key] = t
        return t

    def literal_type(self: "FileModel", node: ts.Node) -> Type:
        text = self.text(node).lower().replace("'", "")
        suffix_after = self.source.data[node.end_byte:node.end_byte + 2]
        if self.language == "glsl" and suffix_after.lower() == b"hf":
            return HALF
        if text.startswith("0x"):
            return UINT if "u" in text else INT
        is_float = ("." in text or "e" in text or text.endswith(("f", "h"))) and not text.startswith("0x")
        if is_float:
            if text.endswith("lf"):
                return DOUBLE
            if text.endswith("h") or text.endswith("hf"):
                return HALF
            if text.endswith("f"):
                return FLOAT
            return DOUBLE if self.language == "cuda" else FLOAT
        if "ll" in text:
            return scalar("uint", 64) if "u" in text else scalar("int", 64)
        if "l" in text and self.language != "glsl":
            return scalar("uint", 64) if "u" in text else scalar("int", 64)
        return UINT if "u" in text else INT

    def _type_of(self: "FileModel", node: ts.Node) -> Type:
        t = node.type
        if t == "number_literal":
            return self.literal_type(node)
        if t == "user_defined_literal":
            num = node.named_children[0] if node.named_child_count else None
            suffix = self.text(node.named_children[-1]) if node.named_child_count > 1 else ""
            if suffix in ("h", "H"):
                return HALF
            if suffix in ("hf", "HF"):
                return HALF
            return self.literal_type(num) if num is not None else UNKNOWN
        if t in ("true", "false"):
            return BOOL
        if t == "char_literal":
            return scalar("int", 8)
        if t == "parenthesized_expression":
            return self.type_of(node.named_children[-1]) if node.named_child_count else UNKNOWN
        if t in ("identifier", "qualified_identifier"):
            v = self.resolve(node)
            if v is not None:
                return v.type
            name = self.text(node)
            b = self._builtin(name)
            if b is not None:
                return b[0]
            if name in self.macros:
                val = self.macros[name]
                return INT if isinstance(val, int) else FLOAT
            if name in self.enums:
                return INT
            return UNKNOWN
        if t == "binary_expression":
            op = node.child_by_field_name("operator")
            op = self.text(op) if op is not None else ""
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if left is None or right is None:
                return UNKNOWN
            if op in COMPARE_OPS:
                return BOOL
            lt, rt = self.type_of(left), self.type_of(right)
            if op in ("<<", ">>"):
                return lt if lt.is_integer else UNKNOWN
            if op in BIT_OPS:
                r = arithmetic_result(lt, rt, self.language)
                return r if r.is_integer or r.kind == "bool" else UNKNOWN
            return arithmetic_result(lt, rt, self.language)
        if t == "unary_expression":
            op = node.child_by_field_name("operator")
            arg = node.child_by_field_name("argument")
            if arg is None:
                return UNKNOWN
            if op is not None and self.text(op) == "!":
                return BOOL
            at = self.type_of(arg)
            if op is not None and self.text(op) in ("-", "+", "~") and at.is_arithmetic and at.bits < 32 and at.kind != "float" and self.language != "glsl":
                return INT if at.width == 1 else at
            return at
        if t == "update_expression":
            arg = node.child_by_field_name("argument")
            return self.type_of(arg) if arg is not None else UNKNOWN
        if t == "assignment_expression":
            left = node.child_by_field_name("left")
            return self.type_of(left) if left is not None else UNKNOWN
        if t == "conditional_expression":
            a, b = node.child_by_field_name("consequence"), node.child_by_field_name("alternative")
            if a is None or b is None:
                return UNKNOWN
            ta, tb = self.type_of(a), self.type_of(b)
            if ta == tb:
                return ta
            return arithmetic_result(ta, tb, self.language)
        if t == "cast_expression":
            ty = node.child_by_field_name("type")
            return self.parse_type(ty) if ty is not None else UNKNOWN
        if t == "call_expression":
            return self._call_type(node)
        if t == "field_expression":
            return self._field_type(node)
        if t == "subscript_expression":
            arg = node.child_by_field_name("argument")
            if arg is None:
                return UNKNOWN
            at = self.type_of(arg)
            if at.kind in ("pointer", "array"):
                return at.pointee or UNKNOWN
            if at.is_arithmetic and at.width > 1:
                if at.name.startswith(("mat", "float", "half", "double", "dmat", "f16mat")) and "x" in at.name or at.name.startswith(("mat", "dmat")):
                    return UNKNOWN
                return at.element()
            return UNKNOWN
        if t in ("sizeof_expression", "alignof_expression"):
            return scalar("uint", 64)
        if t == "comma_expression":
            right = node.child_by_field_name("right")
            return self.type_of(right) if right is not None else UNKNOWN
        return UNKNOWN

    def parse_type(self: "FileModel", type_node: ts.Node | None) -> Type:
        """Type from a type node / type_descriptor (with pointer/reference declarators)."""
        if type_node is None:
            return UNKNOWN
        stars, base, name = _type_bytes(self.source.data[type_node.start_byte:type_node.end_byte])
        if name is not None:
            if name in self.typedefs:
                base = self.typedefs[name]
            elif name in self.structs:
                base = struct_type(name)
        for _ in range(stars):
            base = pointer_to(base)
        return base

    def _builtin(self: "FileModel", name: str) -> tuple[Type, frozenset[str], bool] | None:
        if self.language == "cuda":
            return B.CUDA_BUILTINS.get(name)
        if self.language == "glsl":
            return B.GLSL_BUILTINS.get(name)
        return None

    def callee_name(self: "FileModel", call: ts.Node) -> str:
        """The called function's name (``f``, ``ns::f`` -> ``f``, ``f<T>``, ``obj.f``); memoized per node."""
        cache = self.__dict__.get("_callee_cache")
        if cache is None:
            cache = self._callee_cache = {}
        got = cache.get(call.id)
        if got is None:
            got = cache[call.id] = self._callee_name(call)
        return got

    def _callee_name(self: "FileModel", call: ts.Node) -> str:
        fn = call.child_by_field_name("function")
        if fn is None:
            return ""
        t = fn.type
        while t == "qualified_identifier":
            name = fn.child_by_field_name("name")
            if name is None:
                break
            fn = name  # `ns::f<T>`: f (not `T>`)
            t = fn.type
        if t == "template_function":
            fn = fn.child_by_field_name("name") or fn
            t = fn.type
        if t == "field_expression":
            f = fn.child_by_field_name("field")
            return self.text(f) if f is not None else ""
        return self.text(fn).split("::")[-1]

    def call_args(self: "FileModel", call: ts.Node) -> list[ts.Node]:
        """The argument nodes of a call (a new list each time; memoized per node)."""
        return list(_memo(self, "_call_args_cache", call, _call_arg_nodes))

    def _call_type(self: "FileModel", node: ts.Node) -> Type:
        fn = node.child_by_field_name("function")
        if fn is None:
            return UNKNOWN
        args = [a for a in self.call_args(node) if a.type != "comment"]
        if fn.type == "template_function":
            name = self.text(fn.child_by_field_name("name") or fn).split("::")[-1]
            targs = fn.child_by_field_name("arguments")
            if name in ("static_cast", "as_type", "reinterpret_cast", "bit_cast", "convert") and targs is not None and targs.named_child_count:
                return self.parse_type(targs.named_children[0])
            if name in ("vec",) and targs is not None:
                return parse_type_name(self.text(fn))
        if fn.type == "field_expression":
            method = self.text(fn.child_by_field_name("field")) if fn.child_by_field_name("field") else ""
            obj = fn.child_by_field_name("argument")
            ot = self.type_of(obj) if obj is not None else UNKNOWN
            if ot.kind == "texture":
                if method.startswith("get_"):
                    return UINT
                if method in ("read", "sample", "gather", "sample_compare", "sample_grad", "sample_level"):
                    return self._texel_type(ot)
            if method == "length" and self.language == "glsl":
                return INT
            return UNKNOWN
        name = self.text(fn).split("::")[-1]
        ty = parse_type_name(name)
        if ty.is_arithmetic:  # constructor / functional cast
            return ty
        if name in self.typedefs:
            return self.typedefs[name]
        if name in B.FIXED_RESULT:
            return B.FIXED_RESULT[name]
        if name in B.VALUE_ARG:
            i = B.VALUE_ARG[name]
            return self.type_of(args[i]) if i < len(args) else UNKNOWN
        if name in B.GENERIC_MATH and args:
            types = [self.type_of(a) for a in args]
            if any(not x.is_arithmetic for x in types):
                return UNKNOWN
            if name in ("select", "mix", "step", "smoothstep", "clamp", "min", "max", "fma", "mad", "pow", "atan2", "fmod", "copysign"):
                # Result has the vector width of the widest argument and the element of the first float argument.
                res = types[0]
                for x in types[1:]:
                    res = arithmetic_result(res, x, self.language) if name != "select" else res
                return res
            return types[0]
        if name in B.SCALAR_RESULT and args:
            return self.type_of(args[0]).element()
        if name in ("texture", "texelFetch", "imageLoad", "textureLod", "textureGrad", "subpassLoad"):
            if args:
                at = self.type_of(args[0])
                if at.kind == "texture":
                    return self._texel_type(at)
            return UNKNOWN
        if name in ("textureSize", "imageSize"):
            return INT.with_width(2)
        f = self.function_by_name.get(name)
        if f is not None:
            return f.return_type
        return UNKNOWN

    def _texel_type(self: "FileModel", tex: Type) -> Type:
        name = tex.name
        m = re.search(r"<\s*([\w ]+?)\s*[,>]", name)
        if m:
            base = parse_type_name(m.group(1))
            if base.is_arithmetic:
                return base.with_width(4)
        if name.startswith(("depth",)):
            return FLOAT
        if name.startswith(("usampler", "uimage", "utexture")):
            return UINT.with_width(4)
        if name.startswith(("isampler", "iimage", "itexture")):
            return INT.with_width(4)
        if name.startswith(("sampler", "image", "texture")) and "<" not in name:
            return FLOAT.with_width(4)
        return UNKNOWN

    def _field_type(self: "FileModel", node: ts.Node) -> Type:
        arg = node.child_by_field_name("argument")
        fld = node.child_by_field_name("field")
        if arg is None or fld is None:
            return UNKNOWN
        name = self.text(fld)
        if arg.type == "identifier" and self.resolve(arg) is None:
            b = self._builtin(self.text(arg))
            if b is not None and b[0].width > 1 and _SWIZZLE.match(name):
                return b[0].element().with_width(len(name)) if len(name) > 1 else b[0].element()
        at = self.type_of(arg)
        op = node.child_by_field_name("operator")
        if at.kind == "pointer" and (at.pointee is not None and at.pointee.kind == "struct"):
            at = at.pointee  # `p->f`, and `r.f` on a reference (modelled as a pointer)
        if at.is_arithmetic and at.width > 1 and _SWIZZLE.match(name):
            el = at.element()
            return el if len(name) == 1 else el.with_width(len(name))
        if at.kind == "struct" and at.struct in self.structs:
            return self.structs[at.struct].field_type(name)
        return UNKNOWN

    # ---- constants -----------------------------------------------------------------------
    def const_value(self: "FileModel", node: ts.Node) -> int | float | None:
        """The value of a compile-time constant expression, or None if unknown / not constant."""
        key = node.id
        if key in self._const_cache:
            return self._const_cache[key]
        depth = self.__dict__.get("_expr_depth", 0)
        if depth >= MAX_EXPR_DEPTH:
            return None
        self._const_cache[key] = None  # cycle guard
        self._expr_depth = depth + 1
        try:
            v = self._const_value(node)
        except (ArithmeticError, ValueError, RecursionError, OverflowError):
            v = None
        finally:
            self._expr_depth = depth
        self._const_cache[key] = v
        return v

    def var_const_value(self: "FileModel", v: Var) -> int | float | None:
        """The value of a constant variable: ``const``/``constexpr`` with a constant initializer, not a
        parameter nor a specialization or function constant (the pipeline may set those)."""
        if (v.is_const or v.is_constexpr) and v.init is not None and not v.function_constant and not v.is_param:
            return self.const_value(v.init)
        return None

    def _const_value(self: "FileModel", node: ts.Node) -> int | float | None:
        t = node.type
        if t == "number_literal":
            return parse_number(self.text(node))
        if t == "user_defined_literal":
            return parse_number(self.text(node.named_children[0])) if node.named_child_count else None
        if t == "true":
            return 1
        if t == "false":
            return 0
        if t == "parenthesized_expression":
            return self.const_value(node.named_children[-1]) if node.named_child_count else None
        if t in ("identifier", "qualified_identifier"):
            name = self.text(node).split("::")[-1]
            v = self.resolve(node)
            if v is not None:
                return self.var_const_value(v)
            if name in self.macros:
                return self.macros[name]
            if name in self.enums:
                return self.enums[name]
            if name == "warpSize" and self.language == "cuda":
                return 32
            return None
        if t == "field_expression" and self.language == "glsl":
            arg = node.child_by_field_name("argument")
            fld = node.child_by_field_name("field")
            if arg is not None and fld is not None and self.text(arg) == "gl_WorkGroupSize" and self.workgroup_size:
                idx = "xyz".find(self.text(fld))
                if idx >= 0 and self.workgroup_size[idx] is not None:
                    return self.workgroup_size[idx]
            return None
        if t == "unary_expression":
            arg = node.child_by_field_name("argument")
            op = self.text(node.child_by_field_name("operator"))
            a = self.const_value(arg) if arg is not None else None
            if a is None:
                return None
            return {"-": lambda: -a, "+": lambda: a, "~": lambda: ~a if isinstance(a, int) else None, "!": lambda: int(not a)}.get(op, lambda: None)()
        if t == "binary_expression":
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            op = self.text(node.child_by_field_name("operator"))
            if left is None or right is None:
                return None
            a, b = self.const_value(left), self.const_value(right)
            if a is None or b is None:
                return None
            if op in ("<", ">", "<=", ">=", "==", "!=", "&&", "||"):
                return int({"<": a < b, ">": a > b, "<=": a <= b, ">=": a >= b, "==": a == b, "!=": a != b,
                            "&&": bool(a) and bool(b), "||": bool(a) or bool(b)}[op])
            r = c_binary(op, a, b)
            if isinstance(a, int) and isinstance(b, int) and self.type_of(node).is_integer:
                return int(r)
            return r
        if t == "conditional_expression":
            c = node.child_by_field_name("condition")
            cv = self.const_value(c) if c is not None else None
            if cv is None:
                return None
            branch = node.child_by_field_name("consequence" if cv else "alternative")
            return self.const_value(branch) if branch is not None else None
        if t == "cast_expression":
            v = node.child_by_field_name("value")
            val = self.const_value(v) if v is not None else None
            ty = self.type_of(node)
            if val is not None and ty.is_integer:
                return int(val)
            if val is not None and ty.is_float:
                return float(val)
            return val
        if t == "call_expression":
            args = self.call_args(node)
            name = self.callee_name(node)
            ty = parse_type_name(name)
            if ty.is_arithmetic and ty.width == 1 and len(args) == 1:
                val = self.const_value(args[0])
                if val is None:
                    return None
                return int(val) if ty.is_integer else float(val) if ty.is_float else val
            return None
        return None

    def is_constant(self: "FileModel", node: ts.Node) -> bool:
        """True for compile-time constants, including those whose value is unknown here
        (template parameters, Metal function constants, GLSL specialization constants, sizeof)."""
        if self.const_value(node) is not None:
            return True
        key = node.id
        if key in self._isconst_cache:
            return self._isconst_cache[key]
        depth = self.__dict__.get("_expr_depth", 0)
        if depth >= MAX_EXPR_DEPTH:
            return False
        self._isconst_cache[key] = False
        self._expr_depth = depth + 1
        try:
            r = self._is_constant(node)
        except RecursionError:
            r = False
        finally:
            self._expr_depth = depth
        self._isconst_cache[key] = r
        return r

    def _glsl_name_constant(self: "FileModel", name: str, depth: int) -> bool:
        """A bare name a GLSL file does not declare. Defined in the file as an object-like macro: a
        constant when its body is arithmetic of literals and such names (llama.cpp's
        '#define P_LOAD_LOOPS ((MAT_P_M * MATP_PER_LOOP + P_LOAD_PER_LOOP - 1) / P_LOAD_PER_LOOP)' over
        specialization constants), not when it reads a member or calls a function ('#define N p.n').
        Not defined in the file: a -D define of the build or a name from an #include (llama.cpp's
        NUM_COLS in mul_mat_vec_base.glsl), of unknown constness: treated as constant, so rules
        asking for a constant stay silent."""
        bodies = self.__dict__.get("_glsl_macro_bodies")
        if bodies is None:
            bodies = self._glsl_macro_bodies = {}
            for d in self.nodes("define"):
                nm = d.child_by_field_name("name")
                if nm is not None:
                    bodies.setdefault(self.text(nm), []).append(self.macro_body(d) or "")
        if name not in bodies:
            return True
        if depth > 8:
            return False
        for body in bodies[name]:
            if not body or not re.fullmatch(r"[\w\s+\-*/%()<>&|^~?:!=]*", body) or re.search(r"\w\s*\(", body):
                return False
            for word in re.findall(r"\b[A-Za-z_]\w*\b", body):
                if self._builtin(word) is not None:
                    if not self._builtin(word)[2]:
                        return False
                    continue
                v = next((g for g in self.globals if g.name == word), None)
                if v is not None:
                    if not (v.function_constant or (v.is_const and v.init is not None)):
                        return False
                elif not (word in self.macros or word in self.enums or self._glsl_name_constant(word, depth + 1)):
                    return False
        return True

    def _is_constant(self: "FileModel", node: ts.Node) -> bool:
        t = node.type
        if t in ("sizeof_expression", "alignof_expression", "number_literal", "user_defined_literal", "true", "false"):
            return True
        if t in ("identifier", "qualified_identifier"):
            v = self.resolve(node)
            if v is not None:
                if v.template_param or v.function_constant:
                    return True
                if v.is_constexpr and v.init is not None and not v.is_param:
                    return True  # C++ rejects a constexpr variable whose initializer is not a constant
                if self.language == "glsl" and v.is_const and v.is_global and v.init is not None:
                    # GLSL requires a constant expression to initialize a file-scope `const` (a
                    # specialization constant at worst), whatever names from an #include it uses:
                    # llama.cpp's `const uint32_t rows_per_thread = Br / row_split;`
                    return True
                if v.is_const and v.init is not None and not v.is_param:
                    return self.is_constant(v.init)
                return False
            name = self.text(node).split("::")[-1]
            b = self._builtin(name)
            if b is not None:
                return b[2]
            if name in self.macros or name in self.enums or name in self.constant_names:
                return True
            if self.language != "glsl" or node.type != "identifier":
                return False
            return self._glsl_name_constant(name, 0)
        if t == "field_expression":
            arg = node.child_by_field_name("argument")
            return arg is not None and arg.type == "identifier" and self.resolve(arg) is None and bool(
                (self._builtin(self.text(arg)) or (None, None, False))[2])
        if t in ("parenthesized_expression", "unary_expression", "binary_expression", "conditional_expression", "cast_expression"):
            kids = [c for c in node.named_children if c.type not in ("type_descriptor", "comment")]
            return bool(kids) and all(self.is_constant(c) for c in kids)
        if t == "call_expression":
            name = self.callee_name(node)
            args = self.call_args(node)
            if parse_type_name(name).is_arithmetic or name in ("min", "max", "abs"):
                return bool(args) and all(self.is_constant(a) for a in args)
            fn = node.child_by_field_name("function")
            if fn is not None and fn.type == "template_function" and name in ("static_cast",):
                return bool(args) and all(self.is_constant(a) for a in args)
            if self.language == "glsl" and name == "length" and not args and fn is not None \
                    and fn.type == "field_expression":
                return self._glsl_local_length(fn.child_by_field_name("argument"))
        return False

    def _misread_shape_comparison(self: "FileModel", call: ts.Node) -> ts.Node | None:
        """``k < size<3>(t)`` is read by the grammar as a call of the template ``k<size < 3>`` with
        ``(t)``: a "template function" named by a local variable, whose argument list is ``size < N``
        with a shape query. Its value depends on ``k`` alone (the shape is the same in every thread):
        the identifier node for ``k``, or None when the call is not that misreading."""
        fn = call.child_by_field_name("function")
        if fn is None or fn.type != "template_function":
            return None
        name = fn.child_by_field_name("name")
        args = fn.child_by_field_name("arguments")
        if name is None or name.type != "identifier" or args is None:
            return None
        v = self.resolve(name)
        if v is None or v.is_global or v.function is None:
            return None  # a real template of the file or a header
        kids = [c for c in args.named_children if c.type != "comment"]
        if len(kids) != 1 or kids[0].type != "binary_expression":
            return None
        q = kids[0].child_by_field_name("left")
        op = kids[0].child_by_field_name("operator")
        if q is None or op is None or self.text(op) != "<" or q.type != "identifier" \
                or self.text(q) not in _SHAPE_QUERIES or self.text(q) in self.function_by_name:
            return None
        return name

    def _glsl_local_length(self: "FileModel", obj: ts.Node | None) -> bool:
        """``x.length()`` on a function's own array, vector, matrix or cooperative matrix (or an
        element of one): its size is fixed when the pipeline is compiled (a constant expression for
        sized arrays and vectors), so a loop to it unrolls (ncnn's ``for (i = 0; i < previous.length();
        i++) previous[i] = ...``). Not the run-time-sized last member of a buffer block
        (``data.length()``), which is a global."""
        while obj is not None and obj.type in ("subscript_expression", "parenthesized_expression"):
            obj = obj.child_by_field_name("argument") if obj.type == "subscript_expression" \
                else (obj.named_children[0] if obj.named_children else None)
        if obj is None or obj.type != "identifier":
            return False
        v = self.resolve(obj)
        return v is not None and v.function is not None and not v.is_global

    # ---- thread dependence (uniformity) ------------------------------------------------------
    def deps(self: "FileModel", node: ts.Node) -> frozenset[str]:
        """Which thread-varying sources an expression's value depends on: ``local`` (differs
        between threads of a group), ``group`` (differs between groups), ``unknown``."""
        key = node.id
        d = self._deps_cache.get(key)
        if d is None:
            if self._dependence_pending:  # (the cache is empty until the fixpoint ran: see FileModel.var_deps)
                self._ensure_dependence()
                return self.deps(node)
            if self._dep_leaves is not None:  # inside the dependence fixpoint: its compiled form
                try:
                    d = self._deps_cache[key] = self._formula_value(self._dep_formula(node))
                except RecursionError:  # (near the interpreter's limit: the walk decides, as it would)
                    raise DependenceTooDeep from None
                return d
            depth = self.__dict__.get("_expr_depth", 0)
            if depth >= MAX_EXPR_DEPTH:
                return frozenset({B.UNKNOWN_DEP})
            self._deps_cache[key] = frozenset()  # cycle guard
            self._expr_depth = depth + 1
            try:
                d = self._deps(node)
            except RecursionError:
                d = frozenset({B.UNKNOWN_DEP})
            finally:
                self._expr_depth = depth
            self._deps_cache[key] = d
        return d

    def _deps(self: "FileModel", node: ts.Node) -> frozenset[str]:
        t = node.type
        if t in ("identifier", "qualified_identifier"):
            v = self.resolve(node)
            if v is not None:
                flow = self.flow
                keys = flow.reaching(v, node) if flow is not None else None
                reads = self._dep_reads
                if keys is not None:  # a dominating plain assignment: only the writes that reach here
                    if reads is not None:
                        reads.update(dict.fromkeys(keys))
                    out: set[str] = set()
                    for k in keys:
                        out |= flow.deps.get(k, frozenset())
                    return frozenset(out)
                if reads is not None:
                    reads[v] = None
                return self.var_deps.get(v, frozenset())
            b = self._builtin(self.text(node))
            if b is not None:
                return b[1]
            return frozenset()
        if t in ("number_literal", "user_defined_literal", "true", "false", "string_literal", "char_literal",
                 "sizeof_expression", "type_descriptor", "primitive_type", "type_identifier", "field_identifier"):
            return frozenset()
        if t == "call_expression":
            name = self.callee_name(node)
            if name in _SHAPE_QUERIES and name not in self.function_by_name:
                return frozenset()  # the shape of a thread's partition of a tensor is the same in every thread
            misread = self._misread_shape_comparison(node)
            if misread is not None:
                return self.deps(misread)
            if name in ("__syncthreads_count", "__syncthreads_and", "__syncthreads_or"):
                return frozenset()  # the block-wide vote: every thread of the block gets the same result
            out: set[str] = set()
            for a in self._result_args(node, name):
                out |= self.deps(a)
            fn = node.child_by_field_name("function")
            if fn is not None and fn.type == "field_expression":
                obj = fn.child_by_field_name("argument")
                if obj is not None:
                    out |= self.deps(obj)
            f = self.function_by_name.get(name)
            if f is not None:
                out |= self.intrinsic_deps.get(f, frozenset())
            elif name in ("simd_is_first", "subgroupElect", "thread_rank", "simd_prefix_exclusive_sum",
                          "simd_prefix_inclusive_sum", "subgroupExclusiveAdd", "subgroupInclusiveAdd"):
                out.add(B.LOCAL)
            elif name in ("simd_sum", "simd_max", "simd_min", "simd_broadcast_first", "subgroupAdd", "subgroupMax",
                          "subgroupMin", "subgroupBroadcastFirst", "simd_shuffle", "simd_shuffle_down",
                          "__shfl_down_sync", "__shfl_sync", "__shfl_xor_sync", "__shfl_up_sync", "subgroupShuffle"):
                out.add(B.LOCAL) if out else None
            return frozenset(out)
        if t == "subscript_expression":
            arg = node.child_by_field_name("argument")
            out = set()
            for c in node.named_children:
                out |= self.deps(c)
            base = self.base_var(arg) if arg is not None else None
            if base is not None and base.address_space in ("threadgroup", "shared"):
                out.add(B.UNKNOWN_DEP)
            return frozenset(out)
        if t == "field_expression":
            arg = node.child_by_field_name("argument")
            if arg is None:
                return frozenset()
            if self.language == "glsl" and arg.type == "identifier" and self.text(arg) in _GLSL_POSITIONS:
                fld = node.child_by_field_name("field")
                axis = "xyz".find(self.text(fld)) if fld is not None and len(self.text(fld)) == 1 else -1
                if axis >= 0 and self.resolve(arg) is None and _flat_axis(self, axis):
                    # one thread wide in this axis: the global position is the group's, the local one 0
                    return frozenset({B.GROUP}) if self.text(arg) == "gl_GlobalInvocationID" else frozenset()
            d = self.deps(arg)
            base = self.base_var(arg)
            if base is not None and base.address_space in ("threadgroup", "shared"):
                d = d | {B.UNKNOWN_DEP}
            return d
        out = set()
        for c in node.named_children:
            out |= self.deps(c)
        return frozenset(out)

    # ---- the same, compiled for the dependence fixpoint ---------------------------------------
    # The fixpoint (``_Builder.compute_dependence``) evaluates every write's right-hand side and
    # conditions once per round, with the memo cleared at each round's start. A node's value is a
    # union of constants and of *leaves*, the only parts that read the fixpoint's state: an
    # identifier (its variable's dependence, or that of the writes reaching it) and the result of a
    # call of a file's function (``intrinsic_deps``); a shuffle-like call adds ``local`` when its
    # operands depend on anything. ``_dep_formula`` builds that form once per node (what ``_deps``
    # finds walking the tree: structure only), and a round evaluates it reading each leaf once,
    # memoized per round like ``_deps_cache``. Within a round the original memo freezes each
    # node's value at its first evaluation; that value is a function of its leaves' values frozen
    # at their first evaluation, which happens at the same moment here, so every value, and every
    # read recorded for the fixpoint's ``stale`` test, is the same as ``_deps`` gives.
    def _dep_formula(self: "FileModel", node: ts.Node, depth: int = 0) -> tuple:
        """(constant sources, leaf ids, shuffle sub-formulas, height) of ``node``'s dependence."""
        forms = self._dep_forms
        fm = forms.get(node.id)
        if fm is None:
            if depth >= _FORMULA_DEPTH:
                raise DependenceTooDeep
            fm = forms[node.id] = self._dep_compile(node, depth + 1)
        if fm[3] + depth >= _FORMULA_DEPTH:
            raise DependenceTooDeep  # the plain walk might reach MAX_EXPR_DEPTH here: it decides
        return fm

    def _dep_compile(self: "FileModel", node: ts.Node, depth: int) -> tuple:
        t = node.type
        if t in ("identifier", "qualified_identifier"):
            v = self.resolve(node)
            if v is not None:
                flow = self.flow
                keys = flow.reaching(v, node) if flow is not None else None
                self._dep_specs[node.id] = (v, keys)
                return (_NO_DEPS, (node.id,), (), 1)
            b = self._builtin(self.text(node))
            return (b[1], (), (), 1) if b is not None else _EMPTY_FORMULA
        if t in _NO_DEP_TYPES:
            return _EMPTY_FORMULA
        form = self._dep_formula
        if t == "call_expression":
            name = self.callee_name(node)
            if name in _SHAPE_QUERIES and name not in self.function_by_name:
                return _EMPTY_FORMULA
            misread = self._misread_shape_comparison(node)
            if misread is not None:
                fm = form(misread, depth)
                return (fm[0], fm[1], fm[2], fm[3] + 1)
            if name in ("__syncthreads_count", "__syncthreads_and", "__syncthreads_or"):
                return _EMPTY_FORMULA
            parts = [form(a, depth) for a in self._result_args(node, name)]
            fn = node.child_by_field_name("function")
            if fn is not None and fn.type == "field_expression":
                obj = fn.child_by_field_name("argument")
                if obj is not None:
                    parts.append(form(obj, depth))
            f = self.function_by_name.get(name)
            if f is not None:
                self._dep_specs[node.id] = f
                parts.append((_NO_DEPS, (node.id,), (), 0))
            elif name in _LOCAL_RESULT_CALLS:
                parts.append((_LOCAL_ONLY, (), (), 0))
            elif name in _SHUFFLE_CALLS:
                inner = _merge(parts)
                if not inner[1] and not inner[2]:  # known now: local when anything else is
                    return ((inner[0] | _LOCAL_ONLY) if inner[0] else _NO_DEPS, (), (), inner[3])
                return (_NO_DEPS, (), (inner,), inner[3])
            return _merge(parts)
        if t == "subscript_expression":
            fm = _merge([form(c, depth) for c in node.named_children])
            arg = node.child_by_field_name("argument")
            base = self.base_var(arg) if arg is not None else None
            if base is not None and base.address_space in ("threadgroup", "shared"):
                fm = (fm[0] | _UNKNOWN_ONLY, fm[1], fm[2], fm[3])
            return fm
        if t == "field_expression":
            arg = node.child_by_field_name("argument")
            if arg is None:
                return _EMPTY_FORMULA
            if self.language == "glsl" and arg.type == "identifier" and self.text(arg) in _GLSL_POSITIONS:
                fld = node.child_by_field_name("field")
                axis = "xyz".find(self.text(fld)) if fld is not None and len(self.text(fld)) == 1 else -1
                if axis >= 0 and self.resolve(arg) is None and _flat_axis(self, axis):
                    return (frozenset({B.GROUP}) if self.text(arg) == "gl_GlobalInvocationID" else _NO_DEPS, (), (), 1)
            fm = form(arg, depth)
            base = self.base_var(arg)
            if base is not None and base.address_space in ("threadgroup", "shared"):
                return (fm[0] | _UNKNOWN_ONLY, fm[1], fm[2], fm[3] + 1)
            return (fm[0], fm[1], fm[2], fm[3] + 1)
        return _merge([form(c, depth) for c in node.named_children])

    def _formula_value(self: "FileModel", fm: tuple) -> frozenset[str]:
        const, leaves, subs, _ = fm
        if not leaves and not subs:
            return const
        memo = self._dep_leaves
        out = set(const)
        for leaf in leaves:
            v = memo.get(leaf)
            if v is None:
                v = self._leaf_value(leaf)
            if v:
                out |= v
        for sub in subs:
            v = self._formula_value(sub)
            if v:
                out |= v
                out.add(B.LOCAL)
        return frozenset(out)

    def _leaf_value(self: "FileModel", leaf: int) -> frozenset[str]:
        spec = self._dep_specs[leaf]
        if type(spec) is tuple:  # an identifier: (variable, the writes reaching it or None)
            v, keys = spec
            reads = self._dep_reads
            if keys is not None:
                if reads is not None:
                    reads.update(dict.fromkeys(keys))
                wdeps = self._flow.deps
                out: set[str] = set()
                for k in keys:
                    out |= wdeps.get(k, _NO_DEPS)
                d = frozenset(out)
            else:
                if reads is not None:
                    reads[v] = None
                d = self._var_deps.get(v, _NO_DEPS)
        else:  # a call of the file's function
            d = self._intrinsic_deps.get(spec, _NO_DEPS)
        self._dep_leaves[leaf] = d
        return d

    def _result_args(self: "FileModel", call: ts.Node, name: str) -> list[ts.Node]:
        """The arguments a call's result can depend on: for a function of the file (one definition
        of that name, called by name with one argument per parameter), those whose parameter's
        value on entry can reach its result (``model.flow``); otherwise all of them."""
        args = self.call_args(call)
        flow = self.flow
        fn = call.child_by_field_name("function")
        if flow is None or fn is None or fn.type not in ("identifier", "qualified_identifier", "template_function"):
            return args
        f = self.function_by_name.get(name)
        if f is None or flow.definitions(name) != 1:
            return args
        real = [a for a in args if a.type != "comment"]
        if len(real) != len(f.params):
            return args
        used = flow.params_reaching_result(f)
        if used is None:
            return args
        return [a for i, a in enumerate(real) if i in used]

    def base_var(self: "FileModel", node: ts.Node) -> Var | None:
        """The variable at the root of an lvalue/rvalue like ``a[i].x``, ``p->f``, ``buf.data[i]``."""
        n = node
        for _ in range(64):
            n = unparen(n)
            if n.type in ("identifier", "qualified_identifier"):
                return self.resolve(n)
            if n.type in ("subscript_expression", "field_expression"):
                nxt = n.child_by_field_name("argument")
            elif n.type == "pointer_expression" or (n.type == "unary_expression"):
                nxt = n.child_by_field_name("argument")
            else:
                return None
            if nxt is None:
                return None
            n = nxt
        return None

    # ---- writes ---------------------------------------------------------------------------
    def _write_index(self: "FileModel") -> tuple[dict[int, list[ts.Node]], dict[int, list[ts.Node]]]:
        idx = self.__dict__.get("_write_index_cache")
        if idx is None:
            direct: dict[int, list[ts.Node]] = {}
            based: dict[int, list[ts.Node]] = {}
            for a in sorted(self.nodes("assign") + self.nodes("update"), key=lambda n: n.start_byte):
                target = a.child_by_field_name("left") or a.child_by_field_name("argument")
                if target is None:
                    continue
                t = unparen(target)
                if t.type == "identifier":
                    v = self.resolve(t)
                    if v is not None:
                        direct.setdefault(id(v), []).append(a)
                b = self.base_var(target)
                if b is not None:
                    based.setdefault(id(b), []).append(a)
            idx = self._write_index_cache = (direct, based)
        return idx

    def direct_writes(self: "FileModel", var: Var) -> list[ts.Node]:
        """Assignments and ``++``/``--`` whose target is the variable itself (``v = …``, ``v += …``)."""
        return self._write_index()[0].get(id(var), [])

    def writes_into(self: "FileModel", var: Var) -> list[ts.Node]:
        """Assignments and ``++``/``--`` to the variable or into it (``v[i] = …``, ``v.x += …``)."""
        return self._write_index()[1].get(id(var), [])

    def is_local_varying(self: "FileModel", node: ts.Node) -> bool:
        return B.LOCAL in self.deps(node)


class DependenceTooDeep(Exception):
    """An expression too deep for the compiled dependence form: the fixpoint walks the tree instead."""


#: Deeper than this (below a node the fixpoint evaluates), the plain walk decides (MAX_EXPR_DEPTH).
_FORMULA_DEPTH = MAX_EXPR_DEPTH // 2
_NO_DEPS: frozenset[str] = frozenset()
_LOCAL_ONLY = frozenset({B.LOCAL})
_UNKNOWN_ONLY = frozenset({B.UNKNOWN_DEP})
_EMPTY_FORMULA = (_NO_DEPS, (), (), 1)
_NO_DEP_TYPES = frozenset(("number_literal", "user_defined_literal", "true", "false", "string_literal", "char_literal",
                           "sizeof_expression", "type_descriptor", "primitive_type", "type_identifier", "field_identifier"))
_LOCAL_RESULT_CALLS = frozenset(("simd_is_first", "subgroupElect", "thread_rank", "simd_prefix_exclusive_sum",
                                 "simd_prefix_inclusive_sum", "subgroupExclusiveAdd", "subgroupInclusiveAdd"))
_SHUFFLE_CALLS = frozenset(("simd_sum", "simd_max", "simd_min", "simd_broadcast_first", "subgroupAdd", "subgroupMax",
                            "subgroupMin", "subgroupBroadcastFirst", "simd_shuffle", "simd_shuffle_down",
                            "__shfl_down_sync", "__shfl_sync", "__shfl_xor_sync", "__shfl_up_sync", "subgroupShuffle"))


def _merge(parts: list[tuple]) -> tuple:
    """The union of formulas, one level up."""
    if not parts:
        return _EMPTY_FORMULA
    if len(parts) == 1:
        c, leaves, subs, h = parts[0]
        return (c, leaves, subs, h + 1)
    const = _NO_DEPS
    leaves: dict[int, None] = {}
    subs: list[tuple] = []
    h = 0
    for c, lv, sb, ph in parts:
        if c:
            const = const | c
        if lv:
            leaves.update(dict.fromkeys(lv))
        if sb:
            subs.extend(sb)
        if ph > h:
            h = ph
    return (const, tuple(leaves), tuple(subs), h + 1)


def _call_arg_nodes(call: ts.Node) -> tuple[ts.Node, ...]:
    args = call.child_by_field_name("arguments")
    return tuple(args.named_children) if args is not None else ()


def _memo(model, attr: str, node: ts.Node, compute):
    """``compute(node)`` memoized per node in the dict ``model.<attr>`` (created on first use)."""
    cache = model.__dict__.get(attr)
    if cache is None:
        cache = model.__dict__[attr] = {}
    got = cache.get(node.id)
    if got is None:
        got = cache[node.id] = compute(node)
    return got


_GLSL_POSITIONS = ("gl_GlobalInvocationID", "gl_LocalInvocationID")
_LOCAL_POSITION = re.compile(rb"\bgl_LocalInvocationID\b(\s*\.\s*([A-Za-z]+))?")
_LINEAR_POSITIONS = re.compile(rb"\bgl_LocalInvocationIndex\b|\bgl_WorkGroupSize\s*\.\s*[xyzrgbstp]*[yzgbtp]")


def _flat_axis(m: "FileModel", axis: int) -> bool:
    """True when a GLSL compute group is one thread wide along ``axis`` (0 = x): declared so
    (``layout(local_size_x = 64) in;`` leaves y and z at 1), or, when the file does not say (no
    declaration: the host injects it, as ncnn does; ``local_size_z_id``), when it tells its
    threads apart only along other axes: it reads ``gl_LocalInvocationID.x``/``.y`` but never this axis's component, the
    whole vector, a swizzle naming this axis, ``gl_LocalInvocationIndex`` or the group's extent
    along y or z (``gl_WorkGroupSize.y``). Threads differing only along such an axis would share
    every shared-memory slot and every decision the kernel makes from its local position: the
    kernel is written for groups one thread wide there, and ``gl_GlobalInvocationID.z`` is the
    group's (``if (gz >= heads) return;`` before a barrier exits whole groups). Subgroup IDs do not
    count as reading an axis (cooperative-matrix kernels on 1-D groups use them); they could tell
    threads apart along y or z too, and then the analysis errs towards silence."""
    size = getattr(m, "workgroup_size", None)
    cache = m.__dict__.get("_flat_axes")
    if cache is None or cache[0] != size:
        cache = m.__dict__["_flat_axes"] = (size, _flat_axes(m))
    return cache[1][axis]


def _flat_axes(m: "FileModel") -> tuple[bool, bool, bool]:
    size = getattr(m, "workgroup_size", None) or (None, None, None)  # None: not declared, or a specialization constant
    if all(s is not None for s in size):
        return tuple(s == 1 for s in size)  # type: ignore[return-value]
    unread = _unread_axes(m)
    return tuple(s == 1 if s is not None else unread[i] for i, s in enumerate(size))  # type: ignore[return-value]


def _unread_axes(m: "FileModel") -> tuple[bool, bool, bool]:
    data = m.source.data
    if any(not m.source.in_comment_or_string(x.start()) for x in _LINEAR_POSITIONS.finditer(data)):
        return (False, False, False)
    used = [False, False, False]
    for x in _LOCAL_POSITION.finditer(data):
        if m.source.in_comment_or_string(x.start()):
            continue
        comps = x.group(2).decode() if x.group(2) is not None else None
        if comps is None or any(c not in "xyzrgbstp" for c in comps):
            return (False, False, False)  # the whole vector, or something the scan cannot read
        for c in comps:
            used["xyz".find(c) if c in "xyz" else "rgb".find(c) if c in "rgb" else "stp".find(c)] = True
    if not any(used):
        return (False, False, False)  # no evidence of how the group is laid out
    return (not used[0], not used[1], not used[2])
