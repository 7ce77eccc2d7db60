r"""Page support for ``docs/initialisation.md``: one function per section, each returning a record.

Each function runs the section's computation, makes the checks the page
states (raising :class:`~attention_scaling.site.checks.PageCheckError`
naming the section and the check), and returns a frozen record whose
fields the page glues (:func:`~attention_scaling.site.glue_fields`). The two tables of the page are rendered here too, through
:func:`attention_scaling.site.tables.markdown_table`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import sympy as sp

from attention_scaling.initialisation import (
    SCHEMES,
    AttentionSpread,
    SchemeRow,
    attention_spreads,
    compare_schemes,
    in_projection,
    in_projection_scores,
    predicted_score_variance,
    projected_scores,
    second_moment_estimate,
    unit_variance_scale,
    weight_std,
)
from attention_scaling.proofs import d_k, d_model
from attention_scaling.simulate import Estimate
from attention_scaling.site.checks import require
from attention_scaling.site.tables import markdown_table

__all__ = [
    "InitialAttention",
    "NormalisedTokens",
    "SchemeMeasurements",
    "SchemeProducts",
    "SelfScores",
    "UniformInitAnswer",
    "UnitConstants",
    "attention_at_initialisation",
    "attention_spread_table",
    "normalised_tokens",
    "scheme_measurements",
    "scheme_products",
    "schemes_table",
    "self_scores",
    "uniform_init_answer",
    "unit_constants",
]

_PAGE = "initialisation.md"

# The shapes (d_model, d_k) the page measures and checks the module's sigma_W at.
_SHAPES = ((512, 64), (768, 64), (1024, 128))

# The shape the page's last two sections single out: 12 heads of 64.
_D_MODEL, _D_K = 768, 64


def _where(section: str) -> str:
    return f"{_PAGE}, section {section}"


# -- Tables ---------------------------------------------------------------------------


def schemes_table(rows: Sequence[SchemeRow]) -> str:
    r"""The comparison of :func:`~attention_scaling.initialisation.compare_schemes` as a Markdown table.

    Parameters
    ----------
    rows : sequence of SchemeRow
        As returned by :func:`~attention_scaling.initialisation.compare_schemes`.

    Returns
    -------
    str
        One row per scheme and shape: the predicted and measured variance of
        the scaled scores, their distance in standard errors, and the factor
        on :math:`q \cdot k` that would have given variance 1, with the usual
        :math:`1/\sqrt{d_k}` beside it.

    Raises
    ------
    TypeError
        If an entry is not a :class:`~attention_scaling.initialisation.SchemeRow`.

    Examples
    --------
    >>> from attention_scaling.initialisation import compare_schemes
    >>> from attention_scaling.site.initialisation import schemes_table
    >>> table = schemes_table(compare_schemes([(64, 8)], n_weights=4, n_tokens=4, seed=0))
    >>> table.splitlines()[0]
    '| scheme | $d_{\\text{model}}/d_k$ | predicted Var | measured Var ± s.e. | $z$ | scale for Var 1 | $1/\\sqrt{d_k}$ |'
    """
    if not all(isinstance(row, SchemeRow) for row in rows):
        raise TypeError("rows must be SchemeRow objects, as returned by compare_schemes")
    header = ["scheme", r"$d_{\text{model}}/d_k$", "predicted Var", "measured Var ± s.e.", "$z$", "scale for Var 1",
              r"$1/\sqrt{d_k}$"]
    cells = [
        [
            SCHEMES[row.scheme],
            f"{row.d_model}/{row.d_k}",
            f"{row.predicted:.4f}",
            f"{row.measured.value:.4f} ± {row.measured.standard_error:.4f}",
            f"{row.z_score:+.2f}",
            f"{row.unit_scale:.4f}",
            f"{1 / math.sqrt(row.d_k):.4f}",
        ]
        for row in rows
    ]
    return markdown_table(header, cells, align=["left"] + ["right"] * 6)


def attention_spread_table(spreads: Sequence[AttentionSpread]) -> str:
    r"""The measurements of :func:`~attention_scaling.initialisation.attention_spreads` as a Markdown table.

    Parameters
    ----------
    spreads : sequence of AttentionSpread

    Returns
    -------
    str
        One row per weight scale, after a first row for exactly uniform
        weights.

    Raises
    ------
    TypeError
        If an entry is not an :class:`~attention_scaling.initialisation.AttentionSpread`.

    Examples
    --------
    >>> from attention_scaling.initialisation import attention_spreads, projected_scores
    >>> from attention_scaling.site.initialisation import attention_spread_table
    >>> unit = projected_scores(32, 8, n_weights=3, n_tokens=16, seed=0, self_attention=True)
    >>> print(attention_spread_table(attention_spreads(unit, {"GPT": 0.02}, d_model=32)).splitlines()[2])
    | uniform weights | - | 0 | 1 | 1 |
    """
    if not all(isinstance(spread, AttentionSpread) for spread in spreads):
        raise TypeError("spreads must be AttentionSpread objects, as returned by attention_spreads")
    header = ["weights", r"$\sigma_W$", "score std", r"$n \cdot$ largest weight ± s.e.", r"entropy / $\ln n$ ± s.e."]
    cells = [["uniform weights", "-", "0", "1", "1"]]
    cells += [
        [
            spread.label,
            f"{spread.sigma_w:.4f}",
            f"{spread.score_std:.3f}",
            f"{spread.largest_weight.value:.3f} ± {spread.largest_weight.standard_error:.3f}",
            f"{spread.entropy.value:.5f} ± {spread.entropy.standard_error:.5f}",
        ]
        for spread in spreads
    ]
    return markdown_table(header, cells, align=["left"] + ["right"] * 4)


# -- Section initialisation-setting ---------------------------------------------------


@dataclass(frozen=True)
class NormalisedTokens:
    """The squared norms of the page's LayerNorm-ed tokens, checked to be ``d_model``.

    Attributes
    ----------
    d_model : int
        Width of the tokens.
    squared_norms : numpy.ndarray
        One squared norm per token.
    """

    d_model: int
    squared_norms: np.ndarray


def normalised_tokens(tokens) -> NormalisedTokens:
    r"""Check that tokens normalised by LayerNorm have squared norm :math:`d_{model}`.

    Parameters
    ----------
    tokens : array_like, shape (n_tokens, d_model)
        Token vectors after a LayerNorm without gain or bias.

    Returns
    -------
    NormalisedTokens

    Raises
    ------
    PageCheckError
        If a squared norm is not :math:`d_{model}` (to ``numpy.allclose``).

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling import layer_norm
    >>> from attention_scaling.site.initialisation import normalised_tokens
    >>> normalised_tokens(layer_norm(np.arange(12.0).reshape(3, 4))).squared_norms.round(12).tolist()
    [4.0, 4.0, 4.0]
    """
    tokens = np.asarray(tokens, dtype=np.float64)
    squared_norms = (tokens**2).sum(axis=-1)
    width = tokens.shape[-1]
    require(
        np.allclose(squared_norms, width),
        _where("initialisation-setting"),
        "every LayerNorm-ed token has squared norm d_model",
        d_model=width,
        squared_norms=squared_norms.tolist(),
    )
    return NormalisedTokens(d_model=int(width), squared_norms=squared_norms)


# -- Section initialisation-schemes ---------------------------------------------------


@dataclass(frozen=True)
class SchemeProducts:
    r""":math:`d_{model}\sigma_W^2` for each scheme, simplified by SymPy.

    Attributes
    ----------
    products : dict of str to sympy.Expr
        By scheme key, in :math:`d_{model}` and :math:`d_k`.
    gpt_break_even : int
        The width at which GPT's product is 1.
    packed_product, packed_score_variance : float
        :math:`d_{model}\sigma_W^2` under PyTorch's packed in-projection, and
        its square, the variance of the scaled scores.
    """

    products: dict[str, sp.Expr]
    gpt_break_even: int
    packed_product: float
    packed_score_variance: float


def scheme_products() -> SchemeProducts:
    r"""Simplify :math:`d_{model}\sigma_W^2` per scheme and check the module's :math:`\sigma_W` against it.

    Returns
    -------
    SchemeProducts

    Raises
    ------
    PageCheckError
        If full-matrix Xavier's product is not 1, packed Xavier's not 1/2,
        He's not 2, per-head Xavier's does not tend to 2 as
        :math:`d_{model} \to \infty`,
        :func:`~attention_scaling.initialisation.weight_std` disagrees with a
        symbolic variance at one of the page's shapes, or
        :func:`~attention_scaling.initialisation.in_projection` disagrees with
        the square of packed Xavier's product.

    Examples
    --------
    >>> from attention_scaling.site.initialisation import scheme_products
    >>> record = scheme_products()
    >>> record.gpt_break_even, str(record.products["gpt"]), str(record.products["xavier-packed"])
    (2500, 'd_model/2500', '1/2')
    >>> record.packed_score_variance
    0.25
    """
    where = _where("initialisation-schemes")
    variance_of = {
        "xavier-full": 2 / (d_model + d_model),
        "xavier-head": 2 / (d_model + d_k),
        "xavier-packed": 2 / (d_model + 3 * d_model),
        "he": 2 / d_model,
        "gpt": sp.Rational(2, 100) ** 2,
    }
    products = {scheme: sp.simplify(d_model * variance) for scheme, variance in variance_of.items()}
    require(products["xavier-full"] == 1, where, "full-matrix Xavier gives d_model sigma_W^2 = 1",
            product=products["xavier-full"])
    require(products["xavier-packed"] == sp.Rational(1, 2), where,
            "packed Xavier (PyTorch's in_proj_weight) gives d_model sigma_W^2 = 1/2",
            product=products["xavier-packed"])
    require(products["he"] == 2, where, "He gives d_model sigma_W^2 = 2", product=products["he"])
    limit = sp.limit(products["xavier-head"], d_model, sp.oo)
    require(limit == 2, where, "per-head Xavier tends to He's 2 as d_model grows", limit=limit)
    for scheme, variance in variance_of.items():
        for shape in _SHAPES:
            exact = float(variance.subs({d_model: shape[0], d_k: shape[1]}))
            module = weight_std(scheme, *shape) ** 2
            require(math.isclose(module, exact, rel_tol=1e-12), where,
                    "the module's sigma_W^2 equals the symbolic variance",
                    scheme=scheme, shape=shape, module=module, symbolic=exact)
    packed_variance = products["xavier-packed"] ** 2
    for width, _ in _SHAPES:
        library = in_projection(width, "packed").score_variance
        require(math.isclose(library, float(packed_variance), rel_tol=1e-12), where,
                "in_projection gives the packed layout's scores the squared product as variance",
                d_model=width, in_projection=library, symbolic=packed_variance)
    (break_even,) = sp.solve(sp.Eq(products["gpt"], 1), d_model)
    return SchemeProducts(
        products=products,
        gpt_break_even=int(break_even),
        packed_product=float(products["xavier-packed"]),
        packed_score_variance=float(packed_variance),
    )


@dataclass(frozen=True)
class SchemeMeasurements:
    """Predicted and measured score variance per scheme and shape.

    Attributes
    ----------
    rows : list of SchemeRow
        From :func:`~attention_scaling.initialisation.compare_schemes`.
    n_weights, n_tokens : int
        Weight draws per shape, and query (and key) tokens.
    n_scores : int
        Scores per weight draw, ``n_tokens ** 2``.
    worst_z : float
        The largest distance, in standard errors, of a measurement from the theorem.
    table : str
        The rows as a Markdown table (:func:`schemes_table`).
    packed : Estimate
        The variance of the scaled scores with weights drawn as PyTorch draws
        them: uniform, in one packed ``in_proj_weight``, at
        :math:`d_{model} = 768` with 12 heads of 64
        (:func:`~attention_scaling.initialisation.in_projection_scores`).
    """

    rows: list[SchemeRow]
    n_weights: int
    n_tokens: int
    n_scores: int
    worst_z: float
    table: str
    packed: Estimate

    def row(self, scheme: str, d_model: int) -> SchemeRow:
        """The row of one scheme at one width."""
        for row in self.rows:
            if row.scheme == scheme and row.d_model == d_model:
                return row
        raise ValueError(f"no row for scheme {scheme!r} at d_model = {d_model!r}")


def scheme_measurements(*, n_weights: int = 20, n_tokens: int = 64, seed: int = 2024) -> SchemeMeasurements:
    r"""Measure the score variance of every scheme at the page's shapes and check it against the theorem.

    Parameters
    ----------
    n_weights, n_tokens : int, optional
        Passed to :func:`~attention_scaling.initialisation.compare_schemes`;
        the page uses the defaults.
    seed : int, default 2024
        The page's seed.

    Returns
    -------
    SchemeMeasurements

    Raises
    ------
    PageCheckError
        If a measured variance lies 3 standard errors or more from the
        theorem, a prediction is not :math:`(d_{model}\sigma_W^2)^2`,
        per-head Xavier's prediction is not between 3 and 4, or the variance
        measured with PyTorch's packed uniform draws lies 3 standard errors or
        more from :func:`~attention_scaling.initialisation.in_projection`'s.

    Examples
    --------
    >>> from attention_scaling.site.initialisation import scheme_measurements
    >>> record = scheme_measurements(n_weights=4, n_tokens=8)
    >>> record.n_scores, len(record.rows)
    (64, 15)
    """
    where = _where("initialisation-schemes")
    rows = compare_schemes(_SHAPES, n_weights=n_weights, n_tokens=n_tokens, seed=seed)
    worst_z = max(abs(row.z_score) for row in rows)
    require(worst_z < 3, where, "every measured variance lies within 3 standard errors of the theorem",
            worst_z=worst_z)
    for row in rows:
        require(math.isclose(row.predicted, (row.d_model * row.sigma_w**2) ** 2), where,
                "the prediction is (d_model sigma_W^2)^2", scheme=row.scheme, d_model=row.d_model,
                predicted=row.predicted)
        if row.scheme == "xavier-head":
            require(3 < row.predicted < 4, where, "per-head Xavier's variance is between 3 and 4",
                    d_model=row.d_model, predicted=row.predicted)
    # The table draws every scheme from a normal distribution; this draws the packed
    # default as PyTorch does, uniform, and takes W_Q and W_K as blocks of one matrix.
    # compare_schemes seeds shape i with (seed, i); this stream comes after them.
    packed = second_moment_estimate(in_projection_scores(
        _D_MODEL, _D_MODEL // _D_K, n_weights=n_weights, n_tokens=n_tokens, seed=(seed, len(_SHAPES))
    ))
    predicted = in_projection(_D_MODEL, "packed").score_variance
    require(packed.contains(predicted), where,
            "PyTorch's packed draws give the predicted variance, within 3 standard errors",
            measured=packed, predicted=predicted)
    return SchemeMeasurements(
        rows=rows,
        n_weights=int(n_weights),
        n_tokens=int(n_tokens),
        n_scores=int(n_tokens) ** 2,
        worst_z=float(worst_z),
        table=schemes_table(rows),
        packed=packed,
    )


@dataclass(frozen=True)
class SelfScores:
    r"""Scores of sequences against themselves, at :math:`d_{model} = 768`, :math:`d_k = 64`.

    Attributes
    ----------
    sequence_length, n_sequences : int
        Tokens per sequence, and weight draws (one sequence each).
    unit_scores : numpy.ndarray, shape (n_sequences, sequence_length, sequence_length)
        The score matrices under unit-variance weights; every scheme's are
        these times its :math:`\sigma_W^2`.
    self_variance : Estimate
        The variance of a token's score against itself under full-matrix
        Xavier, predicted to be 1.
    """

    sequence_length: int
    n_sequences: int
    unit_scores: np.ndarray
    self_variance: Estimate


def self_scores(*, sequence_length: int = 128, n_sequences: int = 24, seed: int = 7) -> SelfScores:
    r"""Score sequences against themselves and check the variance of the diagonal under full-matrix Xavier.

    One sequence per weight draw, keys from the same tokens as the queries
    (:math:`x' = x` on the diagonal); the same draws serve the page's last
    section (:func:`attention_at_initialisation`).

    Parameters
    ----------
    sequence_length, n_sequences : int, optional
        The page uses the defaults.
    seed : int, default 7
        The page's seed.

    Returns
    -------
    SelfScores

    Raises
    ------
    PageCheckError
        If the predicted variance lies 3 standard errors or more from the
        measured one.

    Examples
    --------
    >>> from attention_scaling.site.initialisation import self_scores
    >>> record = self_scores(sequence_length=8, n_sequences=4)
    >>> record.unit_scores.shape
    (4, 8, 8)
    """
    sigma = weight_std("xavier-full", _D_MODEL, _D_K)
    unit = projected_scores(
        _D_MODEL, _D_K, n_weights=n_sequences, n_tokens=sequence_length, seed=seed, self_attention=True
    )
    estimate = second_moment_estimate(np.diagonal(unit, axis1=1, axis2=2) * sigma**2)
    predicted = predicted_score_variance(_D_MODEL, sigma, sigma)
    require(estimate.contains(predicted), _where("initialisation-schemes"),
            "a token scored against itself has the predicted variance, within 3 standard errors",
            measured=estimate, predicted=predicted)
    return SelfScores(int(sequence_length), int(n_sequences), unit, estimate)


# -- Section initialisation-constant ---------------------------------------------------


@dataclass(frozen=True)
class UnitConstants:
    r"""The divisor each scheme would need at :math:`d_{model} = 768`, :math:`d_k = 64`.

    Attributes
    ----------
    gpt_std : float
        Predicted standard deviation of GPT's scaled scores.
    gpt_measured_std, gpt_measured_std_se : float
        Its measurement and standard error (delta method).
    gpt_unit_scale : float
        The factor on :math:`q \cdot k` that gives GPT's scores variance 1.
    gpt_divisor, he_divisor : float
        The divisors of :math:`q \cdot k` that give variance 1 under GPT and He.
    sqrt_d_k : float
        The usual divisor :math:`\sqrt{d_k}`.
    """

    gpt_std: float
    gpt_measured_std: float
    gpt_measured_std_se: float
    gpt_unit_scale: float
    gpt_divisor: float
    he_divisor: float
    sqrt_d_k: float


def unit_constants(measurements: SchemeMeasurements) -> UnitConstants:
    r"""The constants GPT and He would need, read off the measurements at :math:`d_{model} = 768`.

    Parameters
    ----------
    measurements : SchemeMeasurements
        From :func:`scheme_measurements`.

    Returns
    -------
    UnitConstants

    Raises
    ------
    PageCheckError
        If GPT's score standard deviation is not "about a third" (between
        0.25 and 0.4), He's divisor is not :math:`2\sqrt{d_k}`, or GPT's
        factor disagrees with
        :func:`~attention_scaling.initialisation.unit_variance_scale`.

    Examples
    --------
    >>> from attention_scaling.site.initialisation import scheme_measurements, unit_constants
    >>> record = unit_constants(scheme_measurements(n_weights=4, n_tokens=8))
    >>> record.sqrt_d_k, round(record.he_divisor, 12)
    (8.0, 16.0)
    """
    where = _where("initialisation-constant")
    gpt, he = measurements.row("gpt", _D_MODEL), measurements.row("he", _D_MODEL)
    gpt_std = math.sqrt(gpt.predicted)
    require(0.25 < gpt_std < 0.4, where, "GPT's scores have about a third of unit standard deviation",
            gpt_std=gpt_std)
    he_divisor = 1 / he.unit_scale
    require(math.isclose(he_divisor, 2 * math.sqrt(he.d_k)), where, "He needs a division by 2 sqrt(d_k)",
            he_divisor=he_divisor, d_k=he.d_k)
    expected = unit_variance_scale(_D_MODEL, _D_K, 0.02, 0.02)
    require(math.isclose(gpt.unit_scale, expected), where, "GPT's factor is unit_variance_scale at sigma_W = 0.02",
            unit_scale=gpt.unit_scale, expected=expected)
    measured_std = math.sqrt(gpt.measured.value)
    return UnitConstants(
        gpt_std=gpt_std,
        gpt_measured_std=measured_std,
        # Delta method: the standard error of sqrt(V) is se(V) / (2 sqrt(V)).
        gpt_measured_std_se=gpt.measured.standard_error / (2 * measured_std),
        gpt_unit_scale=gpt.unit_scale,
        gpt_divisor=1 / gpt.unit_scale,
        he_divisor=he_divisor,
        sqrt_d_k=math.sqrt(gpt.d_k),
    )


# -- Section initialisation-uniform ----------------------------------------------------


@dataclass(frozen=True)
class InitialAttention:
    """How far attention is from uniform at initialisation, per scheme.

    Attributes
    ----------
    spreads : dict of str to AttentionSpread
        By scheme key; the page glues each spread's ``largest_weight`` and
        ``entropy`` through this mapping.
    uniform_weight : float
        The uniform weight :math:`1/n`.
    table : str
        The spreads as a Markdown table (:func:`attention_spread_table`).
    """

    spreads: dict[str, AttentionSpread]
    uniform_weight: float
    table: str


def attention_at_initialisation(scores: SelfScores) -> InitialAttention:
    r"""Softmax of the self-scores under each scheme, checked to sharpen as the variance grows.

    Parameters
    ----------
    scores : SelfScores
        From :func:`self_scores`.

    Returns
    -------
    InitialAttention

    Raises
    ------
    PageCheckError
        Unless attention is closer to uniform under GPT than under
        full-matrix Xavier, and under that than under He, in both the
        entropy and the largest weight, with 3-standard-error intervals that
        do not overlap; or unless GPT's entropy is above 0.99 of its maximum
        and its largest weight below 3 times uniform.

    Examples
    --------
    >>> from attention_scaling.site.initialisation import attention_at_initialisation, self_scores
    >>> record = attention_at_initialisation(self_scores())   # the page's draws; the checks need n = 128
    >>> record.uniform_weight, list(record.spreads)
    (0.0078125, ['xavier-full', 'xavier-head', 'xavier-packed', 'he', 'gpt'])
    """
    where = _where("initialisation-uniform")
    stds = {SCHEMES[scheme]: weight_std(scheme, _D_MODEL, _D_K) for scheme in SCHEMES}
    spreads = dict(zip(SCHEMES, attention_spreads(scores.unit_scores, stds, d_model=_D_MODEL)))
    gpt, xavier, he = spreads["gpt"], spreads["xavier-full"], spreads["he"]
    for flatter, sharper in [("gpt", "xavier-full"), ("xavier-full", "he")]:
        flat, sharp = spreads[flatter], spreads[sharper]
        require(flat.entropy.interval()[0] > sharp.entropy.interval()[1], where,
                "the entropy is higher, by more than 3 standard errors on both sides, under the smaller variance",
                flatter=flatter, sharper=sharper, entropies=(flat.entropy, sharp.entropy))
        require(flat.largest_weight.interval()[1] < sharp.largest_weight.interval()[0], where,
                "the largest weight is lower, by more than 3 standard errors on both sides, under the smaller variance",
                flatter=flatter, sharper=sharper, largest=(flat.largest_weight, sharp.largest_weight))
    require(gpt.entropy.value > 0.99 and gpt.largest_weight.value < 3, where,
            "under GPT attention is near uniform (entropy > 0.99, largest weight < 3 times uniform)",
            entropy=gpt.entropy, largest=gpt.largest_weight)
    return InitialAttention(
        spreads=spreads,
        uniform_weight=1 / scores.sequence_length,
        table=attention_spread_table(list(spreads.values())),
    )


# -- Exercise ---------------------------------------------------------------------------


@dataclass(frozen=True)
class UniformInitAnswer:
    r"""Exercise ``ex-uniform-init``: weights from :math:`U(-a, a)`, :math:`a = 1/\sqrt{d_{model}}`.

    Attributes
    ----------
    variance : float
        The variance of the scaled scores, :math:`\tfrac19`.
    std : float
        Their standard deviation, :math:`\tfrac13`.
    divisor : float
        The divisor of :math:`q \cdot k` that gives them variance 1, :math:`\sqrt{d_k}/3`.
    estimate : attention_scaling.simulate.Estimate
        Their simulated variance.
    """

    variance: float
    std: float
    divisor: float
    estimate: Estimate


def uniform_init_answer(variance: float, divisor: float, estimate: Estimate, d_k: int) -> UniformInitAnswer:
    r"""Check the answer :math:`\tfrac19`, the divisor :math:`\sqrt{d_k}/3`, and the simulation.

    Parameters
    ----------
    variance : float
        The variance of :math:`q \cdot k/\sqrt{d_k}` that the solution predicts.
    divisor : float
        The divisor of :math:`q \cdot k` that the solution finds for variance 1.
    estimate : attention_scaling.simulate.Estimate
        The simulated variance of the scaled scores.
    d_k : int
        Width of one head.

    Returns
    -------
    UniformInitAnswer

    Raises
    ------
    PageCheckError
        If ``variance`` is not :math:`\tfrac19`, ``divisor`` not
        :math:`\sqrt{d_k}/3`, or the simulation more than three standard
        errors from ``variance``.

    Examples
    --------
    >>> import math
    >>> from attention_scaling.simulate import Estimate
    >>> from attention_scaling.site import glue_fields
    >>> from attention_scaling.site.initialisation import uniform_init_answer
    >>> values = glue_fields(uniform_init_answer(1 / 9, math.sqrt(64) / 3, Estimate(0.111, 0.001), 64), "ex_uniform")
    >>> values["ex_uniform_divisor"], values["ex_uniform_estimate_standard_error"]
    (2.6666666666666665, 0.001)
    """
    where = "initialisation.md, exercise ex-uniform-init"
    require(math.isclose(variance, 1 / 9, rel_tol=1e-12), where, "the scaled scores have variance (d_model a^2 / 3)^2 = 1/9",
            variance=variance)
    require(math.isclose(divisor, math.sqrt(d_k) / 3, rel_tol=1e-12), where, "the divisor for variance 1 is sqrt(d_k)/3",
            divisor=divisor)
    require(estimate.contains(variance), where, "the simulated variance agrees within 3 standard errors",
            estimate=estimate, variance=variance)
    return UniformInitAnswer(float(variance), math.sqrt(float(variance)), float(divisor), estimate)
