r"""The checks of the chapter "Logit growth, QK-norm and entropy collapse" (``docs/logit-growth.md``).

The QK-norm bound is a theorem (``thm-qk-norm-bound``), with and without the
normalisation's gains. The page's two other checked derivations are
registered under the labels of the sections that show them: the logits are
quadratic in the query and key weights (``logit-growth-quadratic``), and
the formula of Zhai et al.'s entropy bound (``logit-growth-entropy-why``).
Every step here is made by :func:`~attention_scaling.proofs.engine.check`
or another ``check_*`` function, and shows the expression SymPy checked:
sums stay unevaluated ``Sum`` objects, substitutions unevaluated ``Subs``.
The numerical side of the chapter is :mod:`attention_scaling.logit_growth`.
"""

from __future__ import annotations

import sympy as sp

from attention_scaling.proofs.engine import (
    THEOREM_NAMES,
    Derivation,
    Proof,
    Step,
    derivation,
    theorem,
    check,
    check_nonnegative,
    check_solutions,
)
from attention_scaling.proofs.initialisation import _Dot, _SquaredNorm, _Where, d_model
from attention_scaling.proofs.variance import d_k

__all__ = ["entropy_bound_derivation", "qk_norm_bound_theorem", "quadratic_growth_step"]


# -- Logit growth ---------------------------------------------------------------------


class _Projection(sp.Function):
    r"""``_Projection(x, W, l, n, c)``: coordinate :math:`l` of :math:`x\,cW`, that is :math:`\sum_{a=1}^{n} x_a\, c\, W_{al}`.

    Unevaluated it prints as :math:`(x\,cW)_l`; ``doit`` gives the sum.

    Examples
    --------
    >>> import sympy as sp
    >>> from attention_scaling.proofs.logit_growth import _Projection
    >>> x, W = sp.IndexedBase("x"), sp.IndexedBase("W")
    >>> l, n, c = sp.symbols("l n c")
    >>> sp.latex(_Projection(x, W, l, n, c)), _Projection(x, W, l, n, 1).doit()
    ('\\left(x\\, c W\\right)_{l}', Sum(W[a, l]*x[a], (a, 1, n)))
    """

    def doit(self, **hints):
        vector, matrix, column, length, scale = self.args
        # One index symbol for every such sum, so that sums of different calls compare equal.
        row = sp.Symbol("a", integer=True, positive=True)
        return sp.Sum(vector[row] * scale * matrix[row, column], (row, 1, length))

    def _latex(self, printer, exp=None):
        vector, matrix, column, _, scale = (printer._print(arg) for arg in self.args)
        product = f"{vector}\\, {matrix}" if self.args[4] == 1 else f"{vector}\\, {scale} {matrix}"
        latex = r"\left(%s\right)_{%s}" % (product, column)
        return latex if exp is None else r"%s^{%s}" % (latex, exp)


@derivation("logit-growth-quadratic", "The logits are quadratic in the weights")
def quadratic_growth_step() -> Step:
    r"""SymPy's check that scaling :math:`W_Q` and :math:`W_K` by :math:`c` scales every logit by :math:`c^2`.

    For a query token :math:`x` and a key token :math:`y` in
    :math:`\mathbb{R}^{d_{model}}` and
    :math:`W_Q, W_K \in \mathbb{R}^{d_{model} \times d_k}`, with
    :math:`d_{model}` and :math:`d_k` symbolic, the logit
    :math:`\sum_l (x\,cW_Q)_l\,(y\,cW_K)_l / \sqrt{d_k}` equals :math:`c^2`
    times the logit of the unscaled weights. The sums stay unevaluated: the
    step shows the logit coordinate by coordinate, :math:`(x\,cW_Q)_l` for
    :math:`\sum_a x_a\, c\, (W_Q)_{al}`, and SymPy checks it with the sums
    written out.
    Every entry :math:`z_{ij}` of the logit matrix is such a logit, with
    :math:`x, y` the rows :math:`i, j` of :math:`X`.

    Returns
    -------
    Step
        The checked equation.

    Raises
    ------
    ProofError
        If SymPy does not reduce the two sides to the same expression.

    Examples
    --------
    >>> from attention_scaling.proofs import quadratic_growth_step
    >>> step = quadratic_growth_step()
    >>> step.reason, step.kind
    ('the scalar $c$ comes out of each projection', 'checked')
    """
    label = "logit-growth-quadratic"
    c = sp.Symbol("c", positive=True)
    l = sp.Symbol("l", integer=True, positive=True)
    x, y = sp.IndexedBase("x", real=True), sp.IndexedBase("y", real=True)
    W_Q, W_K = sp.IndexedBase("W_Q", real=True), sp.IndexedBase("W_K", real=True)

    def logit(scale):
        """(x scale W_Q) . (y scale W_K) / sqrt(d_k), every sum unevaluated."""
        query, key = _Projection(x, W_Q, l, d_model, scale), _Projection(y, W_K, l, d_model, scale)
        return sp.Sum(query * key, (l, 1, d_k)) / sp.sqrt(d_k)

    return check(label, logit(c), c**2 * logit(1), reason="the scalar $c$ comes out of each projection")


# -- QK-norm ----------------------------------------------------------------------------


def _population_variance(sum_of_squares, size):
    """LayerNorm's variance: the mean square of the centred entries (no Bessel correction)."""
    return sum_of_squares / size


def _qk_norm_cross_checks(label: str, sizes=range(2, 7)) -> tuple[Step, ...]:
    r"""For each size d: :math:`\lVert \mathrm{LN}(x)\rVert^2 = d` with the mean itself, Lagrange's identity, its value at q = k.

    The sums have the fixed upper limit ``d``, so SymPy expands them into
    the individual entries before comparing; the centring is the actual
    mean of the entries, not a free constant as in the theorem.
    """
    steps = []
    i, j = sp.symbols("i j", integer=True, positive=True)
    x, q, k = (sp.IndexedBase(name, real=True) for name in ("x", "q", "k"))
    mean, spread = sp.Symbol(r"\bar{x}", real=True), sp.Symbol("s_x", positive=True)
    for size in sizes:
        total = lambda term, index=i: sp.Sum(term, (index, 1, size))  # noqa: E731 - a sum over the d coordinates
        # Subs substitutes in order: s_x (which still holds x-bar) first, then x-bar, the mean.
        layer_norm = sp.Subs(
            total(((x[i] - mean) / spread) ** 2),
            (spread, mean),
            (sp.sqrt(_population_variance(total((x[i] - mean) ** 2), size)), total(x[i]) / size),
        )
        lagrange = sp.Sum((q[i] * k[j] - q[j] * k[i]) ** 2, (j, 1, size), (i, 1, size)) / 2
        steps += [
            check(label, layer_norm, size, reason=f"$d = {size}$"),
            check(label, total(q[i] ** 2) * total(k[i] ** 2) - total(q[i] * k[i]) ** 2, lagrange, reason="Lagrange"),
            check(label, sp.Subs(lagrange, k, q), 0, reason="$q = k$"),
        ]
    return tuple(steps)


@theorem("thm-qk-norm-bound", "QK-norm bounds the attention logits")
def qk_norm_bound_theorem(cross_check: bool = True) -> Proof:
    r"""With LayerNorm on queries and keys, every scaled logit is bounded: by :math:`\sqrt{d_k}`, or :math:`M\sqrt{d_k}` with gains.

    For a symbolic :math:`d_k`, every step checked by SymPy:

    - a vector :math:`x` minus a constant :math:`\bar x`, divided by
      :math:`s_x = \sqrt{\sum_i (x_i - \bar x)^2 / d_k}` (the population
      standard deviation when :math:`\bar x` is the mean), has squared norm
      :math:`d_k`; so :math:`\lVert q\rVert^2 = \lVert k\rVert^2 = d_k` for
      :math:`q = \mathrm{LN}(x)`, :math:`k = \mathrm{LN}(y)`;
    - Cauchy–Schwarz for any real :math:`u, v`:
      :math:`\sum_i v_i^2 \sum_i (u_i - t v_i)^2 \ge 0` at
      :math:`t = \sum_i u_i v_i / \sum_i v_i^2` is
      :math:`\sum_i u_i^2 \sum_i v_i^2 - (\sum_i u_i v_i)^2 \ge 0`;
    - so :math:`d_k - z^2 \ge 0` for the logit
      :math:`z = \sum_i q_i k_i / \sqrt{d_k}`, and ``solveset`` gives
      :math:`z \in [-\sqrt{d_k}, \sqrt{d_k}]`; :math:`q = k` attains
      :math:`\sqrt{d_k}`;
    - with elementwise gains, :math:`q_i \mapsto g_{q,i} q_i` and
      :math:`k_i \mapsto g_{k,i} k_i`, the logit is
      :math:`w = (g \odot q) \cdot k / \sqrt{d_k}` with
      :math:`g_i = g_{q,i} g_{k,i}`. Cauchy–Schwarz with
      :math:`u = g \odot q`, :math:`v = k` gives
      :math:`w^2 \le \lVert g \odot q\rVert^2`; for :math:`M = \max_i |g_i|`
      write :math:`g_i^2 = M^2 - h_i` with :math:`h_i \ge 0`, so
      :math:`M^2 d_k - \lVert g \odot q\rVert^2 = \sum_i h_i q_i^2 \ge 0`, and
      :math:`w \in [-M\sqrt{d_k}, M\sqrt{d_k}]`. Without gains
      (:math:`M = 1`) this is the first bound; with them the logits are
      bounded by the size of the gains, not absolutely.

    Parameters
    ----------
    cross_check : bool, default True
        Also check, for :math:`d = 2, \dots, 6` and symbolic entries, that
        :math:`\lVert \mathrm{LN}(x)\rVert^2 = d` with :math:`\bar x` the
        mean of the entries, and Lagrange's identity
        :math:`\lVert q\rVert^2\lVert k\rVert^2 - (q\cdot k)^2 = \frac12\sum_{i,j}(q_i k_j - q_j k_i)^2`,
        whose right side is 0 at :math:`q = k`.

    Returns
    -------
    Proof
        Twelve checked steps; the statement is the interval with gains
        (:math:`M = 1` without them). Step 0 is the squared norm :math:`d_k`
        and step 6 the attained value :math:`\sqrt{d_k}` (the evidence page
        measures both).

    Examples
    --------
    >>> from attention_scaling.proofs import qk_norm_bound_theorem
    >>> proof = qk_norm_bound_theorem(cross_check=False)
    >>> proof.counts()
    {'checked': 12, 'cited': 0, 'argued': 0, 'measured': 0}
    >>> print(proof.steps[5].rhs, proof.steps[11].rhs)
    Interval(-sqrt(d_k), sqrt(d_k)) Interval(-M*sqrt(d_k), M*sqrt(d_k))
    """
    label = "thm-qk-norm-bound"
    i = sp.Symbol("i", integer=True, positive=True)
    x, q, k, u, v = (sp.IndexedBase(name, real=True) for name in ("x", "q", "k", "u", "v"))
    gain = sp.IndexedBase("g", real=True)
    slack = sp.IndexedBase("h", nonnegative=True)  # h_i = M^2 - g_i^2, not negative because M is the largest |g_i|
    total = lambda term: sp.Sum(term, (i, 1, d_k))  # noqa: E731 - a sum over the d_k coordinates
    norm = lambda *vectors: _SquaredNorm(d_k, *vectors)  # noqa: E731 - printed as ||.||^2, a sum when checked
    dot = lambda left, right: _Dot(d_k, left, right)  # noqa: E731 - printed as a . b, a sum when checked
    mean, spread = sp.Symbol(r"\bar{x}", real=True), sp.Symbol("s_x", positive=True)
    t = sp.Symbol("t", real=True)
    z, w = sp.Symbol("z", real=True), sp.Symbol("w", real=True)
    largest = sp.Symbol("M", positive=True)
    root = sp.sqrt(d_k)
    unit_norms = ((norm(q), norm(k)), (d_k, d_k))
    steps = (
        check(label, sp.Subs(total(((x[i] - mean) / spread) ** 2), spread,
                             sp.sqrt(_population_variance(total((x[i] - mean) ** 2), d_k))),
              d_k, reason=r"$\mathrm{LN}(x)$"),
        # Cauchy-Schwarz for any real u, v.
        check(label, total((u[i] - t * v[i]) ** 2), norm(u) - 2 * t * dot(u, v) + t**2 * norm(v), reason="expand"),
        check_nonnegative(label, norm(v) * total((u[i] - t * v[i]) ** 2), reason="squares"),
        check(label, _Where(norm(v) * total((u[i] - t * v[i]) ** 2), t, dot(u, v) / norm(v)),
              norm(u) * norm(v) - dot(u, v) ** 2, reason="Cauchy–Schwarz"),
        # Applied to the normalised q and k.
        check(label, d_k - (dot(q, k) / root) ** 2, _Where((norm(q) * norm(k) - dot(q, k) ** 2) / d_k, *unit_norms),
              reason="$u = q$, $v = k$"),
        check_solutions(label, z, z**2 <= d_k, sp.S.Reals, sp.Interval(-root, root), reason="so"),
        check(label, _Where(dot(q, k) / root, (k, norm(q)), (q, d_k)), root, reason="$q = k$"),
        # With gains: Cauchy-Schwarz for g ⊙ q and k, then ||g ⊙ q||^2 <= M^2 ||q||^2.
        check(label, norm(gain, q) - (dot((gain, q), k) / root) ** 2,
              _Where((norm(gain, q) * norm(k) - dot((gain, q), k) ** 2) / d_k, norm(k), d_k),
              reason=r"$u = g \odot q$"),
        check(label, largest**2 * norm(q) - total((largest**2 - slack[i]) * q[i] ** 2), total(slack[i] * q[i] ** 2),
              reason="$g^2 = M^2 - h$"),
        check_nonnegative(label, total(slack[i] * q[i] ** 2), reason=r"$h \ge 0$"),
        check(label, largest**2 * d_k - norm(gain, q), _Where(largest**2 * norm(q) - norm(gain, q), norm(q), d_k),
              reason="so"),
        check_solutions(label, w, w**2 <= largest**2 * d_k, sp.S.Reals, sp.Interval(-largest * root, largest * root),
                        reason="so"),
    )
    return Proof(
        THEOREM_NAMES[label],
        label,
        ("q = LN(x), k = LN(y): LayerNorm without bias (and without epsilon)",
         "x and y are not constant vectors",
         "with gains: q_i scaled by g_{q,i}, k_i by g_{k,i}; M = max_i |g_{q,i} g_{k,i}|"),
        steps,
        _qk_norm_cross_checks(label) if cross_check else (),
        results=(11,),
    )


# -- Entropy collapse (Zhai et al. 2023) -----------------------------------------------------

# The symbols of the bound: T tokens, the norm bound sigma (bold on the page), a logit gap Delta.
_tokens = sp.Symbol("T", integer=True, positive=True)
_sigma = sp.Symbol(r"\boldsymbol{\sigma}", nonnegative=True)


def _largest_gap(sigma):
    r""":math:`\boldsymbol\sigma\sqrt{T/(T-1)}`, the largest gap a centred row of norm :math:`\boldsymbol\sigma` can have."""
    return sigma * sp.sqrt(_tokens / (_tokens - 1))


class EntropyBound(sp.Function):
    r"""Zhai et al.'s lower bound on the attention entropy, :math:`B(\boldsymbol\sigma)`, unevaluated until ``doit``.

    :math:`B(\boldsymbol\sigma) = \ln\bigl(1 + (T-1)\beta\bigr) + \boldsymbol\sigma\sqrt{T(T-1)}\,\beta / \bigl(1 + (T-1)\beta\bigr)`
    with :math:`\beta = e^{-\boldsymbol\sigma\sqrt{T/(T-1)}}`, the right-hand
    side of the page's ``eq-entropy-lower-bound``; it prints as
    :math:`B(\boldsymbol\sigma)`, so that a derivation can differentiate it
    and still read like the page.

    Examples
    --------
    >>> import sympy as sp
    >>> from attention_scaling.proofs.logit_growth import EntropyBound
    >>> sp.latex(EntropyBound(0)), EntropyBound(0).doit()
    ('B\\left(0\\right)', log(T))
    """

    nargs = 1

    @staticmethod
    def formula(sigma) -> sp.Expr:
        """The bound as an explicit expression in ``sigma``."""
        T = _tokens
        beta = sp.exp(-_largest_gap(sigma))
        return sp.log(1 + (T - 1) * beta) + sigma * sp.sqrt(T * (T - 1)) * beta / (1 + (T - 1) * beta)

    def doit(self, **hints):
        sigma = self.args[0].doit(**hints) if hints.get("deep", True) else self.args[0]
        return self.formula(sigma)

    def _latex(self, printer):
        return r"B\left(%s\right)" % printer._print(self.args[0])


@derivation("logit-growth-entropy-why", "Where the entropy bound comes from", uses=("thm-softmax-shift-invariance",))
def entropy_bound_derivation() -> Derivation:
    r"""SymPy's checks of the bound's formula: where it comes from, its value at 0, its slope.

    For a symbolic :math:`T`: a row of logits with one entry :math:`\Delta`
    above the others, centred (softmax ignores the shift), has squared norm
    :math:`\Delta^2 (T-1)/T`, so :math:`\Delta = \boldsymbol\sigma\sqrt{T/(T-1)}`
    is the largest gap a row of norm :math:`\boldsymbol\sigma` can have; the
    entropy of the softmax of that row, with weights
    :math:`p_1 = e^{-\ln Z}` and :math:`p_j = e^{-\Delta - \ln Z}`,
    :math:`Z = 1 + (T-1)e^{-\Delta}`, is the bound :math:`B(\boldsymbol\sigma)`
    (``EntropyBound``); at :math:`\boldsymbol\sigma = 0` the bound is
    :math:`\ln T`; and its derivative is
    :math:`-\sqrt{T/(T-1)}\,(T-1)\Delta\beta/(1 + (T-1)\beta)^2 < 0`.

    Returns
    -------
    Derivation
        The four checked steps.

    Raises
    ------
    ProofError
        If a step does not hold.

    Examples
    --------
    >>> from attention_scaling.proofs import entropy_bound_derivation
    >>> entropy_bound_derivation().counts()["checked"]
    4
    """
    label = "logit-growth-entropy-why"
    T, sigma = _tokens, _sigma
    gap = sp.Symbol(r"\Delta", nonnegative=True)
    beta = sp.Symbol(r"\beta", positive=True)
    j = sp.Symbol("j", integer=True, positive=True)
    top, other = sp.symbols("p_1 p_j", positive=True)
    partition = sp.Symbol("Z", positive=True)
    # The weights as exponentials of log-weights, with Z positive while they are substituted:
    # their logarithms are then read off without knowing the sign of T - 1 + e^Delta, which
    # SymPy's simplification cannot see. _Where substitutes in order: p_1, p_j, then Z, then Delta.
    weights = (sp.exp(-sp.log(partition), evaluate=False), sp.exp(-gap - sp.log(partition), evaluate=False))
    entropy = -top * sp.log(top) - (T - 1) * other * sp.log(other)
    # One logit gap above T - 1 equal ones, centred: entries gap(1 - 1/T) and -gap/T.
    squared_norm = (gap * (1 - 1 / T)) ** 2 + sp.Sum((gap / T) ** 2, (j, 2, T))
    slope = -sp.sqrt(T / (T - 1)) * (T - 1) * gap * beta / (1 + (T - 1) * beta) ** 2
    steps = (
        check(label, squared_norm, gap**2 * (T - 1) / T, reason="largest gap"),
        check(label, EntropyBound(sigma),
              _Where(entropy, (top, other, partition, gap), (*weights, 1 + (T - 1) * sp.exp(-gap), _largest_gap(sigma))),
              reason="one peak"),
        check(label, EntropyBound(0), sp.log(T), reason="uniform"),
        check(label, sp.Derivative(EntropyBound(sigma), sigma),
              sp.Subs(slope, (gap, beta), (_largest_gap(sigma), sp.exp(-_largest_gap(sigma)))),
              reason="negative"),
    )
    return Derivation(steps)
