"""The explicit rule registry: every rule module is listed here once."""

from __future__ import annotations

from shaderlint.rules.base import Rule
from shaderlint.rules.sl001_parse_error import ParseErrorRule
from shaderlint.rules.sl101_dynamic_stack_array import DynamicStackArray
from shaderlint.rules.sl102_unsigned_device_offset import UnsignedDeviceOffset
from shaderlint.rules.sl103_constant_address_space_candidate import ConstantAddressSpaceCandidate
from shaderlint.rules.sl104_split_struct_load import SplitStructLoad
from shaderlint.rules.sl105_missing_bounds_check import MissingBoundsCheck
from shaderlint.rules.sl201_variable_integer_division import VariableIntegerDivision
from shaderlint.rules.sl303_float_texture_read import FloatTextureRead
from shaderlint.rules.sl701_fragment_writes_without_early_tests import FragmentWritesWithoutEarlyTests

RULES: tuple[type[Rule], ...] = (
    ParseErrorRule,
    DynamicStackArray,
    UnsignedDeviceOffset,
    ConstantAddressSpaceCandidate,
    SplitStructLoad,
    MissingBoundsCheck,
    VariableIntegerDivision,
    FloatTextureRead,
    FragmentWritesWithoutEarlyTests,
)

BY_CODE: dict[str, type[Rule]] = {r.code: r for r in RULES}
BY_NAME: dict[str, type[Rule]] = {r.name: r for r in RULES}


def get_rule(code_or_name: str) -> type[Rule] | None:
    key = code_or_name.strip()
    return BY_CODE.get(key.upper()) or BY_NAME.get(key.lower())
