r"""How the claims of the register are checked: the outcome of a check, the tolerance rule, the checks.

:mod:`attention_scaling.site.claims` holds the register; each of its entries
calls one of the functions here, which returns an :class:`Outcome`. An
outcome records what the check found, whether the claim agrees, and how the
verdict was decided (:class:`Basis`): *computed* by this package, or *by a
theorem* the claim was matched to by hand, whose proof :func:`theorem` runs.

Check builders (:func:`numbers`, :func:`theorem`, :func:`max_weight`, ...)
return a check; the other public functions are checks themselves, called
with the claim's printed value (None where there is none).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from fractions import Fraction

import mpmath
import numpy as np
import sympy as sp
import sympy.stats

from attention_scaling import proofs
from attention_scaling.depth import (
    POLICIES,
    collapse_fits,
    lipschitz_growth_data,
    query_gradient_norm,
    rank_collapse_data,
)
from attention_scaling.gradients import STARVED_RATIO
from attention_scaling.saturation import gradient_distribution
from attention_scaling.initialisation import in_projection, in_projection_scores, second_moment_estimate, weight_std
from attention_scaling.long_sequences import needle_weight
from attention_scaling.low_precision import format_softmax, round_to_format, uniform_deviation_errors
from attention_scaling.proofs.engine import ProofError, step_counts
from attention_scaling.regimes import attention_regimes
from attention_scaling.simulate import dot_product_samples, variance_estimate
from attention_scaling._softmax import entropy_from_logits, naive_softmax, softmax, softmax_jacobian
from attention_scaling.site.checks import require
from attention_scaling.site.subtraction_vs_division import product_overflow
from attention_scaling.temperatures import temperature_sweep, yarn_multiplier, yarn_scale
from attention_scaling.site.bounded_logits import GEMMA2
from attention_scaling.site.long_sequences import shift_versus_scale
from attention_scaling.site.released_models import yarn_mistakes

__all__ = [
    "Basis",
    "Outcome",
    "TheoremBasis",
    "bfloat16_near_uniform",
    "count_terms",
    "dot_product_grows",
    "exact_exp",
    "exp_values",
    "flat_with_linear_scaling",
    "gives",
    "matches_published",
    "max_weight",
    "numbers",
    "overflow_in_float16",
    "population_variance",
    "printed_are_softmax_of",
    "printed_sum",
    "product_of_standard_normals",
    "ratios_under_shift",
    "softmax_of",
    "sqrt_of",
    "temperature_order",
    "theorem",
    "tiny_gradients",
    "unit_variance_after_scaling",
    "vanishing_with_d_k",
    "xavier_layouts",
    "collapse_is_doubly_exponential",
    "skips_stop_collapse",
    "collapsed_queries_get_no_gradient",
    "l2_norms_stay_bounded",
    "yarn_both_sides",
    "yarn_factor_once",
    "ssmax_as_subtraction",
    "yarn_softens",
    "max_weight_fades",
    "gemma_query_scalar",
]


# -- The outcome of a check -----------------------------------------------------------------


class Basis(str, Enum):
    """How a verdict was decided."""

    COMPUTED = "computed"
    THEOREM = "by a theorem, matched by hand"


@dataclass(frozen=True)
class TheoremBasis:
    """A theorem a claim was matched to, and how its proof fared when the check ran it.

    Attributes
    ----------
    label : str
        The theorem's label in ``attention_scaling.proofs.REGISTRY``.
    counts : dict or None
        How many steps of the proof are of each kind, by kind (checked, cited,
        argued, measured); None if the proof failed.
    """

    label: str
    counts: dict[str, int] | None

    @property
    def proved(self) -> bool:
        """Whether the proof ran without a failed step."""
        return self.counts is not None


@dataclass(frozen=True)
class Outcome:
    """What a check computed, whether the claim agrees with it, and how that was decided.

    Attributes
    ----------
    computed : str
        What the check found, for the table.
    agrees : bool
        Whether the claim agrees with it.
    note : str
        A further sentence: what is true instead, or what a condition changes.
    theorems : tuple of TheoremBasis
        The theorems the claim was matched to by hand, when the verdict rests
        on them; empty when the verdict was computed.
    """

    computed: str
    agrees: bool
    note: str = ""
    theorems: tuple[TheoremBasis, ...] = ()

    @property
    def basis(self) -> Basis:
        """``Basis.THEOREM`` if the verdict rests on theorems matched by hand, else ``Basis.COMPUTED``."""
        return Basis.THEOREM if self.theorems else Basis.COMPUTED


# -- The tolerance rule -----------------------------------------------------------------

_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


def _published_numbers(published: str) -> list[tuple[float, int]]:
    """Each number in the printed text with its count of decimals (thousands commas dropped)."""
    found = []
    for token in _NUMBER.findall(published):
        digits = token.replace(",", "")
        decimals = len(digits.split(".")[1]) if "." in digits else 0
        found.append((float(digits), decimals))
    return found


def matches_published(published: str, computed: Sequence[float]) -> bool:
    """Whether every printed number equals the computed one rounded to the digits shown.

    Parameters
    ----------
    published : str
        The printed value(s), e.g. ``"[0.599, 0.000, 0.401]"`` or ``"1,202,604"``.
    computed : sequence of float
        The values recomputed, in the same order.

    Returns
    -------
    bool
        False also when the counts differ.

    Examples
    --------
    >>> from attention_scaling.site.claims import matches_published
    >>> matches_published("[0.599, 0.401]", [0.59857, 0.40123])
    True
    >>> matches_published("[0.30, 0.33, 0.37]", [0.2800, 0.3420, 0.3780])
    False
    >>> matches_published("1,202,604", [1202604.28])
    True
    """
    numbers = _published_numbers(published)
    computed = [float(value) for value in np.ravel(computed)]
    if len(numbers) != len(computed):
        return False
    # Half a unit in the last printed digit, widened by a hair so that a value
    # exactly on the boundary counts as rounding either way.
    return all(abs(value - shown) <= 0.5 * 10.0**-decimals * (1 + 1e-9) for (shown, decimals), value in zip(numbers, computed))


def _like_published(published: str, computed: Sequence[float]) -> str:
    """The computed values printed with the decimals of the published ones."""
    decimals = [d for _, d in _published_numbers(published)]
    values = [float(v) for v in np.ravel(computed)]
    if len(decimals) != len(values):
        decimals = [4] * len(values)
    text = [f"{value:,.{d}f}" if abs(value) >= 1e4 else f"{value:.{d}f}" for value, d in zip(values, decimals)]
    return text[0] if len(text) == 1 else "[" + ", ".join(text) + "]"


# -- Check builders ------------------------------------------------------------------------


def numbers(
    compute: Callable[[], Sequence[float]],
    explain: Callable[[str], str] | None = None,
) -> Callable[[str | None], Outcome]:
    """A check that recomputes the printed numbers and compares them by the tolerance rule.

    ``explain``, if given, is called with the printed value and computes a
    further sentence for a failed claim (where the numbers really come from, say).
    """

    def check(published: str | None) -> Outcome:
        if published is None:
            raise ValueError("a check of printed numbers needs the claim's published value")
        values = compute()
        computed = _like_published(published, values)
        agrees = matches_published(published, values)
        # The computed column already says what is true; the note adds why.
        note = explain(published) if (explain is not None and not agrees) else ""
        return Outcome(computed, agrees, note)

    return check


def printed_sum(published: str) -> str:
    return f"The printed weights sum to {sum(v for v, _ in _published_numbers(published)):.2f}, not 1."


def printed_are_softmax_of(*scores: float) -> Callable[[str], str]:
    def explain(published: str) -> str:
        if matches_published(published, softmax_of(*scores)):
            return f"The printed weights are softmax({list(scores)})."
        return ""

    return explain


def theorem(*labels: str, step: Callable | None = None) -> Callable[..., Outcome]:
    """A check for a claim matched by hand to theorems: run their proofs and show what they state.

    The check is called as ``check(published, theorems)``, where ``theorems``
    maps each label to its proof (:class:`attention_scaling.proofs.Proved`,
    which :func:`~attention_scaling.site.claims.assess_all` shares among the
    claims, so that a theorem is proved once for all of them). A proof that
    fails (``ProofError``) fails the row. The row shows each theorem's
    statement or, with ``step`` (a predicate such as :func:`gives`), the first
    step of the proof that satisfies it, with the mark of its kind; a proof
    without such a step is an error in the register, and stops the build.
    """

    def check(_published: str | None, theorems: Mapping | None = None) -> Outcome:
        theorems = proofs.Proved() if theorems is None else theorems
        shown, bases = [], []
        for label in labels:
            try:
                proof = theorems[label]
            except ProofError as error:
                bases.append(TheoremBasis(label, None))
                return Outcome(f"the proof of {label} failed: {error}", False,
                               "The theorem the claim was matched to did not prove.", tuple(bases))
            if step is None:
                shown.append(f"${proof.statement}$")
            else:
                chosen = next((candidate for candidate in proof.steps if step(candidate)), None)
                if chosen is None:
                    raise LookupError(f"no step of the proof of {label} is the one the claim was matched to")
                shown.append(f"${chosen.latex()} \\quad {chosen.marker()}$")
            bases.append(TheoremBasis(label, step_counts(proof)))
        return Outcome("; ".join(shown), True, theorems=tuple(bases))

    check.labels = labels  # the theorems the claim was matched to, which the row must name
    return check


def gives(value, *, lhs_has=None) -> Callable:
    """A predicate for :func:`theorem`: an equation whose right-hand side is ``value``.

    With ``lhs_has``, its left-hand side must also contain that expression.
    Steps that are not equations between expressions (inequalities, sets of
    solutions) never match.

    Examples
    --------
    >>> import sympy as sp
    >>> from attention_scaling.proofs import check, d_k
    >>> from attention_scaling.site.claim_checks import gives
    >>> gives(1 / d_k)(check("demo", d_k / d_k**2, 1 / d_k))
    True
    >>> gives(1, lhs_has=1 / sp.sqrt(d_k))(check("demo", d_k / d_k, 1))
    False
    """
    value = sp.sympify(value)

    def matches(step) -> bool:
        if step.relation != "=" or not isinstance(step.rhs, sp.Expr):
            return False
        if lhs_has is not None and not step.lhs.has(lhs_has):
            return False
        return sp.simplify(step.rhs - value) == 0

    return matches


def softmax_of(*scores: float) -> np.ndarray:
    return softmax(np.array(scores, dtype=np.float64))


def sqrt_of(d_k: int) -> list[float]:
    return [math.sqrt(d_k)]


def ratios_under_shift(_published: str | None) -> Outcome:
    x = np.array([100.0, 102.0, 103.0])
    shifted = x - x.max()
    ratio, shifted_ratio = x[1] / x[0], shifted[1] / shifted[0]
    same_weights = np.allclose(softmax(x), softmax(shifted), rtol=0, atol=1e-15)
    computed = (
        f"ratio x₂/x₁: {ratio:.2f} before the shift, {shifted_ratio:.2f} after; "
        f"softmax unchanged: {bool(same_weights)}"
    )
    agrees = not (same_weights and ratio != shifted_ratio)
    return Outcome(computed, agrees, "Softmax depends only on differences: a shift changes every ratio and no weight.")


def dot_product_grows(_published: str | None) -> Outcome:
    stds = [float(np.std(dot_product_samples(d, 4000, seed=d))) for d in (4, 512)]
    computed = f"sample s.d. of q·k: {stds[0]:.2f} at d_k = 4, {stds[1]:.1f} at d_k = 512"
    return Outcome(computed, stds[1] > stds[0])


def _fraction(value: float) -> str:
    """A variance such as 0.25 as the fraction it is, "1/4"."""
    return str(Fraction(value).limit_denominator(1000))


def xavier_layouts(_published: str | None) -> Outcome:
    # Xavier/Glorot: Var(W) = 2 / (fan_in + fan_out), with the fans of the tensor initialised:
    # a separate E x E W_Q, PyTorch's packed (3E, E) in_proj_weight, or one E x d_k matrix per head.
    embed_dim, heads = 512, 8
    head = embed_dim // heads
    separate, packed = in_projection(embed_dim, "separate"), in_projection(embed_dim, "packed")
    per_head = (embed_dim * weight_std("xavier-head", embed_dim, head) ** 2) ** 2
    measured = {}
    for index, shape in enumerate((separate, packed)):
        # Weights drawn as PyTorch draws them (uniform, in its storage shapes), at the same tokens.
        estimate = second_moment_estimate(in_projection_scores(
            embed_dim, heads, layout=shape.layout, n_weights=20, n_tokens=16, seed=(15, index)))
        require(estimate.contains(shape.score_variance), "claims.md, claims-reddit",
                "the simulated score variance matches in_projection's", layout=shape.layout,
                measured=estimate, predicted=shape.score_variance)
        measured[shape.layout] = estimate
    computed = (
        f"Var[q·k/√d_k] at E = {embed_dim}, {heads} heads of {head}, unit-variance inputs: "
        f"separate E × E projections {_fraction(separate.score_variance)} "
        f"(simulated {measured['separate'].value:.3f} ± {measured['separate'].standard_error:.3f}); "
        f"PyTorch's packed in_proj_weight, shape (3E, E), {_fraction(packed.score_variance)} "
        f"(simulated {measured['packed'].value:.3f} ± {measured['packed'].standard_error:.3f}); "
        f"one E × d_k matrix per head {per_head:.2f}"
    )
    note = (
        f"PyTorch's default nn.MultiheadAttention initialises one packed (3E, E) matrix, so each weight has "
        f"variance 1/(2E), each query coordinate {_fraction(packed.query_variance)}, and the scaled scores "
        f"{_fraction(packed.score_variance)}."
    )
    return Outcome(computed, math.isclose(separate.score_variance, 1.0), note)


def bfloat16_near_uniform(_published: str | None) -> Outcome:
    rng = np.random.default_rng(4)
    d_k, n_keys = 4096, 64
    q, k = rng.standard_normal((64, d_k)), rng.standard_normal((n_keys, d_k))
    over_d_k, over_sqrt = (q @ k.T) / d_k, (q @ k.T) / math.sqrt(d_k)
    exact = softmax(over_d_k)

    def median_error(weights, reference=exact) -> float:
        return float(np.median(uniform_deviation_errors(weights, reference)))

    scores_only = median_error(softmax(round_to_format(over_d_k, "bfloat16").astype(np.float64)))
    bfloat16 = median_error(format_softmax(over_d_k, "bfloat16"))
    float32 = median_error(format_softmax(over_d_k, "float32"))
    usual = median_error(format_softmax(over_sqrt, "bfloat16"), softmax(over_sqrt))
    computed = (
        f"median relative error of the weights' deviation from uniform, p_j − 1/n, at d_k = {d_k}, "
        f"n = {n_keys} (seeded): scores q·k/d_k rounded to bfloat16, softmax exact, {scores_only:.2%}; "
        f"softmax in bfloat16 {bfloat16:.1%}; in float32 {float32:.1e}; q·k/√d_k in bfloat16 {usual:.2%}"
    )
    note = (
        f"The reason given is false: small scores keep their relative precision ({scores_only:.2%} lost in "
        f"bfloat16). What was measured is a loss of resolution, not instability: divided by d_k, the weights "
        f"all lie near 1/n, and bfloat16 blurs how far each lies from it ({bfloat16:.1%} median error)."
    )
    # The claim's reason, that small values are imprecise in floating point: the scores' own rounding error.
    return Outcome(computed, scores_only > 0.01, note)


def overflow_in_float16(_published: str | None) -> Outcome:
    logits = np.array([12.0, 11.0, 3.0], dtype=np.float16)
    with np.errstate(over="ignore", invalid="ignore"):
        naive = naive_softmax(logits).astype(np.float64)
    stable = softmax(logits).astype(np.float64)
    overflow = product_overflow()

    def shown(values) -> str:
        return "[" + ", ".join(f"{value:.3f}" for value in values) + "]"

    computed = (
        f"float16 softmax of [12, 11, 3]: as written {shown(naive)}, maximum subtracted {shown(stable)}; "
        f"float16 q·k at d_k = {overflow.d_k}, components {overflow.component:.0f}: {overflow.product}, "
        f"divided by √d_k after the product {overflow.scaled_after}, q divided by √d_k before it "
        f"{overflow.divided_first:.0f}"
    )
    subtraction_works = bool(np.all(np.isfinite(stable)) and not np.all(np.isfinite(naive)))
    note = (
        "The subtraction protects the exponentials, not the product: in float16, dividing q by √d_k before "
        "the product keeps finite a score that overflows without it, so there the scale does prevent an overflow."
    )
    return Outcome(computed, subtraction_works, note)


def product_of_standard_normals(_published: str | None) -> Outcome:
    x, y = sympy.stats.Normal("X", 0, 1), sympy.stats.Normal("Y", 0, 1)
    variance = sp.simplify(sympy.stats.variance(x * y))
    return Outcome(f"Var(XY) = {variance} (sympy.stats, independent X, Y ~ N(0, 1))", variance == 1)


def max_weight(scores: Sequence[float], threshold: float) -> Callable[[str | None], Outcome]:
    def check(_published: str | None) -> Outcome:
        top = float(softmax_of(*scores).max())
        return Outcome(f"largest weight {top:.6f}", top > threshold)

    return check


def tiny_gradients(scores: Sequence[float]) -> Callable[[str | None], Outcome]:
    return lambda _published: _gradients_off_the_top(scores)


def _gradients_off_the_top(scores: Sequence[float]) -> Outcome:
    jacobian = softmax_jacobian(softmax_of(*scores))
    top = int(np.argmax(scores))
    others = np.delete(np.arange(len(scores)), top)
    largest = float(np.max(np.abs(jacobian[np.ix_(others, others)])))
    # In words, not |...|: a bar would end the table cell.
    return Outcome(f"largest magnitude of ∂p_i/∂x_j among the other positions: {largest:.1e}", largest < 1e-6)


def flat_with_linear_scaling(_published: str | None) -> Outcome:
    curves = attention_regimes([4096], "linear", n_keys=16, n_queries=200, seed=8)
    top = float(curves.max_weight[0])
    return Outcome(f"largest weight {top:.4f} vs uniform {1 / 16:.4f} (d_k = 4096, 16 keys)", abs(top - 1 / 16) < 0.01)


def temperature_order(_published: str | None) -> Outcome:
    rng = np.random.default_rng(9)
    d_k = 64
    scores = (rng.standard_normal((500, 1, d_k)) @ rng.standard_normal((500, d_k, 16)))[:, 0, :]
    tops = [float(softmax(scores / (f * math.sqrt(d_k))).max(axis=-1).mean()) for f in (0.5, 1.0, 2.0)]
    computed = "mean largest weight at τ = ½√d_k, √d_k, 2√d_k: " + ", ".join(f"{t:.3f}" for t in tops)
    return Outcome(computed, tops[0] > tops[1] > tops[2])


def vanishing_with_d_k(_published: str | None) -> Outcome:
    """Vaswani et al.'s "extremely small gradients": the typical row's gain at the logits, not its mean.

    Per query row (8 keys, the 2000 seeded rows of the saturation chapter), the gain of softmax with
    respect to its logits, the Frobenius norm of its Jacobian, at d_k = 16 and
    1024 without scaling. The claim agrees when at d_k = 1024 the whole 95 %
    interval of the median lies below a thousandth of the median with
    1/sqrt(d_k), and the Wilson interval of the fraction of starved rows
    (below that thousandth) lies above one half and above its value at
    d_k = 16. The note says what the mean over rows and the gain at the raw
    score q·k (the chain rule's factor c) show instead.
    """
    data = gradient_distribution([16, 1024], n_queries=2000)  # the saturation chapter's rows at these d_k
    small, wide, scaled = (data.summary("logit", scaling, d_k)
                           for scaling, d_k in (("none", 16), ("none", 1024), ("sqrt", 1024)))
    median, low, high = wide.quantile(0.5)
    raw_none, raw_sqrt = data.summary("score", "none", 1024), data.summary("score", "sqrt", 1024)
    computed = (f"gain at the logits ‖J‖_F per query row, unscaled, 8 keys: at d_k = 1024 median {median:.1e} "
                f"[95 %: {low:.1e}, {high:.1e}] vs {scaled.median:.3f} with 1/√d_k; rows below "
                f"{wide.threshold:.1e}: {wide.fraction_below:.3f} [{wide.fraction_low:.3f}, {wide.fraction_high:.3f}] "
                f"(at d_k = 16: {small.fraction_below:.3f})")
    agrees = (high < scaled.quantile(0.5)[1] * STARVED_RATIO
              and wide.fraction_low > max(0.5, small.fraction_high))
    note = (f"Most rows, not all: the mean gain at the logits is still {wide.mean:.3f} ± {wide.mean_se:.3f}, "
            f"carried by rows whose top scores nearly tie, and at the raw score q·k, where the chain rule "
            f"multiplies by c, the unscaled mean {raw_none.mean:.4f} ± {raw_none.mean_se:.4f} is "
            f"{raw_none.mean / raw_sqrt.mean:.1f} times the scaled {raw_sqrt.mean:.4f}.")
    return Outcome(computed, agrees, note)


def unit_variance_after_scaling(_published: str | None) -> Outcome:
    estimate = variance_estimate(dot_product_samples(64, 50_000, seed=12) / 8)
    computed = f"sample Var[q·k/8] = {estimate.value:.3f} ± {estimate.standard_error:.3f} at d_k = 64"
    return Outcome(computed, estimate.contains(1.0))


def exp_values(*powers: float) -> Callable[[], list[float]]:
    def compute() -> list[float]:
        with mpmath.workdps(40):
            return [float(mpmath.e**p) for p in powers]

    return compute


def exact_exp(power: int) -> Callable[[str | None], Outcome]:
    def check(published: str | None) -> Outcome:
        with mpmath.workdps(60):
            exact = int(mpmath.floor(mpmath.e**power))
        shown = int(published.replace(",", ""))
        agrees = abs(exact - shown) <= 0.5
        ratio = exact / shown
        note = "" if agrees else f"e^{power} = {exact:,} (to the unit), {ratio:,.0f} times the printed number."
        return Outcome(f"{exact:,}", agrees, note)

    return check


def population_variance(values: Sequence[float]) -> float:
    return float(np.var(values))


def count_terms(d_k: int) -> list[float]:
    return [d_k * d_k, d_k, d_k * d_k - d_k, d_k]


# -- depth: rank collapse and the Lipschitz constant ---------------------------------------------


def collapse_is_doubly_exponential(_published: str | None) -> Outcome:
    data = rank_collapse_data()
    fits = {policy: collapse_fits(data.quantiles(policy, False)[1]) for policy in POLICIES}
    computed = "; ".join(f"{policy}: doubly exponential fit RMS {fit.rms_double:.2f} vs exponential "
                         f"{fit.rms_exponential:.2f} in ln r over {fit.points} layers, base {fit.base:.1f}"
                         for policy, fit in fits.items())
    note = ("The float64 floor (about 2e-16) is reached within a few layers, so each fit rests on 3 to 8 points; "
            "with skip connections the exponential fit is the better one.")
    return Outcome(computed, all(fit.doubly_exponential for fit in fits.values()), note)


def skips_stop_collapse(_published: str | None) -> Outcome:
    data = rank_collapse_data()
    last = {policy: data.quantiles(policy, True)[1, -1] for policy in POLICIES}
    pure = max(data.quantiles(policy, False)[1, -1] for policy in POLICIES)
    exponential = all(not collapse_fits(data.quantiles(policy, True)[1]).doubly_exponential for policy in POLICIES)
    computed = (f"median residual after {data.depth[-1]} layers with skips: "
                + ", ".join(f"{policy} {value:.1e}" for policy, value in last.items()) + f"; without: at most {pure:.0e}")
    note = ("The residual still falls, about exponentially: the skip connections slow the collapse by many orders of "
            "magnitude but, without MLPs or normalisation, do not halt it in this random stack.")
    return Outcome(computed, exponential and min(last.values()) > 1e-6 > pure, note)


def collapsed_queries_get_no_gradient(_published: str | None) -> Outcome:
    rng = np.random.default_rng(2022)
    n, d = 16, 64
    w_q, w_k, w_v = rng.standard_normal((3, d, d)) / math.sqrt(d)
    g, mean, spread = rng.standard_normal((n, d)), rng.standard_normal(d), rng.standard_normal((n, d))
    norms = {eps: query_gradient_norm(mean + eps * spread, w_q, w_k, w_v, g, 1 / math.sqrt(d))
             for eps in (0.0, 1e-3, 1.0)}
    ratio = norms[1e-3] / norms[1.0]
    computed = (f"‖∂L/∂W_Q‖ = {norms[0.0]:.1e} for identical tokens, {norms[1e-3]:.2e} at residual scale 1e-3, "
                f"{norms[1.0]:.2e} at scale 1 (ratio {ratio:.1e})")
    # The gradient at the logits is linear in the residual, and its rows sum to 0, so that multiplying by the
    # keys K = XW_K keeps only their residual part: a second factor. The ratio should be about (1e-3)^2.
    note = f"It vanishes like the square of the residual: the ratio {ratio:.1e} is close to (1e-3)² = 1e-6."
    return Outcome(computed, norms[0.0] == 0.0 and 1e-7 < ratio < 1e-5, note)


def l2_norms_stay_bounded(_published: str | None) -> Outcome:
    data = lipschitz_growth_data()
    l2, dot = float(np.max(data.l2_origin)), float(np.max(data.dot_origin))
    computed = (f"largest ‖J‖₂ of L2 attention {l2:.2f} over t ≤ {data.t[-1]:g} ({data.n_seeds} seeds); "
                f"dot product at the same points up to {dot:.0f}")
    return Outcome(computed, l2 <= 3.0 < dot)
# -- Temperatures for longer contexts (long-sequences.md, long-temperatures) -----------------


def _yarn_logits(q: np.ndarray, k: np.ndarray, c: float) -> np.ndarray:
    """The logits of YaRN's scaled rows: q and k each multiplied by c."""
    return np.einsum("ij,ij->i", c * q, c * k)


def yarn_both_sides(_published: str | None, extension: float = 8.0, pairs: int = 1000, d: int = 64) -> Outcome:
    r"""Scaling q and k each by YaRN's :math:`c = 0.1 \ln s + 1` multiplies every logit by :math:`c^2`: computed on seeded pairs.

    Examples
    --------
    >>> from attention_scaling.site.claim_checks import yarn_both_sides
    >>> yarn_both_sides(None).agrees
    True
    """
    c = float(yarn_scale(extension))
    q, k = np.random.default_rng(2309).standard_normal((2, pairs, d))
    ratio = _yarn_logits(q, k, c) / np.einsum("ij,ij->i", q, k)
    worst = float(np.max(np.abs(ratio - c**2)))
    agrees = worst <= 1e-9 * c**2
    note = "" if agrees else f"The logits changed by factors up to {worst:.3g} away from c²."
    return Outcome(f"(c q)·(c k) / (q·k) = {c**2:.4f} = c² for {pairs} random pairs (c = {c:.4f} at s = {extension:g})",
                   agrees, note)


def yarn_factor_once(_published: str | None) -> Outcome:
    r"""Solve YaRN's Eq. 22, :math:`\sqrt{1/t} = 0.1 \ln s + 1`, for :math:`1/t` with SymPy, against :math:`0.1 \ln s + 1`: computed.

    Examples
    --------
    >>> from attention_scaling.site.claim_checks import yarn_factor_once
    >>> yarn_factor_once(None).agrees
    False
    """
    s, inverse_t = sp.Symbol("s", positive=True), sp.Symbol("u", positive=True)  # u = 1/t
    m = sp.Rational(1, 10) * sp.log(s) + 1
    (solved,) = sp.solve(sp.Eq(sp.sqrt(inverse_t), m), inverse_t)
    gap = sp.factor(sp.simplify(solved - m))
    mistakes = yarn_mistakes(trained=4096, n=32768)
    computed = (f"Eq. 22 gives 1/t = {sp.sstr(solved)}, which exceeds 0.1 ln s + 1 by {sp.sstr(gap)}; at s = 8 a needle "
                f"keeps weight {mistakes.weight_correct:.3f} with the square and {mistakes.weight_wrong_power:.3f} with the factor once")
    return Outcome(computed, gap == 0, "The logits are multiplied by (0.1 ln s + 1)², the square: q and k are each "
                                       "multiplied by √(1/t).")


def yarn_softens(_published: str | None, trained: int = 4096, n: int = 32768, rows: int = 100) -> Outcome:
    r"""Entropy of seeded Gaussian rows with and without YaRN's factor :math:`(0.1 \ln s + 1)^2` on the logits: computed.

    A claim that YaRN softens attention holds only if the factor lowers the
    logits, so raises the entropy; at :math:`s > 1` it is above 1.

    Examples
    --------
    >>> from attention_scaling.site.claim_checks import yarn_softens
    >>> yarn_softens(None).agrees
    False
    """
    factor = float(yarn_multiplier(n, trained))  # the library's YaRN factor on the logits, (0.1 ln(n/L) + 1)^2
    logits = np.random.default_rng(2309).standard_normal((rows, n))
    plain, scaled = entropy_from_logits(logits), entropy_from_logits(factor * logits)
    margin = math.log(trained - 1)  # the needle of yarn_mistakes: weight 1/2 at the trained length
    needle_plain, needle_scaled = (float(needle_weight(n, margin, scale)) for scale in (1.0, factor))
    computed = (f"at s = {n / trained:g} ({n:,} keys) YaRN multiplies the logits by {factor:.3f}: the median entropy of "
                f"{rows} rows of N(0, 1) logits goes from {np.median(plain):.3f} to {np.median(scaled):.3f} nats "
                f"(lower in {np.count_nonzero(scaled < plain)} of {rows} rows), and a needle's weight from "
                f"{needle_plain:.3f} to {needle_scaled:.3f}")
    return Outcome(computed, bool(np.median(scaled) > np.median(plain)),
                   "YaRN's t = (0.1 ln s + 1)⁻² is below 1: dividing the logits by it sharpens attention.")


def ssmax_as_subtraction(_published: str | None, n: int = 4096, s: float = 0.43) -> Outcome:
    r"""Subtracting :math:`s \ln n` from every score, against multiplying the scores by it, on seeded scores: computed.

    Examples
    --------
    >>> from attention_scaling.site.claim_checks import ssmax_as_subtraction
    >>> ssmax_as_subtraction(None).agrees
    False
    """
    record = shift_versus_scale(np.random.default_rng(2501).standard_normal(n), s)
    computed = (f"subtracting s ln n (s = {s:g}, n = {n}) changes no weight by more than {record.shift_change:.0e}; "
                f"multiplying by it raises the largest weight from {record.plain_max:.2e} to {record.scale_max:.2e}")
    return Outcome(computed, record.shift_change > 1e-12, "Written as a subtraction it is softmax, for every s: "
                                                          "Scalable-Softmax multiplies the scores by s ln n.")


def max_weight_fades(_published: str | None) -> Outcome:
    r"""The median largest softmax weight of :math:`n` Gaussian logits (fixed scale) falls as :math:`n` grows: computed.

    Examples
    --------
    >>> from attention_scaling.site.claim_checks import max_weight_fades
    >>> max_weight_fades(None).agrees
    True
    """
    sweep = temperature_sweep((512, 4096, 32768, 262144), ("fixed",), budget=2**20, min_trials=4, seed=2501)
    medians = sweep.max_weight[0]
    agrees = bool(np.all(np.diff(medians) < 0))
    shown = ", ".join(f"{value:.2e}" for value in medians)
    note = "" if agrees else "The median largest weight did not fall at every step."
    return Outcome(f"median largest weight {shown} at n = 512, 4096, 32768, 262144 (N(0, 1) logits)", agrees, note)


# -- Bounded logits (bounded-logits.md) -------------------------------------------------------------


def gemma_query_scalar(published: str | None) -> Outcome:
    r"""Gemma 2 27B's ``query_pre_attn_scalar`` against its width over heads and its head dimension: computed.

    Examples
    --------
    >>> from attention_scaling.site.claim_checks import gemma_query_scalar
    >>> gemma_query_scalar("144").agrees
    True
    """
    if published is None:
        raise ValueError("a check of printed numbers needs the claim's published value")
    width, heads, head_dim, scalar = GEMMA2["27B"]
    agrees = matches_published(published, [scalar]) and width / heads == scalar != head_dim
    computed = (f"{width} / {heads} = {width // heads}; head dimension {head_dim}; scores have "
                f"{head_dim / scalar:.3f} times the variance of 1/√{head_dim}")
    return Outcome(computed, agrees, "" if agrees else "The scalar is not the width over the heads.")


# -- Claims the review found missing from the register (issue 53) ----------------------------------


def not_universal(_published: str | None) -> Outcome:
    """"Modern LLMs universally use √d_k scaling": one released configuration on the site that does not."""
    width, heads, head_dim, scalar = GEMMA2["27B"]
    computed = (f"Gemma 2 27B: queries scaled by $1/\\sqrt{{{scalar}}}$ (`query_pre_attn_scalar`) at head dimension "
                f"{head_dim}, {math.sqrt(head_dim / scalar):.3f} times $1/\\sqrt{{d_k}}$")
    note = ("Not every model: Gemma 2 27B divides by $\\sqrt{d_{model}/h}$ instead (Bounded logits), T5 folds the "
            "scale into $W_Q$ and applies none (Initialisation), and μP uses $1/d_k$ (Correlated queries and keys).")
    return Outcome(computed, scalar == head_dim, note)


def the_paper_suspects(published: str | None, theorems: Mapping | None = None) -> Outcome:
    """"Vaswani et al. chose √d_k for exactly this reason; it is the mathematically correct factor"."""
    matched = theorem("thm-dot-product-general-moments")(published, theorems)
    note = ("Vaswani et al. (§3.2.1) write \"We suspect that for large values of $d_k$, the dot products grow large "
            "in magnitude\": a conjecture, with the variance argument in a footnote. And $\\sqrt{d_k}$ gives the "
            "scaled scores unit variance only when $\\sigma_q^2\\sigma_k^2 + \\mu_q^2\\sigma_k^2 + \\mu_k^2\\sigma_q^2 = 1$ "
            "(the theorem), not for every distribution of $q$ and $k$.")
    return Outcome(matched.computed, False, note, matched.theorems)


the_paper_suspects.labels = ("thm-dot-product-general-moments",)

#: How often "easily" must happen for the register to grant it: one query in twenty.
EASILY = 0.05


def extreme_scores_easily(_published: str | None) -> Outcome:
    """"At d_k = 64 softmax input can easily look like [-20, 3, 25, -15]": how often one of 4 scores reaches |25|."""
    std, n_keys, largest = math.sqrt(64), 4, 25.0
    # Each score is N(0, 64) (thm-dot-product-variance); the chance that at least one of the 4 reaches |25|.
    one = math.erfc(largest / (std * math.sqrt(2)))
    chance = 1 - (1 - one) ** n_keys
    computed = (f"$P(\\max_j \\lvert s_j \\rvert \\ge {largest:g})$ for {n_keys} independent "
                f"$\\mathcal{{N}}(0, {std**2:g})$ scores: {chance:.2%}")
    note = (f"Read \"easily\" as at least one query in {round(1 / EASILY)}: scores as far out as 25 arise in "
            f"{chance:.1%} of rows. Scores like [-20, 3, 25, -15] are possible, not typical; typical rows at "
            f"standard deviation 8 still saturate (the next claims).")
    return Outcome(computed, chance >= EASILY, note)
