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
    ProofError,
    RandomVariables,
    Step,
    Var,
    _theorem,
    check,
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

    Nothing here assumes that the coordinates of q are independent: the
    expectation expands the dot product down to the individual entries of
    W_Q and W_K, which are the only variables declared.
    """
    steps = []
    for size, width in ((2, 1), (2, 2), (3, 2)):
        for self_attention in (False, True):
            rv = RandomVariables()
            w_q = [[rv.add(f"Q_{a}_{i}", 0, sigma_Q**2) for i in range(width)] for a in range(size)]
            w_k = [[rv.add(f"K_{a}_{i}", 0, sigma_K**2) for i in range(width)] for a in range(size)]
            x = sp.symbols(f"x_1:{size + 1}", real=True)
            y = x if self_attention else sp.symbols(f"y_1:{size + 1}", real=True)
            q = [sum(x[a] * w_q[a][i] for a in range(size)) for i in range(width)]
            k = [sum(y[a] * w_k[a][i] for a in range(size)) for i in range(width)]
            dot = sum(q_i * k_i for q_i, k_i in zip(q, k))
            norms = sum(v**2 for v in x) * sum(v**2 for v in y)
            check(label, Var(dot), width * sigma_Q**2 * sigma_K**2 * norms, rv)
            tokens = "x' = x" if self_attention else "two tokens"
            steps.append(
                Step(
                    sp.Symbol(f"Var[q.k]_{size}_{width}"),
                    width * sigma_Q**2 * sigma_K**2 * norms,
                    f"W: {size} × {width}, {tokens}",
                    shown=r"\operatorname{Var}[q \cdot k] = d_k\, \sigma_Q^2 \sigma_K^2"
                    + (r" \lVert x \rVert^4" if self_attention else r" \lVert x \rVert^2 \lVert x' \rVert^2"),
                )
            )
    return tuple(steps)


@_theorem("thm-projected-dot-product", "Scores of projected tokens")
def projected_dot_product(cross_check: bool = True) -> Proof:
    r"""Variance of the scaled scores when queries and keys are projections of normalised tokens.

    Let :math:`x, x' \in \mathbb{R}^{d_{model}}` be fixed with
    :math:`\lVert x\rVert^2 = \lVert x'\rVert^2 = d_{model}`, and
    :math:`q = x W_Q`, :math:`k = x' W_K` with independent weight entries of
    mean 0 and variances :math:`\sigma_Q^2` and :math:`\sigma_K^2`. Then each
    :math:`q_i` has mean 0 and variance :math:`d_{model}\sigma_Q^2`, different
    coordinates are uncorrelated, and
    :math:`\operatorname{Var}[q \cdot k / \sqrt{d_k}] = (d_{model}\sigma_Q\sigma_K)^2`,
    which is 1 for :math:`\sigma_Q = \sigma_K = \sigma_W` only at
    :math:`\sigma_W = 1/\sqrt{d_{model}}`. The sums over the
    :math:`d_{model}` entries of a column are symbolic.

    Parameters
    ----------
    cross_check : bool, default True
        Also expand :math:`\operatorname{Var}[q \cdot k]` entry by entry for
        :math:`(d_{model}, d_k) \in \{(2, 1), (2, 2), (3, 2)\}`, for
        :math:`x' \ne x` and for :math:`x' = x`.

    Examples
    --------
    >>> from attention_scaling.proofs import projected_dot_product
    >>> print(projected_dot_product(cross_check=False).result.rhs)
    d_model**2*sigma_K**2*sigma_Q**2
    """
    label = "thm-projected-dot-product"
    a, b = sp.symbols("a b", integer=True, positive=True)
    x = sp.IndexedBase("x", real=True)
    squared_norm = sp.Sum(x[a] ** 2, (a, 1, d_model))
    entries = RandomVariables()
    # Two distinct entries of W_Q stand for any pair (a, i) != (b, j).
    W1, W2 = entries.add("W_1", 0, sigma_Q**2), entries.add("W_2", 0, sigma_Q**2)
    same_entry, other_entries = entries.expectation(W1**2), entries.expectation(W1 * W2)

    def over_a_column(moment):
        """sum_a sum_b x_a x_b moment(a, b), for a symbolic d_model."""
        inner = sp.refine(sp.Sum(x[a] * x[b] * moment, (b, 1, d_model)).doit(), sp.Q.le(a, d_model))
        return sp.Sum(inner, (a, 1, d_model)).doit()

    same = sp.KroneckerDelta(a, b)
    # E[q_i q_i]: W_ai and W_bi are one entry exactly when a = b.
    second_moment = over_a_column(same * same_entry + (1 - same) * other_entries)
    # E[q_i q_j], i != j: W_ai and W_bj lie in different columns, never one entry.
    cross_moment = over_a_column(other_entries)
    general = dot_product_general_moments().result.rhs
    component_moments = {mu_q: 0, mu_k: 0, sigma_q: sp.sqrt(d_model) * sigma_Q, sigma_k: sp.sqrt(d_model) * sigma_K}
    scaled = RandomVariables()
    *_, dot = _dot_product(scaled, 0, d_model * sigma_Q**2, 0, d_model * sigma_K**2)
    sigma_W = sp.Symbol("sigma_W", positive=True)
    unit = sp.solveset(sp.Eq((d_model * sigma_W**2) ** 2, 1), sigma_W, sp.Interval.open(0, sp.oo))
    if unit != sp.FiniteSet(1 / sp.sqrt(d_model)):
        raise ProofError(f"{label}: (d_model sigma_W^2)^2 = 1 has the positive solutions {unit}, not 1/sqrt(d_model)")
    steps = (
        check(label, E(W1 * W2), 0, entries, "(a, i) ≠ (b, j)", shown=r"\mathbb{E}[W_{ai} W_{bj}] = 0"),
        check(label, E(W1**2), sigma_Q**2, entries, "entry variance", shown=r"\mathbb{E}[W_{ai}^2] = \sigma_Q^2"),
        check(label, sp.Sum(x[a] * entries.expectation(W1), (a, 1, d_model)).doit(), 0, reason="linearity",
              shown=r"\mathbb{E}[q_i] = \sum_{a=1}^{d_{model}} x_a\, \mathbb{E}[W_{ai}] = 0"),
        check(label, second_moment, sigma_Q**2 * squared_norm, reason="a = b only",
              shown=r"\mathbb{E}[q_i^2] = \sum_{a,b=1}^{d_{model}} x_a x_b\, \mathbb{E}[W_{ai} W_{bi}]"
              r" = \sigma_Q^2 \sum_{a=1}^{d_{model}} x_a^2"),
        check(label, (sigma_Q**2 * squared_norm).subs(squared_norm, d_model), d_model * sigma_Q**2,
              reason="LayerNorm",
              shown=r"\operatorname{Var}[q_i] = \sigma_Q^2 \lVert x \rVert^2 = d_{model}\, \sigma_Q^2"),
        check(label, cross_moment, 0, reason="disjoint columns",
              shown=r"\mathbb{E}[q_i q_j] = \sum_{a,b=1}^{d_{model}} x_a x_b\, \mathbb{E}[W_{ai} W_{bj}] = 0"
              r" \quad (i \neq j)"),
        check(label, general.subs(component_moments), d_k * d_model**2 * sigma_Q**2 * sigma_K**2,
              reason="general moments",
              shown=r"\operatorname{Var}[q \cdot k] = d_k\, (d_{model} \sigma_Q^2)(d_{model} \sigma_K^2)"),
        check(label, Var(dot / sp.sqrt(d_k)), d_model**2 * sigma_Q**2 * sigma_K**2, scaled, "scaling"),
        Step(sigma_W, 1 / sp.sqrt(d_model), "σ_Q = σ_K = σ_W"),
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
        result_index=7,
    )
