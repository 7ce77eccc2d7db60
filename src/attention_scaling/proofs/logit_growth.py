r"""The checks of the chapter "Logit growth, QK-norm and entropy collapse" (``docs/logit-growth.md``).

The QK-norm bound is a theorem (``thm-qk-norm-bound``). The page's two other
checked derivations are registered under the labels of the sections that
show them: the logits are quadratic in the query and key weights
(``logit-growth-quadratic``), and the formula of Zhai et al.'s entropy
bound (``logit-growth-entropy-why``). The numerical side of the chapter is
:mod:`attention_scaling.logit_growth`.
"""

from __future__ import annotations

import sympy as sp

from attention_scaling.proofs.engine import (
    THEOREM_NAMES,
    Derivation,
    Proof,
    ProofError,
    Step,
    _check_nonnegative,
    _derivation,
    _theorem,
    check,
)
from attention_scaling.proofs.variance import d_k

__all__ = ["entropy_bound_derivation", "qk_norm_bound_theorem", "quadratic_growth_step"]


# -- Logit growth ---------------------------------------------------------------------


@_derivation("logit-growth-quadratic", "The logits are quadratic in the weights")
def quadratic_growth_step() -> Step:
    r"""SymPy's check that scaling :math:`W_Q` and :math:`W_K` by :math:`c` scales the logits by :math:`c^2`.

    For matrices of any sizes, :math:`X \in \mathbb{R}^{T \times m}` and
    :math:`W_Q, W_K \in \mathbb{R}^{m \times d_k}`,
    :math:`(X\,cW_Q)(X\,cW_K)^\top/\sqrt{d_k} = c^2\, X W_Q W_K^\top X^\top/\sqrt{d_k}`.

    Returns
    -------
    Step
        The checked equation.

    Raises
    ------
    ProofError
        If SymPy does not reduce the difference to the zero matrix.

    Examples
    --------
    >>> from attention_scaling.proofs import quadratic_growth_step
    >>> quadratic_growth_step().reason
    'the scalar c comes out of each projection'
    """
    label = "logit-growth-quadratic"
    T, m, d = sp.symbols("T m d_k", integer=True, positive=True)
    c = sp.Symbol("c", positive=True)
    X = sp.MatrixSymbol("X", T, m)
    W_Q, W_K = sp.MatrixSymbol("W_Q", m, d), sp.MatrixSymbol("W_K", m, d)
    grown = (X * (c * W_Q)) * (X * (c * W_K)).T / sp.sqrt(d)
    claimed = c**2 * (X * W_Q * W_K.T * X.T) / sp.sqrt(d)
    # check() compares with the scalar 0; a matrix identity reduces to the zero matrix instead.
    if sp.simplify(grown - claimed) != sp.ZeroMatrix(T, T):
        raise ProofError(f"{label}: SymPy does not reduce {grown} = {claimed} to an identity")
    return Step(
        grown,
        claimed,
        "the scalar c comes out of each projection",
        shown=r"\frac{(X\,cW_Q)(X\,cW_K)^\top}{\sqrt{d_k}} = c^2\,\frac{X W_Q W_K^\top X^\top}{\sqrt{d_k}}",
    )


# -- QK-norm ----------------------------------------------------------------------------


def _population_variance(sum_of_squares, size):
    """LayerNorm's variance: the mean square of the centred entries (no Bessel correction)."""
    return sum_of_squares / size


def _qk_norm_cross_checks(label: str, sizes=range(2, 7)) -> tuple[Step, ...]:
    """For each size d: ||LN(x)||² = d for symbolic x, Lagrange's identity, and its value at q = k."""
    steps = []
    for size in sizes:
        x = sp.symbols(f"x_1:{size + 1}", real=True)
        centred = [entry - sum(x) / size for entry in x]
        spread = sp.sqrt(_population_variance(sum(entry**2 for entry in centred), size))
        # Over a common denominator the claim is a polynomial identity: numerator = d * denominator.
        numerator, denominator = sp.fraction(sp.together(sum((entry / spread) ** 2 for entry in centred)))
        if sp.expand(numerator - size * denominator) != 0:
            raise ProofError(f"{label}: ||LN(x)||^2 is not {size} for symbolic x of length {size}")
        q, k = sp.symbols(f"q_1:{size + 1}", real=True), sp.symbols(f"k_1:{size + 1}", real=True)
        pairs = [(a, b) for a in range(size) for b in range(a + 1, size)]
        lagrange = sum((q[a] * k[b] - q[b] * k[a]) ** 2 for a, b in pairs)
        gap = sum(v**2 for v in q) * sum(v**2 for v in k) - sum(u * v for u, v in zip(q, k)) ** 2
        if sp.expand(gap - lagrange) != 0:
            raise ProofError(f"{label}: Lagrange's identity fails at d = {size}")
        if sp.expand(lagrange.subs(dict(zip(k, q)), simultaneous=True)) != 0:
            raise ProofError(f"{label}: the Lagrange sum does not vanish at q = k for d = {size}")
        steps.append(Step(sp.Symbol(rf"\lVert \mathrm{{LN}}(x) \rVert^2_{{d={size}}}"), sp.Integer(size),
                          "centring included"))
        steps.append(Step(
            sp.Symbol(rf"\left(\lVert q\rVert^2 \lVert k\rVert^2 - (q \cdot k)^2\right)_{{d={size}}}"),
            sp.Symbol(r"\sum_{i<j} (q_i k_j - q_j k_i)^2"),
            "Lagrange; 0 at q = k",
        ))
    return tuple(steps)


@_theorem("thm-qk-norm-bound", "QK-norm bounds the attention logits")
def qk_norm_bound_theorem(cross_check: bool = True) -> Proof:
    r"""With LayerNorm (no gain) on queries and keys, every scaled logit lies in :math:`[-\sqrt{d_k}, \sqrt{d_k}]`.

    For a symbolic :math:`d_k`: a vector :math:`c` with
    :math:`S = \sum_i c_i^2 > 0`, divided by its population standard deviation
    :math:`\sqrt{S/d_k}`, has squared norm :math:`d_k`. That is
    :math:`\mathrm{LN}(x)` for the centred :math:`c = x - \bar x`. Cauchy–Schwarz,
    :math:`(q \cdot k)^2 \le \lVert q\rVert^2 \lVert k\rVert^2`, follows from
    :math:`\lVert k\rVert^2 \sum_i (q_i - t k_i)^2 \ge 0` at
    :math:`t = q \cdot k / \lVert k\rVert^2`. With both norms
    :math:`\sqrt{d_k}` the logit :math:`z = q \cdot k / \sqrt{d_k}` has
    :math:`z^2 \le d_k`, so :math:`|z| \le \sqrt{d_k}`, with equality at
    :math:`q = k`.

    Parameters
    ----------
    cross_check : bool, default True
        Also check, for :math:`d_k = 2, \dots, 6` and symbolic entries, that
        :math:`\lVert \mathrm{LN}(x)\rVert^2 = d_k` (centring included) and
        Lagrange's identity
        :math:`\lVert q\rVert^2\lVert k\rVert^2 - (q\cdot k)^2 = \sum_{i<j}(q_i k_j - q_j k_i)^2`,
        whose right side is 0 at :math:`q = k`.

    Examples
    --------
    >>> from attention_scaling.proofs import qk_norm_bound_theorem
    >>> proof = qk_norm_bound_theorem(cross_check=False)
    >>> proof.statement
    '\\frac{|q \\cdot k|}{\\sqrt{d_k}} \\le \\sqrt{d_k}'
    >>> print(proof.result)
    Abs(z) <= sqrt(d_k)
    """
    label = "thm-qk-norm-bound"
    i = sp.Symbol("i", integer=True, positive=True)
    c, q, k = (sp.IndexedBase(name, real=True) for name in ("c", "q", "k"))
    total = lambda term: sp.Sum(term, (i, 1, d_k))  # noqa: E731 - a sum over the d_k coordinates
    t = sp.Symbol("t", real=True)
    q_sq, dot, k_sq = sp.symbols(r"\lVert{q}\rVert^2 q\cdot{k} \lVert{k}\rVert^2", real=True)
    z = sp.Symbol("z", real=True)
    spread_sq = _population_variance(total(c[i] ** 2), d_k)
    interval = sp.solveset(z**2 - d_k <= 0, z, sp.S.Reals)
    if interval != sp.Interval(-sp.sqrt(d_k), sp.sqrt(d_k)):
        raise ProofError(f"{label}: z^2 <= d_k gives {interval}, not [-sqrt(d_k), sqrt(d_k)]")
    steps = (
        check(label, total((c[i] / sp.sqrt(spread_sq)) ** 2), d_k,
              reason="definition of LN",
              shown=r"\lVert \mathrm{LN}(x) \rVert^2 = \sum_{i=1}^{d_k} \frac{c_i^2}{S / d_k} = d_k"),
        check(label, total((q[i] - t * k[i]) ** 2),
              total(q[i] ** 2) - 2 * t * total(q[i] * k[i]) + t**2 * total(k[i] ** 2),
              reason="expand the square",
              shown=r"\sum_{i} (q_i - t k_i)^2 = \lVert q\rVert^2 - 2t\, q \cdot k + t^2 \lVert k\rVert^2"),
        check(label, (k_sq * (q_sq - 2 * t * dot + t**2 * k_sq)).subs(t, dot / k_sq), q_sq * k_sq - dot**2,
              reason="at t = q·k / ‖k‖²",
              shown=r"\lVert k\rVert^2 \sum_{i} (q_i - t k_i)^2 = \lVert q\rVert^2 \lVert k\rVert^2 - (q \cdot k)^2"),
        _check_nonnegative(label, sp.Symbol("K", positive=True) * total((q[i] - t * k[i]) ** 2),
                           reason="a sum of squares",
                           shown=r"\lVert q\rVert^2 \lVert k\rVert^2 - (q \cdot k)^2 \ge 0"),
        check(label, d_k - (dot / sp.sqrt(d_k)) ** 2, (d_k * d_k - dot**2) / d_k,
              reason="‖q‖² = ‖k‖² = d_k",
              shown=r"d_k - z^2 = \frac{\lVert q\rVert^2 \lVert k\rVert^2 - (q \cdot k)^2}{d_k} \ge 0"),
        Step(sp.Abs(z), sp.sqrt(d_k), "solveset", relation=r"\le",
             shown=r"\frac{|q \cdot k|}{\sqrt{d_k}} \le \sqrt{d_k}"),
        check(label, (dot / sp.sqrt(d_k)).subs(dot, d_k), sp.sqrt(d_k),
              reason="attained",
              shown=r"z_{q=k} = \frac{d_k}{\sqrt{d_k}} = \sqrt{d_k}"),
    )
    return Proof(
        THEOREM_NAMES[label],
        label,
        ("q = LN(x), k = LN(y): LayerNorm without gain or bias (and without epsilon)",
         "x and y are not constant vectors"),
        steps,
        _qk_norm_cross_checks(label) if cross_check else (),
        result_index=5,
    )


# -- Entropy collapse (Zhai et al. 2023) -----------------------------------------------------


@_derivation("logit-growth-entropy-why", "Where the entropy bound comes from")
def entropy_bound_derivation() -> Derivation:
    r"""SymPy's checks of the bound's formula: where it comes from, its value at 0, its slope.

    For a symbolic :math:`T`: a row of logits with one entry :math:`\Delta`
    above the others, centred, has squared norm :math:`\Delta^2 (T-1)/T`, so
    :math:`\Delta = \boldsymbol\sigma\sqrt{T/(T-1)}` is the largest gap a row
    of norm :math:`\boldsymbol\sigma` can have; the entropy of its softmax is
    the bound of :func:`~attention_scaling.logit_growth.zhai_entropy_bound`;
    at :math:`\boldsymbol\sigma = 0` the bound is :math:`\ln T`; and its
    derivative is
    :math:`-\sqrt{T/(T-1)}\,(T-1)\Delta\beta/(1 + (T-1)\beta)^2 < 0`.

    Returns
    -------
    Derivation
        The checked steps.

    Raises
    ------
    ProofError
        If a step does not hold.

    Examples
    --------
    >>> from attention_scaling.proofs import entropy_bound_derivation
    >>> len(entropy_bound_derivation().steps)
    4
    """
    label = "logit-growth-entropy-why"
    # T = n + 1 with n >= 1: SymPy then knows that every partition function is positive.
    n = sp.Symbol("n", integer=True, positive=True)
    T = n + 1
    sigma = sp.Symbol(r"\boldsymbol{\sigma}", nonnegative=True)
    gap = sp.Symbol(r"\Delta", nonnegative=True)
    rate = sp.sqrt(T / (T - 1))
    beta = sp.exp(-sigma * rate)
    bound = sp.log(1 + (T - 1) * beta) + sigma * sp.sqrt(T * (T - 1)) * beta / (1 + (T - 1) * beta)
    # One logit gap above T - 1 equal ones, centred: entries gap(1 - 1/T) and -gap/T.
    squared_norm = (gap * (1 - 1 / T)) ** 2 + (T - 1) * (gap / T) ** 2
    partition = 1 + (T - 1) * sp.exp(-gap)
    top, other = 1 / partition, sp.exp(-gap) / partition
    peak_entropy = -top * sp.log(top) - (T - 1) * other * sp.log(other)
    peak_entropy_closed = sp.log(partition) + (T - 1) * gap * sp.exp(-gap) / partition
    steps = (
        check(label, squared_norm, gap**2 * (T - 1) / T, reason="largest gap",
              shown=r"\left\lVert \Delta\,(e_1 - \tfrac{1}{T}\mathbf{1}) \right\rVert^2 = \Delta^2\,\frac{T-1}{T}"),
        check(label, peak_entropy, peak_entropy_closed, reason="one peak",
              shown=r"H\bigl(\operatorname{softmax}(\Delta e_1)\bigr) = \ln\bigl(1 + (T-1)e^{-\Delta}\bigr)"
                    r" + \frac{(T-1)\,\Delta\, e^{-\Delta}}{1 + (T-1)e^{-\Delta}}"),
        check(label, bound.subs(sigma, 0), sp.log(T), reason="uniform",
              shown=r"\text{bound}(0) = \ln T"),
        check(label, sp.diff(bound, sigma),
              -rate * (T - 1) * sigma * rate * beta / (1 + (T - 1) * beta) ** 2,
              reason="< 0 for σ > 0",
              shown=r"\frac{d\,\text{bound}}{d\boldsymbol{\sigma}} = -\sqrt{\tfrac{T}{T-1}}\;"
                    r"\frac{(T-1)\,\Delta\,\beta}{\bigl(1 + (T-1)\beta\bigr)^2}"),
    )
    # The second step, read at the largest gap, is the bound itself.
    if sp.simplify(bound - peak_entropy_closed.subs(gap, sigma * rate)) != 0:
        raise ProofError(f"{label}: the bound is not the entropy of the one-peak row at the largest gap")
    return Derivation(steps)
