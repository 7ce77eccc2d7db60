r"""The gap between the two largest scores, and how often a row of scores still passes a gradient.

A row of scores whose two largest entries are :math:`\Delta` apart has a
softmax Jacobian of Frobenius norm at most :math:`4(n - 1)e^{-\Delta}`
(:func:`attention_scaling.proofs.saturated_jacobian`). For :math:`n`
independent :math:`\mathcal{N}(0, \sigma^2)` scores the gap is
:math:`\sigma G`, with :math:`G` the top-two gap of standard normals, whose
distribution :func:`gap_distribution` integrates numerically
(:func:`attention_scaling.proofs.gap_probability`). Unscaled scores
:math:`q \cdot k_j` with a common query are, given :math:`q`, independent
:math:`\mathcal{N}(0, \lVert q \rVert^2)`: :func:`saturated_rows_data`
measures, across :math:`d_k`, the fraction of such rows with
:math:`\lVert J \rVert_F \ge t` beside the bound and its :math:`1/\sqrt{d_k}`
asymptote.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from attention_scaling._checks import integer_at_least
from attention_scaling.gradients import (
    GRADIENT_D_VALUES, GRADIENT_QUANTITIES, GRADIENT_SCALINGS, GradientSummary, softmax_jacobian_norm,
    starved_threshold, summarise, weight_gradient_norms, wilson_interval,
)
from attention_scaling.simulate import SCORE_ROWS_SEED, query_key_scores, scale_for

__all__ = [
    "GradientDistribution",
    "MeanJacobian",
    "SaturatedRows",
    "gap_density_at_zero",
    "gap_distribution",
    "gap_monte_carlo",
    "gap_threshold",
    "gradient_distribution",
    "mean_jacobian_data",
    "saturated_rows_data",
    "top_two_gap",
]

# The quadrature grid for integrals against the standard normal density: beyond |x| = 10 the density is
# below 1e-22, and for integrands this smooth and fast-decaying the trapezoid rule with step 0.01 is
# accurate to about 1e-12 (tests compare with scipy.integrate.quad).
_GRID = np.linspace(-10.0, 10.0, 2001)
_DENSITY = np.exp(-(_GRID**2) / 2) / math.sqrt(2 * math.pi)



def _normal_cdf(x: np.ndarray) -> np.ndarray:
    return 0.5 * np.vectorize(math.erfc, otypes=[float])(-np.asarray(x, dtype=np.float64) / math.sqrt(2))


_CDF = _normal_cdf(_GRID)


def _check_n(n) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
        raise ValueError(f"n must be an integer >= 2 (the number of scores); got {n!r}")
    return int(n)


def gap_distribution(g, n: int) -> np.ndarray:
    r""":math:`P(G \le g)` for the gap :math:`G` between the two largest of :math:`n` independent standard normals.

    Parameters
    ----------
    g : float or array_like
        Gaps, each at least 0.
    n : int
        The number of scores, at least 2.

    Returns
    -------
    numpy.ndarray
        :math:`F_G(g) = n\int\varphi(x)[\Phi(x)^{n-1} - \Phi(x - g)^{n-1}]\,dx`,
        by the trapezoid rule on :math:`[-10, 10]`, in the shape of ``g``.

    Raises
    ------
    ValueError
        If ``n`` is not an integer at least 2, or a gap is negative or not finite.

    Notes
    -----
    For :math:`n = 2`, :math:`G = |X_1 - X_2|` and :math:`F_G(g) = \operatorname{erf}(g/2)`.

    Examples
    --------
    >>> import math
    >>> from attention_scaling.saturation import gap_distribution
    >>> abs(float(gap_distribution(1.0, 2)) - math.erf(0.5)) < 1e-10
    True
    >>> round(float(gap_distribution(0.5, 8)), 4)
    0.547
    """
    n = _check_n(n)
    gaps = np.asarray(g, dtype=np.float64)
    if not np.all(np.isfinite(gaps)) or np.any(gaps < 0):
        raise ValueError(f"g must be finite gaps >= 0; got {g!r}")
    flat = gaps.reshape(-1)
    shifted = _normal_cdf(_GRID[None, :] - flat[:, None])
    integrand = n * _DENSITY * (_CDF ** (n - 1) - shifted ** (n - 1))
    return np.clip(np.trapezoid(integrand, _GRID, axis=-1), 0.0, 1.0).reshape(gaps.shape)


def gap_density_at_zero(n: int) -> float:
    r""":math:`f_G(0) = n(n - 1)\int\varphi(x)^2\Phi(x)^{n-2}\,dx`, the density of the top-two gap at 0.

    Raises
    ------
    ValueError
        If ``n`` is not an integer at least 2.

    Examples
    --------
    >>> import math
    >>> from attention_scaling.saturation import gap_density_at_zero
    >>> abs(gap_density_at_zero(2) - 1 / math.sqrt(math.pi)) < 1e-10
    True
    """
    n = _check_n(n)
    return float(n * (n - 1) * np.trapezoid(_DENSITY**2 * _CDF ** (n - 2), _GRID))


def gap_threshold(n: int, t: float) -> float:
    r"""The gap :math:`\ln(4(n - 1)/t)` beyond which a row's Jacobian has Frobenius norm below :math:`t`.

    Raises
    ------
    ValueError
        If ``n`` is not an integer at least 2, or ``t`` is not in :math:`(0, 4(n - 1))`.

    Examples
    --------
    >>> from attention_scaling.saturation import gap_threshold
    >>> round(gap_threshold(8, 0.1), 4)
    5.6348
    """
    n = _check_n(n)
    if not (isinstance(t, (int, float)) and 0 < t < 4 * (n - 1)):
        raise ValueError(f"t must be a number in (0, 4(n - 1)) = (0, {4 * (n - 1)}); got {t!r}")
    return math.log(4 * (n - 1) / t)


def top_two_gap(scores) -> np.ndarray:
    r"""The gap between the two largest entries along the last axis.

    Examples
    --------
    >>> from attention_scaling.saturation import top_two_gap
    >>> top_two_gap([[3.0, 1.0, 2.5], [0.0, 0.0, -1.0]]).tolist()
    [0.5, 0.0]
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim < 1 or scores.shape[-1] < 2:
        raise ValueError(f"scores must have at least 2 entries along the last axis; got shape {scores.shape}")
    top_two = np.partition(scores, -2, axis=-1)[..., -2:]
    return top_two[..., 1] - top_two[..., 0]


@dataclass(frozen=True)
class SaturatedRows:
    r"""Rows of unscaled scores :math:`q \cdot k_j` across :math:`d_k`: how many still pass a gradient.

    Attributes
    ----------
    d_k : numpy.ndarray of int
        The head dimensions.
    n_keys, n_rows, seed : int
        Keys per row, rows per :math:`d_k`, and the seed of the generator.
    t : float
        The threshold on :math:`\lVert J \rVert_F`.
    fraction : numpy.ndarray
        The measured fraction of rows with :math:`\lVert J \rVert_F \ge t`.
    fraction_low, fraction_high : numpy.ndarray
        Its 95 % Wilson interval.
    bound : numpy.ndarray
        The mean over the rows of :math:`F_G(\ell / \lVert q \rVert)`,
        :math:`\ell = \ln(4(n-1)/t)`: given :math:`q` the scores are
        independent :math:`\mathcal{N}(0, \lVert q \rVert^2)`, so this is the
        theorem's bound on the expected fraction, for the queries drawn.
    asymptote : numpy.ndarray
        :math:`f_G(0)\,\ell / \sqrt{d_k}`, the bound's large-:math:`d_k` form.
    mean_norm, mean_norm_se : numpy.ndarray
        The mean of :math:`\lVert J \rVert_F` and its standard error.
    median_norm : numpy.ndarray
        The median of :math:`\lVert J \rVert_F`.
    within_bound : bool
        Whether every row satisfies :math:`\lVert J \rVert_F \le 4(n-1)e^{-\Delta}`.
    """

    d_k: np.ndarray
    n_keys: int
    n_rows: int
    seed: int
    t: float
    fraction: np.ndarray
    fraction_low: np.ndarray
    fraction_high: np.ndarray
    bound: np.ndarray
    asymptote: np.ndarray
    mean_norm: np.ndarray
    mean_norm_se: np.ndarray
    median_norm: np.ndarray
    within_bound: bool


def saturated_rows_data(d_values=(16, 64, 256, 1024, 4096), n_keys: int = 8, n_rows: int = 2000,
                        t: float = 0.1, seed: int = SCORE_ROWS_SEED) -> SaturatedRows:
    r"""Measure, for unscaled scores across :math:`d_k`, the fraction of rows with :math:`\lVert J \rVert_F \ge t`.

    Each row is one query :math:`q` and :math:`n` keys, all with independent
    standard normal entries, scored :math:`q \cdot k_j` without scaling: the
    rows of :func:`~attention_scaling.simulate.query_key_scores`, the same as
    :func:`gradient_distribution`'s at the same ``(d_k, seed)``.

    Parameters
    ----------
    d_values : sequence of int
        Head dimensions, increasing.
    n_keys : int
        Keys per row, at least 2.
    n_rows : int
        Rows per :math:`d_k`.
    t : float
        The threshold, in :math:`(0, 4(n - 1))`.
    seed : int, default SCORE_ROWS_SEED
        Base seed of :func:`~attention_scaling.simulate.query_key_scores`.

    Returns
    -------
    SaturatedRows

    Raises
    ------
    ValueError
        If ``d_values`` is empty or not increasing positive integers, or
        ``n_keys``, ``n_rows`` or ``t`` is out of range.

    Examples
    --------
    >>> from attention_scaling.saturation import saturated_rows_data
    >>> data = saturated_rows_data((16, 256), n_rows=500, seed=0)
    >>> bool(data.within_bound), bool(data.fraction[1] < data.fraction[0])
    (True, True)
    >>> bool((data.fraction_high >= data.fraction).all())
    True
    """
    d_k = np.asarray(d_values)
    if d_k.ndim != 1 or d_k.size == 0 or not np.issubdtype(d_k.dtype, np.integer) or np.any(d_k < 1) \
            or np.any(np.diff(d_k) <= 0):
        raise ValueError(f"d_values must be increasing positive integers; got {d_values!r}")
    n_keys = _check_n(n_keys)
    if isinstance(n_rows, bool) or not isinstance(n_rows, (int, np.integer)) or n_rows < 1:
        raise ValueError(f"n_rows must be a positive integer; got {n_rows!r}")
    ell = gap_threshold(n_keys, t)
    density = gap_density_at_zero(n_keys)
    columns = {name: [] for name in ("fraction", "low", "high", "bound", "mean", "se", "median")}
    within = True
    for d in d_k.tolist():
        scores, norms = query_key_scores(d, n_rows, n_keys, seed=seed)
        jacobian = softmax_jacobian_norm(scores)
        within &= bool(np.all(jacobian <= 4 * (n_keys - 1) * np.exp(-top_two_gap(scores)) * (1 + 1e-12)))
        passing = int(np.count_nonzero(jacobian >= t))
        low, high = wilson_interval(passing, n_rows)
        columns["fraction"].append(passing / n_rows)
        columns["low"].append(low)
        columns["high"].append(high)
        # F_G is smooth: tabulate it on 257 gaps and interpolate, rather than integrate once per row.
        table = np.linspace(0.0, ell / norms.min(), 257)
        columns["bound"].append(float(np.interp(ell / norms, table, gap_distribution(table, n_keys)).mean()))
        columns["mean"].append(float(jacobian.mean()))
        columns["se"].append(float(jacobian.std(ddof=1) / math.sqrt(n_rows)) if n_rows > 1 else math.nan)
        columns["median"].append(float(np.median(jacobian)))
    return SaturatedRows(
        d_k=d_k, n_keys=n_keys, n_rows=int(n_rows), seed=seed, t=float(t),
        fraction=np.array(columns["fraction"]), fraction_low=np.array(columns["low"]),
        fraction_high=np.array(columns["high"]), bound=np.array(columns["bound"]),
        asymptote=density * ell / np.sqrt(d_k), mean_norm=np.array(columns["mean"]),
        mean_norm_se=np.array(columns["se"]), median_norm=np.array(columns["median"]), within_bound=within,
    )


def gap_monte_carlo(g, n: int, n_samples: int = 20_000, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    r"""A seeded Monte Carlo estimate of :math:`P(G \le g)`, and its binomial standard error.

    Draws ``n_samples`` rows of ``n`` independent standard normals and counts
    the rows whose top-two gap is at most each ``g``.

    Raises
    ------
    ValueError
        If ``n`` is not an integer at least 2, ``n_samples`` is not a positive integer, or a gap is negative.

    Examples
    --------
    >>> from attention_scaling.saturation import gap_distribution, gap_monte_carlo
    >>> share, se = gap_monte_carlo([0.5], 8, seed=1)
    >>> bool(abs(share[0] - gap_distribution(0.5, 8)) < 4 * se[0])
    True
    """
    n = _check_n(n)
    if isinstance(n_samples, bool) or not isinstance(n_samples, (int, np.integer)) or n_samples < 1:
        raise ValueError(f"n_samples must be a positive integer; got {n_samples!r}")
    gaps = np.asarray(g, dtype=np.float64)
    if not np.all(np.isfinite(gaps)) or np.any(gaps < 0):
        raise ValueError(f"g must be finite gaps >= 0; got {g!r}")
    sample = top_two_gap(np.random.default_rng(seed).standard_normal((n_samples, n)))
    share = (sample[:, None] <= gaps.reshape(-1)[None, :]).mean(axis=0).reshape(gaps.shape)
    return share, np.sqrt(share * (1 - share) / n_samples)


# -- Gradient sizes per row, across d_k and the scalings ----------------------------------------


@dataclass(frozen=True)
class GradientDistribution:
    r"""Per-row gradient sizes against :math:`d_k` under each scaling, and their summaries.

    Attributes
    ----------
    d_k : tuple of int
        The head dimensions.
    n_keys, n_queries, d_model : int
        Keys per query, query rows per :math:`d_k`, model width of the projected head.
    n_weight_draws : int
        Independent draws of the head's weights per :math:`d_k`; each serves
        an equal, consecutive share of the rows.
    seed : int
        Base seed: the scores are :func:`~attention_scaling.simulate.query_key_scores`
        at ``(d_k, seed)``, the head's weights and inputs a generator seeded by ``(seed, d_k, 2)``.
    samples : dict
        ``samples[quantity, scaling]``: array (len(d_k), n_queries) of the sizes.
    summaries : dict
        ``summaries[quantity, scaling, d_k]``: a :class:`~attention_scaling.gradients.GradientSummary`,
        whose threshold is :func:`~attention_scaling.gradients.starved_threshold` of the same
        quantity under :math:`1/\sqrt{d_k}`.
    """

    d_k: tuple[int, ...]
    n_keys: int
    n_queries: int
    d_model: int
    n_weight_draws: int
    seed: int
    samples: dict
    summaries: dict

    def summary(self, quantity: str, scaling: str, d_k: int) -> GradientSummary:
        """The summary of one quantity under one scaling at one head dimension."""
        key = (quantity, scaling, d_k)
        if key not in self.summaries:
            raise ValueError(f"(quantity, scaling, d_k) must be one of the sweep's, with quantity in "
                             f"{GRADIENT_QUANTITIES}, scaling in {GRADIENT_SCALINGS} and d_k in {self.d_k}; got {key}")
        return self.summaries[key]

    def curve(self, quantity: str, scaling: str, level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One quantile against :math:`d_k`: values, lower and upper interval ends."""
        rows = np.array([self.summary(quantity, scaling, d).quantile(level) for d in self.d_k])
        return rows[:, 0], rows[:, 1], rows[:, 2]


def _sizes(d_k: int, n_keys: int, n_queries: int, d_model: int, n_weight_draws: int, seed: int) -> dict:
    """The per-row gradient sizes at one d_k, for every scaling (one set of draws for all)."""
    scores, _ = query_key_scores(d_k, n_queries, n_keys, seed=seed)
    scales = [scale_for(scaling, d_k) for scaling in GRADIENT_SCALINGS]
    # The projected head: a stream of its own, and fresh weights for each share of the rows.
    rng, std, rows = np.random.default_rng([seed, d_k, 2]), 1.0 / math.sqrt(d_model), n_queries // n_weight_draws
    shares = []
    for _ in range(n_weight_draws):
        w_q, w_k, w_v = (std * rng.standard_normal((d_model, d_k)) for _ in range(3))
        x_query, x_keys = rng.standard_normal((rows, d_model)), rng.standard_normal((rows, n_keys, d_model))
        shares.append(weight_gradient_norms(x_query, x_keys, rng.standard_normal((rows, d_k)), w_q, w_k, w_v, scales))
    sizes = {}
    for i, (scaling, c) in enumerate(zip(GRADIENT_SCALINGS, scales)):
        logit = softmax_jacobian_norm(c * scores)
        sizes[scaling] = {"logit": logit, "score": c * logit,
                          **{name: np.concatenate([share[i][name] for share in shares]) for name in ("w_q", "w_k")}}
    return sizes


def gradient_distribution(d_values=GRADIENT_D_VALUES, *, n_keys: int = 8, n_queries: int = 2000,
                          d_model: int = 64, n_weight_draws: int = 20, seed: int = SCORE_ROWS_SEED,
                          confidence: float = 0.95) -> GradientDistribution:
    r"""Per-row gradient sizes at initialisation against :math:`d_k`, for each scaling, with summaries.

    At each :math:`d_k`:

    * ``logit`` and ``score``: the ``n_queries`` rows of ``n_keys`` scores
      :math:`s_j = q \cdot k_j` of :func:`~attention_scaling.simulate.query_key_scores`
      (standard normal :math:`q, k \in \mathbb{R}^{d_k}`); the sizes
      :math:`\lVert J(c s) \rVert_F` (:func:`~attention_scaling.gradients.softmax_jacobian_norm`)
      and :math:`c\,\lVert J(c s) \rVert_F`.
    * ``w_q`` and ``w_k``: ``n_weight_draws`` projected heads
      (:func:`~attention_scaling.gradients.head_loss`), each with its own
      :math:`W_Q, W_K, W_V` of :math:`\mathcal{N}(0, 1/d_\text{model})`
      entries, so that projected components have variance 1, and each seeing
      ``n_queries / n_weight_draws`` rows: a query input and ``n_keys`` key
      inputs with :math:`\mathcal{N}(0, 1)` components and an upstream
      gradient :math:`u \sim \mathcal{N}(0, I_{d_k})`; the sizes of that
      row's :math:`\partial L / \partial W_Q` and :math:`\partial L / \partial W_K`.
      Rows that share weights are not independent: their summaries take
      their uncertainty from the spread between the draws
      (:func:`~attention_scaling.gradients.summarise` with ``groups``).

    The three scalings see the same draws. A row is starved when its size is
    below :func:`~attention_scaling.gradients.starved_threshold` of the same
    quantity under :math:`1/\sqrt{d_k}`.

    Parameters
    ----------
    d_values : sequence of int, default GRADIENT_D_VALUES
        Head dimensions, each at least 1, no repeats.
    n_keys : int, default 8
        Keys per query, at least 2.
    n_queries : int, default 2000
        Rows per head dimension, a multiple of ``n_weight_draws``.
    d_model : int, default 64
        Input width of the projected head, at least 1.
    n_weight_draws : int, default 20
        Draws of the head's weights per :math:`d_k`, at least 2.
    seed : int, default SCORE_ROWS_SEED
        Base seed.
    confidence : float, default 0.95
        Coverage of the quantile and fraction intervals.

    Returns
    -------
    GradientDistribution

    Raises
    ------
    TypeError, ValueError
        For arguments of the wrong type or out of range.

    Notes
    -----
    The threshold is itself an estimate (the median under :math:`1/\sqrt{d_k}`);
    the fraction's intervals treat it as fixed.

    Examples
    --------
    >>> from attention_scaling.saturation import gradient_distribution
    >>> data = gradient_distribution([16, 1024], n_queries=500)
    >>> none, sqrt = data.summary("logit", "none", 1024), data.summary("logit", "sqrt", 1024)
    >>> none.median < 1e-3 < 0.3 < sqrt.median          # the typical unscaled row is starved...
    True
    >>> score = data.summary("score", "none", 1024).mean > data.summary("score", "sqrt", 1024).mean
    >>> score                                           # ...yet its mean gradient at the raw score is larger
    True
    """
    d_values = tuple(integer_at_least(d, "d_k", 1) for d in d_values)
    if not d_values or len(set(d_values)) != len(d_values):
        raise ValueError(f"d_values must be a non-empty sequence without repeats; got {d_values}")
    n_keys = integer_at_least(n_keys, "n_keys", 2)
    n_weight_draws = integer_at_least(n_weight_draws, "n_weight_draws", 2)
    n_queries = integer_at_least(n_queries, "n_queries", 2 * n_weight_draws)
    if n_queries % n_weight_draws:
        raise ValueError(f"n_queries must be a multiple of n_weight_draws = {n_weight_draws}; got {n_queries}")
    d_model = integer_at_least(d_model, "d_model", 1)
    seed = integer_at_least(seed, "seed", 0)
    samples = {(quantity, scaling): np.empty((len(d_values), n_queries))
               for quantity in GRADIENT_QUANTITIES for scaling in GRADIENT_SCALINGS}
    summaries = {}
    for i, d_k in enumerate(d_values):
        sizes = _sizes(d_k, n_keys, n_queries, d_model, n_weight_draws, seed)
        for quantity in GRADIENT_QUANTITIES:
            threshold = starved_threshold(sizes["sqrt"][quantity])
            groups = n_weight_draws if quantity in ("w_q", "w_k") else 1
            for scaling in GRADIENT_SCALINGS:
                row = sizes[scaling][quantity]
                samples[quantity, scaling][i] = row
                summaries[quantity, scaling, d_k] = summarise(row, threshold, confidence=confidence, groups=groups)
    return GradientDistribution(d_k=d_values, n_keys=n_keys, n_queries=n_queries, d_model=d_model,
                                n_weight_draws=n_weight_draws, seed=seed, samples=samples, summaries=summaries)


# -- The mean Jacobian's exact rate (thm-mean-jacobian-limit) -------------------------------------


@dataclass(frozen=True)
class MeanJacobian:
    r""":math:`\sqrt{d_k}` times the mean Jacobian norm of unscaled rows, against the limit :math:`f_G(0)`.

    Attributes
    ----------
    d_k : tuple of int
        The head dimensions.
    n_keys, n_rows, seed : int
        Keys per row, rows per :math:`d_k`, and the base seed of
        :func:`~attention_scaling.simulate.query_key_scores` (so the first
        rows are those of :func:`gradient_distribution`).
    scaled_mean : numpy.ndarray
        Shape (len(d_k), 2): :math:`\sqrt{d_k}\,\operatorname{E}\lVert J(s) \rVert_F`
        estimated, and its standard error.
    standard_mean : tuple of float
        :math:`\operatorname{E}\lVert J(Z) \rVert_F` for a row :math:`Z` of
        standard normals, and its standard error, from the rows at the
        largest :math:`d_k` divided by their :math:`\lVert q \rVert`.
    limit : float
        :math:`f_G(0)` (:func:`gap_density_at_zero`).
    """

    d_k: tuple[int, ...]
    n_keys: int
    n_rows: int
    seed: int
    scaled_mean: np.ndarray
    standard_mean: tuple[float, float]
    limit: float

    @property
    def ratio_limit(self) -> float:
        r"""The limit of the ratio of mean gains at the raw score, unscaled over :math:`1/\sqrt{d_k}`: :math:`f_G(0)/\operatorname{E}\lVert J(Z) \rVert_F`."""
        return self.limit / self.standard_mean[0]


def mean_jacobian_data(d_values=(512, 4096, 65536, 1_048_576), n_keys: int = 8, n_rows: int = 1_000_000,
                       seed: int = SCORE_ROWS_SEED) -> MeanJacobian:
    r"""Measure :math:`\sqrt{d_k}\,\operatorname{E}\lVert J(s) \rVert_F` for unscaled rows across :math:`d_k`.

    The rows are those of :func:`~attention_scaling.simulate.query_key_scores`
    (their exact law makes :math:`d_k` in the tens of thousands cheap). By
    :func:`attention_scaling.proofs.mean_jacobian_limit` the quantity tends to
    :math:`f_G(0)`; the mean is heavy tailed but has a finite variance, so
    its standard error is the usual one.

    Parameters
    ----------
    d_values : sequence of int
        Increasing head dimensions, each at least 1.
    n_keys : int
        Keys per row, at least 2.
    n_rows : int
        Rows per :math:`d_k`, at least 2.
    seed : int
        Base seed.

    Returns
    -------
    MeanJacobian

    Raises
    ------
    TypeError, ValueError
        For arguments of the wrong type or out of range.

    Examples
    --------
    >>> from attention_scaling.saturation import mean_jacobian_data
    >>> data = mean_jacobian_data((4096,), n_rows=200_000)
    >>> (value, se), = data.scaled_mean
    >>> bool(abs(value - data.limit) < 4 * se + 0.05), round(data.limit, 3)   # near f_G(0)
    (True, 1.424)
    """
    d_k = tuple(integer_at_least(d, "d_k", 1) for d in d_values)
    if not d_k or any(a >= b for a, b in zip(d_k, d_k[1:])):
        raise ValueError(f"d_values must be increasing positive integers; got {d_values!r}")
    n_keys = integer_at_least(n_keys, "n_keys", 2)
    n_rows = integer_at_least(n_rows, "n_rows", 2)
    seed = integer_at_least(seed, "seed", 0)
    scaled_mean = np.empty((len(d_k), 2))
    for i, d in enumerate(d_k):
        scores, norms = query_key_scores(d, n_rows, n_keys, seed=seed)
        sizes = math.sqrt(d) * softmax_jacobian_norm(scores)
        scaled_mean[i] = sizes.mean(), sizes.std(ddof=1) / math.sqrt(n_rows)
    standard = softmax_jacobian_norm(scores / norms[:, None])
    return MeanJacobian(d_k=d_k, n_keys=n_keys, n_rows=n_rows, seed=seed, scaled_mean=scaled_mean,
                        standard_mean=(float(standard.mean()), float(standard.std(ddof=1) / math.sqrt(n_rows))),
                        limit=gap_density_at_zero(n_keys))
