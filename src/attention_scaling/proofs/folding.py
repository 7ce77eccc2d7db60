r"""Theorems of the section "Folding the constant into W_Q (T5)" (``docs/initialisation.md``).

T5 and Mesh TensorFlow leave out :math:`1/\sqrt{d_k}` and initialise
:math:`W_Q` with standard deviation :math:`(d_{model} d_k)^{-1/2}` instead.
:func:`folded_scale` proves that this gives the same forward pass at
initialisation (``thm-folded-scale``); :func:`logit_update` shows, step by
step, what the constant still does once the weights are trained: under SGD
it multiplies the first-order change of a score by :math:`c^2`, and
folding it into :math:`W_Q` takes that factor off the query path only
(``thm-logit-update``). The measurement is :mod:`attention_scaling.folding`.
"""

from __future__ import annotations

import sympy as sp
import sympy.stats as stats

from attention_scaling.proofs.engine import (
    THEOREM_NAMES,
    Proof,
    Step,
    theorem,
    argue,
    check,
    cite,
)
from attention_scaling.proofs.initialisation import _SquaredNorm, d_model
from attention_scaling.proofs.logit_growth import _Projection
from attention_scaling.proofs.variance import d_k

__all__ = ["CROSS_CHECK_SIZES", "SHOWN_SIZE", "T5_QUERY_STD", "folded_scale", "logit_update"]

# Where T5's initialisation is stated: the modeling code of Hugging Face transformers.
_HF_T5 = "HF transformers, models/t5/modeling_t5.py"
_HF_T5_LOCATOR = "T5PreTrainedModel._init_weights: q.weight ~ N(0, (d_model d_kv)^(-1/2))"

#: T5's standard deviation of the entries of W_Q (the locator above).
T5_QUERY_STD = 1 / (sp.sqrt(d_model) * sp.sqrt(d_k))

#: The sizes (d_model, d_k) at which thm-logit-update's steps are shown and those at which it is cross-checked.
SHOWN_SIZE = (2, 2)
CROSS_CHECK_SIZES = ((2, 1), (1, 2))


@theorem("thm-folded-scale", "Folding the constant into W_Q", uses=("thm-projected-dot-product",))
def folded_scale() -> Proof:
    r"""The forward pass with scale :math:`c` equals the unscaled one with :math:`W_Q' = c\,W_Q`.

    For tokens :math:`x, y \in \mathbb{R}^{d_{model}}` and
    :math:`W_Q, W_K \in \mathbb{R}^{d_{model} \times d_k}`, with
    :math:`d_{model}` and :math:`d_k` symbolic, the scaled score
    :math:`c \sum_l (x W_Q)_l (y W_K)_l` is the unscaled score of
    :math:`(c W_Q, W_K)` (checked). If the entries of :math:`W_Q` are
    :math:`N(0, \sigma^2)`, those of :math:`c W_Q` have mean 0, variance
    :math:`c^2\sigma^2` and the moment generating function of
    :math:`N(0, c^2\sigma^2)` (checked with ``sympy.stats``), so initialising
    :math:`W_Q'` from :math:`N(0, c^2\sigma^2)` gives every score the same law
    (argued: the same function of weights with the same law). At
    :math:`\sigma^2 = 1/d_{model}` and :math:`c = 1/\sqrt{d_k}` the standard
    deviation is :math:`(d_{model} d_k)^{-1/2}` (checked), T5's (cited).

    Returns
    -------
    Proof
        Five checked steps, one argued, one cited; the statement is steps 1,
        3 and 6.

    Examples
    --------
    >>> from attention_scaling.proofs import folded_scale
    >>> proof = folded_scale()
    >>> proof.counts()
    {'checked': 5, 'cited': 1, 'argued': 1, 'measured': 0}
    >>> print(proof.steps[5].rhs)
    1/(sqrt(d_k)*sqrt(d_model))
    """
    label = "thm-folded-scale"
    c, sigma, t = sp.Symbol("c", positive=True), sp.Symbol("sigma", positive=True), sp.Symbol("t", real=True)
    l = sp.Symbol("l", integer=True, positive=True)
    x, y = sp.IndexedBase("x", real=True), sp.IndexedBase("y", real=True)
    W_Q, W_K = sp.IndexedBase("W_Q", real=True), sp.IndexedBase("W_K", real=True)

    def score(query_scale):
        """sum_l (x query_scale W_Q)_l (y W_K)_l, the sum unevaluated."""
        return sp.Sum(_Projection(x, W_Q, l, d_model, query_scale) * _Projection(y, W_K, l, d_model, 1), (l, 1, d_k))

    W = stats.Normal("W", 0, sigma)
    folded_std = sp.sqrt(c**2 * sigma**2)
    sigma_T5 = sp.Symbol(r"\sigma_{T5}", positive=True)
    steps = (
        check(label, c * score(1), score(c), reason="$c$ moves into the query projection"),
        check(label, stats.Expectation(c * W), 0, reason=r"$W \sim \mathcal{N}(0, \sigma^2)$ an entry of $W_Q$"),
        check(label, stats.Variance(c * W), c**2 * sigma**2, reason="an entry of $W_Q' = c W_Q$"),
        check(label, stats.Expectation(sp.exp(t * c * W)), sp.exp(c**2 * sigma**2 * t**2 / 2),
              reason=r"the moment generating function of $\mathcal{N}(0, c^2 \sigma^2)$"),
        argue(label, sp.Symbol(r"s_{c}(W_Q, W_K)"), sp.Symbol(r"s_{1}(W_Q', W_K)"),
              "same function of weights with the same law: equal in law, jointly over all scores"),
        check(label, sp.Subs(folded_std, (c, sigma), (1 / sp.sqrt(d_k), 1 / sp.sqrt(d_model))),
              T5_QUERY_STD, reason=r"$\sigma^2 = 1/d_{model}$, $c = 1/\sqrt{d_k}$"),
        cite(label, sigma_T5, T5_QUERY_STD, _HF_T5, _HF_T5_LOCATOR,
             reason="T5's query initialisation, $d_{kv} = d_k$"),
    )
    return Proof(
        THEOREM_NAMES[label],
        label,
        (
            "x, y in R^d_model fixed (or random and independent of the weights); W_Q, W_K in R^(d_model x d_k)",
            "entries of W_Q independent N(0, sigma^2), independent of W_K; c > 0",
        ),
        steps,
        results=(0, 2, 5),
    )


def _frobenius(score, weights, size) -> sp.Sum:
    """The squared norm of the score's gradient with respect to one weight matrix, entry by entry."""
    a, l = sp.symbols("a l", integer=True, positive=True)
    n, m = size
    return sp.Sum(sp.Derivative(score, weights[a, l]) ** 2, (a, 1, n), (l, 1, m))


class _WhereVector(sp.Function):
    r"""``_WhereVector(expr, v, y, W, n)``: ``expr`` with each :math:`v_l` read as :math:`(y W)_l`, shown as :math:`\left.\cdots\right|_{v = y W}`.

    ``doit`` replaces :math:`v_l` by :math:`\sum_{a=1}^{n} y_a W_{al}` and
    expands the polynomial, so that a product of sums compares term by term.

    Examples
    --------
    >>> import sympy as sp
    >>> from attention_scaling.proofs.folding import _WhereVector
    >>> v, y, W = (sp.IndexedBase(name, real=True) for name in ("v", "y", "W"))
    >>> _WhereVector(v[1], v, y, W, 2).doit()
    W[1, 1]*y[1] + W[2, 1]*y[2]
    """

    def doit(self, **hints):
        expr, vector, token, matrix, length = self.args
        value = expr.doit(**hints).replace(
            lambda e: isinstance(e, sp.Indexed) and e.base == vector,
            lambda e: _Projection(token, matrix, e.indices[0], length, 1).doit(),
        )
        return sp.expand(value.doit())

    def _latex(self, printer, exp=None):
        expr, vector, token, matrix, _ = self.args
        latex = r"\left. %s \right|_{%s = %s\, %s}" % (
            printer._print(expr), printer._print(vector), printer._print(token), printer._print(matrix))
        return latex if exp is None else r"\left(%s\right)^{%s}" % (latex, exp)


def _update_steps(label: str, size: tuple[int, int]) -> tuple[Step, ...]:
    r"""The checked steps of thm-logit-update at one size (d_model, d_k); see :func:`logit_update`."""
    n, m = size
    c = sp.Symbol("c", positive=True)
    j = sp.Symbol("j", integer=True, positive=True)
    x, y, u, v = (sp.IndexedBase(name, real=True) for name in ("x", "y", "u", "v"))
    W_Q, W_K = sp.IndexedBase("W_Q", real=True), sp.IndexedBase("W_K", real=True)
    a, l = sp.symbols("a l", integer=True, positive=True)
    score = c * sp.Sum(_Projection(x, W_Q, j, n, 1) * _Projection(y, W_K, j, n, 1), (j, 1, m))
    # The folded model: scale 1 and W_Q' = c W_Q. Its gradient with respect to W_Q' is
    # 1/c times its gradient with respect to W_Q, by the chain rule through W_Q' = c W_Q.
    folded = sp.Sum(_Projection(x, W_Q, j, n, c) * _Projection(y, W_K, j, n, 1), (j, 1, m))
    folded_query = sp.Sum((sp.Derivative(folded, W_Q[a, l]) / c) ** 2, (a, 1, n), (l, 1, m))
    x_norm, y_norm = _SquaredNorm(n, x), _SquaredNorm(n, y)
    query_path = _WhereVector(x_norm * _SquaredNorm(m, v), v, y, W_K, n)
    key_path = _WhereVector(y_norm * _SquaredNorm(m, u), u, x, W_Q, n)
    return (
        check(label, _frobenius(score, W_Q, size), c**2 * query_path, reason="scaled, $W_Q$ path"),
        check(label, _frobenius(score, W_K, size), c**2 * key_path, reason="scaled, $W_K$ path"),
        check(label, folded_query, query_path, reason="folded, $W_Q$ path: no $c$"),
        check(label, _frobenius(folded, W_K, size), c**2 * key_path, reason="folded, $W_K$ path: as scaled"),
    )


@theorem("thm-logit-update", "How the constant moves the logits", uses=("thm-folded-scale",))
def logit_update(cross_check: bool = True) -> Proof:
    r"""The first-order change of a score under one step of SGD, scaled and folded, and Adam's first step.

    For the score :math:`s = c\,(x W_Q)\cdot(y W_K)` and a loss
    :math:`L(s)`, one SGD step :math:`\theta \to \theta - \eta\,\partial L/\partial\theta`
    on every entry of :math:`W_Q` and :math:`W_K` changes the score, to
    first order in :math:`\eta` (argued: Taylor's theorem), by
    :math:`\Delta s = -\eta L'(s) \sum_\theta (\partial s/\partial\theta)^2`,
    and SymPy checks (at :math:`(d_{model}, d_k) = (2, 2)`, every entry
    symbolic, and cross-checked at (2, 1) and (1, 2)) that

    .. math::

       \Delta s = -\eta\, L'(s)\, c^2 \left(\lVert x\rVert^2 \lVert y W_K\rVert^2
       + \lVert y\rVert^2 \lVert x W_Q\rVert^2\right).

    For the folded model (scale 1, :math:`W_Q' = c W_Q`), the :math:`W_Q` path
    loses the :math:`c^2` and the :math:`W_K` path keeps it. Adam's first
    step :math:`\hat m/\sqrt{\hat v}` (with :math:`\epsilon = 0`) is the same
    for the gradient :math:`g` and for :math:`a g`, :math:`a > 0` (checked).

    Parameters
    ----------
    cross_check : bool, default True
        Also check the four identities at the sizes ``CROSS_CHECK_SIZES``.

    Returns
    -------
    Proof
        Seven checked steps and two argued; the statement is steps 4 to 8.

    Examples
    --------
    >>> from attention_scaling.proofs import logit_update
    >>> proof = logit_update(cross_check=False)
    >>> proof.counts()
    {'checked': 7, 'cited': 0, 'argued': 2, 'measured': 0}
    """
    label = "thm-logit-update"
    c, eta = sp.symbols("c eta", positive=True)
    theta, t = sp.Symbol("theta", real=True), sp.Symbol("t", real=True)
    s, L = sp.Function("s"), sp.Function("L")
    delta_s = sp.Symbol(r"\Delta s")
    grad_q, grad_k = sp.Symbol(r"\lVert\nabla_{W_Q} s\rVert^{2}"), sp.Symbol(r"\lVert\nabla_{W_K} s\rVert^{2}")
    g = sp.Symbol("g", real=True)
    # Adam's first step from zero moments: m_1 = (1 - beta_1) grad, v_1 = (1 - beta_2) grad^2, bias-corrected.
    beta_1, beta_2 = sp.symbols("beta_1 beta_2", positive=True)
    gradient, a = sp.Symbol("gamma", real=True, nonzero=True), sp.Symbol("a", positive=True)
    adam_step = ((1 - beta_1) * gradient / (1 - beta_1)) / sp.sqrt((1 - beta_2) * gradient**2 / (1 - beta_2))
    # The derivative of the one-parameter SGD path, at t = 0: the first-order change per unit step.
    path = s(theta - t * eta * sp.Derivative(L(s(theta)), theta))
    steps = (
        check(label, sp.Derivative(L(s(theta)), theta),
              sp.Subs(sp.Derivative(L(t), t), t, s(theta)) * sp.Derivative(s(theta), theta),
              reason="chain rule: each weight's gradient is $L'(s)$ times the score's"),
        check(label, sp.Subs(sp.Derivative(path, t), t, 0),
              -eta * sp.Subs(sp.Derivative(L(t), t), t, s(theta)) * sp.Derivative(s(theta), theta) ** 2,
              reason="one weight: the score's rate of change along the step"),
        argue(label, delta_s, -eta * g * (grad_q + grad_k),
              r"first order in $\eta$, every entry of $W_Q$ and $W_K$ at once; $g = L'(s)$"),
        *_update_steps(label, SHOWN_SIZE),
        check(label, sp.Subs(adam_step, gradient, a * gradient), adam_step,
              reason=r"Adam's first step: $\hat{m}/\sqrt{\hat{v}}$ with $\epsilon = 0$ ignores a positive factor"),
        argue(label, sp.Symbol(r"\Delta s_{\mathrm{Adam}}"), -eta * sp.sign(g) * c * sp.Symbol(r"S"),
              r"each weight moves by $\eta \cdot$ sign of its gradient whatever $c$ is; every $\partial s/\partial\theta$ "
              r"carries one $c$, so $\Delta s = -\eta \operatorname{sign}(g) \sum \lvert \partial s/\partial\theta\rvert$ "
              r"with $S = \sum \lvert \partial s/\partial\theta\rvert / c$ free of $c$"),
    )
    cross_checks = tuple(step for size in CROSS_CHECK_SIZES for step in _update_steps(label, size)) if cross_check else ()
    return Proof(
        THEOREM_NAMES[label],
        label,
        (
            "s = c (x W_Q)·(y W_K) for one query token x and one key token y; loss L(s) differentiable; c > 0",
            "one step of SGD with step size eta on every entry of W_Q and W_K; change of s to first order in eta",
            "shown at (d_model, d_k) = (2, 2) with every entry symbolic; cross-checked at (2, 1) and (1, 2)",
            "folded: scale 1 and W_Q' = c W_Q, trained with the same SGD step",
        ),
        steps,
        cross_checks,
        results=(3, 4, 5, 6, 7),
    )
