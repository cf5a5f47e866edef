"""SL990 test-unsuffixed-float-literal

A rule that exists only for the language-server tests: the server started by
this module is the real one with one extra rule that offers fixes, so quick
fixes and ``source.fixAll`` are tested end to end whatever fixes the real rules
offer today.

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


def install() -> None:
    import shaderlint.engine as engine
    import shaderlint.rules.registry as registry

    registry.RULES = engine.RULES = registry.RULES + (UnsuffixedFloatLiteral,)
    registry.BY_CODE[UnsuffixedFloatLiteral.code] = UnsuffixedFloatLiteral
    registry.BY_NAME[UnsuffixedFloatLiteral.name] = UnsuffixedFloatLiteral


if __name__ == "__main__":
    install()
    from shaderlint.server.server import serve

    sys.exit(serve(sys.argv[1:]))
