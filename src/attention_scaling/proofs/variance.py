r"""Theorems of the chapter "The variance of a dot product" (``docs/dot-product-variance.md``).

The variance of a product of independent variables, of the dot product
:math:`q \cdot k` of standardised components, for any means and variances,
and for correlated pairs :math:`(q_i, k_i)`. The symbols defined here
(``d_k``, the moments :math:`\mu_q, \sigma_q, \mu_k, \sigma_k` and the
correlation :math:`\rho`) are shared by the later chapters.
"""

from __future__ import annotations

import sympy as sp
import sympy.stats

from attention_scaling.proofs.engine import (
    THEOREM_NAMES,
    E,
    Proof,
    RandomVariables,
    Step,
    Var,
    theorem,
    check,
)

__all__ = [
    "correlated_dot_product",
    "d_k",
    "dot_product_general_moments",
    "dot_product_variance",
    "mu_k",
    "mu_q",
    "product_variance",
    "rho",
    "sigma_k",
    "sigma_q",
]

# -- Symbols shared by the theorems -------------------------------------------------

d_k = sp.Symbol("d_k", integer=True, positive=True)
mu_q, mu_k = sp.symbols("mu_q mu_k", real=True)
sigma_q, sigma_k = sp.symbols("sigma_q sigma_k", positive=True)
rho = sp.Symbol("rho", real=True)
# Coordinates i and j of the vectors, each running from 1 to d_k.
i, j = sp.symbols("i j", integer=True, positive=True)


def _dot_product(rv: RandomVariables, mean_q, var_q, mean_k, var_k) -> tuple[sp.IndexedBase, sp.IndexedBase, sp.Symbol]:
    """Declare the coordinate families q_i, k_i and their dot product over d_k coordinates."""
    q, k = rv.add_family("q", mean_q, var_q), rv.add_family("k", mean_k, var_k)
    return q, k, rv.define(r"q \cdot k", sp.Sum(q[i] * k[i], (i, 1, d_k)))


def _double_sum(term) -> sp.Sum:
    """The sum of ``term`` over both coordinates i and j, as displayed (unevaluated)."""
    return sp.Sum(term, (j, 1, d_k), (i, 1, d_k))


# -- Theorems -------------------------------------------------------------------------


@theorem("lem-product-variance", "Variance of a product of independent variables")
def product_variance() -> Proof:
    r"""Variance of a product of independent random variables.

    For independent :math:`X, Y` with means :math:`\mu_X, \mu_Y` and variances
    :math:`\sigma_X^2, \sigma_Y^2`,
    :math:`\operatorname{Var}[XY] = \sigma_X^2\sigma_Y^2 + \mu_X^2\sigma_Y^2 + \mu_Y^2\sigma_X^2`;
    with zero means, :math:`\operatorname{Var}[XY] = \operatorname{Var}[X]\operatorname{Var}[Y]`.

    Examples
    --------
    >>> from attention_scaling.proofs import product_variance
    >>> print(product_variance().result.rhs)
    mu_X**2*sigma_Y**2 + mu_Y**2*sigma_X**2 + sigma_X**2*sigma_Y**2
    """
    label = "lem-product-variance"
    rv = RandomVariables()
    X, Y = rv.add("X"), rv.add("Y")
    mu_x, mu_y = sp.symbols("mu_X mu_Y", real=True)
    s_x, s_y = sp.symbols("sigma_X sigma_Y", positive=True)
    centred = RandomVariables()
    Xc, Yc = centred.add("X", mean=0), centred.add("Y", mean=0)
    steps = (
        check(label, E(X * Y), E(X) * E(Y), rv, "independence"),
        check(label, E(X**2 * Y**2), E(X**2) * E(Y**2), rv, "independence"),
        check(label, E(X**2), s_x**2 + mu_x**2, rv, "definition of variance"),
        check(label, Var(X * Y), s_x**2 * s_y**2 + mu_x**2 * s_y**2 + mu_y**2 * s_x**2, rv),
        check(label, Var(Xc * Yc), Var(Xc) * Var(Yc), centred, "zero means"),
    )
    return Proof(
        THEOREM_NAMES[label],
        label,
        ("X and Y independent", "finite means and variances"),
        steps,
        results=(3,),
    )


def _distribution_cross_checks(label: str) -> tuple[Step, ...]:
    """Var(q.k) = d_k with sympy.stats distributions, for d_k = 1..4."""
    distributions = {
        r"$\mathcal{N}(0, 1)$": lambda name: sympy.stats.Normal(name, 0, 1),
        "Rademacher": lambda name: sympy.stats.Rademacher(name),
        r"uniform on $[-\sqrt{3}, \sqrt{3}]$": lambda name: sympy.stats.Uniform(name, -sp.sqrt(3), sp.sqrt(3)),
    }
    steps = []
    for title, make in distributions.items():
        for size in range(1, 5):
            dot = sum(make(f"q_{n}") * make(f"k_{n}") for n in range(1, size + 1))
            steps.append(check(label, sympy.stats.Variance(dot), size, reason=title))
    return tuple(steps)


@theorem("thm-dot-product-variance", "Mean and variance of the dot product", uses=("lem-product-variance",))
def dot_product_variance(cross_check: bool = True) -> Proof:
    r"""Mean and variance of :math:`q \cdot k` for standardised independent components.

    With independent components of mean 0 and variance 1 — and nothing else
    assumed about their distribution — :math:`\mathbb{E}[q \cdot k] = 0` and
    :math:`\operatorname{Var}[q \cdot k] = d_k`, for a symbolic :math:`d_k`.

    Parameters
    ----------
    cross_check : bool, default True
        Also compute the variance with ``sympy.stats`` for Normal, Rademacher
        and Uniform(−√3, √3) components at :math:`d_k = 1, \dots, 4`.

    Examples
    --------
    >>> from attention_scaling.proofs import dot_product_variance
    >>> print(dot_product_variance(cross_check=False).statement)
    \mathbb{E}\left[q \cdot k\right] = 0, \qquad \operatorname{Var}\left[q \cdot k\right] = d_{k}
    """
    label = "thm-dot-product-variance"
    rv = RandomVariables()
    q, k, dot = _dot_product(rv, 0, 1, 0, 1)
    pair = q[i] * k[i] * q[j] * k[j]
    steps = (
        check(label, E(q[i] * k[i]), E(q[i]) * E(k[i]), rv, "independence"),
        check(label, E(q[i] * k[i]), 0, rv, "zero means"),
        check(label, E(dot), sp.Sum(E(q[i] * k[i]), (i, 1, d_k)), rv, "linearity"),
        check(label, E(dot), 0, rv),
        check(label, E(q[i] ** 2 * k[i] ** 2), E(q[i] ** 2) * E(k[i] ** 2), rv, "independence"),
        check(label, E(q[i] ** 2 * k[i] ** 2), 1, rv, "unit variances"),
        check(label, E(pair), sp.KroneckerDelta(i, j), rv, "independent unless $i = j$"),
        check(label, E(dot**2), _double_sum(E(pair)), rv, "square of a sum, linearity"),
        check(label, _double_sum(sp.KroneckerDelta(i, j)), d_k, rv, "one pair $i = j$ per coordinate"),
        check(label, Var(dot), E(dot**2) - E(dot) ** 2, rv, "definition of variance"),
        check(label, Var(dot), d_k, rv),
    )
    return Proof(
        THEOREM_NAMES[label],
        label,
        ("components of q and k independent", "each component has mean 0 and variance 1"),
        steps,
        _distribution_cross_checks(label) if cross_check else (),
        results=(3, 10),
    )


@theorem(
    "thm-dot-product-general-moments",
    "Dot-product variance for general means and variances",
    uses=("lem-product-variance",),
)
def dot_product_general_moments() -> Proof:
    r"""Variance of :math:`q \cdot k` when the components have any means and variances.

    :math:`\operatorname{Var}[q \cdot k] = d_k(\sigma_q^2\sigma_k^2 + \mu_q^2\sigma_k^2 + \mu_k^2\sigma_q^2)`:
    dividing by :math:`\sqrt{d_k}` gives the scores unit variance exactly when
    :math:`\sigma_q^2\sigma_k^2 + \mu_q^2\sigma_k^2 + \mu_k^2\sigma_q^2 = 1`,
    for instance (not only) with zero means and :math:`\sigma_q\sigma_k = 1`.

    Examples
    --------
    >>> from attention_scaling.proofs import dot_product_general_moments
    >>> proof = dot_product_general_moments()
    >>> print(proof.result.rhs)
    d_k*(mu_k**2*sigma_q**2 + mu_q**2*sigma_k**2 + sigma_k**2*sigma_q**2)
    """
    label = "thm-dot-product-general-moments"
    rv = RandomVariables()
    q, k, dot = _dot_product(rv, mu_q, sigma_q**2, mu_k, sigma_k**2)
    term_variance = sigma_q**2 * sigma_k**2 + mu_q**2 * sigma_k**2 + mu_k**2 * sigma_q**2
    steps = (
        check(label, E(dot), d_k * mu_q * mu_k, rv, "linearity, independence"),
        check(label, Var(q[i] * k[i]), term_variance, rv, "lemma on products"),
        check(label, Var(dot), d_k * Var(q[i] * k[i]), rv, "independent coordinates"),
        check(label, Var(dot), sp.factor(term_variance) * d_k, rv),
    )
    return Proof(
        THEOREM_NAMES[label],
        label,
        (
            "components of q and k independent",
            "q-components share mean mu_q and variance sigma_q^2; k-components mu_k and sigma_k^2",
        ),
        steps,
        results=(0, 3),
    )


def _correlated_dot_product() -> tuple[RandomVariables, sp.IndexedBase, sp.IndexedBase, sp.IndexedBase, sp.Symbol]:
    """Pairs q_i = Z_i, k_i = rho Z_i + sqrt(1 - rho^2) W_i from standard normals; their dot product over d_k."""
    standard_normal = sympy.stats.Normal("N", 0, 1)
    gaussian = {power: sympy.stats.moment(standard_normal, power) for power in (3, 4)}
    rv = RandomVariables()
    Z, W = rv.add_family("Z", 0, 1, gaussian), rv.add_family("W", 0, 1, gaussian)
    q = rv.define_family("q", lambda index: Z[index])
    k = rv.define_family("k", lambda index: rho * Z[index] + sp.sqrt(1 - rho**2) * W[index])
    return rv, Z, q, k, rv.define(r"q \cdot k", sp.Sum(q[i] * k[i], (i, 1, d_k)))


@theorem("thm-correlated-dot-product", "Dot product of correlated queries and keys")
def correlated_dot_product() -> Proof:
    r"""Mean and variance of :math:`q \cdot k` when each pair :math:`(q_i, k_i)` is correlated.

    Each pair is jointly Gaussian with mean 0, unit variances and correlation
    :math:`\rho`, built as :math:`q_i = Z_i`, :math:`k_i = \rho Z_i +
    \sqrt{1-\rho^2}\,W_i` from independent standard normals (whose moments
    come from ``sympy.stats``); pairs are independent across :math:`i`. Then
    :math:`\mathbb{E}[q \cdot k] = \rho d_k` and
    :math:`\operatorname{Var}[q \cdot k] = d_k(1 + \rho^2)`.

    Examples
    --------
    >>> from attention_scaling.proofs import correlated_dot_product
    >>> [step.latex() for step in correlated_dot_product().steps[-2:]]
    ['\\mathbb{E}\\left[q \\cdot k\\right] = d_{k} \\rho', '\\operatorname{Var}\\left[q \\cdot k\\right] = d_{k} \\left(\\rho^{2} + 1\\right)']
    """
    label = "thm-correlated-dot-product"
    rv, Z, q, k, dot = _correlated_dot_product()
    steps = (
        check(label, E(q[i]), 0, rv, "zero means"),
        check(label, Var(k[i]), 1, rv, "unit variance"),
        check(label, E(q[i] * k[i]), rho, rv, "correlation rho"),
        check(label, E(Z[i] ** 4), 3, rv, "fourth moment of N(0, 1)"),
        check(label, E(q[i] ** 2 * k[i] ** 2), 1 + 2 * rho**2, rv, "Isserlis"),
        check(label, E(dot), rho * d_k, rv, "linearity"),
        check(label, Var(dot), d_k * (1 + rho**2), rv, "independent pairs"),
    )
    return Proof(
        THEOREM_NAMES[label],
        label,
        (
            "each (q_i, k_i) jointly Gaussian with mean 0, unit variances and correlation rho",
            "pairs independent across coordinates",
        ),
        steps,
        results=(5, 6),
    )
