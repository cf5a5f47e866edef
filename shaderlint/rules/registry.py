"""The explicit rule registry: every rule module is listed here once."""

from __future__ import annotations

from shaderlint.rules.base import Rule
from shaderlint.rules.sl001_parse_error import ParseErrorRule
from shaderlint.rules.sl002_unused_suppression import UnusedSuppression
from shaderlint.rules.sl101_dynamic_stack_array import DynamicStackArray
from shaderlint.rules.sl102_unsigned_device_offset import UnsignedDeviceOffset
from shaderlint.rules.sl103_constant_address_space_candidate import ConstantAddressSpaceCandidate
from shaderlint.rules.sl104_split_struct_load import SplitStructLoad
from shaderlint.rules.sl105_missing_bounds_check import MissingBoundsCheck
from shaderlint.rules.sl201_variable_integer_division import VariableIntegerDivision
from shaderlint.rules.sl202_float_literal_in_half_math import FloatLiteralInHalfMath
from shaderlint.rules.sl203_half_literal_overflow import HalfLiteralOverflow
from shaderlint.rules.sl204_char_arithmetic import CharArithmetic
from shaderlint.rules.sl205_select_arithmetic_trick import SelectArithmeticTrick
from shaderlint.rules.sl301_wide_thread_id import WideThreadId
from shaderlint.rules.sl302_wide_grid_id import WideGridId
from shaderlint.rules.sl303_float_texture_read import FloatTextureRead
from shaderlint.rules.sl401_barrier_wider_than_simd import BarrierWiderThanSimd
from shaderlint.rules.sl402_redundant_barrier import RedundantBarrier
from shaderlint.rules.sl403_divergent_barrier import DivergentBarrier
from shaderlint.rules.sl404_simd_reduction_as_group_result import SimdReductionAsGroupResult
from shaderlint.rules.sl501_threadgroup_size_not_simd_multiple import ThreadgroupSizeNotSimdMultiple
from shaderlint.rules.sl502_threadgroup_size_over_limit import ThreadgroupSizeOverLimit
from shaderlint.rules.sl503_truncating_grid_division import TruncatingGridDivision
from shaderlint.rules.sl504_contiguous_thread_chunks import ContiguousThreadChunks
from shaderlint.rules.sl505_low_occupancy import LowOccupancy
from shaderlint.rules.sl506_missing_launch_bounds import MissingLaunchBounds
from shaderlint.rules.sl601_switch_fallthrough import SwitchFallthrough
from shaderlint.rules.sl701_fragment_writes_without_early_tests import FragmentWritesWithoutEarlyTests

RULES: tuple[type[Rule], ...] = (
    ParseErrorRule,
    UnusedSuppression,
    DynamicStackArray,
    UnsignedDeviceOffset,
    ConstantAddressSpaceCandidate,
    SplitStructLoad,
    MissingBoundsCheck,
    VariableIntegerDivision,
    FloatLiteralInHalfMath,
    HalfLiteralOverflow,
    CharArithmetic,
    SelectArithmeticTrick,
    WideThreadId,
    WideGridId,
    FloatTextureRead,
    BarrierWiderThanSimd,
    RedundantBarrier,
    DivergentBarrier,
    SimdReductionAsGroupResult,
    ThreadgroupSizeNotSimdMultiple,
    ThreadgroupSizeOverLimit,
    TruncatingGridDivision,
    ContiguousThreadChunks,
    LowOccupancy,
    MissingLaunchBounds,
    SwitchFallthrough,
    FragmentWritesWithoutEarlyTests,
)

BY_CODE: dict[str, type[Rule]] = {r.code: r for r in RULES}
BY_NAME: dict[str, type[Rule]] = {r.name: r for r in RULES}


def get_rule(code_or_name: str) -> type[Rule] | None:
    key = code_or_name.strip()
    return BY_CODE.get(key.upper()) or BY_NAME.get(key.lower())
