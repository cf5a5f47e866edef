"""SL990 test-unsuffixed-float-literal

A rule that exists only for the language-server tests: the server started by
this module is the real one with one extra rule that offers fixes, so quick
fixes and ``source.fixAll`` are tested end to end whatever fixes the real rules
offer today. Two saboteurs test that failures do not stop the server: rule
SL991 raises on a file containing ``shaderlint-test: crash-rule``, and hover
raises on a file containing ``shaderlint-test: crash-hover``.

## What it does
Flags a floating-point literal without a suffix inside device code.

## Why is this bad?
Test rule: it has no claim to be right.

## Example
```cuda
float y = x * 0.5;
```

## Use instead
```cuda
float y = x * 0.5f;
```

## Impact
None (test rule).

## Options
None.
"""

from __future__ import annotations

import sys

from shaderlint.diagnostics import Applicability, Edit, Finding, Fix, Severity
from shaderlint.rules.base import Rule


class UnsuffixedFloatLiteral(Rule):
    code = "SL990"
    name = "test-unsuffixed-float-literal"
    languages = frozenset({"metal", "cuda", "glsl"})
    severity = Severity.WARNING
    fix = "safe"
    summary = "test rule: unsuffixed float literal"

    def check(self, model, ctx):
        for fn in model.functions:
            if not fn.is_device_code or fn.body is None:
                continue
            stack = [fn.body]
            while stack:
                node = stack.pop()
                stack.extend(node.children)
                if node.type != "number_literal":
                    continue
                text = model.text(node)
                if "." not in text or text[-1] in "fFhHlL" or text.startswith("0x"):
                    continue
                digits = len(text.replace(".", "").lstrip("0"))
                applicability = Applicability.SAFE if digits <= 7 else Applicability.UNSAFE
                fix = Fix(f"Write {text}f", applicability, (Edit(node.end_byte, node.end_byte, "f"),))
                yield Finding(node.start_byte, node.end_byte, f"double literal {text} in float code", kernel=fn.name,
                              fix=fix)


class CrashingRule(Rule):
    code = "SL991"
    name = "test-crashing-rule"
    languages = frozenset({"metal", "cuda", "glsl"})
    severity = Severity.WARNING
    summary = "test rule that raises"

    def check(self, model, ctx):
        if b"shaderlint-test: crash-rule" in model.source.data:
            raise RuntimeError("deliberate failure")
        return ()


def install() -> None:
    import shaderlint.engine as engine
    import shaderlint.rules.registry as registry
    import shaderlint.server.hover as hover

    for rule in (UnsuffixedFloatLiteral, CrashingRule):
        registry.RULES = engine.RULES = registry.RULES + (rule,)
        registry.BY_CODE[rule.code] = rule
        registry.BY_NAME[rule.name] = rule
    real_hover = hover.hover

    def crashing_hover(doc, *args, **kwargs):
        if b"shaderlint-test: crash-hover" in doc.data:
            raise RuntimeError("deliberate hover failure")
        return real_hover(doc, *args, **kwargs)

    hover.hover = crashing_hover


if __name__ == "__main__":
    install()
    from shaderlint.server.server import serve

    sys.exit(serve(sys.argv[1:]))
