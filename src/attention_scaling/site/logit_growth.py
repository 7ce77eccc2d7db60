r"""Page support for "Logit growth, QK-norm and entropy collapse" (``docs/logit-growth.md``).

One function per section runs the section's measurements, checks what its
prose states about them (raising :class:`~attention_scaling.site.checks.PageCheckError`
if a statement fails) and returns a frozen record whose fields the page
glues (:func:`~attention_scaling.site.glue_fields`), each with the type the
page has always glued (an ``int`` stays an ``int``, so that a key shown
without a format spec reads the same). Also here: the page's table,
:func:`growth_table`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import sympy as sp

from attention_scaling._attention import attention_scores
from attention_scaling._softmax import attention_entropy, entropy_from_logits, softmax
from attention_scaling.logit_growth import (
    EntropyBoundCheck,
    LogitGrowth,
    entropy_bound_check,
    logit_growth,
    qk_norm_bound,
    qk_norm_scores,
    tight_instance,
    zhai_entropy_bound,
)
from attention_scaling.proofs import Proof, d_k as symbolic_d_k, qk_norm_bound_theorem
from attention_scaling.site.checks import require
from attention_scaling.site.tables import markdown_table

__all__ = [
    "EntropyCheckSection",
    "EntropyCollapseSection",
    "GrowthSection",
    "QKNormKeysAnswer",
    "QKNormSection",
    "entropy_check_section",
    "entropy_collapse_section",
    "growth_section",
    "growth_table",
    "qk_norm_keys_answer",
    "qk_norm_section",
]


def growth_table(result: LogitGrowth) -> str:
    """A Markdown table of a :class:`~attention_scaling.logit_growth.LogitGrowth`: one row per factor, each statistic ± its standard error.

    Parameters
    ----------
    result : LogitGrowth
        The measurement, as :func:`~attention_scaling.logit_growth.logit_growth` returns it.

    Returns
    -------
    str
        The table, right-aligned, one row per growth factor.

    Examples
    --------
    >>> from attention_scaling.logit_growth import logit_growth
    >>> from attention_scaling.site.logit_growth import growth_table
    >>> print(growth_table(logit_growth((1,), d_model=8, d_k=4, n_tokens=4, n_trials=2)).splitlines()[0])
    | growth $c$ | logit std | entropy (nats) | largest weight |
    """
    rows = [
        [
            f"{c:g}",
            f"{result.logit_std[row]:.3f} ± {result.logit_std_se[row]:.3f}",
            f"{result.entropy[row]:.3f} ± {result.entropy_se[row]:.3f}",
            f"{result.max_weight[row]:.3f} ± {result.max_weight_se[row]:.3f}",
        ]
        for row, c in enumerate(result.growth)
    ]
    header = ["growth $c$", "logit std", "entropy (nats)", "largest weight"]
    return markdown_table(header, rows, align=["right"] * 4)


# -- The logits are quadratic in the weights -----------------------------------------------------


@dataclass(frozen=True)
class GrowthSection:
    r"""What section ``logit-growth-demo`` shows: attention as :math:`W_Q, W_K` grow by ``c``.

    ``first`` is at :math:`c = 1`, the first growth factor, and ``last`` at
    the largest, ``c_max``; each ``_se`` is the standard error of the number
    before it.

    Attributes
    ----------
    measurement : LogitGrowth
        The seeded measurement, one column per growth factor; its sizes
        (``d_model``, ``d_k``, ``n_tokens``, ``n_trials``) are glued through it.
    table : str
        :func:`growth_table` of it.
    uniform_entropy : float
        :math:`\ln n`, the entropy of uniform attention over the ``n_tokens`` keys.
    c_max : float
        The largest growth factor.
    logit_std_max : float
        The logit standard deviation at ``c_max``.
    entropy_first, entropy_first_se, entropy_last, entropy_last_se : float
        The mean row entropy, in nats.
    max_weight_first, max_weight_first_se, max_weight_last, max_weight_last_se : float
        The mean largest weight of a row.
    """

    measurement: LogitGrowth
    table: str
    uniform_entropy: float
    c_max: float
    logit_std_max: float
    entropy_first: float
    entropy_first_se: float
    entropy_last: float
    entropy_last_se: float
    max_weight_first: float
    max_weight_first_se: float
    max_weight_last: float
    max_weight_last_se: float


def growth_section() -> GrowthSection:
    r"""Measure attention as the projections grow, and check what the page says of it.

    Runs :func:`~attention_scaling.logit_growth.logit_growth` with its
    defaults (the page's sizes and seed) and checks that the logit standard
    deviation grows as :math:`c^2` to twelve digits (every :math:`c` uses the
    same draws, so only rounding separates them), that the entropy falls and
    the largest weight rises with every step of :math:`c`, and that at the
    largest :math:`c`, three standard errors away, the largest weight exceeds
    0.95 and the entropy stays below 0.1 nats.

    Returns
    -------
    GrowthSection

    Raises
    ------
    PageCheckError
        If one of these statements fails.

    Examples
    --------
    >>> from attention_scaling.site.logit_growth import growth_section
    >>> section = growth_section()
    >>> section.c_max, section.table.splitlines()[2].split(" | ")[0]
    (8.0, '| 1')
    """
    where = "logit-growth-demo"
    growth = logit_growth()
    ratio = growth.logit_std / growth.logit_std[0]
    require(np.allclose(ratio, growth.growth**2, rtol=1e-12), where,
            "the logit standard deviation grows as c**2 to twelve digits", ratio=ratio, c_squared=growth.growth**2)
    require(np.all(np.diff(growth.entropy) < 0) and np.all(np.diff(growth.max_weight) > 0), where,
            "the entropy falls and the largest weight rises with c",
            entropy=growth.entropy, max_weight=growth.max_weight)
    last = -1
    require(growth.max_weight[last] - 3 * growth.max_weight_se[last] > 0.95, where,
            "largest weight at the largest c, less 3 s.e., exceeds 0.95",
            max_weight=growth.max_weight[last], standard_error=growth.max_weight_se[last])
    require(growth.entropy[last] + 3 * growth.entropy_se[last] < 0.1, where,
            "entropy at the largest c, plus 3 s.e., is below 0.1 nats",
            entropy=growth.entropy[last], standard_error=growth.entropy_se[last])
    return GrowthSection(
        measurement=growth,
        table=growth_table(growth),
        uniform_entropy=float(np.log(growth.n_tokens)),
        c_max=float(growth.growth[last]),
        logit_std_max=float(growth.logit_std[last]),
        entropy_first=float(growth.entropy[0]),
        entropy_first_se=float(growth.entropy_se[0]),
        entropy_last=float(growth.entropy[last]),
        entropy_last_se=float(growth.entropy_se[last]),
        max_weight_first=float(growth.max_weight[0]),
        max_weight_first_se=float(growth.max_weight_se[0]),
        max_weight_last=float(growth.max_weight[last]),
        max_weight_last_se=float(growth.max_weight_se[last]),
    )


# -- QK-norm caps every logit --------------------------------------------------------------------


@dataclass(frozen=True)
class QKNormSection:
    r"""What section ``logit-growth-qk-numbers`` shows: the QK-norm bound, in numbers.

    Attributes
    ----------
    d_k, n : int
        Head dimension and number of queries (and of keys).
    n_pairs : int
        Query-key pairs, :math:`n^2`.
    bound : float
        :math:`\sqrt{d_k}`, the bound with unit gains.
    random_max : float
        Largest absolute QK-norm logit over the random pairs.
    aligned_error : float
        Largest distance from the bound of a key that normalises to its query.
    fp16_max : int
        Largest finite float16 number.
    fp16_log, sqrt_128 : float
        :math:`\ln 65504` and :math:`\sqrt{128}`, evaluated by SymPy.
    gain_low, gain_high : float
        Range of the random elementwise gains.
    gained_max, gained_bound : float
        Largest absolute logit with those gains, and its bound.
    scalar_gain, scalar_aligned : float
        A common scalar gain, and the logit of an aligned pair with it.
    """

    d_k: int
    n: int
    n_pairs: int
    bound: float
    random_max: float
    aligned_error: float
    fp16_max: int
    fp16_log: float
    sqrt_128: float
    gain_low: float
    gain_high: float
    gained_max: float
    gained_bound: float
    scalar_gain: float
    scalar_aligned: float


def _stated_bounds(proof: Proof, d_k: int, largest_gain: float) -> tuple[float, float]:
    r"""The upper end of the interval that ``thm-qk-norm-bound`` states, without gains (:math:`M = 1`) and with them.

    Examples
    --------
    >>> from attention_scaling.proofs import qk_norm_bound_theorem
    >>> from attention_scaling.site.logit_growth import _stated_bounds
    >>> _stated_bounds(qk_norm_bound_theorem(cross_check=False), 64, 3.0)
    (8.0, 24.0)
    """
    upper = proof.steps[proof.results[-1]].rhs.sup.subs(symbolic_d_k, d_k)
    # Whatever else the bound depends on is the largest gain product M.
    gains = upper.free_symbols
    return float(upper.subs({symbol: 1 for symbol in gains})), float(upper.subs({symbol: largest_gain for symbol in gains}))


def qk_norm_section(*, seed: int = 12, d_k: int = 128, n: int = 256, proof: Proof | None = None) -> QKNormSection:
    r"""Test the QK-norm bound on seeded queries and keys, and check what the page says of it.

    Raw queries of very different sizes and heavy-tailed keys go through
    :func:`~attention_scaling.logit_growth.qk_norm_scores`. The checks: every
    logit lies within :math:`\sqrt{d_k}`; a key that normalises to its query
    (:math:`5q - 2`) reaches the bound and its negative :math:`-\sqrt{d_k}`,
    to twelve digits; :math:`\sqrt{64} < \ln 65504 < \sqrt{128}` (SymPy), so
    that float16 :math:`e^x` overflows at the bound for :math:`d_k = 128` and
    not for :math:`d_k = 64`; with random gains every logit stays within the
    gained bound; and a common scalar gain :math:`g` puts an aligned pair at
    :math:`g^2\sqrt{d_k}`. Both bounds used here are also read off the
    statement of ``thm-qk-norm-bound`` (its interval at this :math:`d_k`, with
    :math:`M = 1` and with :math:`M = \max_i |g_{q,i} g_{k,i}|`) and must
    agree with it.

    Parameters
    ----------
    seed : int, default 12
        Seed for ``numpy.random.default_rng``.
    d_k : int, default 128
        Head dimension; the float16 statements are about :math:`d_k = 128`.
    n : int, default 256
        Number of queries and of keys.
    proof : Proof, optional
        The proof of ``thm-qk-norm-bound`` that the page ran; run here
        (without its cross-checks) if not given.

    Returns
    -------
    QKNormSection

    Raises
    ------
    PageCheckError
        If one of these statements fails.

    Examples
    --------
    >>> from attention_scaling.site.logit_growth import qk_norm_section
    >>> section = qk_norm_section(n=8)
    >>> round(section.bound, 4), section.fp16_max, bool(section.random_max <= section.bound)
    (11.3137, 65504, True)
    """
    where = "logit-growth-qk-numbers"
    rng = np.random.default_rng(seed)
    # Raw queries of very different sizes and heavy-tailed keys: LayerNorm removes both.
    queries = rng.standard_normal((n, d_k)) * rng.uniform(0.1, 10.0, (n, 1))
    keys = rng.standard_normal((n, d_k)) ** 3
    random_logits = qk_norm_scores(queries, keys)
    aligned = np.diag(qk_norm_scores(queries, 5.0 * queries - 2.0))  # q = k after LayerNorm
    opposite = np.diag(qk_norm_scores(queries, -queries))
    bound = qk_norm_bound(d_k)
    random_max = float(np.abs(random_logits).max())
    require(random_max <= bound, where, "every QK-norm logit lies within sqrt(d_k)", largest=random_max, bound=bound)
    require(np.allclose(aligned, bound, rtol=1e-12) and np.allclose(opposite, -bound, rtol=1e-12), where,
            "an aligned key reaches sqrt(d_k) and its negative -sqrt(d_k)",
            aligned=(aligned.min(), aligned.max()), opposite=(opposite.min(), opposite.max()), bound=bound)

    fp16_max = float(np.finfo(np.float16).max)
    sqrt_128, log_fp16 = sp.sqrt(128), sp.log(sp.Integer(int(fp16_max)))
    require(fp16_max == 65504 and sqrt_128 > log_fp16 > sp.sqrt(64), where,
            "the largest float16 is 65504 and sqrt(64) < ln 65504 < sqrt(128)",
            fp16_max=fp16_max, ln_fp16_max=float(log_fp16))
    with np.errstate(over="ignore"):
        overflow = np.exp(np.float16(qk_norm_bound(128)))
        fits = np.exp(np.float16(qk_norm_bound(64)))
    require(np.isinf(overflow) and np.isfinite(fits), where,
            "float16 exp overflows at sqrt(128) and not at sqrt(64)", exp_sqrt_128=overflow, exp_sqrt_64=fits)

    gain_low, gain_high = 0.5, 3.0
    gain_q, gain_k = rng.uniform(gain_low, gain_high, d_k), rng.uniform(gain_low, gain_high, d_k)
    gained_max = float(np.abs(qk_norm_scores(queries, keys, gain_q=gain_q, gain_k=gain_k)).max())
    gained_bound = qk_norm_bound(d_k, gain_q=gain_q, gain_k=gain_k)
    require(gained_max <= gained_bound, where, "with gains, every logit lies within the gained bound",
            largest=gained_max, bound=gained_bound)
    stated_bound, stated_gained = _stated_bounds(
        qk_norm_bound_theorem(cross_check=False) if proof is None else proof, d_k, float(np.max(np.abs(gain_q * gain_k))))
    require(math.isclose(stated_bound, bound, rel_tol=1e-12) and math.isclose(stated_gained, gained_bound, rel_tol=1e-12),
            where, "the bounds without and with gains are those thm-qk-norm-bound states",
            stated=(stated_bound, stated_gained), used=(bound, gained_bound))
    scalar_gain = 2.0
    scalar_aligned = float(qk_norm_scores(queries[:1], queries[:1], gain_q=scalar_gain, gain_k=scalar_gain)[0, 0])
    require(math.isclose(scalar_aligned, scalar_gain**2 * bound, rel_tol=1e-12), where,
            "a common scalar gain g puts an aligned pair at g**2 sqrt(d_k)",
            aligned=scalar_aligned, expected=scalar_gain**2 * bound)
    return QKNormSection(
        d_k=d_k, n=n, n_pairs=n * n, bound=bound, random_max=random_max, aligned_error=float(np.abs(aligned - bound).max()),
        fp16_max=int(fp16_max), fp16_log=float(log_fp16), sqrt_128=float(sqrt_128),
        gain_low=gain_low, gain_high=gain_high, gained_max=gained_max, gained_bound=gained_bound,
        scalar_gain=scalar_gain, scalar_aligned=scalar_aligned,
    )


# -- Entropy collapse and a lower bound -----------------------------------------------------------


@dataclass(frozen=True)
class EntropyCheckSection:
    r"""What section ``logit-growth-entropy-check`` shows: Zhai et al.'s bound, tested.

    Attributes
    ----------
    check : EntropyBoundCheck
        The random heads.
    n_heads : int
        How many there are.
    t_low, t_high : int
        The fewest and the most tokens :math:`T` of a head.
    sigma_low, sigma_high : float
        The smallest and the largest :math:`\boldsymbol\sigma` of a head.
    violations : int
        Heads with a row below the bound.
    min_gap : float
        The smallest distance, in nats, of a head's lowest row entropy above the bound.
    misread_violations : int
        Heads below the bound misread with :math:`\lVert X\rVert_2` for :math:`\sigma_x`.
    rows_checked : int
        Random rows rescaled to norm exactly :math:`\boldsymbol\sigma`.
    tight_sigma_max : float
        Largest :math:`\boldsymbol\sigma` of the worst-case heads.
    tight_error : float
        Largest relative distance of a worst-case head from the bound.
    weights_deficit : float
        Relative shortfall of the worst-case entropy at ``tight_sigma_max``
        when computed from the rounded weights.
    """

    check: EntropyBoundCheck
    n_heads: int
    t_low: int
    t_high: int
    sigma_low: float
    sigma_high: float
    violations: int
    min_gap: float
    misread_violations: int
    rows_checked: int
    tight_sigma_max: float
    tight_error: float
    weights_deficit: float


def entropy_check_section(n_heads: int = 600, *, seed: int = 0, rows_seed: int = 13) -> EntropyCheckSection:
    r"""Test Zhai et al.'s entropy bound every way the page describes, and check the outcomes.

    The checks: no random head of :func:`~attention_scaling.logit_growth.entropy_bound_check`
    has a row below the bound; the same heads do break it when
    :math:`\sigma_x` is misread as :math:`\lVert X\rVert_2`; random rows
    rescaled to norm exactly :math:`\boldsymbol\sigma`
    (:math:`T \in \{2, 16, 64\}`, :math:`\boldsymbol\sigma \in \{0.5, 4, 12\}`)
    never go below it; σReparam's :math:`\gamma W/\sigma(W)` has spectral
    norm :math:`\gamma`; the worst-case heads of
    :func:`~attention_scaling.logit_growth.tight_instance` meet the bound to
    :math:`10^{-12}` (:math:`T = 16`); and the entropy of the worst case at the
    largest :math:`\boldsymbol\sigma`, computed from the rounded weights,
    falls more than 1 % below it.

    Parameters
    ----------
    n_heads : int, default 600
        Random heads for :func:`~attention_scaling.logit_growth.entropy_bound_check`.
    seed : int, default 0
        Its seed.
    rows_seed : int, default 13
        Seed of the random rows and of σReparam's random weight.

    Returns
    -------
    EntropyCheckSection

    Raises
    ------
    PageCheckError
        If one of these statements fails.

    Examples
    --------
    >>> from attention_scaling.site.logit_growth import entropy_check_section
    >>> section = entropy_check_section(200)
    >>> section.violations, section.rows_checked
    (0, 18000)
    """
    where = "logit-growth-entropy-check"
    check = entropy_bound_check(n_heads, seed=seed)
    require(check.violations == 0, where, "no random head has a row below Zhai et al.'s bound",
            violations=check.violations, smallest_gap=float(check.gap.min()))
    # The same heads against a misreading that uses ||X||_2 in place of ||X X^T||_2.
    misread = zhai_entropy_bound(check.sigma / check.x_norm, check.n_tokens)
    misread_violations = int(np.sum(check.min_entropy < misread))
    require(misread_violations > 0, where, "reading sigma_x as ||X||_2 breaks the bound on some head",
            misread_violations=misread_violations)

    # The worst-row claim directly: random rows rescaled to norm exactly sigma.
    rng = np.random.default_rng(rows_seed)
    rows_checked = 0
    for n_tokens in (2, 16, 64):
        for sigma in (0.5, 4.0, 12.0):
            rows = rng.standard_normal((2000, n_tokens)) ** 3
            rows *= sigma / np.linalg.norm(rows, axis=1, keepdims=True)
            lowest, bound = float(entropy_from_logits(rows).min()), float(zhai_entropy_bound(sigma, n_tokens))
            require(lowest >= bound, where, "no row of norm sigma has an entropy below the bound",
                    n_tokens=n_tokens, sigma=sigma, lowest_entropy=lowest, bound=bound)
            rows_checked += len(rows)

    # sigmaReparam: gamma / sigma(W) * W has spectral norm gamma, whatever W.
    weight, gamma = rng.standard_normal((64, 16)) * 7.0, 1.5
    reparametrised = float(np.linalg.norm(gamma / np.linalg.norm(weight, 2) * weight, 2))
    require(math.isclose(reparametrised, gamma, rel_tol=1e-12), where,
            "sigmaReparam's gamma W / sigma(W) has spectral norm gamma", spectral_norm=reparametrised, gamma=gamma)

    tight_sigmas = (1.0, 4.0, 12.0, 40.0)
    tight_errors = []
    for sigma in tight_sigmas:
        x, w_q, w_k = tight_instance(16, sigma)
        row = entropy_from_logits(attention_scores(x @ w_q, x @ w_k, scale=1.0))[0]
        tight_errors.append(abs(row / zhai_entropy_bound(sigma, 16) - 1))
    tight_error = float(max(tight_errors))
    require(tight_error < 1e-12, where, "the worst-case heads meet the bound to 1e-12",
            relative_errors=[float(e) for e in tight_errors])
    # The worst-case row at the largest sigma, its entropy computed from rounded weights instead.
    x, w_q, w_k = tight_instance(16, tight_sigmas[-1])
    from_weights = attention_entropy(softmax(attention_scores(x @ w_q, x @ w_k, scale=1.0)))[0]
    weights_deficit = float(1 - from_weights / zhai_entropy_bound(tight_sigmas[-1], 16))
    require(weights_deficit > 0.01, where, "from the rounded weights, the worst case falls over 1 % below the bound",
            weights_deficit=weights_deficit)
    return EntropyCheckSection(
        check=check,
        n_heads=len(check.sigma),
        t_low=int(check.n_tokens.min()),
        t_high=int(check.n_tokens.max()),
        sigma_low=float(check.sigma.min()),
        sigma_high=float(check.sigma.max()),
        violations=check.violations,
        min_gap=float(check.gap.min()),
        misread_violations=misread_violations,
        rows_checked=rows_checked,
        tight_sigma_max=float(max(tight_sigmas)),
        tight_error=tight_error,
        weights_deficit=weights_deficit,
    )


@dataclass(frozen=True)
class EntropyCollapseSection:
    r"""What figure ``fig-entropy-collapse`` and its paragraph state in numbers.

    Attributes
    ----------
    n_tokens : int
        :math:`T` of the figure.
    n_heads : int
        Random heads in the left panel.
    median_row_share : float
        For the median head, the longest row of logits as a fraction of :math:`\boldsymbol\sigma`.
    bound_12 : float
        The bound at :math:`\boldsymbol\sigma = 12`, in nats.
    log_t : float
        :math:`\ln T`, the bound at :math:`\boldsymbol\sigma = 0`.
    """

    n_tokens: int
    n_heads: int
    median_row_share: float
    bound_12: float
    log_t: float


def entropy_collapse_section(data) -> EntropyCollapseSection:
    r"""Check what the page says of the entropy-collapse figure, and name its numbers.

    The checks: no random head lies below the bound; the worst-case heads lie
    on it (to twelve digits); the bound stays under
    :math:`T(1 + \boldsymbol\sigma)\beta` on the figure's linear grid, since
    :math:`\ln(1 + u) \le u`; and no row of logits is longer than
    :math:`\boldsymbol\sigma`.

    Parameters
    ----------
    data : attention_scaling.logit_growth.EntropyCollapse
        The figure's data, as
        :func:`~attention_scaling.logit_growth.entropy_collapse_data` returns it.

    Returns
    -------
    EntropyCollapseSection

    Raises
    ------
    PageCheckError
        If one of these statements fails.

    Examples
    --------
    >>> from attention_scaling.logit_growth import entropy_collapse_data
    >>> from attention_scaling.site.logit_growth import entropy_collapse_section
    >>> section = entropy_collapse_section(entropy_collapse_data(n_instances=20))
    >>> section.n_tokens, section.n_heads, round(section.log_t, 3)
    (16, 20, 2.773)
    """
    where = "logit-growth-entropy (fig-entropy-collapse)"
    random_heads, T = data.random, data.n_tokens
    require(random_heads.violations == 0, where, "no random head lies below the bound",
            violations=random_heads.violations)
    tight_bound = zhai_entropy_bound(data.tight_sigma, T)
    require(np.allclose(data.tight_entropy, tight_bound, rtol=1e-12), where,
            "the worst-case heads lie on the bound", entropy=data.tight_entropy, bound=tight_bound)
    # ln(1 + u) <= u: the bound is at most T (1 + sigma) beta, exponentially small in sigma.
    grid = data.linear_grid
    ceiling = T * (1 + grid) * np.exp(-grid * math.sqrt(T / (T - 1)))
    require(np.all(data.linear_grid_bound <= ceiling), where, "the bound is at most T (1 + sigma) beta",
            largest_excess=float(np.max(data.linear_grid_bound - ceiling)))
    row_share = random_heads.max_row_norm / random_heads.sigma
    require(np.all(row_share <= 1 + 1e-12), where, "no row of logits is longer than sigma",
            largest_share=float(row_share.max()))
    return EntropyCollapseSection(
        n_tokens=T,
        n_heads=len(random_heads.sigma),
        median_row_share=float(np.median(row_share)),
        bound_12=float(zhai_entropy_bound(12.0, T)),
        log_t=float(np.log(T)),
    )


@dataclass(frozen=True)
class QKNormKeysAnswer:
    r"""Exercise ``ex-qknorm-keys``: the fewest keys that keep every weight at most :math:`\tfrac12` under QK-norm.

    Attributes
    ----------
    keys : int
        The fewest keys, :math:`\lceil 1 + e^{2\sqrt{d_k}} \rceil`.
    short_keys : int
        The keys of the short row measured.
    short_weight : float
        The weight of its aligned key, all others opposed.
    """

    keys: int
    short_keys: int
    short_weight: float


def qk_norm_keys_answer(keys: int, row_weights, d_k: int) -> QKNormKeysAnswer:
    r"""Check the fewest keys for a largest weight of at most :math:`\tfrac12`, and the extreme row.

    With every logit in :math:`[-\sqrt{d_k}, \sqrt{d_k}]` (:prf:ref:`thm-qk-norm-bound`,
    no gains), the largest weight of a row of :math:`n` keys is at most
    :math:`1/(1 + (n - 1)e^{-2\sqrt{d_k}})`, reached by one logit at the top
    of the range and all others at the bottom.

    Parameters
    ----------
    keys : int
        The solution's answer.
    row_weights : array_like, shape (n,)
        Softmax of the extreme row of :math:`n` logits, the first at
        :math:`\sqrt{d_k}` and the rest at :math:`-\sqrt{d_k}`.
    d_k : int
        Width of the head.

    Returns
    -------
    QKNormKeysAnswer

    Raises
    ------
    PageCheckError
        If the bound at ``keys`` is above :math:`\tfrac12` or at ``keys - 1``
        is not, or the extreme row's first weight is not the bound.

    Examples
    --------
    >>> import math
    >>> from attention_scaling import softmax
    >>> from attention_scaling.site.logit_growth import qk_norm_keys_answer
    >>> qk_norm_keys_answer(math.ceil(1 + math.exp(16)), softmax([8.0] + [-8.0] * 9), 64).keys
    8886112
    """
    where = "logit-growth.md, exercise ex-qknorm-keys"
    row_weights = np.asarray(row_weights, dtype=float)
    spread = 2 * math.sqrt(d_k)

    def bound(n: int) -> float:
        return 1 / (1 + (n - 1) * math.exp(-spread))

    require(bound(keys) <= 0.5 < bound(keys - 1), where, "the bound falls to 1/2 first at this many keys", keys=keys,
            at_keys=bound(keys), one_fewer=bound(keys - 1))
    require(math.isclose(row_weights[0], bound(row_weights.size), rel_tol=1e-12), where,
            "the extreme row reaches the bound", weight=row_weights[0], bound=bound(row_weights.size))
    return QKNormKeysAnswer(int(keys), int(row_weights.size), float(row_weights[0]))
