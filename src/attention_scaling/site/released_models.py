r"""Page support for "What released models use" (``docs/released-models.md``): the ledger's table, figure and theorem."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

import numpy as np
import sympy as sp

from attention_scaling.long_sequences import needle_weight
from attention_scaling.proofs import Proof, argue, check, check_inequality, cite, needle_limit, theorem
from attention_scaling import attention_weights, softmax
from attention_scaling.released_models import LEDGER, SYMBOLS, LedgerRow, qk_clip, sigmoid_gate, sink_margin, softpick
from attention_scaling.site.checks import require
from attention_scaling.site.evidence import rounding_row, register_evidence
from attention_scaling.site.figures import register_figure
from attention_scaling.site.tables import markdown_table
from attention_scaling.temperatures import yarn_multiplier, yarn_scale

__all__ = ["CLIP_LABEL", "ClippedHeads", "GATE_LABEL", "GatedHeads", "LABEL", "LedgerNumbers", "SINK_LABEL", "SOFTPICK_LABEL",
           "SinkRows", "SoftpickRows", "gate_gradient", "gate_gradient_rows", "gated_heads", "sink_margin_bound",
           "sink_margin_rows", "sink_rows", "CRITICAL_LABEL", "critical_log_n", "critical_log_n_rows",
           "YarnMistakes", "clipped_heads", "softpick_row_sum", "softpick_rows", "softpick_rows_evidence",
           "draw_ledger_ratios", "ledger_numbers", "ledger_sources", "ledger_table", "qk_clip_bound", "qk_clip_rows",
           "unit_variance_scalar", "yarn_factor", "yarn_factor_rows", "yarn_mistakes"]

LABEL = "thm-yarn-logit-factor"
YARN = "Peng, Quesnelle, Fan and Shippole, YaRN (arXiv:2309.00071v2, 2023)"
# How the table prints each parameter of a formula.
_NAMES = {SYMBOLS["query_pre_attn_scalar"]: r"\mathtt{query\_pre\_attn\_scalar}",
          SYMBOLS["attention_multiplier"]: r"\mathtt{attention\_multiplier}", SYMBOLS["mscale_all_dim"]: "m", SYMBOLS["s"]: "n/L",
          SYMBOLS["position"]: "p", SYMBOLS["floor_scale"]: "f", SYMBOLS["attn_scale"]: "a", SYMBOLS["layer"]: r"\ell"}
_ln_s = sp.Symbol(r"\ln(n/L)", positive=True)  # positive: the context is extended, n > L


@theorem(LABEL, "YaRN's factor on the logits", uses=("thm-length-temperatures",))
def yarn_factor() -> Proof:
    r"""YaRN multiplies q and k by :math:`0.1 \ln(n/L) + 1` each, so the logits by its square: DeepSeek-V3's ``mscale²``.

    Examples
    --------
    >>> from attention_scaling.site.released_models import yarn_factor
    >>> yarn_factor().counts()
    {'checked': 1, 'cited': 1, 'argued': 1, 'measured': 0}
    """
    t = sp.Symbol("t", positive=True)
    m = sp.Rational(1, 10) * _ln_s + 1
    steps = (
        cite(LABEL, sp.sqrt(1 / t), m, YARN, "Eq. 22"),
        argue(LABEL, sp.Symbol(r"\text{factor on } q \cdot k"), m**2,
              r"the logit is bilinear in $q$ and $k$, each multiplied by $\sqrt{1/t}$ "
              r"(as for every length temperature, Theorem 10.4)"),
        check_inequality(LABEL, 1 / m, m**2, "<",
                         reason=r"dividing by $0.1 \ln(n/L) + 1$ instead shrinks the logits, for every $n > L$"),
    )
    return Proof("YaRN's factor on the logits", LABEL, ("the rotary embedding of q and of k is multiplied by sqrt(1/t)",
                                                        "the context is extended from L to n > L keys"),
                 steps, results=(1, 2))


@register_evidence
def yarn_factor_rows(rng: np.random.Generator, theorems) -> list:
    """The library's YaRN multiplier (attention_scaling.temperatures) at n/L = 40, against the theorem's factor.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.proofs import Proved
    >>> from attention_scaling.site.released_models import yarn_factor_rows
    >>> [row.holds for row in yarn_factor_rows(np.random.default_rng(0), Proved())]
    [True]
    """
    proved = float(theorems[LABEL].steps[1].rhs.subs(_ln_s, np.log(40)))
    return [rounding_row(LABEL, r"\text{yarn\_multiplier}(40 L)", proved, float(yarn_multiplier(40 * 4096, 4096)), 1e-12)]


def _formula(row: LedgerRow) -> str:
    return "$" + sp.latex(row.factor, symbol_names=_NAMES, ln_notation=True) + "$"


def ledger_table(rows=LEDGER) -> str:
    r"""The ledger as a MyST table: factor, :math:`d_k`, value, ratio to :math:`1/\sqrt{d_k}`, score variance, how known.

    Examples
    --------
    >>> from attention_scaling.site.released_models import ledger_table
    >>> print(ledger_table().splitlines()[2])
    | PyTorch scaled_dot_product_attention | $\frac{1}{\sqrt{d_{k}}}$ | 128 | 0.0884 | 1 | 1 | run |
    """
    return markdown_table(
        ["library or model", "factor on $q \\cdot k$", "$d_k$", "value", "value × $\\sqrt{d_k}$", "score variance", "known by"],
        [[row.name, _formula(row), row.d_k, f"{row.value:.3g}", f"{row.ratio:.3g}", f"{row.score_variance:.3g}", row.how]
         for row in rows], align=("left", "left", "right", "right", "right", "right", "left"), plain=(0,))


def ledger_sources(rows=LEDGER) -> str:
    """Each row's source and note, as a Markdown list in the table's order.

    Examples
    --------
    >>> from attention_scaling.site.released_models import ledger_sources
    >>> ledger_sources().splitlines()[3].startswith("- **Llama (transformers)**: `transformers 5.18.0")
    True
    """
    return "\n".join(f"- **{row.name}**: `{row.source}`" + (f". {row.note[0].upper()}{row.note[1:]}." if row.note else "")
                     for row in rows)


def _row(name: str) -> LedgerRow:
    return next(row for row in LEDGER if row.name == name)


@dataclass(frozen=True)
class LedgerNumbers:
    """The ledger's numbers that the page's prose states: rows, rows run, and the rows it names."""

    n_rows: int
    n_run: int
    n_unit_variance: int
    deepseek_ratio: float
    deepseek_variance: float
    granite_ratio: float
    t5_variance: float
    gemma_ratio: float
    llama4_ratio: float
    deepseek_context_factor: float
    kimi_ratio: float
    kimi_context_factor: float
    llama4_positions: int
    llama4_first_scaled: int


def ledger_numbers(rows=LEDGER) -> LedgerNumbers:
    """Collect and check what the section says of the ledger: every row without unit-variance scores is one the prose names.

    Raises
    ------
    PageCheckError
        If a row's scores do not have unit variance and the prose does not name it.

    Examples
    --------
    >>> from attention_scaling.site.released_models import ledger_numbers
    >>> numbers = ledger_numbers()
    >>> numbers.n_rows, round(numbers.deepseek_ratio, 3), numbers.t5_variance
    (13, 1.874, 64.0)
    """
    # The rows the section's list of exceptions names, and the near miss its next paragraph names.
    named = {"DeepSeek-V3", "Kimi K2", "Granite 3.1 8B", "T5", "Llama 4, layers without RoPE", "GPT-2, scale_attn_by_inverse_layer_idx",
             "Gemma 2 27B"}
    unnamed = [row.name for row in rows if not math.isclose(row.score_variance, 1) and row.name not in named]
    require(not unnamed, "released-models-ledger", "every row whose scores do not have unit variance is named in the prose",
            unnamed=unnamed)
    deepseek, kimi, llama4 = _row("DeepSeek-V3"), _row("Kimi K2"), _row("Llama 4, layers without RoPE")
    return LedgerNumbers(len(rows), sum(row.how == "run" for row in rows),
                         sum(math.isclose(row.score_variance, 1) for row in rows), deepseek.ratio, deepseek.score_variance,
                         _row("Granite 3.1 8B").ratio, _row("T5").score_variance, _row("Gemma 2 27B").ratio,
                         llama4.ratio, float(deepseek.parameters["s"]), kimi.ratio, float(kimi.parameters["s"]),
                         int(llama4.parameters["position"]) + 1,
                         int(llama4.parameters["floor_scale"]) - 1)


def draw_ledger_ratios(axes, rows) -> list:
    r"""Draw each row's factor over :math:`1/\sqrt{d_k}` as a horizontal bar on a log scale, with the line at 1.

    Examples
    --------
    >>> from attention_scaling.site.figures import make_figure
    >>> make_figure("released-models").axes[0].get_xlabel()
    'factor × √d_k (log scale)'
    """
    names = [row.name for row in rows][::-1]
    ratios = [row.ratio for row in rows][::-1]
    bars = axes.barh(names, ratios, color=["#1f77b4" if row.how == "run" else "#aaaaaa" for row in rows][::-1])
    line = axes.axvline(1.0, color="black", linewidth=1)
    axes.set(xscale="log", xlabel="factor × √d_k (log scale)", ylabel="library or model",
             title="The factor on q·k against 1/√d_k")
    return [bars, line]


register_figure("released-models", lambda: LEDGER, draw_ledger_ratios, "The factor on q·k against 1/√d_k", height=5.0)


def unit_variance_scalar(row: LedgerRow) -> sp.Expr:
    r"""The ``query_pre_attn_scalar`` that gives a Gemma 2 row's scores unit variance at its head dimension, solved by SymPy.

    Examples
    --------
    >>> from attention_scaling.released_models import LEDGER
    >>> from attention_scaling.site.released_models import unit_variance_scalar
    >>> unit_variance_scalar(next(row for row in LEDGER if row.name == "Gemma 2 27B"))
    128
    """
    scalar = SYMBOLS["query_pre_attn_scalar"]
    (root,) = sp.solve(sp.Eq(row.factor**2 * row.d_k, 1), scalar)
    return root


CLIP_LABEL = "thm-qk-clip-bound"


@theorem(CLIP_LABEL, "QK-Clip bounds the largest logit")
def qk_clip_bound() -> Proof:
    r"""After QK-Clip with threshold :math:`\tau`, no logit of the head on the batch that set :math:`\eta` exceeds :math:`\tau`.

    Examples
    --------
    >>> from attention_scaling.site.released_models import qk_clip_bound
    >>> qk_clip_bound().counts()
    {'checked': 2, 'cited': 0, 'argued': 1, 'measured': 0}
    """
    eta, alpha, tau, s_max = sp.Symbol(r"\eta", positive=True), sp.Symbol(r"\alpha", positive=True), \
        sp.Symbol(r"\tau", positive=True), sp.Symbol(r"S_{\max}", positive=True)
    below = sp.Symbol("v", nonnegative=True)  # how far a logit of the head lies below the largest
    i = sp.Symbol("i", integer=True, positive=True)
    q, k = sp.IndexedBase("q", real=True), sp.IndexedBase("k", real=True)
    steps = (
        check(CLIP_LABEL, sp.Sum(eta**alpha * q[i] * eta ** (1 - alpha) * k[i], (i, 1, SYMBOLS["d_k"])),
              eta * sp.Sum(q[i] * k[i], (i, 1, SYMBOLS["d_k"])),
              reason=r"$W_Q$ is multiplied by $\eta^{\alpha}$ and $W_K$ by $\eta^{1-\alpha}$: every logit by $\eta$"),
        check_inequality(CLIP_LABEL, tau / s_max * (s_max - below), tau, r"\le",
                         reason=r"if $S_{\max} > \tau$, then $\eta = \tau / S_{\max}$, and a logit is $S_{\max} - v$ with $v \ge 0$"),
        argue(CLIP_LABEL, eta, 1, r"if $S_{\max} \le \tau$, then $\eta = 1$: nothing changes, and every logit is at most "
                                  r"$S_{\max} \le \tau$"),
    )
    return Proof("QK-Clip bounds the largest logit", CLIP_LABEL,
                 ("eta = min(1, tau / S_max), S_max > 0 the head's largest logit on the batch, measured with the weights "
                  "that are rescaled", "q = x W_Q and k = x W_K, linear in the weights (no bias, no norm after them)",
                  "0 <= alpha <= 1"),
                 steps, results=(0, 1))


@dataclass(frozen=True)
class ClippedHeads:
    """Seeded heads before and after QK-Clip: the largest logit of each (``before``, ``after``) and what the section states."""

    n_heads: int
    threshold: float
    before: np.ndarray
    after: np.ndarray
    median_before: float
    low_before: float
    high_before: float
    clipped_fraction: float
    clipped_fraction_se: float
    largest_after: float


def clipped_heads(n_heads: int = 200, n_tokens: int = 64, d_model: int = 64, d_k: int = 16, threshold: float = 100.0,
                  seed: int = 54) -> ClippedHeads:
    r"""Clip ``n_heads`` seeded heads whose weight scales spread their largest logits around ``threshold``; check the bound.

    Each head draws tokens and weights with a standard deviation drawn
    log-uniformly from 0.3 to 1.1, so that some heads' largest scaled logit
    :math:`S_{\max}` lies above :math:`\tau` and some below; each is clipped
    with :func:`~attention_scaling.released_models.qk_clip` and its logits
    computed again.

    Raises
    ------
    ValueError
        For a size below 1 or a threshold that is not positive.
    PageCheckError
        If a head's largest logit after the clip exceeds the threshold, or a
        clipped head's is not the threshold (beyond rounding).

    Examples
    --------
    >>> from attention_scaling.site.released_models import clipped_heads
    >>> heads = clipped_heads(n_heads=20)
    >>> heads.largest_after <= heads.threshold * (1 + 1e-12), 0 < heads.clipped_fraction < 1
    (True, True)
    """
    if min(n_heads, n_tokens, d_model, d_k) < 1 or not threshold > 0:
        raise ValueError(f"sizes must be at least 1 and the threshold positive; got {n_heads}, {n_tokens}, {d_model}, "
                         f"{d_k}, {threshold!r}")
    rng = np.random.default_rng(seed)
    largest = lambda x, w_q, w_k: float(np.max((x @ w_q) @ (x @ w_k).T) / np.sqrt(d_k))
    before, after = np.empty(n_heads), np.empty(n_heads)
    for head in range(n_heads):
        scale = np.exp(rng.uniform(np.log(0.3), np.log(1.1)))
        x = rng.standard_normal((n_tokens, d_model))
        w_q, w_k = (scale * rng.standard_normal((d_model, d_k)) for _ in range(2))
        before[head] = largest(x, w_q, w_k)
        after[head] = largest(x, *qk_clip(w_q, w_k, before[head], threshold))
    clipped = before > threshold
    require(np.all(after <= threshold * (1 + 1e-12)) and np.allclose(after[clipped], threshold, rtol=1e-12),
            "released-models-qk-clip", "every head's largest logit after the clip is at most tau, and tau if it was clipped",
            largest_after=float(after.max()))
    fraction = float(clipped.mean())
    low, median, high = np.quantile(before, [0.1, 0.5, 0.9])
    return ClippedHeads(n_heads, threshold, before, after, float(median), float(low), float(high), fraction,
                        float(np.sqrt(fraction * (1 - fraction) / n_heads)), float(after.max()))


@register_evidence
def qk_clip_rows(rng: np.random.Generator, theorems) -> list:
    """One seeded head with its largest logit far above tau = 100: its largest logit after QK-Clip, against tau.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.proofs import Proved
    >>> from attention_scaling.site.released_models import qk_clip_rows
    >>> [row.holds for row in qk_clip_rows(np.random.default_rng(0), Proved())]
    [True]
    """
    tau = sp.Symbol(r"\tau", positive=True)
    proved = float(theorems[CLIP_LABEL].steps[1].rhs.subs(tau, 100))
    x, w_q, w_k = rng.standard_normal((64, 64)), 3 * rng.standard_normal((64, 16)), 3 * rng.standard_normal((64, 16))
    largest = lambda w_q, w_k: float(np.max((x @ w_q) @ (x @ w_k).T) / 4)
    return [rounding_row(CLIP_LABEL, r"\max \text{logit after QK-Clip}, \tau = 100", proved,
                         largest(*qk_clip(w_q, w_k, largest(w_q, w_k), 100.0)), 1e-9)]


@dataclass(frozen=True)
class YarnMistakes:
    r"""A needle's weight at ``n`` keys under YaRN's factor and under two wrong readings of it.

    The needle's margin over each other key is the one that gives it weight
    1/2 at the trained length :math:`L` with no factor. The factor on the
    logits is :math:`(0.1 \ln(n/L) + 1)^2` (``correct``), its square root
    (``wrong_power``, the factor on each of q and k applied to the logits)
    and its inverse square root (``wrong_direction``, dividing by it).
    """

    trained: int
    n: int
    margin: float
    correct_factor: float
    wrong_power_factor: float
    wrong_direction_factor: float
    weight_none: float
    weight_correct: float
    weight_wrong_power: float
    weight_wrong_direction: float


def yarn_mistakes(trained: int = 4096, n: int = 32768) -> YarnMistakes:
    r"""The needle's weight at ``n`` keys under YaRN's factor, its square root and its inverse; check their order.

    Raises
    ------
    ValueError
        If ``n`` is not larger than ``trained``, or ``trained`` is below 2.
    PageCheckError
        If the weights are not ordered wrong direction < no factor < wrong power < correct.

    Examples
    --------
    >>> from attention_scaling.site.released_models import yarn_mistakes
    >>> mistakes = yarn_mistakes()
    >>> round(mistakes.weight_none, 3), round(mistakes.weight_correct, 3)
    (0.111, 0.851)
    """
    if trained < 2 or n <= trained:
        raise ValueError(f"need 2 <= trained < n; got trained={trained!r}, n={n!r}")
    margin = float(np.log(trained - 1))  # weight 1/2 at the trained length: (L - 1) e^{-margin} = 1
    scale = float(yarn_scale(n / trained))
    factors = {"none": 1.0, "correct": scale**2, "wrong_power": scale, "wrong_direction": 1 / scale}
    weights = {name: float(needle_weight(n, margin, factor)) for name, factor in factors.items()}
    require(weights["wrong_direction"] < weights["none"] < weights["wrong_power"] < weights["correct"],
            "released-models-yarn", "wrong direction < no factor < wrong power < correct", **weights)
    return YarnMistakes(trained, n, margin, scale**2, scale, 1 / scale, *weights.values())



SOFTPICK_LABEL = "thm-softpick-row-sum"


@theorem(SOFTPICK_LABEL, "Softpick's rows sum to at most 1")
def softpick_row_sum() -> Proof:
    r"""A softpick row sums to at most 1, and to exactly 1 when no score is negative (and one is not zero).

    Examples
    --------
    >>> from attention_scaling.site.released_models import softpick_row_sum
    >>> softpick_row_sum().counts()
    {'checked': 3, 'cited': 0, 'argued': 2, 'measured': 0}
    """
    x, a, b = sp.Symbol("x_i", real=True), sp.Symbol("a", nonnegative=True), sp.Symbol("b", positive=True)
    i, j, n = sp.Symbol("i", integer=True), sp.Symbol("j", integer=True), sp.Symbol("n", integer=True, positive=True)
    xs = sp.IndexedBase("x", real=True)
    # Unevaluated, so that the page shows max(0, a) = |a| and not the a = a SymPy reduces it to.
    relu, absolute = (lambda value: sp.Max(value, 0, evaluate=False)), (lambda value: sp.Abs(value, evaluate=False))
    row_sum = sp.Sum(relu(sp.exp(xs[i]) - 1), (i, 1, n)) / sp.Sum(sp.Abs(sp.exp(xs[j]) - 1), (j, 1, n))
    steps = (
        argue(SOFTPICK_LABEL, sp.sign(sp.exp(x) - 1), sp.sign(x), r"$e^{x}$ is increasing and $e^{0} = 1$"),
        check(SOFTPICK_LABEL, relu(a), absolute(a), reason=r"a score $x_i \ge 0$: $e^{x_i} - 1 = a \ge 0$"),
        check(SOFTPICK_LABEL, relu(-b), 0, reason=r"a score $x_i < 0$: $e^{x_i} - 1 = -b$ with $b > 0$"),
        check_inequality(SOFTPICK_LABEL, relu(-b), absolute(-b), "<",
                         reason=r"so a negative score counts in the denominator only"),
        argue(SOFTPICK_LABEL, row_sum, 1, "term by term the numerator is at most the denominator, equal where no score is "
                                          "negative; the denominator is positive when some score is not zero", r"\le"),
    )
    return Proof("Softpick's rows sum to at most 1", SOFTPICK_LABEL, ("some score of the row is not zero", "epsilon = 0"),
                 steps, results=(4,))


@dataclass(frozen=True)
class SoftpickRows:
    """Seeded softpick rows: the median row sum and its 10th and 90th percentiles at each mean score, and a check row."""

    n: int
    n_rows: int
    means: tuple
    median_sum: Mapping[str, float]
    low_sum: Mapping[str, float]
    high_sum: Mapping[str, float]
    largest_sum: float


def softpick_rows(n: int = 1024, n_rows: int = 200, means=(0.0, 1.0, 3.0), seed: int = 2504) -> SoftpickRows:
    r"""Row sums of softpick on seeded rows of :math:`\mathcal{N}(\mu, 1)` scores, for each mean :math:`\mu` in ``means``.

    Raises
    ------
    ValueError
        If ``n`` or ``n_rows`` is below 2.
    PageCheckError
        If a row sums to more than 1 (beyond rounding), or the median row
        sum does not rise with the mean.

    Examples
    --------
    >>> from attention_scaling.site.released_models import softpick_rows
    >>> rows = softpick_rows(n=256, n_rows=20)
    >>> rows.largest_sum <= 1, rows.median_sum["0"] < rows.median_sum["3"]
    (True, True)
    """
    if n < 2 or n_rows < 2:
        raise ValueError(f"n and n_rows must be at least 2; got {n!r}, {n_rows!r}")
    rng = np.random.default_rng(seed)
    sums = {f"{mean:g}": softpick(mean + rng.standard_normal((n_rows, n))).sum(axis=-1) for mean in means}
    medians = {name: float(np.median(values)) for name, values in sums.items()}
    largest = float(max(values.max() for values in sums.values()))
    require(largest <= 1 + 1e-12 and list(medians.values()) == sorted(medians.values()), "released-models-softpick",
            "no row sums to more than 1, and the median sum rises with the mean", largest=largest, medians=medians)
    quantile = lambda q: {name: float(np.quantile(values, q)) for name, values in sums.items()}
    return SoftpickRows(n, n_rows, tuple(means), medians, quantile(0.1), quantile(0.9), largest)


@register_evidence
def softpick_rows_evidence(rng: np.random.Generator, theorems) -> list:
    """Softpick rows of 1,000 non-negative scores, which the theorem says sum to exactly 1 (with the code's epsilon).

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.proofs import Proved
    >>> from attention_scaling.site.released_models import softpick_rows_evidence
    >>> [row.holds for row in softpick_rows_evidence(np.random.default_rng(0), Proved())]
    [True]
    """
    proved = float(theorems[SOFTPICK_LABEL].steps[-1].rhs)
    sums = softpick(np.abs(rng.standard_normal((100, 1000)))).sum(axis=-1)
    return [rounding_row(SOFTPICK_LABEL, r"\text{row sum, no negative score}", proved, float(np.mean(sums)), 1e-6)]


SINK_LABEL = "thm-sink-margin"


@theorem(SINK_LABEL, "What a sink's weight costs")
def sink_margin_bound() -> Proof:
    r"""A sink ahead of :math:`n` logits by :math:`\Delta` has weight at least :math:`1/(1 + n e^{-\Delta})`; evicting it rescales the rest.

    Examples
    --------
    >>> from attention_scaling.site.released_models import sink_margin_bound
    >>> sink_margin_bound().counts()
    {'checked': 3, 'cited': 0, 'argued': 1, 'measured': 0}
    """
    s0, s_i = sp.Symbol("s_0", real=True), sp.Symbol("s_i", real=True)
    total = sp.Symbol(r"S", positive=True)  # the sum of e^{s_j} over the n keys besides the sink
    delta, w = sp.Symbol(r"\Delta", real=True), sp.Symbol("w", positive=True)
    n = sp.Symbol("n", integer=True, positive=True)
    p0 = sp.exp(s0) / (sp.exp(s0) + total)
    p_0, p_i = sp.Symbol("p_0"), sp.Symbol("p_i")  # the weights with the sink, named in the last step
    steps = (
        check(SINK_LABEL, p0, 1 / (1 + total * sp.exp(-s0)),
              reason=r"the sink's weight, with $S = \sum_{j=1}^{n} e^{s_j}$ over the other keys"),
        argue(SINK_LABEL, p0, 1 / (1 + n * sp.exp(-delta)),
              r"each of the $n$ terms $e^{s_j - s_0}$ of $S e^{-s_0}$ is at most $e^{-\Delta}$ when $s_j \le s_0 - \Delta$",
              r"\ge"),
        check(SINK_LABEL, sp.Subs(1 / (1 + n * sp.exp(-delta)), delta, sp.log(n) + sp.log(w / (1 - w))), w,
              reason=r"the margin $\Delta = \ln n + \ln \frac{w}{1 - w}$, for $0 < w < 1$"),
        check(SINK_LABEL, sp.exp(s_i) / total, sp.Subs(p_i / (1 - p_0), (p_i, p_0), (sp.exp(s_i) / (sp.exp(s0) + total), p0)),
              reason=r"key $i$'s weight once the sink is evicted: its weight with the sink, divided by $1 - p_0$"),
    )
    return Proof("What a sink's weight costs", SINK_LABEL,
                 ("the sink's logit s_0 exceeds each of the n other logits by at least Delta (any real number)",
                  "0 < w < 1"),
                 steps, results=(1, 2, 3))


@dataclass(frozen=True)
class SinkRows:
    r"""Seeded rows of :math:`\mathcal{N}(0, 1)` logits with one sink at a fixed logit, at each number of keys.

    ``sink_weight`` holds the median sink weight per ``n`` (keys ``str(n)``),
    ``low_weight`` and ``high_weight`` its 10th and 90th percentiles, and
    ``eviction_factor`` the median factor :math:`1/(1 - p_0)` by which
    evicting the sink multiplies every other weight.
    """

    sink_logit: float
    n_rows: int
    ns: tuple
    sink_weight: Mapping[str, float]
    low_weight: Mapping[str, float]
    high_weight: Mapping[str, float]
    eviction_factor: Mapping[str, float]
    margin_for_90: Mapping[str, float]


def sink_rows(ns=(1024, 8192, 65536), sink_logit: float = 10.0, n_rows: int = 200, seed: int = 2309) -> SinkRows:
    r"""A sink at a fixed logit against ``n`` unit-variance logits, the scaled scores at initialisation, for each ``n``.

    Raises
    ------
    ValueError
        If an ``n`` or ``n_rows`` is below 1, or the sink's logit is not finite.
    PageCheckError
        If a row's sink weight falls below the theorem's bound
        :math:`1/(1 + n e^{-\Delta})`, with :math:`\Delta` the row's margin,
        or evicting the sink does not multiply the other weights by
        :math:`1/(1 - p_0)`.

    Examples
    --------
    >>> from attention_scaling.site.released_models import sink_rows
    >>> rows = sink_rows(ns=(64, 4096), n_rows=20)
    >>> rows.sink_weight["64"] > rows.sink_weight["4096"]
    True
    """
    if min(ns) < 1 or n_rows < 1 or not np.isfinite(sink_logit):
        raise ValueError(f"need n >= 1, n_rows >= 1 and a finite sink logit; got {ns!r}, {n_rows!r}, {sink_logit!r}")
    rng = np.random.default_rng(seed)
    weights, factors = {}, {}
    for n in ns:
        logits = rng.standard_normal((n_rows, n))
        with_sink = softmax(np.concatenate([np.full((n_rows, 1), sink_logit), logits], axis=1))
        p0, evicted = with_sink[:, 0], softmax(logits)
        bound = needle_weight(n + 1, sink_logit - logits.max(axis=1), 1.0)  # the theorem's bound, exact for equal others
        require(np.all(p0 >= bound * (1 - 1e-12)) and np.allclose(evicted, with_sink[:, 1:] / (1 - p0)[:, None], rtol=1e-9),
                "released-models-sinks", "every sink weight is at least the bound, and eviction divides the rest by 1 - p_0",
                n=n, worst=float(np.min(p0 - bound)))
        weights[str(n)], factors[str(n)] = p0, 1 / (1 - p0)
    quantile = lambda q: {name: float(np.quantile(values, q)) for name, values in weights.items()}
    return SinkRows(sink_logit, n_rows, tuple(ns), quantile(0.5), quantile(0.1), quantile(0.9),
                    {name: float(np.median(values)) for name, values in factors.items()},
                    {str(n): float(sink_margin(n, 0.9)) for n in ns})


@register_evidence
def sink_margin_rows(rng: np.random.Generator, theorems) -> list:
    """A sink at the theorem's margin for w = 0.9 over 4,096 equal logits, where its bound is exact: its softmax weight.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.proofs import Proved
    >>> from attention_scaling.site.released_models import sink_margin_rows
    >>> [row.holds for row in sink_margin_rows(np.random.default_rng(0), Proved())]
    [True]
    """
    proved = float(theorems[SINK_LABEL].steps[2].rhs.subs(sp.Symbol("w", positive=True), sp.Rational(9, 10)))
    others = np.full(4096, rng.standard_normal())
    weights = softmax(np.concatenate([[others[0] + float(sink_margin(4096, 0.9))], others]))
    return [rounding_row(SINK_LABEL, r"p_0, \; \Delta = \ln 4096 + \ln 9", proved, float(weights[0]), 1e-12)]


GATE_LABEL = "thm-gate-gradient"
GATED = "Qiu et al., Gated Attention for Large Language Models (arXiv:2505.06708)"


@theorem(GATE_LABEL, "An output gate scales the gradient entry by entry")
def gate_gradient() -> Proof:
    r"""Gating :math:`Y` by :math:`\sigma(z)` multiplies the gradient reaching :math:`Y` entry by entry by :math:`\sigma(z) \in (0, 1)`.

    Examples
    --------
    >>> from attention_scaling.site.released_models import gate_gradient
    >>> gate_gradient().counts()
    {'checked': 4, 'cited': 1, 'argued': 1, 'measured': 0}
    """
    y, z = sp.Symbol("Y", real=True), sp.Symbol("z", real=True)
    gated = sp.Symbol("Y'", real=True)
    sigma = 1 / (1 + sp.exp(-z))
    t = sp.Symbol(r"\sigma", positive=True)  # sigma(z), in (0, 1)
    steps = (
        cite(GATE_LABEL, gated, y * sigma, GATED, "Eq. 5, with z the head's entry of X W_theta"),
        check(GATE_LABEL, sp.Derivative(y * sigma, y), sigma, reason=r"the factor on the gradient that reaches $Y$"),
        check(GATE_LABEL, sp.Derivative(y * sigma, z), y * sigma * (1 - sigma), reason=r"$\partial Y' / \partial z$: the gate's gradient is this times $G$"),
        check(GATE_LABEL, t * (1 - t), sp.Rational(1, 4) - (t - sp.Rational(1, 2)) ** 2, reason=r"with $\sigma = \sigma(z)$"),
        check_inequality(GATE_LABEL, sp.Rational(1, 4) - (t - sp.Rational(1, 2)) ** 2, sp.Rational(1, 4), r"\le",
                         reason=r"so $\lvert \partial Y' / \partial z \rvert \le \lvert Y \rvert / 4$"),
        argue(GATE_LABEL, sp.Symbol(r"\text{gradient reaching the scores}"),
              sp.Symbol(r"\text{the ungated backward map applied to } G \odot \sigma(z)"),
              r"every path from the loss to the scores passes through $Y$; $G$ is the gradient that reaches $Y'$. "
              r"Only a gate with one value per row (per head and query) factors out of it as $\sigma(z)$"),
    )
    return Proof("An output gate scales the gradient entry by entry", GATE_LABEL,
                 ("the gate multiplies the attention output entry by entry by sigmoid(z)", "z does not depend on the scores"),
                 steps, results=(1, 2))


@dataclass(frozen=True)
class GatedHeads:
    r"""Seeded heads at a unit-variance initialisation: the gate :math:`\sigma(z)` and the scores' gradient with it over without it.

    ``gate_*`` are the median and 10th and 90th percentiles of
    :math:`\sigma(z)` over every entry; ``ratio_*`` those of the norm of the
    gradient reaching a head's scores with the gate over its norm without the
    gate, one per head. ``finite_difference_error`` is the relative
    difference between that gradient and central differences of the loss, on
    the first head, along one seeded direction. ``tenth_gate_logit`` is the :math:`z` at which the gate
    passes a tenth of the output, :math:`\ln(1/9)`, whatever the number of keys.
    """

    n_heads: int
    gate_median: float
    gate_low: float
    gate_high: float
    ratio_median: float
    ratio_low: float
    ratio_high: float
    finite_difference_error: float
    tenth_gate_logit: float


def _gated_head_loss(scores, v, gate_logits, upstream) -> float:
    return float(np.sum(upstream * sigmoid_gate(softmax(scores) @ v, gate_logits)))


def _score_gradient(scores, v, gate, upstream) -> np.ndarray:
    # Every factor of the chain rule: the gate (sigma(z), or 1 without it), the value product, the softmax's Jacobian.
    weights = softmax(scores)
    output_gradient = upstream * gate
    weight_gradient = output_gradient @ v.T
    return weights * (weight_gradient - np.sum(weights * weight_gradient, axis=-1, keepdims=True))


def gated_heads(n_heads: int = 200, n_tokens: int = 32, d_model: int = 64, d_k: int = 16, seed: int = 2505) -> GatedHeads:
    r"""The gradient reaching the scores of ``n_heads`` seeded heads, with Qiu et al.'s output gate and without it.

    Tokens have unit-variance entries and every weight matrix entries of
    variance :math:`1/d_{\text{model}}`, so :math:`q`, :math:`k`, :math:`v`
    and the gate logits :math:`z` have unit variance; the scores take the
    factor :math:`1/\sqrt{d_k}`, and the loss is :math:`\sum G \odot Y'` with
    :math:`G` standard normal.

    Raises
    ------
    ValueError
        For a size below 1.
    PageCheckError
        If the gradient differs from central differences of the loss by more
        than 1e-6 relative, on the first head.

    Examples
    --------
    >>> from attention_scaling.site.released_models import gated_heads
    >>> heads = gated_heads(n_heads=20)
    >>> 0 < heads.gate_low < heads.gate_median < heads.gate_high < 1
    True
    """
    if min(n_heads, n_tokens, d_model, d_k) < 1:
        raise ValueError(f"sizes must be at least 1; got {n_heads}, {n_tokens}, {d_model}, {d_k}")
    rng = np.random.default_rng(seed)
    gates, ratios, error = [], np.empty(n_heads), 0.0
    for head in range(n_heads):
        x = rng.standard_normal((n_tokens, d_model))
        w_q, w_k, w_v, w_gate = (rng.standard_normal((d_model, d_k)) / np.sqrt(d_model) for _ in range(4))
        scores, v, z = (x @ w_q) @ (x @ w_k).T / np.sqrt(d_k), x @ w_v, x @ w_gate
        upstream = rng.standard_normal((n_tokens, d_k))
        gate = sigmoid_gate(1.0, z)
        gradient = _score_gradient(scores, v, gate, upstream)
        ratios[head] = np.linalg.norm(gradient) / np.linalg.norm(_score_gradient(scores, v, 1.0, upstream))
        gates.append(gate.ravel())
        if head == 0:
            step, direction = 1e-5, rng.standard_normal(scores.shape)
            numeric = (_gated_head_loss(scores + step * direction, v, z, upstream)
                       - _gated_head_loss(scores - step * direction, v, z, upstream)) / (2 * step)
            error = abs(numeric - np.sum(gradient * direction)) / abs(numeric)
    tenth = float(np.log(0.1 / 0.9))
    require(error < 1e-6 and np.isclose(sigmoid_gate(1.0, tenth), 0.1, rtol=1e-12), "released-models-gated",
            "the scores' gradient agrees with central differences of the loss, and sigma(ln(1/9)) = 1/10",
            relative_error=error)
    gate = np.concatenate(gates)
    (gate_low, gate_median, gate_high), (ratio_low, ratio_median, ratio_high) = (
        np.quantile(values, [0.1, 0.5, 0.9]) for values in (gate, ratios))
    return GatedHeads(n_heads, float(gate_median), float(gate_low), float(gate_high), float(ratio_median),
                      float(ratio_low), float(ratio_high), float(error), tenth)


@register_evidence
def gate_gradient_rows(rng: np.random.Generator, theorems) -> list:
    """The gate's factor on the gradient, as proved: for one entry by central differences, and for a per-row gate.

    The first row takes central differences of :math:`Y'` in :math:`Y`; the
    second gives a seeded head one gate value per query and divides the norm
    of row 0 of the scores' gradient by its norm without the gate:
    :math:`\sigma(z_0)`, since such a gate factors out of the row.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.proofs import Proved
    >>> from attention_scaling.site.released_models import gate_gradient_rows
    >>> [row.holds for row in gate_gradient_rows(np.random.default_rng(0), Proved())]
    [True, True]
    """
    factor = theorems[GATE_LABEL].steps[1].rhs  # sigma(z), the proved factor on the gradient reaching Y
    z_value, y_value, step = float(rng.standard_normal()), float(rng.standard_normal()), 1e-6
    proved = float(factor.subs(sp.Symbol("z", real=True), z_value))
    numeric = float(sigmoid_gate(y_value + step, z_value) - sigmoid_gate(y_value - step, z_value)) / (2 * step)
    n_tokens, d_v = 16, 8
    scores, v, upstream = (rng.standard_normal(shape) for shape in ((n_tokens, n_tokens), (n_tokens, d_v), (n_tokens, d_v)))
    row_gate_logits = rng.standard_normal((n_tokens, 1))  # one gate value per query, shared by the row's entries
    gated = _score_gradient(scores, v, sigmoid_gate(1.0, row_gate_logits), upstream)
    ungated = _score_gradient(scores, v, 1.0, upstream)
    row_proved = float(factor.subs(sp.Symbol("z", real=True), float(row_gate_logits[0, 0])))
    return [rounding_row(GATE_LABEL, r"\partial Y' / \partial Y \text{ by central differences}", proved, numeric, 1e-8),
            rounding_row(GATE_LABEL, r"\text{per-row gate: row 0 of the scores' gradient, with over without}", row_proved,
                         np.linalg.norm(gated[0]) / np.linalg.norm(ungated[0]), 1e-12)]


CRITICAL_LABEL = "thm-critical-log-n"


@theorem(CRITICAL_LABEL, "Critical scaling grows like ln n", uses=("thm-needle-limit",))
def critical_log_n() -> Proof:
    r"""With unit tokens at pairwise cosine :math:`\rho` and factor :math:`\beta = \gamma \ln n`, a token's weight on itself tends to 1, 1/2 or 0.

    A token's weight on itself is the needle's weight of ``thm-needle-limit``
    with margin :math:`\Delta = 1 - \rho` and :math:`s = \gamma`; that
    theorem checks the three limits.

    Examples
    --------
    >>> from attention_scaling.site.released_models import critical_log_n
    >>> critical_log_n().counts()
    {'checked': 6, 'cited': 0, 'argued': 0, 'measured': 0}
    """
    n, beta, gamma = sp.Symbol("n", positive=True), sp.Symbol(r"\beta", positive=True), sp.Symbol(r"\gamma", positive=True)
    rho = sp.Symbol(r"\rho", nonnegative=True)
    weight = 1 / (1 + (n - 1) * sp.exp(-beta * (1 - rho)))
    at_gamma = 1 / (1 + (n - 1) * n ** (-gamma * (1 - rho)))
    steps = (
        check(CRITICAL_LABEL, sp.exp(beta) / (sp.exp(beta) + (n - 1) * sp.exp(beta * rho)), weight,
              reason=r"a token scores $\beta$ against itself and $\beta \rho$ against each of the $n - 1$ others"),
        check(CRITICAL_LABEL, sp.Subs(weight, beta, gamma * sp.log(n)), at_gamma,
              reason=r"$\beta = \gamma \ln n$: the needle's weight of Theorem 10.3, with $s \Delta = \gamma (1 - \rho)$"),
        check(CRITICAL_LABEL, sp.Subs(at_gamma, gamma, 1 / (1 - rho)), n / (2 * n - 1),
              reason=r"at $\gamma = 1/(1 - \rho)$, for $\rho < 1$"),
    ) + needle_limit().steps[4:7]  # Theorem 10.3's three limits, checked there, in its s Delta = gamma (1 - rho)
    return Proof("Critical scaling grows like ln n", CRITICAL_LABEL,
                 ("n unit tokens with pairwise cosine 0 <= rho < 1", "each token is its own query and key (W_Q = W_K = I)",
                  "the scores are beta times the cosines, beta = gamma ln n with gamma > 0"),
                 steps, results=(1, 3, 4, 5))


def _simplex_tokens(n: int, cosine: float) -> np.ndarray:
    # Row i is sqrt(rho) e_0 + sqrt(1 - rho) e_i: unit vectors whose pairwise cosines are exactly rho.
    tokens = np.zeros((n, n + 1))
    tokens[:, 0], tokens[:, 1:] = np.sqrt(cosine), np.sqrt(1 - cosine) * np.eye(n)
    return tokens


@register_evidence
def critical_log_n_rows(rng: np.random.Generator, theorems) -> list:
    """2,000 unit tokens at a seeded pairwise cosine, at the critical factor: a token's attention weight on itself.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.proofs import Proved
    >>> from attention_scaling.site.released_models import critical_log_n_rows
    >>> [row.holds for row in critical_log_n_rows(np.random.default_rng(0), Proved())]
    [True]
    """
    n, cosine = 2000, float(rng.uniform(0.1, 0.9))
    proved = float(theorems[CRITICAL_LABEL].steps[2].rhs.subs(sp.Symbol("n", positive=True), n))
    tokens = _simplex_tokens(n, cosine)
    weights = attention_weights(tokens[:1], tokens, scale=float(np.log(n) / (1 - cosine)))
    return [rounding_row(CRITICAL_LABEL, r"\text{self-weight}, \beta = \ln n / (1 - \rho), n = 2000", proved,
                         float(weights[0, 0]), 1e-12)]
