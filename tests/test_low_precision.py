"""Low precision: the bfloat16 emulation, the format facts and the softmax grid."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_scaling import softmax
from attention_scaling.low_precision import (
    FORMATS,
    GridCell,
    float_format,
    format_softmax,
    precision_grid,
    representable_neighbours,
    round_to_format,
    rounded_scores,
    to_bfloat16,
    uniform_deviation_errors,
)

BF16_LARGEST = (2 - 2.0**-7) * 2.0**127  # all-ones fraction, largest exponent
BF16_SUBNORMAL = 2.0**-133  # 2^-126, the smallest normal, over 2^7

float32s = st.floats(width=32, allow_nan=False, allow_infinity=False)


def reference_bfloat16(value: float) -> float:
    """Round to 8 significant bits, ties to even, in exact rational arithmetic.

    Independent of the bit manipulation: the spacing of bfloat16 values near
    ``value`` is 2^(e - 7) for a binary exponent e >= -126 (normal and
    subnormal numbers alike), and Fraction's round() breaks ties to even.
    """
    if value == 0 or not math.isfinite(value):
        return value
    exponent = max(math.frexp(value)[1] - 1, -126)
    spacing = Fraction(2) ** (exponent - 7)
    rounded = round(Fraction(value) / spacing) * spacing
    if abs(rounded) > BF16_LARGEST:
        return math.copysign(math.inf, value)
    return float(rounded)


# -- to_bfloat16 -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1.0, 1.0),
        (257.0, 256.0),  # a tie between 256 (even) and 258 (odd): down
        (259.0, 260.0),  # a tie between 258 (odd) and 260 (even): up
        (258.5, 258.0),  # below the tie
        (1 + 2.0**-8, 1.0),  # half an ulp above 1: tie, to even
        (1 + 3 * 2.0**-8, 1 + 2.0**-6),  # tie between 1 + 2^-7 (odd) and 1 + 2^-6
        (math.pi, 3.140625),  # bfloat16 0x4049
        (-257.0, -256.0),
        (BF16_LARGEST, BF16_LARGEST),
        (float(np.finfo(np.float32).max), math.inf),
        (BF16_SUBNORMAL, BF16_SUBNORMAL),
        (0.5 * BF16_SUBNORMAL, 0.0),  # a tie with 0, which is even
        (0.75 * BF16_SUBNORMAL, BF16_SUBNORMAL),
    ],
)
def test_known_values(value, expected):
    assert float(to_bfloat16(np.float32(value))) == expected


def test_agrees_with_exact_rounding_over_the_whole_range():
    rng = np.random.default_rng(0)
    # Random bit patterns cover normals, subnormals and every exponent.
    bits = rng.integers(0, 2**32, size=20_000, dtype=np.uint64).astype(np.uint32)
    values = bits.view(np.float32)
    values = values[np.isfinite(values)]
    got = to_bfloat16(values)
    expected = np.array([reference_bfloat16(float(v)) for v in values], dtype=np.float32)
    np.testing.assert_array_equal(got, expected)


def test_agrees_with_torch_when_available():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    values = (rng.standard_normal(10_000) * 10.0 ** rng.integers(-30, 30, 10_000)).astype(np.float32)
    expected = torch.from_numpy(values).to(torch.bfloat16).to(torch.float32).numpy()
    np.testing.assert_array_equal(to_bfloat16(values), expected)


@settings(max_examples=300, deadline=None)
@given(float32s)
def test_idempotent_and_only_eight_significant_bits(value):
    once = to_bfloat16(value)
    np.testing.assert_array_equal(to_bfloat16(once), once)
    if np.isfinite(once):
        assert int(once.view(np.uint32)) & 0xFFFF == 0


@settings(max_examples=300, deadline=None)
@given(float32s.filter(lambda v: float(np.finfo(np.float32).tiny) <= abs(v) <= BF16_LARGEST))
def test_relative_error_at_most_two_to_minus_eight(value):
    rounded = float(to_bfloat16(value))
    assert abs(rounded - value) <= 2.0**-8 * abs(value)


def test_small_integers_are_exact_and_257_is_not():
    integers = np.arange(-256, 257, dtype=np.float32)
    np.testing.assert_array_equal(to_bfloat16(integers), integers)
    assert to_bfloat16(257.0) != 257.0


def test_monotone_and_odd():
    values = np.sort(np.random.default_rng(2).standard_normal(5000).astype(np.float32) * 1e3)
    rounded = to_bfloat16(values)
    assert np.all(np.diff(rounded) >= 0)
    np.testing.assert_array_equal(to_bfloat16(-values), -rounded)


def test_special_values_and_shape():
    out = to_bfloat16([[np.nan, np.inf], [-np.inf, -0.0]])
    assert out.shape == (2, 2) and out.dtype == np.float32
    assert np.isnan(out[0, 0]) and out[0, 1] == np.inf and out[1, 0] == -np.inf
    assert out[1, 1] == 0 and np.signbit(out[1, 1])
    # A NaN whose payload would carry into the exponent must not become inf.
    nan_bits = np.array([0x7FFFFFFF], dtype=np.uint32).view(np.float32)
    assert np.isnan(to_bfloat16(nan_bits)[0])


@pytest.mark.parametrize("bad", ["text", [1 + 2j], [True, False]])
def test_to_bfloat16_refuses_non_real_input(bad):
    with pytest.raises(TypeError):
        to_bfloat16(bad)


# -- Formats -----------------------------------------------------------------------------


def test_format_facts_against_closed_forms():
    half, brain, single = float_format("float16"), float_format("bfloat16"), float_format("float32")
    assert half.largest == (2 - 2.0**-10) * 2.0**15 == 65504
    assert half.smallest_subnormal == 2.0**-24 and half.smallest_normal == 2.0**-14
    assert half.significant_bits == 11 and half.relative_precision == 2.0**-11
    assert brain.largest == BF16_LARGEST and brain.smallest_normal == 2.0**-126
    assert brain.smallest_subnormal == BF16_SUBNORMAL and brain.significant_bits == 8
    assert single.largest == (2 - 2.0**-23) * 2.0**127 and single.significant_bits == 24
    # bfloat16 is a float32 with a shorter fraction: the same exponent range.
    assert single.exp_overflow - brain.exp_overflow < 2.0**-7
    assert brain.exp_overflow == pytest.approx(88.72, abs=0.01)


@pytest.mark.parametrize("name", FORMATS)
def test_format_extremes_are_values_of_the_format(name):
    f = float_format(name)
    for value in (f.largest, f.smallest_normal, f.smallest_subnormal):
        assert float(round_to_format(value, name)) == value
    assert math.isinf(float(round_to_format(f.largest * (1 + f.relative_precision), name)))


def test_float16_exp_thresholds_against_numpy_exp():
    half = float_format("float16")
    below, above = representable_neighbours(half.exp_overflow)
    with np.errstate(over="ignore"):
        assert np.isfinite(np.exp(below)) and np.isinf(np.exp(above))
    below, above = representable_neighbours(half.exp_underflow)
    assert np.exp(below) == 0 and np.exp(above) > 0


@pytest.mark.parametrize("bad", ["float8", "bf16", None])
def test_unknown_format_is_refused(bad):
    with pytest.raises(ValueError, match="format must be one of"):
        float_format(bad)
    with pytest.raises(ValueError, match="format must be one of"):
        round_to_format([1.0], bad)


# -- Neighbours and rounding ---------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=-6e4, max_value=6e4))
def test_neighbours_bracket_the_value_tightly(value):
    below, above = representable_neighbours(value)
    assert below.dtype == above.dtype == np.float16
    assert float(below) < value < float(above)
    step_up = np.nextafter(below, np.float16(np.inf))
    assert step_up == above or float(step_up) == value


def test_neighbours_of_a_representable_value():
    below, above = representable_neighbours(1.0, np.float32)
    assert float(below) == 1 - 2.0**-24 and float(above) == 1 + 2.0**-23


@pytest.mark.parametrize(("value", "error"), [(math.inf, ValueError), (7e4, ValueError), (True, TypeError), ("1", TypeError)])
def test_neighbours_refuse_bad_values(value, error):
    with pytest.raises(error):
        representable_neighbours(value)


def test_neighbours_refuse_an_integer_dtype():
    with pytest.raises(TypeError, match="floating dtype"):
        representable_neighbours(1.0, np.int32)


def test_round_to_format_matches_each_format():
    values = np.random.default_rng(3).standard_normal(100) * 1e5
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(round_to_format(values, "float16"), values.astype(np.float16))
    np.testing.assert_array_equal(round_to_format(values, "float32"), values.astype(np.float32))
    np.testing.assert_array_equal(round_to_format(values, "bfloat16"), to_bfloat16(values))


def test_rounded_scores_overflow_exactly_past_the_float16_range():
    ones = np.ones((1, 2))
    # 32752 + 32752 = 65504 is the largest float16; 32760 rounds to 32768 (a tie, to even).
    assert float(rounded_scores([32752.0, 32752.0], ones)[0]) == 65504
    assert np.isinf(rounded_scores([32760.0, 32760.0], ones)[0])


@pytest.mark.parametrize(("component", "finite"), [(22.0, True), (23.0, False)])
def test_rounded_scores_of_constant_vectors(component, finite):
    # d_k c^2 = 61952 fits under 65504; 67712 does not.
    q = np.full(128, component)
    score = rounded_scores(q, q[None, :])[0]
    assert bool(np.isfinite(score)) == finite
    if finite:
        assert float(score) == 128 * component**2


def test_rounded_scores_round_the_inputs_and_broadcast():
    rng = np.random.default_rng(4)
    q, k = rng.standard_normal((3, 8)), rng.standard_normal((3, 5, 8))
    scores = rounded_scores(q, k, "bfloat16")
    assert scores.shape == (3, 5) and scores.dtype == np.float32
    exact = np.einsum("bd,bnd->bn", q, k)
    assert not np.array_equal(scores, exact.astype(np.float32))  # the inputs were rounded
    # Each input and the result carry a relative error of at most 2^-8.
    magnitude = np.einsum("bd,bnd->bn", np.abs(q), np.abs(k))
    assert np.all(np.abs(scores - exact) <= 4 * 2.0**-8 * magnitude)
    assert rounded_scores(q[0], k, "float32").shape == (3, 5)


@pytest.mark.parametrize(
    ("q", "k", "error"),
    [
        (np.ones(3), np.ones((2, 4)), ValueError),
        (np.ones(3), np.ones(3), ValueError),
        (np.array([np.nan, 1.0]), np.ones((1, 2)), ValueError),
        (["a"], np.ones((1, 1)), TypeError),
    ],
)
def test_rounded_scores_refuse_bad_input(q, k, error):
    with pytest.raises(error):
        rounded_scores(q, k)


# -- The grid ----------------------------------------------------------------------------------


def test_grid_order_and_a_planted_overflow():
    # Row 0 overflows exp in float16 unless scaled (12 / 2 = 6) or shifted; row 1 never does.
    scores = np.array([[12.0, 11.0, 3.0], [2.0, 1.0, 0.0]], dtype=np.float16)
    cells = precision_grid(scores, d_k=4)
    assert [(c.subtract_max, c.scaled) for c in cells] == [(False, False), (False, True), (True, False), (True, True)]
    assert [c.valid_fraction for c in cells] == [0.5, 1.0, 1.0, 1.0]
    assert [c.largest_logit for c in cells] == [12.0, 6.0, 12.0, 6.0]


def test_scaled_scores_still_overflow_without_the_subtraction():
    scores = np.full((3, 4), 48.0, dtype=np.float16)  # / sqrt(16) = 12 > ln 65504
    naive_scaled, stable_scaled = precision_grid(scores, d_k=16)[1::2]
    assert naive_scaled.valid_fraction == 0 and naive_scaled.largest_weight is None
    assert stable_scaled.valid_fraction == 1


def test_grid_statistics_against_float64():
    rng = np.random.default_rng(5)
    scores = (rng.standard_normal((400, 6)) * 3).astype(np.float16)
    cells = precision_grid(scores, d_k=9)
    for cell in cells:  # scores this small overflow nothing
        assert cell.valid_fraction == 1
        logits = scores.astype(np.float64) / (3.0 if cell.scaled else 1.0)
        exact = softmax(logits)
        largest = exact.max(axis=-1)
        entropy = -(exact * np.log(exact)).sum(axis=-1)
        assert cell.largest_weight.value == pytest.approx(largest.mean(), abs=2e-3)
        assert cell.largest_weight.standard_error == pytest.approx(largest.std(ddof=1) / 20, rel=0.05)
        assert cell.entropy.value == pytest.approx(entropy.mean(), abs=5e-3)


def test_uniform_rows():
    cells = precision_grid(np.zeros((5, 4), dtype=np.float16), d_k=64)
    for cell in cells:
        assert cell.largest_weight.value == 0.25 and cell.largest_weight.standard_error == 0
        assert cell.entropy.value == pytest.approx(math.log(4), abs=1e-12)


def test_subtraction_is_shift_invariant_and_naive_is_not():
    # Integer scores are exact in float16, so x - max is exact and the shift cancels bit for bit.
    scores = np.random.default_rng(6).integers(-8, 9, size=(50, 8)).astype(np.float16)
    before, after = precision_grid(scores, 1), precision_grid(scores + np.float16(64), 1)
    assert after[2] == GridCell(True, False, 1.0, before[2].largest_weight, before[2].entropy, after[2].largest_logit)
    assert before[0].valid_fraction == 1 and after[0].valid_fraction == 0


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(min_value=-6e4, max_value=6e4, width=16), min_size=2, max_size=12))
def test_subtraction_always_gives_valid_rows(row):
    scores = np.array([row, row[::-1]], dtype=np.float16)
    for cell in precision_grid(scores, d_k=3)[2:]:
        assert cell.valid_fraction == 1


@pytest.mark.parametrize(
    ("scores", "d_k", "error"),
    [
        (np.zeros(4, dtype=np.float16), 4, ValueError),
        (np.zeros((1, 4), dtype=np.float16), 4, ValueError),
        (np.array([[np.inf, 0.0], [0.0, 0.0]], dtype=np.float16), 4, ValueError),
        (np.zeros((2, 2), dtype=np.float16), 0, ValueError),
        (np.zeros((2, 2), dtype=np.float16), 2.0, ValueError),
        (np.zeros((2, 2), dtype=bool), 4, TypeError),
    ],
)
def test_grid_refuses_bad_input(scores, d_k, error):
    with pytest.raises(error):
        precision_grid(scores, d_k)


# -- Softmax in a format, and how far near-uniform weights stay from uniform ------------------


@pytest.mark.parametrize("name", FORMATS)
def test_format_softmax_holds_values_of_the_format_close_to_softmax(name):
    scores = np.random.default_rng(1).standard_normal((20, 16))
    weights = format_softmax(scores, name)
    assert weights.dtype == np.float64
    np.testing.assert_array_equal(round_to_format(weights, name).astype(np.float64), weights)
    # Each rounding costs at most one relative precision; rounding a shifted score s costs |s| times
    # that in exp(s). Four roundings, and |s| below 8 for these scores.
    precision = float_format(name).relative_precision
    shifted = np.abs(scores - scores.max(axis=-1, keepdims=True))
    assert shifted.max() < 8
    np.testing.assert_array_less(np.abs(weights - softmax(scores)) / softmax(scores), (4 + shifted) * precision)


def test_format_softmax_in_float32_matches_numpy_float32_softmax():
    scores = np.random.default_rng(2).standard_normal((5, 7))
    expected = softmax(scores.astype(np.float32)).astype(np.float64)
    np.testing.assert_allclose(format_softmax(scores, "float32"), expected, rtol=1e-6)


def test_deviation_errors_by_hand():
    np.testing.assert_allclose(uniform_deviation_errors([0.28, 0.72], [0.3, 0.7]), [0.1, 0.1])
    np.testing.assert_array_equal(uniform_deviation_errors([0.3, 0.7], [0.3, 0.7]), [0.0, 0.0])


def test_bfloat16_loses_the_deviation_from_uniform_of_scores_divided_by_d_k():
    # The claims register's case: at d_k = 4096, scores q.k/d_k have standard deviation 1/64, so the
    # weights lie within a few percent of 1/n; bfloat16's 8 bits (relative precision 2^-8) then
    # blur their deviations from 1/n by about a tenth, float32's 24 bits by about a millionth,
    # while the scores themselves, rounded to bfloat16, cost a tenth of a percent.
    rng = np.random.default_rng(4)
    q, k = rng.standard_normal((64, 4096)), rng.standard_normal((64, 4096))
    scores = q @ k.T / 4096
    exact = softmax(scores)
    bfloat16 = np.median(uniform_deviation_errors(format_softmax(scores, "bfloat16"), exact))
    float32 = np.median(uniform_deviation_errors(format_softmax(scores, "float32"), exact))
    scores_only = np.median(uniform_deviation_errors(softmax(round_to_format(scores, "bfloat16").astype(float)), exact))
    assert 0.05 < bfloat16 < 0.3
    assert float32 < 1e-5
    assert scores_only < 0.01


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda: format_softmax([1.0, np.inf], "float16"), ValueError),
        (lambda: format_softmax([1.0, 2.0], "float8"), ValueError),
        (lambda: format_softmax(np.float64(1.0), "float16"), ValueError),
        (lambda: uniform_deviation_errors([0.5, 0.5], [0.5, 0.5]), ValueError),
        (lambda: uniform_deviation_errors([0.2, 0.3, 0.5], [0.3, 0.7]), ValueError),
        (lambda: uniform_deviation_errors(["a"], [1.0]), TypeError),
    ],
)
def test_format_softmax_and_deviation_errors_refuse_bad_input(call, error):
    with pytest.raises(error):
        call()
