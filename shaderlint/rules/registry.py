"""The explicit rule registry: every rule module is listed here once."""

from __future__ import annotations

from shaderlint.rules.base import Rule
from shaderlint.rules.sl001_parse_error import ParseErrorRule
from shaderlint.rules.sl101_dynamic_stack_array import DynamicStackArray
from shaderlint.rules.sl201_variable_integer_division import VariableIntegerDivision

RULES: tuple[type[Rule], ...] = (
    ParseErrorRule,
    DynamicStackArray,
    VariableIntegerDivision,
)

BY_CODE: dict[str, type[Rule]] = {r.code: r for r in RULES}
BY_NAME: dict[str, type[Rule]] = {r.name: r for r in RULES}


def get_rule(code_or_name: str) -> type[Rule] | None:
    key = code_or_name.strip()
    return BY_CODE.get(key.upper()) or BY_NAME.get(key.lower())
