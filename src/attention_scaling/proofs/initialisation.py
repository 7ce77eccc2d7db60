r"""Theorem of the chapter "Initialisation decides the constant" (``docs/initialisation.md``).

The variance of the scaled scores when queries and keys are projections
:math:`q = x W_Q`, :math:`k = x' W_K` of normalised tokens, from the variances
of the weight entries. The symbols ``d_model``, ``sigma_Q`` and ``sigma_K``
are defined here.
"""

from __future__ import annotations

import sympy as sp

from attention_scaling.proofs.engine import (
    THEOREM_NAMES,
    E,
    Proof,
    RandomVariables,
    Step,
    Var,
    _theorem,
    argue,
    check,
    check_solutions,
)
from attention_scaling.proofs.variance import (
    _dot_product,
    d_k,
    dot_product_general_moments,
    mu_k,
    mu_q,
    sigma_k,
    sigma_q,
)

__all__ = ["d_model", "projected_dot_product", "sigma_K", "sigma_Q"]

d_model = sp.Symbol("d_model", integer=True, positive=True)
sigma_Q, sigma_K = sp.symbols("sigma_Q sigma_K", positive=True)


def _projection_cross_checks(label: str) -> tuple[Step, ...]:
    r"""Var(q.k) from every weight entry, at small fixed sizes, with x' distinct from x and x' = x.

    Nothing here assumes that the coordinates of q are independent: each
    :math:`q_i = \sum_a x_a Q_{ai}` is a name for its expression in the
    entries of :math:`W_Q` (likewise :math:`k_i` in those of :math:`W_K`),
    and the expectation expands the dot product down to these entries,
    which are the only variables declared.
    """
    steps = []
    for size, width in ((2, 1), (2, 2), (3, 2)):
        for self_attention in (False, True):
            rv = RandomVariables()
            w_q = [[rv.add(f"Q_{{{a + 1}{i + 1}}}", 0, sigma_Q**2) for i in range(width)] for a in range(size)]
            w_k = [[rv.add(f"K_{{{a + 1}{i + 1}}}", 0, sigma_K**2) for i in range(width)] for a in range(size)]
            x = sp.symbols(f"x_1:{size + 1}", real=True)
            y = x if self_attention else tuple(sp.Symbol(f"{{x'_{a + 1}}}", real=True) for a in range(size))
            q = [rv.define(f"q_{i + 1}", sum(x[a] * w_q[a][i] for a in range(size))) for i in range(width)]
            k = [rv.define(f"k_{i + 1}", sum(y[a] * w_k[a][i] for a in range(size))) for i in range(width)]
            norms = sum(v**2 for v in x) * sum(v**2 for v in y)
            tokens = "x' = x" if self_attention else "two tokens"
            steps.append(check(label, Var(sum(q_i * k_i for q_i, k_i in zip(q, k))),
                               width * sigma_Q**2 * sigma_K**2 * norms, rv,
                               f"W: {size} × {width}, {tokens}; q_i = Σ_a x_a Q_ai"))
    return tuple(steps)


@_theorem(
    "thm-projected-dot-product",
    "Scores of projected tokens",
    uses=("thm-dot-product-general-moments", "thm-scaled-variance"),
)
def projected_dot_product(cross_check: bool = True) -> Proof:
    r"""Variance of the scaled scores when queries and keys are projections of normalised tokens.

    Let :math:`x, x' \in \mathbb{R}^{d_{model}}` be fixed with
    :math:`\lVert x\rVert^2 = \lVert x'\rVert^2 = d_{model}`, and
    :math:`q = x W_Q`, :math:`k = x' W_K` with independent weight entries of
    mean 0 and variances :math:`\sigma_Q^2` and :math:`\sigma_K^2`. Then each
    :math:`q_i` has mean 0 and variance :math:`d_{model}\sigma_Q^2`, different
    coordinates are uncorrelated (checked) and independent (argued: they are
    functions of disjoint columns), and
    :math:`\operatorname{Var}[q \cdot k / \sqrt{d_k}] = (d_{model}\sigma_Q\sigma_K)^2`,
    which is 1 for :math:`\sigma_Q = \sigma_K = \sigma_W` only at
    :math:`\sigma_W = 1/\sqrt{d_{model}}`. The sums over the
    :math:`d_{model}` entries of a column are symbolic; the terms with
    :math:`b = a` are split off the sum over :math:`b` by its limits,
    :math:`b < a` and :math:`b > a`.

    Parameters
    ----------
    cross_check : bool, default True
        Also expand :math:`\operatorname{Var}[q \cdot k]` entry by entry for
        :math:`(d_{model}, d_k) \in \{(2, 1), (2, 2), (3, 2)\}`, for
        :math:`x' \ne x` and for :math:`x' = x`.

    Returns
    -------
    Proof
        Ten checked steps and two argued ones (the independence that
        :func:`~attention_scaling.proofs.dot_product_general_moments`
        assumes); the statement is :math:`\operatorname{Var}[q \cdot k]` and
        :math:`\operatorname{Var}[q \cdot k/\sqrt{d_k}]`.

    Examples
    --------
    >>> from attention_scaling.proofs import projected_dot_product
    >>> proof = projected_dot_product(cross_check=False)
    >>> print(proof.result.rhs)
    d_model**2*sigma_K**2*sigma_Q**2
    >>> proof.counts()
    {'checked': 10, 'cited': 0, 'argued': 2, 'measured': 0}
    """
    label = "thm-projected-dot-product"
    a, b = sp.symbols("a b", integer=True, positive=True)
    x = sp.IndexedBase("x", real=True)
    squared_norm = sp.Sum(x[a] ** 2, (a, 1, d_model))
    entries = RandomVariables()
    # Distinct entries of W_Q stand for any pairs (a, i) != (b, i) and (a, i), (b, j) with i != j.
    W_ai, W_bi, W_bj = (entries.add(name, 0, sigma_Q**2) for name in ("W_{ai}", "W_{bi}", "W_{bj}"))

    def column_sum(term):
        """sum_b x_b term over every b != a: the sum below a and the sum above it."""
        return sp.Sum(x[b] * term, (b, 1, a - 1)) + sp.Sum(x[b] * term, (b, a + 1, d_model))

    # E[q_i^2] = sum_a x_a (x_a E[W_ai^2] + sum_{b != a} x_b E[W_ai W_bi]): W_ai and W_bi are one entry only when b = a.
    second_moment = sp.Sum(x[a] * (x[a] * E(W_ai**2) + column_sum(E(W_ai * W_bi))), (a, 1, d_model))
    # E[q_i q_j], i != j: W_ai and W_bj lie in different columns, never one entry.
    cross_moment = sp.Sum(sp.Sum(x[a] * x[b] * E(W_ai * W_bj), (b, 1, d_model)), (a, 1, d_model))
    general = dot_product_general_moments().result.rhs
    component_moments = (0, 0, sp.sqrt(d_model) * sigma_Q, sp.sqrt(d_model) * sigma_K)
    scaled = RandomVariables()
    *_, dot = _dot_product(scaled, 0, d_model * sigma_Q**2, 0, d_model * sigma_K**2)
    sigma_W = sp.Symbol("sigma_W", positive=True)
    q_i, q_j, q, k = sp.symbols("q_i q_j q k", real=True)
    f, g = sp.Function("f"), sp.Function("g")
    steps = (
        check(label, E(W_ai * W_bj), 0, entries, "(a, i) ≠ (b, j)"),
        check(label, E(W_ai**2), sigma_Q**2, entries, "entry variance"),
        check(label, sp.Sum(x[a] * E(W_ai), (a, 1, d_model)), 0, entries, "E[q_i], linearity"),
        check(label, second_moment, sigma_Q**2 * squared_norm, entries, "E[q_i²]: b = a apart"),
        check(label, sp.Subs(sigma_Q**2 * squared_norm, squared_norm, d_model), d_model * sigma_Q**2,
              reason="Var[q_i], LayerNorm"),
        check(label, cross_moment, 0, entries, "E[q_i q_j], disjoint columns"),
        argue(label, E(f(q_i) * g(q_j)), E(f(q_i)) * E(g(q_j)),
              "i ≠ j: q_i and q_j are functions of disjoint columns of W_Q, whose entries are independent"),
        argue(label, E(f(q) * g(k)), E(f(q)) * E(g(k)),
              "q is a function of W_Q and k of W_K, which are independent (x and x' fixed, x' = x allowed)"),
        check(label, sp.Subs(general, (mu_q, mu_k, sigma_q, sigma_k), component_moments),
              d_k * (d_model * sigma_Q**2) * (d_model * sigma_K**2), reason="general moments"),
        check(label, Var(dot), d_k * d_model**2 * sigma_Q**2 * sigma_K**2, scaled, "Var[q·k]"),
        check(label, Var(dot / sp.sqrt(d_k)), d_model**2 * sigma_Q**2 * sigma_K**2, scaled, "scaling"),
        check_solutions(label, sigma_W, sp.Eq((d_model * sigma_W**2) ** 2, 1), sp.Interval.open(0, sp.oo),
                        sp.FiniteSet(1 / sp.sqrt(d_model)), reason="σ_Q = σ_K = σ_W: unit variance"),
    )
    return Proof(
        THEOREM_NAMES[label],
        label,
        (
            "x and x' fixed (or random and independent of the weights), each with squared norm d_model; x' = x allowed",
            "entries of W_Q (d_model x d_k) independent, mean 0, variance sigma_Q^2; of W_K likewise with sigma_K^2",
            "W_Q and W_K independent of each other",
        ),
        steps,
        _projection_cross_checks(label) if cross_check else (),
        results=(9, 10),
    )
