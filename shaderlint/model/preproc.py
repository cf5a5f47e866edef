"""Preprocessor branches: which ``#if``/``#ifdef``/``#elif``/``#else`` branch a node sits in, and
whether two nodes can ever be compiled together.

Branches whose condition the front end decides (the file's own ``#define``/``#undef`` lines, the
``defines`` setting, ``__CUDA_ARCH__`` from the target: :mod:`shaderlint.languages.conditions`) are
gone from the tree: dead ones are blanked, and a taken branch reads as unconditional code. Every
other branch of a conditional group is read as live (the build's other macros are unknown). Two nodes are *exclusive* when their branches disagree on one condition: ``#if X`` and
its ``#else``, ``#if X`` and a later ``#if !X``, ``#ifdef X`` and ``#ifndef X`` (or ``#if
!defined(X)``), ``#if A == B`` and ``#if A != B``; a true ``#if A && B`` also decides ``A`` and
``B``, a false ``#if A || B`` both of them. Conditions are compared as normalised text, so
anything the analysis cannot compare (``#if X > 1`` against ``#if X == 2``) is never exclusive.
A condition naming a macro the file itself ``#define``s or ``#undef``s is not compared either
(``#ifndef X`` / ``#define X`` makes a later ``#ifdef X`` true in both builds). Groups whose
directives the front end blanked so that braces split across them pair up (the code is read as
if the condition held, or the ``#else`` branch is read) keep their condition for the code inside.
"""

from __future__ import annotations

import bisect
import re
from typing import TYPE_CHECKING

import tree_sitter as ts

from shaderlint.model.expr import unparen

if TYPE_CHECKING:
    from shaderlint.model.build import FileModel

Literal = tuple[str, bool]  # (normalised condition, its value in the branch)

_BRANCHES = ("preproc_if", "preproc_ifdef", "preproc_elif", "preproc_elifdef", "preproc_else")
_DIRECTIVE = re.compile(rb"^[ \t]*#[ \t]*(define|undef)[ \t]+([A-Za-z_]\w*)", re.M)
_WORD = re.compile(r"[A-Za-z_]\w*")


def _text(m: "FileModel", n: ts.Node) -> str:
    return " ".join(m.source.data[n.start_byte:n.end_byte].decode("utf-8", "replace").split())


def _literals(m: "FileModel", cond: ts.Node, value: bool, out: set[Literal]) -> None:
    cond = unparen(cond)
    t = cond.type
    if t == "unary_expression" and cond.child_count == 2 and cond.children[0].type == "!":
        _literals(m, cond.children[1], not value, out)
        return
    if t == "preproc_defined":
        name = next((c for c in cond.named_children if c.type == "identifier"), None)
        if name is not None:
            out.add(("defined " + _text(m, name), value))
        return
    if t == "binary_expression":
        op = cond.child_by_field_name("operator")
        left, right = cond.child_by_field_name("left"), cond.child_by_field_name("right")
        o = _text(m, op) if op is not None else ""
        if left is not None and right is not None:
            if (o == "&&" and value) or (o == "||" and not value):
                _literals(m, left, value, out)
                _literals(m, right, value, out)
            elif o in ("==", "!="):
                a, b = _text(m, unparen(left)), _text(m, unparen(right))
                out.add((f"{a} == {b}", value if o == "==" else not value))
                return
    out.add((_text(m, cond), value))


def macro_names(m: "FileModel", undef: bool = False) -> frozenset[str]:
    """Names the file itself ``#define``s (with ``undef``, also those it ``#undef``s), outside
    comments and strings, anywhere (also inside function bodies), but not in dead branches (the
    front end's ``dead-branch`` masks: :mod:`shaderlint.languages.conditions`)."""
    cache = m.__dict__.setdefault("_pp_macro_names", {})
    names = cache.get(undef)
    if names is None:
        src = m.source
        dead = [(mk.start, mk.end) for mk in m.parsed.masks if mk.kind == "dead-branch"]
        starts = [s for s, _ in dead]

        def live(pos: int) -> bool:
            i = bisect.bisect_right(starts, pos) - 1
            return i < 0 or pos >= dead[i][1]

        names = cache[undef] = frozenset(
            x.group(2).decode() for x in _DIRECTIVE.finditer(src.data)
            if (undef or x.group(1) == b"define") and not src.in_comment_or_string(x.start(2)) and live(x.start()))
    return names


def _comparable(m: "FileModel", lit: Literal) -> bool:
    words = set(_WORD.findall(lit[0])) - {"defined"}
    return bool(words) and not (words & macro_names(m, undef=True))


def _group_literals(m: "FileModel", n: ts.Node, value: bool) -> set[Literal]:
    """What ``#if``/``#ifdef``/``#elif`` node ``n`` says when its condition has ``value``."""
    out: set[Literal] = set()
    if n.type in ("preproc_ifdef", "preproc_elifdef"):
        name = n.child_by_field_name("name")
        if name is None:
            return out
        negated = n.child_count > 0 and _text(m, n.children[0]).replace(" ", "") in ("#ifndef", "#elifndef")
        out.add(("defined " + _text(m, name), value != negated))
        return out
    cond = n.child_by_field_name("condition")
    if cond is not None:
        _literals(m, cond, value, out)
    return out


def branch_literals(m: "FileModel", node: ts.Node) -> frozenset[Literal]:
    """The preprocessor conditions (comparable ones only) that hold wherever ``node`` is compiled."""
    cache = m.__dict__.setdefault("_pp_literals", {})
    hit = cache.get(node.id)
    if hit is not None:
        return hit
    out: set[Literal] = set()
    child, p = node, node.parent
    while p is not None:
        if p.type in _BRANCHES:
            alt = p.child_by_field_name("alternative")
            cond_node = p.child_by_field_name("condition") or p.child_by_field_name("name")
            in_alt = alt is not None and child.id == alt.id
            in_cond = cond_node is not None and child.id == cond_node.id
            if in_alt:
                out |= _group_literals(m, p, False)  # an #elif/#else below: this condition was false
            elif p.type != "preproc_else" and not in_cond:
                out |= _group_literals(m, p, True)
        child, p = p, p.parent
    for start, end, lits in _read_regions(m):
        if start <= node.start_byte < end:
            out |= lits
    res = frozenset(x for x in out if _comparable(m, x))
    cache[node.id] = res
    return res


def _read_regions(m: "FileModel") -> list[tuple[int, int, set[Literal]]]:
    """Code of conditional groups whose directives the front end blanked to pair up braces split
    across them (``mask_unbalanced_conditionals``): (start, end, what holds there). The tree has no
    preprocessor node for them, but the code is still compiled only under its condition."""
    got = m.__dict__.get("_pp_read_regions")
    if got is None:
        got = m.__dict__["_pp_read_regions"] = []
        open_: list = []  # the blanked ``#if`` line (or ``#if`` branch and ``#else`` line) of each open group
        for mk in m.parsed.masks:  # sorted by start; the region is the code up to the blanked ``#endif``
            if mk.kind != "conditional" or not mk.args:
                continue
            if mk.args[0] == "read" and len(mk.args) == 4:
                open_.append(mk)
            elif mk.args[0] == "end" and open_:
                head = open_.pop()
                _, kind, cond, value = head.args
                lits = _text_literals(kind, cond, value == "1")
                if lits:
                    got.append((head.end, mk.start, lits))
    return got


def _text_literals(kind: str, cond: str, value: bool) -> set[Literal]:
    """:func:`_literals` for a condition given as text: ``X``, ``!X``, ``defined(X)``, ``A == B``
    and ``A != B`` (anything else is left out, so never exclusive)."""
    if kind in ("ifdef", "ifndef"):
        return {("defined " + cond, value != (kind == "ifndef"))} if _WORD.fullmatch(cond) else set()
    c = cond.strip()
    while c.startswith("!"):
        c, value = c[1:].strip(), not value
    d = re.fullmatch(r"defined\s*\(\s*([A-Za-z_]\w*)\s*\)|defined\s+([A-Za-z_]\w*)", c)
    if d:
        return {("defined " + (d.group(1) or d.group(2)), value)}
    e = re.fullmatch(r"([\w.]+)\s*(==|!=)\s*([\w.]+)", c)
    if e:
        return {(f"{e.group(1)} == {e.group(3)}", value if e.group(2) == "==" else not value)}
    return {(c, value)} if _WORD.fullmatch(c) else set()


def exclusive(m: "FileModel", a: ts.Node, b: ts.Node) -> bool:
    """True when ``a`` and ``b`` sit in preprocessor branches that are never compiled together."""
    la = branch_literals(m, a)
    if not la:
        return False
    lb = branch_literals(m, b)
    return any((k, not v) in lb for k, v in la)
