r"""Monte Carlo evidence for every proved theorem.

Each :class:`EvidenceRow` sets a value the theorem proves (read off the SymPy
result with concrete parameters) against a seeded numerical measurement and
its interval. For a Monte Carlo mean or variance the interval is three
standard errors either side; for a deterministic floating-point computation
it is a stated rounding tolerance. For a proved upper bound on a mean the
interval is one-sided, from three standard errors below the estimate up: the
bound fails only if the estimate lies significantly above it. A theorem is
supported when the proved value lies in the interval.

Every measurement is a function registered with :func:`register_evidence`:
those of the first chapters here, a newer page's in its own support module,
making rows with :func:`monte_carlo_row` or :func:`rounding_row`.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import sympy as sp

from attention_scaling import proofs
from attention_scaling.simulate import Estimate, dot_product_samples, mean_estimate, variance_estimate
from attention_scaling._attention import layer_norm
from attention_scaling._softmax import softmax, softmax_jacobian
from attention_scaling.bounded_logits import soft_cap
from attention_scaling.depth import contraction_ratios
from attention_scaling.folding import logit_updates
from attention_scaling.gradients import softmax_jacobian_norm
from attention_scaling.retrieval import init_params
from attention_scaling.saturation import gap_density_at_zero, gap_distribution, gap_threshold
from attention_scaling.training import _fold
from attention_scaling.site import import_pages
from attention_scaling.site.checks import require
from attention_scaling.site.depth import partial_derivative
from attention_scaling.site.tables import markdown_table

__all__ = [
    "EVIDENCE", "EvidenceRow", "EvidenceSummary", "evidence", "evidence_summary", "evidence_table", "monte_carlo_row",
    "register_evidence", "rounding_row",
]

#: Standard errors either side of a Monte Carlo estimate (about 99.7 % for a normal error).
Z = 3.0


@dataclass(frozen=True)
class EvidenceRow:
    """One measured check of one theorem.

    Attributes
    ----------
    theorem : str
        Label of the theorem.
    quantity : str
        What is measured, in LaTeX.
    proved : float
        The value the theorem gives.
    measured : float
        The numerical estimate.
    low, high : float
        The interval around the estimate.
    interval : str
        How the interval was formed.

    Examples
    --------
    >>> from attention_scaling.site.evidence import EvidenceRow
    >>> EvidenceRow("thm-x", "x", proved=1.0, measured=1.1, low=0.9, high=1.3, interval="± 3 s.e.").holds
    True
    >>> EvidenceRow("thm-x", "x", proved=2.0, measured=1.1, low=0.9, high=1.3, interval="± 3 s.e.").holds
    False
    """

    theorem: str
    quantity: str
    proved: float
    measured: float
    low: float
    high: float
    interval: str

    @property
    def holds(self) -> bool:
        return bool(self.low <= self.proved <= self.high)


def monte_carlo_row(theorem: str, quantity: str, proved, estimate: Estimate) -> EvidenceRow:
    r"""A row for a Monte Carlo estimate: the interval is ``Z`` standard errors either side.

    Parameters
    ----------
    theorem : str
        The theorem's label.
    quantity : str
        What is measured, in LaTeX.
    proved : number
        The value the theorem gives (a SymPy number is converted).
    estimate : attention_scaling.simulate.Estimate
        The seeded estimate and its standard error.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.simulate import mean_estimate
    >>> from attention_scaling.site.evidence import monte_carlo_row
    >>> draws = np.random.default_rng(0).standard_normal(10_000)
    >>> row = monte_carlo_row("thm-x", r"\mathbb{E}[X]", 0, mean_estimate(draws))
    >>> row.holds, row.interval
    (True, '± 3 s.e.')
    """
    low, high = estimate.interval(Z)
    return EvidenceRow(theorem, quantity, float(proved), estimate.value, low, high, f"± {Z:g} s.e.")


def rounding_row(theorem: str, quantity: str, proved, measured: float, tolerance: float) -> EvidenceRow:
    """A row for a deterministic floating-point computation: the interval is ``tolerance`` either side.

    Examples
    --------
    >>> from attention_scaling.site.evidence import rounding_row
    >>> row = rounding_row("thm-x", "0.1 + 0.2", 0.3, 0.1 + 0.2, 1e-12)
    >>> row.holds, row.interval
    (True, '± 1e-12 (rounding)')
    """
    measured = float(measured)
    return EvidenceRow(
        theorem, quantity, float(proved), measured, measured - tolerance, measured + tolerance,
        f"± {tolerance:.0e} (rounding)",
    )


#: The evidence functions that pages register with :func:`register_evidence`, in the order registered.
EVIDENCE: list[Callable[[np.random.Generator, Mapping], list[EvidenceRow]]] = []


def register_evidence(function: Callable[[np.random.Generator, Mapping], list[EvidenceRow]]):
    """Register a function that measures a page's theorems: decorate it in the page's support module.

    :func:`evidence` calls it with a generator seeded by its own name (so
    its rows do not depend on what else is registered, or in what order) and
    with the proved results, and adds the rows it returns to the Evidence
    page and the dependency graph.

    Parameters
    ----------
    function : callable
        ``function(rng, theorems)`` returns a list of :class:`EvidenceRow`.
        ``theorems`` maps each registered label to its proof
        (:class:`attention_scaling.proofs.Proved`): a value the row sets
        against its measurement is read off ``theorems[label]``, which runs
        each proof once for all the functions, instead of proving it again.

    Returns
    -------
    callable
        ``function``, unchanged.

    Raises
    ------
    ValueError
        If the function is registered already.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.proofs import Proved, d_k
    >>> from attention_scaling.simulate import variance_estimate
    >>> from attention_scaling.site.evidence import EVIDENCE, monte_carlo_row, register_evidence
    >>> @register_evidence
    ... def sixteen_rows(rng, theorems):
    ...     proof = theorems["thm-dot-product-variance"]  # Var[q . k] = d_k
    ...     q, k = rng.standard_normal((2, 10_000, 16))
    ...     return [monte_carlo_row(proof.label, "Var[q . k], d_k = 16", proof.result.rhs.subs(d_k, 16),
    ...                             variance_estimate((q * k).sum(axis=-1)))]
    >>> EVIDENCE[-1] is sixteen_rows
    True
    >>> [row.holds for row in sixteen_rows(np.random.default_rng(0), Proved())]
    [True]
    >>> EVIDENCE.remove(sixteen_rows)  # the example leaves the registry as it found it
    """
    if function in EVIDENCE:
        raise ValueError(f"{function.__qualname__} is registered twice as evidence: register it once")
    EVIDENCE.append(function)
    return function


@register_evidence
def _product_rows(rng: np.random.Generator, theorems: Mapping, n: int = 200_000) -> list[EvidenceRow]:
    proof = theorems["lem-product-variance"]
    values = {"mu_X": 1.0, "sigma_X": 2.0, "mu_Y": -0.5, "sigma_Y": 1.5}
    proved = proof.result.rhs.subs({s: values[s.name] for s in proof.result.rhs.free_symbols})
    x = values["mu_X"] + values["sigma_X"] * rng.standard_normal(n)
    y = values["mu_Y"] + values["sigma_Y"] * rng.standard_normal(n)
    quantity = r"\operatorname{Var}[XY],\ X \sim \mathcal{N}(1, 2^2),\ Y \sim \mathcal{N}(-\tfrac12, 1.5^2)"
    return [monte_carlo_row(proof.label, quantity, proved, variance_estimate(x * y))]


@register_evidence
def _dot_product_rows(rng: np.random.Generator, theorems: Mapping, n: int = 20_000, d: int = 64) -> list[EvidenceRow]:
    proof = theorems["thm-dot-product-variance"]
    proved_mean = proof.steps[proof.results[0]].rhs  # the stated E[q.k]
    proved_variance = proof.result.rhs.subs(proofs.d_k, d)
    rows = []
    for distribution in ("normal", "rademacher", "uniform"):
        samples = dot_product_samples(d, n, seed=int(rng.integers(2**32)), distribution=distribution)
        rows.append(monte_carlo_row(proof.label, rf"\mathbb{{E}}[q \cdot k],\ d_k = {d},\ \text{{{distribution}}}",
                                 proved_mean, mean_estimate(samples)))
        rows.append(monte_carlo_row(proof.label, rf"\operatorname{{Var}}[q \cdot k],\ d_k = {d},\ \text{{{distribution}}}",
                                 proved_variance, variance_estimate(samples)))
    return rows


@register_evidence
def _general_rows(rng: np.random.Generator, theorems: Mapping, n: int = 20_000, d: int = 16) -> list[EvidenceRow]:
    proof = theorems["thm-dot-product-general-moments"]
    values = {proofs.mu_q: 0.5, proofs.sigma_q: 1.5, proofs.mu_k: -1.0, proofs.sigma_k: 0.8, proofs.d_k: d}
    q = values[proofs.mu_q] + values[proofs.sigma_q] * rng.standard_normal((n, d))
    k = values[proofs.mu_k] + values[proofs.sigma_k] * rng.standard_normal((n, d))
    dots = np.einsum("ij,ij->i", q, k)
    label = rf"d_k = {d},\ \mu_q = 0.5,\ \sigma_q = 1.5,\ \mu_k = -1,\ \sigma_k = 0.8"
    return [
        monte_carlo_row(proof.label, rf"\mathbb{{E}}[q \cdot k],\ {label}", proof.steps[proof.results[0]].rhs.subs(values),
                     mean_estimate(dots)),
        monte_carlo_row(proof.label, rf"\operatorname{{Var}}[q \cdot k],\ {label}", proof.result.rhs.subs(values),
                     variance_estimate(dots)),
    ]


@register_evidence
def _correlated_rows(rng: np.random.Generator, theorems: Mapping, n: int = 20_000, d: int = 32, rho: float = 0.6) -> list[EvidenceRow]:
    proof = theorems["thm-correlated-dot-product"]
    values = {proofs.rho: rho, proofs.d_k: d}
    z = rng.standard_normal((n, d))
    k = rho * z + np.sqrt(1 - rho**2) * rng.standard_normal((n, d))
    dots = np.einsum("ij,ij->i", z, k)
    label = rf"d_k = {d},\ \rho = {rho}"
    return [
        monte_carlo_row(proof.label, rf"\mathbb{{E}}[q \cdot k],\ {label}", proof.steps[proof.results[0]].rhs.subs(values),
                     mean_estimate(dots)),
        monte_carlo_row(proof.label, rf"\operatorname{{Var}}[q \cdot k],\ {label}", proof.result.rhs.subs(values),
                     variance_estimate(dots)),
    ]


@register_evidence
def _scaling_rows(rng: np.random.Generator, theorems: Mapping, n: int = 50_000, d: int = 256) -> list[EvidenceRow]:
    proof = theorems["thm-scaled-variance"]
    c = 3.0
    # An exponential variable: skewed, far from Gaussian, variance 1.
    x = rng.exponential(1.0, n)
    # The result Var[X/c] = Var[X]/c^2 with Var[X] = 1 and c = 3.
    with_unit_variance = proof.result.rhs.replace(lambda e: isinstance(e, proofs.Var), lambda e: sp.Integer(1))
    proved_x = with_unit_variance.subs({s: c for s in with_unit_variance.free_symbols if s.name == "c"})
    samples = dot_product_samples(d, n, seed=20)
    # Steps 5 and 6 of the proof: Var[q.k / sqrt(d_k)] = 1 and Var[q.k / d_k] = 1/d_k.
    by_sqrt, by_d_k = proof.steps[5].rhs, proof.steps[6].rhs.subs(proofs.d_k, d)
    return [
        monte_carlo_row(proof.label, r"\operatorname{Var}[X/3],\ X \sim \text{Exponential}(1)", proved_x,
                     variance_estimate(x / c)),
        monte_carlo_row(proof.label, rf"\operatorname{{Var}}[q \cdot k / \sqrt{{d_k}}],\ d_k = {d}",
                     by_sqrt, variance_estimate(samples / np.sqrt(d))),
        monte_carlo_row(proof.label, rf"\operatorname{{Var}}[q \cdot k / d_k],\ d_k = {d}",
                     by_d_k, variance_estimate(samples / d)),
    ]


@register_evidence
def _softmax_rows(rng: np.random.Generator, theorems: Mapping, n: int = 10_000) -> list[EvidenceRow]:
    # Measured, not read off the proofs: the rows need only the labels.
    shift, jacobian = "thm-softmax-shift-invariance", "thm-softmax-jacobian"
    x = 5.0 * rng.standard_normal((n, 8))
    c = rng.uniform(-50.0, 50.0, (n, 1))
    moved = np.max(np.abs(softmax(x + c) - softmax(x)))
    p = softmax(x[:, :5] / 5.0)
    exact = softmax_jacobian(p)
    step = 1e-6
    numeric = np.empty_like(exact)
    for j in range(5):
        bump = np.zeros(5)
        bump[j] = step
        numeric[..., :, j] = (softmax(x[:, :5] / 5.0 + bump) - softmax(x[:, :5] / 5.0 - bump)) / (2 * step)
    far = softmax_jacobian(softmax(np.array([40.0, 0.0])))
    return [
        # Shifts up to 50 on scores up to ~20: rounding of the exponent is ~1e-14 relative.
        rounding_row(shift, r"\max |\operatorname{softmax}(x + c\mathbf{1}) - \operatorname{softmax}(x)|", 0, moved, 1e-12),
        # Central differences: truncation O(step^2) plus rounding O(eps / step).
        rounding_row(jacobian, r"\max |J - J_{\text{central differences}}|", 0, np.max(np.abs(exact - numeric)), 1e-8),
        rounding_row(jacobian, r"\max |\textstyle\sum_k J_{ik}|", 0, np.max(np.abs(exact.sum(axis=-1))), 1e-15),
        rounding_row(jacobian, r"\max_{ik} |J_{ik}| \text{ for scores } [40, 0]", 0, np.max(np.abs(far)), 1e-15),
    ]


def _upper_bound(theorem: str, quantity: str, bound, estimate: Estimate) -> EvidenceRow:
    """A proved upper bound on a mean: it holds unless it lies more than Z standard errors below the estimate."""
    return EvidenceRow(theorem, quantity, float(bound), estimate.value, estimate.value - Z * estimate.standard_error,
                       math.inf, f"≥ estimate − {Z:g} s.e. (upper bound)")


def _gaussian_max_rows(rng: np.random.Generator, theorems: Mapping) -> list[EvidenceRow]:
    r""":math:`\mathbb{E}\max_i X_i` by Monte Carlo against :math:`s\sqrt{2\ln n}`, and the minimisation over :math:`t`."""
    # A child generator: the draws here leave the stream of the rows after them unchanged.
    (rng,) = rng.spawn(1)
    bound = theorems["thm-gaussian-max-bound"]
    (log_n,) = (symbol for symbol in bound.result.rhs.free_symbols if symbol.name == r"\ln n")
    rows = []
    for length in (16, 256, 4096):
        # 2**21 logits per point: 131072 rows of 16 down to 512 rows of 4096.
        trials = 2**21 // length
        for s in (0.5, 2.0):
            proved = bound.result.rhs.subs({proofs.spread: s, log_n: math.log(length)}).doit()
            largest = s * rng.standard_normal((trials, length)).max(axis=1)
            rows.append(_upper_bound(
                bound.label, rf"\mathbb{{E}}\max_{{i \le n}} X_i,\ X_i \sim \mathcal{{N}}(0, {s:g}^2),\ n = {length}",
                proved, mean_estimate(largest)))
    keys, s = 4096, 1.5
    # Step 7 of the proof: the minimum over t of ln n / t + t s^2 / 2.
    proved_min = bound.steps[7].rhs.subs({proofs.spread: s, log_n: math.log(keys)}).doit()
    # The minimum over a fine grid of t: the grid error is about f''(t*) h^2 / 8, below 1e-9 here.
    t = np.linspace(0.5, 3.0, 2_000_001)
    grid_min = np.min(np.log(keys) / t + t * s**2 / 2)
    rows.append(rounding_row(bound.label, r"\min_{t > 0} \big(\ln n / t + t s^2/2\big),\ n = 4096,\ s = 1.5",
                          proved_min, grid_min, 1e-9))
    return rows


@register_evidence
def _long_sequence_rows(rng: np.random.Generator, theorems: Mapping, n: int = 200_000) -> list[EvidenceRow]:
    moments = theorems["thm-gaussian-logit-moments"]
    spread = 0.8
    values = {proofs.spread: spread}
    x = spread * rng.standard_normal(n)
    moment_rows = [
        # Steps 3, 4 and 6 of the proof: E[e^X], E[e^{2X}] and E[X e^X].
        (r"\mathbb{E}[e^{X}],\ X \sim \mathcal{N}(0, 0.8^2)", moments.steps[3].rhs, np.exp(x)),
        (r"\mathbb{E}[e^{2X}],\ X \sim \mathcal{N}(0, 0.8^2)", moments.steps[4].rhs, np.exp(2 * x)),
        (r"\mathbb{E}[X e^{X}],\ X \sim \mathcal{N}(0, 0.8^2)", moments.steps[6].rhs, x * np.exp(x)),
    ]
    rows = [monte_carlo_row(moments.label, quantity, proved.subs(values), mean_estimate(draws))
            for quantity, proved, draws in moment_rows]

    rows.extend(_gaussian_max_rows(rng, theorems))

    needle = theorems["thm-needle-limit"]
    weight = needle.steps[0].rhs
    n_sym, beta, margin = proofs.length, sp.Symbol(r"\beta", positive=True), sp.Symbol(r"\Delta", positive=True)
    for length, scale, label in ((1000, 0.7, r"\beta = 0.7"), (4096, 0.43 * np.log(4096), r"\beta = 0.43 \ln n")):
        scores = np.zeros(length)
        scores[0] = 5.0
        proved_weight = weight.subs({n_sym: length, beta: scale, margin: 5.0})
        rows.append(rounding_row(needle.label, rf"p_{{\text{{needle}}}},\ n = {length},\ \Delta = 5,\ {label}",
                              proved_weight, softmax(scale * scores)[0], 1e-12))
    return rows


@register_evidence
def _beyond_rows(rng: np.random.Generator, theorems: Mapping, n: int = 20_000) -> list[EvidenceRow]:
    """The theorems of the chapters beyond the textbook argument."""
    rows = []
    limits = theorems["thm-correlated-scaling-limits"]
    logit_growth = theorems["thm-logit-norm-growth"]
    d, rho, gain = 256, 0.6, 2.0
    z = rng.standard_normal((n, d))
    k = rho * z + np.sqrt(1 - rho**2) * rng.standard_normal((n, d))
    dots = np.einsum("ij,ij->i", z, k)
    values = {proofs.rho: rho, proofs.d_k: d, sp.Symbol("g", positive=True): gain}
    label = rf"d_k = {d},\ \rho = {rho}"
    # Steps 0, 3 and 4: the means under 1/sqrt(d_k) and 1/d_k, and the variance under 1/d_k.
    rows.append(monte_carlo_row(limits.label, rf"\mathbb{{E}}[q \cdot k / \sqrt{{d_k}}],\ {label}",
                             limits.steps[0].rhs.subs(values), mean_estimate(dots / np.sqrt(d))))
    rows.append(monte_carlo_row(limits.label, rf"\mathbb{{E}}[q \cdot k / d_k],\ {label}",
                             limits.steps[3].rhs.subs(values), mean_estimate(dots / d)))
    rows.append(monte_carlo_row(limits.label, rf"\operatorname{{Var}}[q \cdot k / d_k],\ {label}",
                             limits.steps[4].rhs.subs(values), variance_estimate(dots / d)))
    # Step 1 of the growth theorem: queries and keys grown by g move the mean logit by g^2.
    grown = np.einsum("ij,ij->i", gain * z, gain * k) / np.sqrt(d)
    rows.append(monte_carlo_row(logit_growth.label, rf"\mathbb{{E}}[(g q) \cdot (g k) / \sqrt{{d_k}}],\ g = 2,\ {label}",
                             logit_growth.steps[1].rhs.subs(values), mean_estimate(grown)))

    stable = theorems["thm-stable-softmax-bounds"]
    logits = rng.uniform(-1e4, 1e4, (1000, 16))
    largest_term = np.max(np.exp(logits - logits.max(axis=-1, keepdims=True)))
    # Step 3: the maximum's own term is e^0 = 1, whatever the size of the logits.
    rows.append(rounding_row(stable.label, r"\max_i e^{x_i - m},\ x_i \sim U(-10^4, 10^4)",
                          stable.steps[3].rhs, largest_term, 1e-15))

    projected = theorems["thm-projected-dot-product"]
    d_model, d_head, sigma_q, sigma_k = 64, 16, 0.2, 0.1
    tokens = layer_norm(rng.standard_normal((2, d_model)))  # fixed x and x', squared norm d_model
    w_q = sigma_q * rng.standard_normal((n // 4, d_model, d_head))
    w_k = sigma_k * rng.standard_normal((n // 4, d_model, d_head))
    scores = np.einsum("a,tai,b,tbi->t", tokens[0], w_q, tokens[1], w_k) / np.sqrt(d_head)
    values = {proofs.d_model: d_model, proofs.sigma_Q: sigma_q, proofs.sigma_K: sigma_k}
    rows.append(monte_carlo_row(
        projected.label,
        r"\operatorname{Var}[x W_Q \cdot x' W_K / \sqrt{d_k}],\ d_{\text{model}} = 64,\ d_k = 16,\ \sigma_Q = 0.2,\ \sigma_K = 0.1",
        projected.result.rhs.subs(values), variance_estimate(scores)))

    bound = theorems["thm-qk-norm-bound"]
    d = 128
    x = rng.standard_t(3, (1000, d)) * rng.uniform(0.1, 100.0, (1000, 1))  # heavy tails, any scale
    normalised = layer_norm(x)
    # Step 0: the squared norm of a normalised vector is d_k; step 6: q = k attains sqrt(d_k).
    squared_norms = (normalised**2).sum(axis=-1)
    farthest = squared_norms[np.argmax(np.abs(squared_norms - d))]
    rows.append(rounding_row(bound.label, r"\lVert \operatorname{LN}(x) \rVert^2,\ \text{farthest of 1000},\ d_k = 128",
                          bound.steps[0].rhs.subs(proofs.d_k, d), farthest, 1e-9))
    at_equality = float(normalised[0] @ normalised[0]) / np.sqrt(d)
    rows.append(rounding_row(bound.label, r"\operatorname{LN}(x) \cdot \operatorname{LN}(x) / \sqrt{d_k},\ d_k = 128",
                          bound.steps[6].rhs.subs(proofs.d_k, d), at_equality, 1e-12))
    return rows


def _by_name(expression: sp.Expr, values: dict[str, float]) -> float:
    """Evaluate an expression of the proof's symbols, given by their printed names."""
    return float(expression.subs({symbol: values[symbol.name] for symbol in expression.free_symbols}).doit())


@register_evidence
def _gradient_rows(rng: np.random.Generator, theorems: Mapping, n: int = 20_000) -> list[EvidenceRow]:
    """The saturated-row bounds of the saturation chapter and the folding theorems of the initialisation chapter."""
    # A child generator: these draws leave the streams of the rows before them unchanged.
    (rng,) = rng.spawn(1)
    rows = []
    keys, spread, t = 8, 5.0, 0.1
    saturated = theorems["thm-saturated-jacobian"]
    logits = spread * rng.standard_normal((n, keys))
    top_two = np.sort(logits, axis=-1)[:, -2:]
    gap = top_two[:, 1] - top_two[:, 0]
    bound = saturated.steps[13].rhs  # 4 (n - 1) e^{-Delta}, the stated bound
    bounds = np.array([_by_name(bound, {r"{\left(n - 1\right)}": keys - 1, r"\Delta": 0.0})]) * np.exp(-gap)
    worst = float(np.max(softmax_jacobian_norm(logits) / bounds))
    # The bound on the largest ratio ||J||_F / (4 (n - 1) e^{-Delta}) over the rows is 1.
    rows.append(EvidenceRow(saturated.label, rf"\max_{{\text{{rows}}}} \lVert J \rVert_F \,/\, 4(n-1)e^{{-\Delta}},\ n = {keys},\ x_i \sim \mathcal{{N}}(0, {spread:g}^2)",
                            1.0, worst, worst * (1 - 1e-12), math.inf, "≥ measured (upper bound)"))

    chance = theorems["thm-gap-probability"]
    ell = gap_threshold(keys, t)
    # Step 8 bounds the probability by F_G(ell / sigma), step 0's integral, which gap_distribution evaluates.
    proved = float(gap_distribution(ell / spread, keys))
    passing = (softmax_jacobian_norm(logits) >= t).astype(float)
    rows.append(_upper_bound(chance.label, rf"P(\lVert J \rVert_F \ge {t:g}),\ n = {keys},\ x_i \sim \mathcal{{N}}(0, {spread:g}^2)",
                             proved, mean_estimate(passing)))

    folded = theorems["thm-folded-scale"]
    d_model, d_head = 32, 64
    entries = np.concatenate([_fold(init_params(rng, d_model, d_head)["W_Q"], 1 / math.sqrt(d_head)).ravel()
                              for _ in range(n // (d_model * d_head) + 1)])
    # Step 2: Var(cW) = c^2 sigma^2, at T5's c = 1/sqrt(d_k) and sigma^2 = 1/d_model.
    proved = _by_name(folded.steps[2].rhs, {"c": 1 / math.sqrt(d_head), "sigma": 1 / math.sqrt(d_model)})
    rows.append(monte_carlo_row(folded.label, rf"\operatorname{{Var}}[(W_Q')_{{ij}}],\ \text{{folded}},\ d_{{\text{{model}}}} = {d_model},\ d_k = {d_head}",
                             proved, variance_estimate(entries)))

    update = theorems["thm-logit-update"]
    # Steps 3 and 5: the W_Q path's squared gradient norm, scaled over folded, is c^2.
    ratio = sp.simplify(update.steps[3].rhs / update.steps[5].rhs)
    measured = logit_updates((d_head,), n_seeds=2).scaled_over_folded[("sgd", "W_Q")]
    rows.append(rounding_row(update.label, rf"\Delta s_{{\text{{scaled}}}} / \Delta s_{{\text{{folded}}}},\ \text{{SGD on }} W_Q,\ d_k = {d_head}",
                          _by_name(ratio, {"c": 1 / math.sqrt(d_head)}), float(np.max(measured)), 1e-9))
    return rows


@register_evidence
def _mean_jacobian_rows(rng: np.random.Generator, theorems: Mapping, n: int = 1_000_000) -> list[EvidenceRow]:
    """thm-mean-jacobian-limit: sqrt(d_k) times the mean Jacobian norm of unscaled rows at a large d_k, against f_G(0)."""
    limit = theorems["thm-mean-jacobian-limit"]
    keys, d_k = 8, 1_048_576   # so large that the bias at finite d_k (about -0.002) is far below the error
    # The rows from the exact law of q . k_j (query_key_scores), drawn from this function's own generator.
    scores = np.sqrt(rng.chisquare(d_k, n))[:, None] * rng.standard_normal((n, keys))
    # Step 6's limit, f_G(0) times the integral of 2p(1 - p), with f_G(0) from gap_density_at_zero.
    proved = float(limit.steps[6].rhs.subs(sp.Function("f_G")(0), gap_density_at_zero(keys)).doit())
    return [monte_carlo_row(limit.label, rf"\sqrt{{d_k}}\,\operatorname{{E}}\lVert J(q \cdot k) \rVert_F,\ n = {keys},\ d_k = {d_k}",
                            proved, mean_estimate(math.sqrt(d_k) * softmax_jacobian_norm(scores)))]


@register_evidence
def _depth_rows(rng: np.random.Generator, theorems: Mapping, n: int = 20_000) -> list[EvidenceRow]:
    """The contraction of pure attention and the dot-product Lipschitz counterexample (the depth page)."""
    # A child generator: these draws leave the streams of the rows before them unchanged.
    (rng,) = rng.spawn(1)
    contraction = theorems["thm-attention-contraction"]
    ratio, factor = contraction_ratios(rng, n_heads=max(1, n // 1000), scale=1 / 64)
    worst = float(np.max(ratio / factor))
    # The proved bound on the largest ratio spread(PV)/((1 - e^{-delta}) spread(V)) over heads and columns is 1.
    rows = [EvidenceRow(contraction.label, r"\max_{\text{heads, columns}} \operatorname{spread}(PV) \,/\, "
                        r"(1 - e^{-\delta})\operatorname{spread}(V),\ n = 16,\ c = 1/d_k = 1/64",
                        1.0, worst, worst * (1 - 1e-12), math.inf, "≥ measured (upper bound)")]
    lipschitz = theorems["thm-dot-product-not-lipschitz"]
    t = 3.0
    proved = float(lipschitz.steps[0].rhs.subs({symbol: t for symbol in lipschitz.steps[0].rhs.free_symbols}))
    # Central differences with step 1e-6 on a function of size ~t: truncation and rounding below 1e-8.
    rows.append(rounding_row(lipschitz.label, rf"\partial f_1 / \partial x_1 \text{{ at }} x = (0, {t:g}),\ "
                          r"\text{central differences}", proved, partial_derivative(t), 1e-6))
    return rows


@register_evidence
def _temperature_rows(rng: np.random.Generator, theorems: Mapping, n: int = 20_000) -> list[EvidenceRow]:
    """The length multipliers (Su, YaRN) and the entropy-holding scale of the temperatures section."""
    # A child generator: these draws leave the streams of the rows before them unchanged.
    (rng,) = rng.spawn(1)
    rows = []
    lengths = theorems["thm-length-temperatures"]
    needle = theorems["thm-needle-limit"]
    n_sym, beta, margin = proofs.length, sp.Symbol(r"\beta", positive=True), sp.Symbol(r"\Delta", positive=True)
    keys, gap = 65536, 8.0
    # Step 0: Su's multiplier ln n / ln 512, as the theorem holds it, at this length.
    su = float(lengths.steps[0].rhs.subs(n_sym, keys).replace(lambda e: isinstance(e, sp.log), lambda e: sp.log(e.args[0])))
    scores = np.zeros(keys)
    scores[0] = gap
    rows.append(rounding_row(lengths.label, rf"p_{{\text{{needle}}}},\ \beta = \log_{{512}} n,\ n = {keys},\ \Delta = {gap:g}",
                          needle.steps[0].rhs.subs({n_sym: keys, beta: su, margin: gap}), softmax(su * scores)[0], 1e-12))
    # Steps 2-3: scaling q and k by YaRN's 0.1 ln(n/L) + 1 multiplies q.k by its square; n/L = 8, d = 64.
    extension, d = 8, 64
    c = 0.1 * math.log(extension) + 1
    q, k = rng.standard_normal((2, n // d, d))
    ratio = np.einsum("ij,ij->i", c * q, c * k) / np.einsum("ij,ij->i", q, k)
    # The page's ln (a subclass of SymPy's log) is put back as SymPy's log, which evaluates to a float.
    proved = lengths.steps[3].rhs.subs(sp.Symbol(r"{\left(n/L\right)}", positive=True), extension).replace(
        lambda e: isinstance(e, sp.log), lambda e: sp.log(e.args[0]))
    rows.append(rounding_row(lengths.label, rf"(c\,q \cdot c\,k) / (q \cdot k),\ c = 0.1 \ln {extension} + 1,\ n/L = {extension},\ d = {d}",
                          proved, ratio[np.argmax(np.abs(ratio - c**2))], 1e-9))

    entropy = theorems["thm-entropy-temperature"]
    length, kappa = 4096, 0.05
    # Step 1's scale lambda = sqrt(2 kappa ln n) / sigma at sigma = 1; the plug-in rests on E[e^{lambda X}] = e^{lambda^2 sigma^2 / 2} = n^kappa.
    scale = float(entropy.steps[1].lhs.args[2][0].subs({sp.Symbol(r"\kappa", positive=True): kappa,
                                                         sp.Symbol(r"{\ln n}", positive=True): math.log(length),
                                                         proofs.spread: 1.0}))
    draws = np.exp(scale * rng.standard_normal(4 * n))  # lognormal: skewed, so more draws than the rows above
    rows.append(monte_carlo_row(entropy.label, rf"\mathbb{{E}}[e^{{\lambda X}}],\ \lambda = \sqrt{{2 \kappa \ln n}},\ \kappa = {kappa:g},\ n = {length}",
                             length**kappa, mean_estimate(draws)))
    return rows


@register_evidence
def _bounded_rows(rng: np.random.Generator, theorems: Mapping, n: int = 20_000) -> list[EvidenceRow]:
    """The soft-cap, QK-norm scale and dispersion theorems of the bounded-logits page."""
    # A child generator: these draws leave the streams of the rows before them unchanged.
    (rng,) = rng.spawn(1)
    rows = []
    keys, cap = 8, 2.0
    capped = theorems["thm-soft-cap-bound"]
    # Step 8's bound on the largest weight, at b = C: logits N(0, 10^2) capped into (-C, C).
    bound = _by_name(capped.steps[8].rhs, {"n": keys, "b": cap})
    largest = float(np.max(softmax(soft_cap(10.0 * rng.standard_normal((n // keys, keys)), cap))))
    rows.append(EvidenceRow(capped.label, rf"\max p_i,\ n = {keys},\ C = {cap:g},\ z \sim \mathcal{{N}}(0, 10^2)",
                            bound, largest, largest * (1 - 1e-12), math.inf, "≥ measured (upper bound)"))

    scale = theorems["thm-qknorm-scale"]
    d = 16
    # Step 10: Var(g q.k) = g^2 / d, here with g = 1.
    proved = _by_name(scale.steps[10].rhs, {"g": 1.0, "d": d})
    q, k = rng.standard_normal((2, n, d))
    cosines = np.sum(q * k, axis=1) / (np.linalg.norm(q, axis=1) * np.linalg.norm(k, axis=1))
    rows.append(monte_carlo_row(scale.label, rf"\operatorname{{Var}}(\hat q \cdot \hat k),\ d = {d}", proved,
                             variance_estimate(cosines)))

    spread = theorems["thm-dispersion"]
    length, delta = 1024, 3.0
    # Step 1's bound e^{delta/theta}/n at theta = 1, against logits uniform on [0, delta].
    bound = _by_name(spread.steps[1].rhs, {r"\delta": delta, r"\theta": 1.0, "n": length})
    largest = float(np.max(softmax(delta * rng.random((n // length + 1, length)))))
    rows.append(EvidenceRow(spread.label, rf"\max p_i,\ n = {length},\ z_i \sim U[0, {delta:g}]",
                            bound, largest, largest * (1 - 1e-12), math.inf, "≥ measured (upper bound)"))
    return rows


def evidence(seed: int = 2017, theorems: Mapping | None = None) -> list[EvidenceRow]:
    """Measure every proved theorem: run every function registered with :func:`register_evidence`.

    Each function draws from a generator seeded by ``seed`` and its own
    name, and they run in the order of their names, so neither the order in
    which pages were imported nor another page changes a page's rows. The
    rows come grouped by theorem, in the order of ``proofs.REGISTRY``; rows of
    a label not registered come last.

    Parameters
    ----------
    seed : int, default 2017
        The site's seed.
    theorems : attention_scaling.proofs.Proved, optional
        The proved results the rows read their values from. A page that ran
        :func:`~attention_scaling.proofs.prove_all` already passes
        ``Proved(outcomes)``, so that nothing is proved twice; by default
        each result the rows need is proved here, once.

    Returns
    -------
    list of EvidenceRow

    Raises
    ------
    attention_scaling.proofs.ProofError
        If a proof that a row reads from fails.

    Examples
    --------
    >>> from attention_scaling.site.evidence import evidence
    >>> rows = evidence()
    >>> all(row.holds for row in rows), len(rows) >= 7
    (True, True)
    """
    import_pages()  # the evidence that pages register themselves
    theorems = proofs.Proved() if theorems is None else theorems
    rows = [row for function in sorted(EVIDENCE, key=_name)
            for row in function(np.random.default_rng([seed, zlib.crc32(_name(function).encode())]), theorems)]
    # A stable sort: a theorem's rows keep the order its functions made them in.
    position = {label: index for index, label in enumerate(proofs.REGISTRY)}
    return sorted(rows, key=lambda row: position.get(row.theorem, len(position)))


def _name(function) -> str:
    return f"{function.__module__}.{function.__qualname__}"


def evidence_table(rows: list[EvidenceRow]) -> str:
    """The rows as a MyST Markdown table, each theorem linked to its statement.

    The measured column shows the estimate and the half-width of its interval.

    Examples
    --------
    >>> from attention_scaling.site.evidence import EvidenceRow, evidence_table
    >>> row = EvidenceRow("thm-x", "x", proved=1.0, measured=1.1, low=0.8, high=1.4, interval="± 3 s.e.")
    >>> print(evidence_table([row]).splitlines()[-1])
    | {prf:ref}`thm-x` | $x$ | 1 | 1.1 ± 0.3 |
    >>> abs_row = EvidenceRow("thm-x", "|x|", proved=0.0, measured=0.0, low=-1.0, high=1.0, interval="± 1")
    >>> print(evidence_table([abs_row]).splitlines()[-1])
    | {prf:ref}`thm-x` | $\\vert x\\vert $ | 0 | 0 ± 1 |
    >>> bound_row = EvidenceRow("thm-x", "m", proved=2.0, measured=1.5, low=1.2, high=float("inf"), interval="")
    >>> print(evidence_table([bound_row]).splitlines()[-1])
    | {prf:ref}`thm-x` | $m$ | ≤ 2 | 1.5 ± 0.3 |
    """
    cells = []
    for row in rows:
        # A one-sided row (a proved upper bound) shows its Z standard errors and the bound as "≤ bound".
        half_width = (row.high - row.low) / 2 if math.isfinite(row.high) else row.measured - row.low
        proved = f"{row.proved:.6g}" if math.isfinite(row.high) else f"≤ {row.proved:.6g}"
        # A bare | would end the table cell in the middle of the formula.
        quantity = row.quantity.replace("|", r"\vert ")
        cells.append([f"{{prf:ref}}`{row.theorem}`", f"${quantity}$", proved, f"{row.measured:.4g} ± {half_width:.2g}"])
    return markdown_table(["theorem", "quantity", "proved", "measured"], cells)


@dataclass(frozen=True)
class EvidenceSummary:
    """What the Evidence page shows of the measurements, all of which hold.

    Attributes
    ----------
    rows : tuple of EvidenceRow
        The measurements.
    n_rows : int
        How many there are.
    theorems : int
        How many theorems they measure.
    one_in : float
        One check in this many would fall outside its interval by chance,
        were the errors normal: the inverse two-sided tail beyond ``Z``
        standard errors.
    table : str
        The rows as a MyST Markdown table (:func:`evidence_table`).
    """

    rows: tuple[EvidenceRow, ...]
    n_rows: int
    theorems: int
    one_in: float
    table: str


def evidence_summary(rows) -> EvidenceSummary:
    """Check that every proved value lies in its interval, and summarise the rows for the Evidence page.

    Parameters
    ----------
    rows : sequence of EvidenceRow
        Usually ``evidence()``.

    Returns
    -------
    EvidenceSummary

    Raises
    ------
    RuntimeError
        A ``PageCheckError`` listing every row whose proved value lies
        outside the interval of its measurement (the page states that none
        does), or if there are no rows at all.

    Examples
    --------
    >>> from attention_scaling.site.evidence import EvidenceRow, evidence_summary
    >>> row = EvidenceRow("thm-x", "x", proved=1.0, measured=1.1, low=0.8, high=1.4, interval="± 3 s.e.")
    >>> summary = evidence_summary([row])
    >>> summary.n_rows, round(summary.one_in)
    (1, 370)
    """
    rows = tuple(rows)
    where = "evidence.md, evidence-table"
    require(rows, where, "there is at least one measurement")
    failures = [row for row in rows if not row.holds]
    require(not failures, where, "every proved value lies inside the interval of its measurement", failures=failures)
    return EvidenceSummary(
        rows=rows,
        n_rows=len(rows),
        theorems=len({row.theorem for row in rows}),
        # Two-sided normal tail beyond Z standard errors.
        one_in=1 / math.erfc(Z / math.sqrt(2)),
        table=evidence_table(list(rows)),
    )
