"""SL601 switch-fallthrough

## What it does
Flags a non-empty `case` (or `default`) of a `switch` whose statements can run
off their end into the next label — no `break`, `return`, `continue`, `goto`,
`discard` (GLSL) or `discard_fragment()` (Metal) on every path. It is reported
at the label of the case that falls through, not the one it falls into.
Stacked labels (`case 1: case 2: …`) are not fall-through. An intended
fall-through is silenced by `[[fallthrough]];` (Metal, CUDA) or a comment
such as `// fallthrough` / `// falls through` just before the next label
(GLSL has no attribute). When the analysis cannot tell whether a case
completes (a nested `switch` at its end), nothing is reported.

## Why is this bad?
Apple's GPU compiler team ("Advanced Metal Shader Optimization", WWDC) names
switch fall-through among the constructs to avoid: GPUs execute structured
control flow, and a case that falls into another creates an unstructured
edge the compiler resolves by duplicating the shared code or by extra
branching and predicate juggling, in divergent code where every path costs all
threads of the SIMD group. It is also the classic source of bugs: a missing
`break` changes the result silently.

## Example
```glsl
switch (material) {
case MAT_METAL:
    f0 = albedo;          // SL601: falls into MAT_PLASTIC
case MAT_PLASTIC:
    roughness *= 0.5;
    break;
}
```

## Use instead
End every case with `break` (repeat the shared statements, or move them into
a function); if the fall-through is intended, say so:
```glsl
case MAT_METAL:
    f0 = albedo;
    // fallthrough
case MAT_PLASTIC:
```

## Impact
Control flow rather than registers: code duplication or an extra branch per
fall-through edge; no register or occupancy estimate (impact null).

## Options
None.

## Default
Opt-in (`--extend-select SL601`). On a random sample of real-code findings
(about 5,500 public CUDA, Metal and GLSL files, none written by us; issue 15 of
the tracker), all 25 SL601 findings in hand-written code were deliberate
fall-throughs (hash functions mixing in their tail bytes): none was a bug or a
cost.

## Evidence
`nvcc -arch=sm_90 -ptx` on the CUDA fixture: in `classify` (inlined into
`apply_op`) the `case 0` block `$L__BB0_22: mul.f32 %f1, %f1, 0f3F000000;`
ends without a branch and runs into `$L__BB0_23: add.f32 %f21, %f1,
0f3F800000;`, the `case 1` block, which the compare chain also enters
directly (`@%p15 bra $L__BB0_23;`): one block with two entries, a join the
structured control flow has to reconverge at. The marked chain in `apply_op`
(`case 2` → `[[fallthrough]]` → `case 3` → `// falls through` → `case 4`)
is three consecutive blocks `$L__BB0_10`, `_11`, `_12`, each also a branch
target. nvcc emits no warning for either. On NVIDIA GPUs the cost is small
(the hardware reconverges at the join); the rule follows Apple's guidance and
guards against the missing `break`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from shaderlint.diagnostics import Finding, Severity
from shaderlint.model.dispatch import nodes_in
from shaderlint.rules.base import Rule, RuleContext

FALLTHROUGH_COMMENT = re.compile(r"fall(?:s|ing)?[\s-]*thr(?:ough|u)", re.I)
JUMPS = frozenset({"break_statement", "continue_statement", "return_statement", "goto_statement", "throw_statement"})
GLSL_TERMINATORS = frozenset({"discard", "terminateInvocation", "ignoreIntersectionEXT", "terminateRayEXT"})
NORETURN_CALLS = frozenset({"discard_fragment", "abort", "__trap", "__builtin_trap", "__builtin_unreachable"})
_UNKNOWN = None


class SwitchFallthrough(Rule):
    code = "SL601"
    name = "switch-fallthrough"
    languages = frozenset({"metal", "cuda", "glsl"})
    severity = Severity.INFO
    default_on = False
    summary = "a non-empty switch case that falls through into the next"

    def check(self, model, ctx: RuleContext) -> Iterable[Finding]:
        for f in model.functions:
            if not f.is_device_code or f.body is None:
                continue
            for node in nodes_in(model, "switch", f.body.start_byte, f.body.end_byte):
                body = node.child_by_field_name("body")
                cases = [c for c in body.named_children if c.type == "case_statement"] if body is not None else []
                for case, nxt in zip(cases, cases[1:]):
                    stmts = _statements(case)
                    real = [s for s in stmts if not _empty(s)]
                    if not real or _marked(model, case, nxt, stmts):
                        continue
                    if _completes(model, real) is not True:
                        continue
                    label, next_label = _label(model, case), _label(model, nxt)
                    colon = next((c for c in case.children if c.type == ":"), None)
                    end = colon.end_byte if colon is not None else case.start_byte + 4
                    hint = "// fallthrough" if model.language == "glsl" else "[[fallthrough]];"
                    yield Finding(case.start_byte, end,
                                  f"'{label}' falls through into '{next_label}'; end it with break, or mark an "
                                  f"intended fall-through with {hint}",
                                  kernel=f.name)


def _statements(case):
    value = case.child_by_field_name("value")
    seen_colon = False
    out = []
    for c in case.children:
        if not seen_colon:
            seen_colon = c.type == ":"
            continue
        if c.is_named and c.type != "comment" and c != value:
            out.append(c)
    return out


def _empty(stmt) -> bool:
    return stmt.type == "expression_statement" and stmt.named_child_count == 0


def _label(model, case) -> str:
    value = case.child_by_field_name("value")
    return f"case {model.text(value)}:" if value is not None else "default:"


def _marked(model, case, nxt, stmts) -> bool:
    """An explicit [[fallthrough]] in the case, or a fall-through comment after its last statement."""
    for s in stmts:
        if s.type == "attributed_statement" and "fallthrough" in model.text(s):
            return True
    if any(mk.kind == "attribute" and mk.value == "fallthrough" and case.start_byte <= mk.start < nxt.start_byte
           for mk in model.parsed.masks):
        return True
    real = [s for s in stmts if not _empty(s)]
    after = real[-1].end_byte if real else case.start_byte
    return any(after <= c.start < nxt.start_byte and FALLTHROUGH_COMMENT.search(c.text)
               for c in model.source.comments)


def _completes(model, stmts, depth: int = 0):
    """True if control can run off the end of the statement list, False if not, None if unknown."""
    for s in stmts:
        r = _can_complete(model, s, depth)
        if r is not True:
            return r
    return True


def _can_complete(model, s, depth: int):
    if depth > 32:
        return _UNKNOWN
    t = s.type
    if t in JUMPS:
        return False
    if t == "compound_statement":
        return _completes(model, [c for c in s.named_children if c.type != "comment"], depth + 1)
    if t in ("attributed_statement", "labeled_statement"):
        inner = [c for c in s.named_children if c.type not in ("attribute_declaration", "statement_identifier")]
        return _can_complete(model, inner[-1], depth + 1) if inner else True
    if t == "if_statement":
        cons, alt = s.child_by_field_name("consequence"), s.child_by_field_name("alternative")
        if alt is None or cons is None:
            return True
        if alt.type == "else_clause":
            kids = [c for c in alt.named_children if c.type != "comment"]
            alt = kids[0] if kids else None
            if alt is None:
                return True
        a, b = _can_complete(model, cons, depth + 1), _can_complete(model, alt, depth + 1)
        if a is True or b is True:
            return True
        return _UNKNOWN if _UNKNOWN in (a, b) else False
    if t in ("for_statement", "while_statement", "do_statement"):
        return _UNKNOWN if _infinite(model, s) else True
    if t == "switch_statement":
        return _UNKNOWN
    if t == "expression_statement":
        kids = [c for c in s.named_children if c.type != "comment"]
        if len(kids) == 1:
            k = kids[0]
            if k.type == "identifier" and model.language == "glsl" and model.text(k) in GLSL_TERMINATORS:
                return False
            if k.type == "call_expression" and model.callee_name(k) in NORETURN_CALLS:
                return False
        return True
    return True


def _infinite(model, loop) -> bool:
    cond = loop.child_by_field_name("condition")
    if cond is not None and cond.type == "condition_clause":
        kids = [c for c in cond.named_children if c.type != "comment"]
        cond = kids[-1] if kids else None
    if loop.type == "for_statement":
        return cond is None or model.const_value(cond) not in (None, 0)
    return cond is not None and model.const_value(cond) not in (None, 0)
