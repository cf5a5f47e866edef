"""Grid sizes that round down, read from host code (SL503 on host files).

A launch that counts whole groups (CUDA ``<<<>>>``, ``vkCmdDispatch``, Metal
``dispatchThreadgroups``) covers ``grid * group`` threads. A grid axis computed as ``n / b``,
as ``ceil(n / b)`` on integer operands (the division truncates before ``ceil`` sees it), as
``floor(…)`` of a division or rounded to nearest (``(int)((float)n / b + 0.5)``, ``lround``,
Swift ``Int(x + 0.5)``) leaves the last ``n % b`` items without a thread whenever ``n`` is not a
multiple of ``b``. :func:`read` returns one :class:`~shaderlint.host.Truncation` per such axis
that the file does not prove exact:

* constant operands with an exact quotient (``4096 / 256``) are exact;
* a numerator that already rounds (``(n + b - 1) / b``, ``n / b + 1``: any ``+``/``-`` at its
  top) is not read;
* a numerator that is a product with the divisor as a factor (``rows * 256 / 256``, through
  a variable given one value: ``int padded = ((n + 255) / 256) * 256;``) or a shift ``1 << k``
  by at least the divisor's power of two is a multiple;
* the file naming the remainder anywhere (``n % 256``, ``n & 255``, Swift
  ``n.isMultiple(of: 256)``): a check, an assertion or a tail handled apart, which this reader
  does not try to order against the launch. Lenient on purpose: when in doubt, silent.

Whether the divisor is the group size along the axis is left to the caller that knows the
kernel (a Vulkan group size is the shader's); :attr:`Truncation.as_group` says whether the
host writes it as the launch's own group expression.

The values come from the scanners' own evaluators (:class:`shaderlint.host._c.Constants` for
C and C++, the Metal scanners' :class:`~shaderlint.host._metal_analysis._Analysis` for Swift,
Objective-C and metal-cpp): this module only reads the shapes of expressions.
"""

from __future__ import annotations

import re

import tree_sitter as ts

from shaderlint.host import Span, Truncation

_INT_TYPE = re.compile(
    r"^(?:(?:const|constexpr|static|volatile|register)\s+)*(?:unsigned|signed|int|long|short|size_t|ssize_t|"
    r"ptrdiff_t|std::size_t|u?int(?:8|16|32|64)_t|std::u?int(?:8|16|32|64)_t|uint|NSU?Integer|NS::U?Integer|"
    r"GLu?int|GLsizei|UINT|INT|DWORD)\b(?:\s+(?:int|long|short|const))*\s*$")
_SIZE_CTORS = frozenset({"dim3", "make_uint3", "make_int3", "uint3", "MTLSizeMake", "MTLSize", "MTL::Size",
                         "MTL::Size::Make", "MTL::Size::make"})
_CEIL = frozenset({"ceil", "ceilf", "ceill", "std::ceil", "std::ceilf"})
_FLOOR = frozenset({"floor", "floorf", "floorl", "std::floor", "std::floorf"})
_ROUND = frozenset({"round", "roundf", "lround", "lroundf", "llround", "llroundf", "rint", "rintf", "lrint",
                    "lrintf", "nearbyint", "nearbyintf", "std::round", "std::lround", "std::rint",
                    "std::nearbyint"})
_HALF = re.compile(r"^0?\.50*[fFlL]?$|^0\.50*[eE]0[fFlL]?$")
_FLOAT_LIT = re.compile(r"^(\d+)\.0*(?:[eE]0)?[fFlLhH]?$|^(\d+)[fF]$")


def _nospace(s: str) -> str:
    return "".join(s.split())


class Reader:
    """How one grammar family spells sizes, divisions and roundings; values and names come from
    the scanner's evaluator (subclasses)."""

    def __init__(self, data: bytes, span) -> None:
        self.data = data
        self.span_of = span  # node -> Span
        self._flat: str | None = None

    # -- provided by the evaluator
    def follow(self, node: ts.Node) -> ts.Node | None:
        """The one expression a name keeps (its initializer), or None."""
        return None

    def value(self, node: ts.Node) -> int | None:
        return None

    # -- grammar shapes (C family here; Swift overrides)
    def text(self, node: ts.Node | None) -> str:
        if node is None:
            return ""
        return self.data[node.start_byte:node.end_byte].decode("utf-8", "replace")

    def unparen(self, node: ts.Node) -> ts.Node:
        for _ in range(16):
            if node.type == "parenthesized_expression":
                kids = [c for c in node.named_children if c.type != "comment"]
                if len(kids) != 1:
                    return node
                node = kids[0]
            else:
                return node
        return node

    def strip(self, node: ts.Node) -> ts.Node:
        """Without parentheses and casts (a cast to an integer of a division still truncates)."""
        for _ in range(16):
            node = self.unparen(node)
            if node.type == "cast_expression" and node.child_by_field_name("value") is not None:
                node = node.child_by_field_name("value")
            elif node.type == "call_expression" and self.callee(node) in ("static_cast", "uint32_t", "int",
                                                                          "unsigned", "size_t", "NSUInteger") \
                    and len(self.args(node)) == 1:
                node = self.args(node)[0]
            else:
                return node
        return node

    def callee(self, call: ts.Node) -> str:
        f = call.child_by_field_name("function")
        if f is None:
            return ""
        if f.type == "template_function":
            f = f.child_by_field_name("name") or f
        return _nospace(self.text(f))

    def args(self, call: ts.Node) -> list[ts.Node]:
        a = call.child_by_field_name("arguments")
        return [c for c in a.named_children if c.type != "comment"] if a is not None else []

    def binary(self, node: ts.Node, ops: tuple[str, ...]) -> tuple[ts.Node, str, ts.Node] | None:
        if node.type != "binary_expression":
            return None
        op = self.text(node.child_by_field_name("operator"))
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if op not in ops or left is None or right is None:
            return None
        return self.unparen(left), op, self.unparen(right)

    def is_name(self, node: ts.Node) -> bool:
        return node.type == "identifier"

    def size_parts(self, node: ts.Node) -> list[ts.Node] | None:
        """The (x, y, z) expressions of a size constructor (``dim3(…)``, ``MTLSizeMake(…)``,
        ``{…}``), None when ``node`` is not one."""
        if node.type in ("argument_list", "initializer_list"):
            return [c for c in node.named_children if c.type != "comment"]
        if node.type == "call_expression" and self.callee(node) in _SIZE_CTORS:
            return self.args(node)
        if node.type == "compound_literal_expression":
            v = node.child_by_field_name("value")
            return [c for c in v.named_children if c.type != "comment"] if v is not None else None
        return None

    def call_arg(self, node: ts.Node, names: frozenset[str]) -> ts.Node | None:
        if node.type == "call_expression" and self.callee(node) in names and len(self.args(node)) == 1:
            return self.args(node)[0]
        return None

    def is_half(self, node: ts.Node) -> bool:
        return node.type in ("number_literal", "real_literal") and _HALF.match(self.text(node).strip()) is not None

    def round_arg(self, node: ts.Node) -> ts.Node | None:
        """``x`` of a round to nearest: ``round(x)``, ``(int)(x + 0.5)``, ``x + 0.5`` converted by the grid."""
        got = self.call_arg(node, _ROUND)
        if got is not None:
            return got
        inner = node
        if node.type == "cast_expression" and node.child_by_field_name("value") is not None:
            inner = self.unparen(node.child_by_field_name("value"))
        elif node.type == "call_expression" and self.callee(node) in ("static_cast", "int", "uint32_t", "unsigned"):
            a = self.args(node)
            inner = self.unparen(a[0]) if len(a) == 1 else node
        b = self.binary(inner, ("+",))
        if b is None:
            return None
        if self.is_half(b[2]):
            return b[0]
        if self.is_half(b[0]):
            return b[2]
        return None

    def number(self, node: ts.Node) -> int | None:
        """The value of an integer, or of a floating-point literal with an integral value (``176.0f``)."""
        v = self.value(node)
        if v is not None:
            return v
        n = self.unparen(node)
        if n.type in ("number_literal", "real_literal"):
            m = _FLOAT_LIT.match(self.text(n).strip())
            if m:
                return int(m.group(1) or m.group(2))
        return None

    def is_int(self, node: ts.Node) -> bool:
        """``node`` surely has an integer type (for ``ceil(n / b)``: the division truncates first)."""
        n = self.unparen(node)
        if n.type == "number_literal":
            t = self.text(n).strip().lower()
            return t.startswith("0x") or not any(c in t for c in ".ef")
        if n.type == "cast_expression":
            typ = n.child_by_field_name("type")
            return typ is not None and _INT_TYPE.match(self.text(typ).strip()) is not None
        if n.type == "identifier":
            typ = declared_type(self, n)
            if typ is not None:
                return _INT_TYPE.match(typ) is not None
            return self.is_int_macro(n)
        b = self.binary(n, ("+", "-", "*", "/", "%", "<<", ">>", "&", "|"))
        if b is not None:
            return self.is_int(b[0]) and self.is_int(b[2])
        return False

    def is_int_macro(self, node: ts.Node) -> bool:
        """``node`` names a macro whose body is an integer expression (a ``#define``)."""
        return False

    def flat(self) -> str:
        if self._flat is None:
            self._flat = _nospace(self.data.decode("utf-8", "replace"))
        return self._flat


def declared_type(r: Reader, ident: ts.Node) -> str | None:
    """The type text of the C declaration (or parameter) ``ident`` refers to, the innermost
    preceding one; None when not found."""
    name = r.text(ident)
    p = ident.parent
    steps = 0
    while p is not None and steps < 64:
        steps += 1
        if p.type in ("compound_statement", "translation_unit", "declaration_list", "for_statement"):
            best = None
            for c in p.named_children:
                if c.start_byte >= ident.start_byte:
                    break
                if c.type in ("declaration", "field_declaration") and _declares(r, c, name):
                    best = c
            if best is not None:
                typ = best.child_by_field_name("type")
                quals = " ".join(r.text(q) for q in best.children if q.type == "type_qualifier")
                return (quals + " " + r.text(typ)).strip() if typ is not None else None
        elif p.type in ("function_definition", "method_definition"):
            for param in _params(p):
                if _declares(r, param, name):
                    typ = param.child_by_field_name("type")
                    if typ is None:  # an Objective-C method parameter: `(NSUInteger)count`
                        typ = next((c for c in param.named_children if c.type == "method_type"), None)
                        return r.text(typ).strip("() ") if typ is not None else None
                    return r.text(typ)
        p = p.parent
    return None


def _params(fn: ts.Node) -> list[ts.Node]:
    if fn.type == "method_definition":
        return [c for c in fn.named_children if c.type == "method_parameter"]
    d = fn.child_by_field_name("declarator")
    for _ in range(8):
        if d is None:
            return []
        if d.type == "function_declarator":
            ps = d.child_by_field_name("parameters")
            return [c for c in ps.named_children if c.type == "parameter_declaration"] if ps is not None else []
        d = d.child_by_field_name("declarator")
    return []


def _declares(r: Reader, decl: ts.Node, name: str) -> bool:
    if decl.type == "method_parameter":
        return any(c.type == "identifier" and r.text(c) == name for c in decl.named_children)
    for d in decl.children_by_field_name("declarator"):
        for _ in range(8):
            if d is None:
                break
            if d.type == "identifier":
                if r.text(d) == name:
                    return True
                break
            d = d.child_by_field_name("declarator")
    return False


# ---- the reading -------------------------------------------------------------------------------------


def axes(r: Reader, node: ts.Node | None) -> list[ts.Node] | None:
    """The per-axis expressions of a grid or group argument (a size constructor, a variable
    holding one, or a scalar for x)."""
    if node is None:
        return None
    n = r.unparen(node)
    for _ in range(4):
        parts = r.size_parts(n)
        if parts is not None:
            return parts if 1 <= len(parts) <= 3 else None
        if not r.is_name(n):
            return [n]
        nxt = r.follow(n)
        if nxt is None:
            return [n]
        n = r.unparen(nxt)
    return None


def read(r: Reader, grid: ts.Node | list[ts.Node] | None, group: ts.Node | list[ts.Node] | None = None
         ) -> tuple[Truncation, ...]:
    """The grid axes of one launch that round down (see the module). Never raises."""
    try:
        g_axes = grid if isinstance(grid, list) else axes(r, grid)
        if not g_axes:
            return ()
        b_axes = group if isinstance(group, list) else axes(r, group)
        out = []
        for i, a in enumerate(g_axes[:3]):
            b = b_axes[i] if b_axes is not None and i < len(b_axes) else None
            t = _axis(r, a, b, i)
            if t is not None:
                out.append(t)
        return tuple(out)
    except Exception:  # (RecursionError included): an axis not read loses no launch, it reports nothing
        return ()


def _follow_all(r: Reader, node: ts.Node) -> ts.Node:
    n = r.unparen(node)
    for _ in range(4):
        if not r.is_name(n):
            break
        nxt = r.follow(n)
        if nxt is None or r.size_parts(r.unparen(nxt)) is not None:
            break
        n = r.unparen(nxt)
    return n


def _axis(r: Reader, node: ts.Node, group: ts.Node | None, axis: int) -> Truncation | None:
    e = _follow_all(r, node)
    whole = e
    kind = "floor"
    inner = r.round_arg(e)
    if inner is not None:
        kind = "round"
        e = r.strip(inner)
    else:
        e = whole = r.strip(e)
        inner = r.call_arg(e, _CEIL)
        if inner is not None:
            kind = "ceil"
            e = r.strip(inner)
        else:
            inner = r.call_arg(e, _FLOOR)
            if inner is not None:
                e = r.strip(inner)
    d = r.division(e)
    if d is None:
        return None
    num, den = d
    if kind == "ceil" and not (r.is_int(num) and r.is_int(den)):
        return None  # `ceil(n / 256.0)`: a floating-point division, rounded up
    core = r.strip(num)
    if r.additive(core):
        return None  # `(n + b - 1) / b` and friends
    dv = r.number(den)
    if dv is not None and dv <= 1:
        return None
    nv = r.value(core)
    if nv is not None and dv is not None and nv % dv == 0:
        return None  # exact: 4096 / 256
    if nv is None and (_multiple(r, core, den, dv, 0) or _checked(r, core, den, dv)):
        return None
    n_text, d_text = r.text(core), r.text(r.strip(den) if kind != "round" else r.unparen(den))
    as_group = group is not None and _nospace(r.text(r.strip(den))) == _nospace(r.text(r.strip(group)))
    return Truncation(axis, r.span_of(whole), kind, n_text, d_text, dv, as_group, _round_up(r, core, den, dv), nv)


def _multiple(r: Reader, num: ts.Node, den: ts.Node, dv: int | None, depth: int) -> bool:
    """``num`` is a product with the divisor as a factor, or a large enough power of two."""
    if depth > 3:
        return False
    n = r.strip(num)
    if r.is_name(n):
        nxt = r.follow(n)
        if nxt is None:
            return False
        n = r.strip(nxt)
    p = r.product(n)
    if p is not None:
        want = _nospace(r.text(r.strip(den)))
        for f in p:
            f = r.strip(f)
            if _nospace(r.text(f)) == want:
                return True
            fv = r.value(f)
            if fv is not None and dv and fv % dv == 0:
                return True
            if _multiple(r, f, den, dv, depth + 1):
                return True
        return False
    s = r.shift(n)
    if s is not None and dv and dv & (dv - 1) == 0:
        k = r.value(s)
        return k is not None and 0 <= k < 64 and (1 << k) % dv == 0
    return False


def _checked(r: Reader, num: ts.Node, den: ts.Node, dv: int | None) -> bool:
    """The file names the remainder ``num % den`` (or ``num & (den - 1)``) somewhere."""
    n, d = _nospace(r.text(num)), _nospace(r.text(r.strip(den)))
    flat = r.flat()
    pats = [f"{n}%{d}", f"{n}%({d})", f"({n})%{d}", f"{n}.isMultiple(of:{d}", f"{n}&({d}-1)"]
    if dv is not None:
        pats += [f"{n}%{dv}", f"{n}.isMultiple(of:{dv}"]
        if dv & (dv - 1) == 0:
            pats += [f"{n}&{dv - 1}", f"{n}&({dv - 1})", f"{n}&{hex(dv - 1)}"]
    return any(p in flat for p in pats)


def _round_up(r: Reader, num: ts.Node, den: ts.Node, dv: int | None) -> str:
    n = r.text(num)
    if not (r.is_name(num) or num.type in ("number_literal", "integer_literal", "field_expression",
                                           "navigation_expression", "call_expression")):
        n = f"({n})"
    d = str(dv) if dv is not None and r.value(den) is None else r.text(r.strip(den))
    if dv is not None and den.type in ("number_literal", "integer_literal", "real_literal"):
        return f"({n} + {dv - 1}) / {dv}"
    if not (r.is_name(r.strip(den)) or r.strip(den).type in ("number_literal", "integer_literal")):
        d = f"({d})"
    return f"({n} + {d} - 1) / {d}"


# ---- grammar-specific pieces for the C family ----------------------------------------------------------


def _c_division(self: Reader, node: ts.Node):
    b = self.binary(node, ("/",))
    return (b[0], b[2]) if b is not None else None


def _c_additive(self: Reader, node: ts.Node) -> bool:
    return self.binary(node, ("+", "-")) is not None


def _c_product(self: Reader, node: ts.Node):
    b = self.binary(node, ("*",))
    return [b[0], b[2]] if b is not None else None


def _c_shift(self: Reader, node: ts.Node):
    b = self.binary(node, ("<<",))
    return b[2] if b is not None and self.value(b[0]) == 1 else None


Reader.division = _c_division  # type: ignore[attr-defined]
Reader.additive = _c_additive  # type: ignore[attr-defined]
Reader.product = _c_product  # type: ignore[attr-defined]
Reader.shift = _c_shift  # type: ignore[attr-defined]


class ConstantsReader(Reader):
    """C and C++ host files read with :class:`shaderlint.host._c.Constants` (CUDA, Vulkan)."""

    def __init__(self, data: bytes, span, consts) -> None:
        super().__init__(data, span)
        self.consts = consts

    def follow(self, node: ts.Node) -> ts.Node | None:
        if node.type != "identifier":
            return None
        got = self.consts.lookup(node)
        if got is None:
            return None
        init, _ = got
        return init

    def value(self, node: ts.Node) -> int | None:
        return self.consts.value(node)

    def is_int_macro(self, node: ts.Node) -> bool:
        from shaderlint.host._c import text

        name = text(node)
        return (name in self.consts.macros and self.consts.lookup(node) is None
                and self.consts.macro_value(name) is not None)


class AnalysisReader(Reader):
    """Objective-C and metal-cpp host files read with the Metal scanners' evaluator."""

    def __init__(self, analysis) -> None:
        super().__init__(analysis.data, lambda n: analysis.span(n.start_byte, n.end_byte))
        self.a = analysis

    def follow(self, node: ts.Node) -> ts.Node | None:
        if not self.is_name(node):
            return None
        a = self.a
        name = a.text(node)
        d = a.local_decl(name, node.start_byte)
        if d is None or d.param is not None or not isinstance(d.value, ts.Node) or a.assignments_of(name, d):
            return None
        return d.value

    def value(self, node: ts.Node) -> int | None:
        v = self.a.eval(node)
        return v if isinstance(v, int) and not isinstance(v, bool) else None

    def size_parts(self, node: ts.Node) -> list[ts.Node] | None:
        got = super().size_parts(node)
        if got is not None or node.type not in ("call_expression", "message_expression"):
            return got
        call = self.a.call_of(node)
        if call is not None and call.name in _SIZE_CTORS and call.receiver is None:
            return list(call.args)
        return None


class SwiftReader(AnalysisReader):
    """Swift: an ``MTLSize`` field is an ``Int``, so a division written into one is an integer
    division (Swift converts no number implicitly)."""

    _CONVERSIONS = frozenset({"Int", "UInt", "Int32", "UInt32", "Int64", "UInt64", "Int16", "UInt16"})
    #: Conversions stripped to find the operands (``Int(Float(n) / 16)`` divides ``n``).
    _NUMERIC = _CONVERSIONS | {"Float", "Double", "CGFloat", "Float32", "Float64"}

    def is_name(self, node: ts.Node) -> bool:
        return node.type == "simple_identifier"

    def unparen(self, node: ts.Node) -> ts.Node:
        for _ in range(16):
            if node.type == "tuple_expression" and node.named_child_count == 1:
                node = node.named_children[0]
            else:
                return node
        return node

    def _call(self, node: ts.Node):
        return self.a.call_of(node) if node.type == "call_expression" else None

    def strip(self, node: ts.Node) -> ts.Node:
        for _ in range(16):
            node = self.unparen(node)
            call = self._call(node)
            if call is not None and call.receiver is None and call.name in self._NUMERIC and len(call.args) == 1 \
                    and not any(call.labels):
                node = call.args[0]
            else:
                return node
        return node

    def size_parts(self, node: ts.Node) -> list[ts.Node] | None:
        call = self._call(node)
        if call is not None and call.receiver is None and call.name in ("MTLSize", "MTLSizeMake") \
                and len(call.args) == 3:
            return list(call.args)
        return None

    def call_arg(self, node: ts.Node, names: frozenset[str]) -> ts.Node | None:
        call = self._call(node)
        if call is not None and call.receiver is None and call.name in names and len(call.args) == 1:
            return call.args[0]
        return None

    def _op(self, node: ts.Node, types: tuple[str, ...], ops: tuple[str, ...]):
        if node.type not in types:
            return None
        op = node.child_by_field_name("op")
        lhs, rhs = node.child_by_field_name("lhs"), node.child_by_field_name("rhs")
        if op is None or lhs is None or rhs is None or self.text(op) not in ops:
            return None
        return self.unparen(lhs), self.unparen(rhs)

    def division(self, node: ts.Node):
        return self._op(node, ("multiplicative_expression",), ("/",))

    def additive(self, node: ts.Node) -> bool:
        return self._op(node, ("additive_expression",), ("+", "-")) is not None

    def product(self, node: ts.Node):
        got = self._op(node, ("multiplicative_expression",), ("*",))
        return list(got) if got is not None else None

    def shift(self, node: ts.Node):
        got = self._op(node, ("bitwise_operation",), ("<<",))
        return got[1] if got is not None and self.value(got[0]) == 1 else None

    def round_arg(self, node: ts.Node) -> ts.Node | None:
        got = self.call_arg(node, _ROUND)
        if got is not None:
            return got
        call = self._call(node)
        if call is None:
            return None
        if call.receiver is None and call.name in self._CONVERSIONS and len(call.args) == 1 and not any(call.labels):
            x = self.unparen(call.args[0])
            s = self._op(x, ("additive_expression",), ("+",))
            if s is not None:
                if self.is_half(s[1]):
                    return s[0]
                if self.is_half(s[0]):
                    return s[1]
            inner = self._call(x)  # Int((x).rounded())
            if inner is not None and inner.name == "rounded" and not inner.args and inner.receiver is not None:
                return inner.receiver
        return None

    def is_int(self, node: ts.Node) -> bool:
        n = self.unparen(node)
        return n.type == "integer_literal" or self.value(n) is not None
