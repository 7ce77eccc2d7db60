r"""A register of published claims about the √d_k scaling, each with a check.

Every entry paraphrases one claim from one of the explanations the site
reviews (or from footnote 4 of Vaswani et al.), records the value as printed
where there is one, and has a check that returns an :class:`Outcome`. A check
decides the verdict in one of two ways, and the outcome records which:

* **computed**: it recomputes the printed numbers, or computes the property
  claimed, with this package (numerically, or symbolically with SymPy);
* **by a theorem**: a person matched the claim to one or more theorems of the
  site, and the check runs their proofs (a proof that fails fails the row)
  and shows the statement or the step that says what the claim says. That
  the theorem says what the claim says is a judgement made by hand, not a
  computation; the outcome names the theorems and the kinds of their steps.

The verdict follows from the outcome by two rules.

* **Numbers.** A published number is correct when it equals the computed value
  rounded to the digits shown: ``0.599`` stands for anything in
  [0.5985, 0.5995]. A list is correct when every entry is.
* **Verdicts.** A claim whose check fails *does not hold*, and the register
  says what is true instead. A claim whose check passes *holds*, unless it
  leaves out a condition it needs (recorded with the entry as a sufficient
  condition, "it holds if ..."): then it *holds under conditions*. A claim
  that what the check measures cannot decide (a bound for every input, seen
  at finitely many) is *not checked*, with the measurement beside it, unless
  the measurement refutes it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum

import numpy as np
import sympy as sp

from attention_scaling import proofs
from attention_scaling._softmax import softmax_jacobian
from attention_scaling.site import claim_checks as check
from attention_scaling.site.checks import require
# Re-exported: the register's outcomes and its tolerance rule are part of this module's API.
from attention_scaling.site.claim_checks import Basis, Outcome, TheoremBasis, matches_published
from attention_scaling.site.tables import markdown_table

__all__ = [
    "CLAIMS",
    "LATER",
    "LATER_SOURCES",
    "SOURCES",
    "STATED_PREMISES",
    "Assessment",
    "Basis",
    "Claim",
    "ClaimsSummary",
    "Outcome",
    "TheoremBasis",
    "Verdict",
    "assess_all",
    "by_source",
    "claims_summary",
    "basis_counts",
    "premises_table",
    "claims_table",
    "counts",
    "decided_by",
    "matches_published",
]


class Verdict(str, Enum):
    """The three verdicts a claim can get."""

    HOLDS = "holds"
    CONDITIONAL = "holds under conditions"
    FAILS = "does not hold"
    UNCHECKED = "not checked"


@dataclass(frozen=True)
class Claim:
    """One published claim.

    Attributes
    ----------
    key : str
        Stable identifier, ``<source>-<topic>``.
    source : str
        BibTeX key of the article.
    section : str
        Where in the article the claim is made.
    claim : str
        The claim, paraphrased.
    published : str or None
        The value as printed, for numeric claims.
    check : callable
        Called with ``published`` (None for a claim without a printed value);
        returns an :class:`Outcome`. The printed value is written once, in
        ``published``, so the check cannot test a different one.
    where : str
        Label of the page section or theorem that proves or computes it.
    assumptions : str or None
        A condition the claim leaves out and under which it holds: a
        sufficient condition, shown as "It holds if ...", never claimed to be
        necessary.
    unchecked : str or None
        Why what the check measures cannot decide the claim; then the verdict
        is "not checked" (unless the check refutes it), and the row says why.
    """

    key: str
    source: str
    section: str
    claim: str
    published: str | None
    check: Callable[[str | None], Outcome]
    where: str
    assumptions: str | None = None
    unchecked: str | None = None

    def __post_init__(self):
        # A claim without a check must stop the build, not pass silently.
        if not callable(self.check):
            raise TypeError(f"claim {self.key!r} has no check: got {self.check!r}")
        if self.source not in SOURCES + LATER_SOURCES:
            raise ValueError(f"claim {self.key!r} cites {self.source!r}, which is not one of {SOURCES + LATER_SOURCES}")
        if self.assumptions and _INIT in self.assumptions and self.source in STATED_PREMISES:
            raise ValueError(f"claim {self.key!r}: its source states the premise itself ({STATED_PREMISES[self.source][0]}, "
                             f"{STATED_PREMISES[self.source][1]}); judge the claim under it and drop the condition")

    @property
    def register_section(self) -> str:
        """The label of the Claims checked section that lists the claim.

        Examples
        --------
        >>> from attention_scaling.site.claims import CLAIMS
        >>> CLAIMS[0].register_section, CLAIMS[-1].register_section
        ('claims-division', 'claims-since-2017')
        """
        if self.source in LATER_SOURCES:
            return f"claims-{LATER}"
        return f"claims-{self.key.split('-')[0]}"

    def assess(self, theorems: Mapping | None = None) -> Assessment:
        """Run the check and derive the verdict.

        A check matched to theorems (:func:`.claim_checks.theorem`, which has
        ``labels``) reads their proofs from ``theorems``, a mapping such as
        :class:`attention_scaling.proofs.Proved`; by default it proves them.
        """
        if hasattr(self.check, "labels"):
            outcome = self.check(self.published, theorems)
        else:
            outcome = self.check(self.published)
        if not outcome.agrees:
            verdict = Verdict.FAILS
        elif self.unchecked:
            verdict = Verdict.UNCHECKED
        elif self.assumptions:
            verdict = Verdict.CONDITIONAL
        else:
            verdict = Verdict.HOLDS
        return Assessment(self, outcome, verdict)


@dataclass(frozen=True)
class Assessment:
    """A claim, what its check computed, and the verdict."""

    claim: Claim
    outcome: Outcome
    verdict: Verdict

    @property
    def basis(self) -> Basis:
        """The basis of the verdict, computed or by a theorem matched by hand (``Outcome.basis``)."""
        return self.outcome.basis

    @property
    def explanation(self) -> str:
        """The condition under which a conditional claim holds, or what is true instead of a failed one."""
        if self.verdict is Verdict.CONDITIONAL:
            return " ".join(part for part in (f"It holds if {self.claim.assumptions}.", self.outcome.note) if part)
        if self.verdict is Verdict.UNCHECKED:
            return " ".join(part for part in (f"Not checked: {self.claim.unchecked}.", self.outcome.note) if part)
        return self.outcome.note


# -- The register ------------------------------------------------------------------------------

D = "division-vs-subtraction"
R = "reddit-not-stability"
B = "book-section-5-3"
S = "shekhar-sqrt-dk"
G = "stabilizing-attention"
V = "vaswani2017attention"

#: Citation keys of the reviewed articles, in the order the site lists them.
SOURCES = (D, R, B, S, G, V)

#: Citation keys of the papers and model reports since 2017 whose numbers the site recomputes, and of public
#: restatements of them; their
#: claims share one table, :data:`LATER`, in which each row cites its source.
LATER_SOURCES = (
    "gemma2024gemma2",
    "henry2020query",
    "su2021entropy",
    "peng2024yarn",
    "chiang2022overcoming",
    "nakanishi2025scalable",
    "velickovic2024softmax",
    "dong2021attention",
    "noci2022signal",
    "kim2021lipschitz",
    "bzhng-yarn-summary",
    "edifice-ssmax",
    "poptropicasahil-yarn-notes",
)

#: The name of the table that holds the claims of :data:`LATER_SOURCES`.
LATER = "since-2017"

_INIT = "the components of q and k are independent with mean 0 and variance 1 (true at a unit-variance initialisation, not in general after training)"

#: The premise each reviewed source states itself, paraphrased, with where it does. A claim from such a
#: source is judged under that premise, so it gets no condition for it: "holds", not "holds under conditions".
STATED_PREMISES = {
    R: ("the components of $Q$ and $K$ are about zero-mean with unit variance at initialisation, and $q \\cdot k$ "
        "is a sum of $d_k$ independent products with variance 1", "body, second paragraph"),
    B: ("the components $q_i$ and $k_i$ are independent standard normals", "Variance Analysis, and the summary"),
    S: ("the values have mean 0 and variance 1, and $q$ and $k$ are independent", "Proving It Step by Step"),
    G: ("the elements of $Q$ and $K$ are independent with mean 0 and variance 1", "1. Variance of Dot Product"),
    V: ("the components of $q$ and $k$ are independent random variables with mean 0 and variance 1", "footnote 4"),
}

CLAIMS: tuple[Claim, ...] = (
    # -- 01: division vs subtraction --------------------------------------------------------
    Claim("division-scaled-scores", D, "Division vs. Subtraction",
          "Dividing the scores [100, 102, 103] by 10 gives [10.0, 10.2, 10.3].", "[10.0, 10.2, 10.3]",
          check.numbers(lambda: np.array([100.0, 102.0, 103.0]) / 10), "subtraction-division"),
    Claim("division-scaled-gaps", D, "Division vs. Subtraction",
          "After the division the gaps of 2 and 1 become 0.2 and 0.1.", "[0.2, 0.1]",
          check.numbers(lambda: np.diff(np.array([100.0, 102.0, 103.0]) / 10)),
          "subtraction-division"),
    Claim("division-shifted-scores", D, "Division vs. Subtraction",
          "Subtracting the maximum turns [100, 102, 103] into [-3, -1, 0] and keeps the gaps 2 and 1.",
          "[-3, -1, 0]", check.numbers(lambda: np.array([100.0, 102.0, 103.0]) - 103.0),
          "subtraction-stability"),
    Claim("division-ratios", D, "Preserving Proportions for Softmax",
          "Softmax relies on the ratios between scores (such as 102/100 = 1.02), which division preserves.",
          None, check.ratios_under_shift, "thm-softmax-shift-invariance"),
    Claim("division-three-unit-spread", D, "Preserving Proportions for Softmax",
          "Softmax turns the 3-unit spread [100, 102, 103] into [0.09, 0.24, 0.67].", "[0.09, 0.24, 0.67]",
          check.numbers(lambda: check.softmax_of(100, 102, 103),
                   check.printed_are_softmax_of(1, 2, 3)),
          "subtraction-stability"),
    Claim("division-balanced", D, "Preserving Proportions for Softmax",
          "After division by 10 the weights become the more balanced [0.30, 0.33, 0.37].", "[0.30, 0.33, 0.37]",
          check.numbers(lambda: check.softmax_of(10.0, 10.2, 10.3)), "subtraction-division"),
    Claim("division-subtraction-stability", D, "Key Insight",
          "Subtracting the maximum only ensures numerical stability and leaves the relative distances, and "
          "the weights, unchanged.", None, check.theorem("thm-softmax-shift-invariance", "thm-stable-softmax-bounds"),
          "thm-softmax-shift-invariance"),
    Claim("division-sqrt-not-dk", D, "Preserving Proportions for Softmax",
          "The variance grows linearly in d_k, so dividing by √d_k keeps the spread constant while dividing by "
          "d_k shrinks it too much.", None, check.theorem("thm-scaled-variance", step=check.gives(1 / proofs.d_k)),
          "thm-scaled-variance", _INIT),
    # -- 02: Reddit ----------------------------------------------------------------------------
    Claim("reddit-variance", R, "body",
          "With zero-mean, unit-variance components, the score q·k has variance d_k and standard deviation √d_k.",
          None, check.theorem("thm-dot-product-variance"), "thm-dot-product-variance"),
    Claim("reddit-std-64", R, "body", "At d_k = 64 the standard deviation of the scores is about 8.", "8",
          check.numbers(lambda: check.sqrt_of(64)), "thm-dot-product-variance"),
    Claim("reddit-easily", R, "body",
          "At d_k = 64, softmax input can easily look like [-20, 3, 25, -15].", None, check.extreme_scores_easily,
          "thm-dot-product-variance"),
    Claim("reddit-collapse", R, "body",
          "Softmax of scores like [-20, 3, 25, -15] is close to one-hot.", None,
          check.max_weight([-20, 3, 25, -15], 0.99), "saturation-onset"),
    Claim("reddit-small-gradients", R, "body",
          "For such scores the gradients at the non-maximal positions become extremely small.", None,
          check.tiny_gradients([-20, 3, 25, -15]), "thm-softmax-jacobian"),
    Claim("reddit-scaled-logits", R, "body",
          "Divided by √64 = 8 the scores become about [-2.5, 0.4, 3.1, -1.9].", "[-2.5, 0.4, 3.1, -1.9]",
          check.numbers(lambda: np.array([-20.0, 3.0, 25.0, -15.0]) / 8), "scaling-sqrt"),
    Claim("reddit-init-dependent", R, "body",
          "The right constant depends on the variance of the projected queries and keys at initialisation.",
          None, check.theorem("thm-dot-product-general-moments"), "thm-dot-product-general-moments"),
    Claim("reddit-xavier", R, "body",
          "1/√d_k is correct because Xavier initialisation keeps the projections near unit variance.", None,
          check.xavier_layouts, "initialisation-schemes",
          "W_Q and W_K are each initialised as a square E × E matrix (fan-in equal to fan-out), not as blocks "
          "of PyTorch's packed in-projection nor as one E × d_k matrix per head"),
    Claim("reddit-not-stability", R, "title",
          "The scaling is not about numerical stability: the maximum-subtraction already prevents overflow.",
          None, check.overflow_in_float16, "subtraction-division",
          "the scores q·k themselves are formed without overflow (in float32 or bfloat16, or in float16 "
          "while every score stays within its range), so that only the exponentials of softmax could overflow"),
    # -- 03: book section 5.3 ---------------------------------------------------------------------
    Claim("book-product-variance", B, "Variance Analysis",
          "For independent X, Y ~ N(0, 1), Var(XY) = 1.", None, check.product_of_standard_normals,
          "lem-product-variance"),
    Claim("book-variance-linear", B, "Variance Analysis",
          "For independent standard normal components, Var(q·k) = d_k.", None,
          check.theorem("thm-dot-product-variance"), "thm-dot-product-variance"),
    Claim("book-std-64", B, "Why This Matters", "For d_k = 64 the standard deviation of the scores is √64 = 8.",
          "8", check.numbers(lambda: check.sqrt_of(64)), "thm-dot-product-variance"),
    Claim("book-peaked-example", B, "Why This Matters",
          "Scores [8.5, -2.1, 7.9, …] give weights of about [0.99, 0.00, 0.01, …].", "[0.99, 0.00, 0.01]",
          check.numbers(lambda: check.softmax_of(8.5, -2.1, 7.9),
                   lambda _published: "Further positions add to the denominator and can only lower the first weight."),
          "saturation-onset"),
    Claim("book-unscaled-five", B, "Visualizing the Effect",
          "Softmax of [9.2, -3.1, 8.8, -5.4, 1.2] is [0.599, 0.000, 0.401, 0.000, 0.000].",
          "[0.599, 0.000, 0.401, 0.000, 0.000]",
          check.numbers(lambda: check.softmax_of(9.2, -3.1, 8.8, -5.4, 1.2)),
          "saturation-onset"),
    Claim("book-scaled-five", B, "Visualizing the Effect",
          "Divided by 8 those scores are [1.15, -0.39, 1.10, -0.68, 0.15].", "[1.15, -0.39, 1.10, -0.68, 0.15]",
          check.numbers(lambda: np.array([9.2, -3.1, 8.8, -5.4, 1.2]) / 8),
          "scaling-sqrt"),
    Claim("book-scaled-weights", B, "Visualizing the Effect",
          "Softmax of the scaled scores is [0.31, 0.07, 0.30, 0.05, 0.12].", "[0.31, 0.07, 0.30, 0.05, 0.12]",
          check.numbers(lambda: check.softmax_of(*(np.array([9.2, -3.1, 8.8, -5.4, 1.2]) / 8)),
                   check.printed_sum),
          "scaling-sqrt"),
    Claim("book-unit-variance", B, "Why √d_k Works", "At d_k = 64, Var(q·k/8) = 1.", None,
          check.unit_variance_after_scaling, "thm-scaled-variance"),
    Claim("book-jacobian", B, "Gradient Flow", "∂softmax(x)_i/∂x_j = softmax(x)_i (δ_ij − softmax(x)_j).", None,
          check.theorem("thm-softmax-jacobian"), "thm-softmax-jacobian"),
    Claim("book-one-hot-gradient", B, "Gradient Flow",
          "When softmax is close to [1, 0, 0, …] the gradients are close to 0.", "[0, 0, 0, 0]",
          check.numbers(lambda: np.diag(softmax_jacobian(np.array([1.0, 0.0, 0.0, 0.0])))),
          "thm-softmax-jacobian"),
    Claim("book-healthy-gradient", B, "Gradient Flow",
          "When softmax is [0.3, 0.3, 0.2, 0.2] the gradients are about [0.21, 0.21, 0.16, 0.16].",
          "[0.21, 0.21, 0.16, 0.16]",
          check.numbers(lambda: np.diag(softmax_jacobian(np.array([0.3, 0.3, 0.2, 0.2])))),
          "thm-softmax-jacobian"),
    Claim("book-temperature", B, "Temperature Scaling",
          "A temperature below √d_k sharpens attention and one above softens it.", None, check.temperature_order,
          "regimes-temperature"),
    Claim("book-stable-softmax", B, "Numerical Stability",
          "Subtracting the maximum prevents overflow and gives the same result.", None,
          check.theorem("thm-softmax-shift-invariance", "thm-stable-softmax-bounds"), "subtraction-stability"),
    Claim("book-universal", B, "Connection to Modern LLMs", "Modern LLMs universally use √d_k scaling.", None,
          check.not_universal, "bounded-soft-capping"),
    # -- 04: Shekhar ------------------------------------------------------------------------------
    Claim("shekhar-exp-small", S, "What Large Dot Products Do to Softmax",
          "e^1 = 2.718, e^5 = 148.4, e^10 = 22,026, e^20 = 485,165,195.", "[2.718, 148.4, 22,026, 485,165,195]",
          check.numbers(check.exp_values(1, 5, 10, 20)), "subtraction-stability"),
    Claim("shekhar-exp-50", S, "What Large Dot Products Do to Softmax",
          "e^50 = 5,184,705,528,587,072,045.", "5,184,705,528,587,072,045",
          check.exact_exp(50), "subtraction-stability"),
    Claim("shekhar-softmax-50-10-5", S, "What Large Dot Products Do to Softmax",
          "Softmax of [50, 10, 5] is about [1.0, 0.0, 0.0].", "[1.0, 0.0, 0.0]",
          check.numbers(lambda: check.softmax_of(50, 10, 5)), "saturation-onset"),
    Claim("shekhar-softmax-5-1-half", S, "What Large Dot Products Do to Softmax",
          "Softmax of [5, 1, 0.5] is [0.971, 0.018, 0.011] (the exponentials sum to 152.780).",
          "[0.971, 0.018, 0.011, 152.780]",
          check.numbers(lambda: [*check.softmax_of(5, 1, 0.5), float(np.exp([5, 1, 0.5]).sum())]),
          "saturation-onset"),
    Claim("shekhar-variance-exact", S, "Proving It Step by Step",
          "The variance of the dot product is exactly d_k, not an approximation.", None,
          check.theorem("thm-dot-product-variance"), "thm-dot-product-variance"),
    Claim("shekhar-term-count", S, "Proving It Step by Step",
          "At d_k = 64 the squared dot product has 4096 terms: 64 with mean 1 and 4032 with mean 0, so the "
          "variance is 64.", "[4096, 64, 4032, 64]", check.numbers(lambda: check.count_terms(64)),
          "thm-dot-product-variance"),
    Claim("shekhar-scaled-variance", S, "Why √dₖ is the Right Scaling Factor",
          "Dividing a random variable by c divides its variance by c².", None, check.theorem("thm-scaled-variance"),
          "thm-scaled-variance"),
    Claim("shekhar-variance-example", S, "Why √dₖ is the Right Scaling Factor",
          "[2, 4, 6] has variance 2.67; halved, [1, 2, 3] has variance 0.67 = 2.67 / 4.", "[2.67, 0.67]",
          check.numbers(lambda: [check.population_variance([2, 4, 6]), check.population_variance([1, 2, 3])]),
          "thm-scaled-variance"),
    Claim("shekhar-exact-reason", S, "Why √dₖ is the Right Scaling Factor",
          "√d_k is the mathematically correct scaling factor, and Vaswani et al. chose it for exactly this reason.",
          None, check.the_paper_suspects, "thm-dot-product-general-moments"),
    Claim("shekhar-small-example", S, "Seeing It with Real Numbers",
          "q = [1, 0, 1, 0], k = [0, 1, 1, 1] give q·k = 1 and a scaled score of 0.5.", "[1, 0.5]",
          check.numbers(lambda: [float(np.dot([1, 0, 1, 0], [0, 1, 1, 1])),
                                        float(np.dot([1, 0, 1, 0], [0, 1, 1, 1])) / 2]),
          "scaling-sqrt"),
    Claim("shekhar-unscaled-three", S, "Seeing It with Real Numbers",
          "Softmax of [14, 10, 12] is [0.867, 0.016, 0.117].", "[0.867, 0.016, 0.117]",
          check.numbers(lambda: check.softmax_of(14, 10, 12)), "saturation-onset"),
    Claim("shekhar-unscaled-exps", S, "Seeing It with Real Numbers",
          "e^14 = 1,202,604, e^10 = 22,026, e^12 = 162,755, summing to 1,387,386.",
          "[1,202,604, 22,026, 162,755, 1,387,386]",
          check.numbers(lambda: [*np.exp([14.0, 10.0, 12.0]), float(np.exp([14.0, 10.0, 12.0]).sum())]),
          "saturation-onset"),
    Claim("shekhar-scaled-three", S, "Seeing It with Real Numbers",
          "Divided by 8, the scores [1.75, 1.25, 1.5] give [0.419, 0.254, 0.326].", "[0.419, 0.254, 0.326]",
          check.numbers(lambda: check.softmax_of(1.75, 1.25, 1.5)), "scaling-sqrt"),
    Claim("shekhar-grows", S, "Why Do Dot Products Grow with dₖ?",
          "The dot product grows in magnitude as d_k grows.", None, check.dot_product_grows, "variance-numeric"),
    # -- 05: stabilizing attention scores -------------------------------------------------------
    Claim("stabilizing-variance", G, "1. Variance of Dot Product",
          "With independent, zero-mean, unit-variance components, Var(Q_i·K_j) = d_k.", None,
          check.theorem("thm-dot-product-variance"), "thm-dot-product-variance"),
    Claim("stabilizing-over-scaled", G, "3. Why Not d_k?", "Dividing by d_k leaves a variance of 1/d_k.", None,
          check.theorem("thm-scaled-variance", step=check.gives(1 / proofs.d_k)), "thm-scaled-variance"),
    Claim("stabilizing-uniform", G, "3. Why Not d_k?",
          "Dividing by d_k makes softmax nearly uniform, with weights close to 1/n, when d_k is large.", None,
          check.flat_with_linear_scaling, "regimes-three"),
    Claim("stabilizing-instability", G, "3. Why Not d_k?",
          "Dividing by d_k could cause numerical instability, since very small values are harder to handle "
          "in floating point.", None, check.bfloat16_near_uniform, "scaling-why-not-dk"),
    Claim("stabilizing-unit-variance", G, "4. Why √d_k?", "Var(QKᵀ/√d_k) = Var(QKᵀ)/d_k = 1.", None,
          check.theorem("thm-scaled-variance", step=check.gives(1, lhs_has=1 / sp.sqrt(proofs.d_k))), "thm-scaled-variance"),
    # -- Vaswani et al., footnote 4 ----------------------------------------------------------------
    Claim("vaswani-footnote", V, "§3.2.1, footnote 4",
          "If the components of q and k are independent with mean 0 and variance 1, q·k has mean 0 and "
          "variance d_k.", None, check.theorem("thm-dot-product-variance"), "thm-dot-product-variance"),
    Claim("vaswani-suspect", V, "§3.2.1",
          "For large d_k, unscaled dot products push softmax into regions with extremely small gradients.",
          None, check.vanishing_with_d_k, "saturation-distribution",
          "the gradients meant are those of softmax with respect to its input in a typical (median) query row, "
          "not the mean over rows nor the gradient with respect to the raw score q·k"),
    # -- depth: rank collapse and the Lipschitz constant ---------------------------------------------
    Claim("dong-doubly-exponential", "dong2021attention", "Abstract",
          "Without skip connections or MLPs, the output of self-attention converges doubly exponentially with "
          "depth to a rank-1 matrix.", None, check.collapse_is_doubly_exponential, "depth-rank-collapse",
          unchecked="the residual reaches float64's floor within a few layers, so the fit that would tell doubly "
          "from singly exponential rests on 3 to 8 points, as few as one degree of freedom; the row shows that fit, "
          "at a random initialisation (16 tokens, d = 64, 16 seeds, each scale)"),
    Claim("dong-skips", "dong2021attention", "Abstract",
          "Skip connections stop the output from degenerating to rank 1.", None, check.skips_stop_collapse,
          "depth-rank-collapse", "'stop' is read as preventing the doubly exponential collapse within the "
          "depth measured (24 layers), not as keeping the residual from falling"),
    Claim("noci-vanishing-gradients", "noci2022signal", "Abstract",
          "Rank collapse makes the gradients of the queries and keys vanish at initialisation.", None,
          check.collapsed_queries_get_no_gradient, "depth-rank-collapse",
          "the tokens entering the layer have collapsed (identical rows, or nearly so); measured for one layer "
          "at a random initialisation, not in a trained network"),
    Claim("kim-not-lipschitz", "kim2021lipschitz", "Abstract",
          "Dot-product self-attention is not Lipschitz on an unbounded input domain.", None,
          check.theorem("thm-dot-product-not-lipschitz"), "thm-dot-product-not-lipschitz"),
    Claim("kim-l2-lipschitz", "kim2021lipschitz", "Abstract",
          "L2 self-attention is Lipschitz.", None, check.l2_norms_stay_bounded, "depth-lipschitz",
          unchecked="finitely many points cannot show a bound for every input; the row shows the Jacobian at the "
          "points measured (tied identity weights), and the proof for every input is Kim et al.'s"),
    # -- Temperatures for longer contexts (long-sequences.md) ---------------------------------------
    Claim("su2021entropy-512", "su2021entropy", "choice of the constant",
          "With the scale (log₅₁₂ n)/√d the logits at n = 512 are scaled exactly as by 1/√d: the factor "
          "log₅₁₂ 512 is 1.", None, check.theorem("thm-length-temperatures", step=check.gives(1, lhs_has=sp.Integer(512))),
          "thm-length-temperatures"),
    Claim("peng2024yarn-both-sides", "peng2024yarn", "§3.4",
          "Scaling both q and k by √(1/t) = 0.1 ln s + 1 divides the attention logits by t, i.e. multiplies "
          "them by (0.1 ln s + 1)².", None, check.yarn_both_sides, "thm-length-temperatures"),
    Claim("bzhng-yarn-summary-power", "bzhng-yarn-summary", "L68, quoting Eq. 22",
          "YaRN's Eq. 22 reads 1/t = 0.1 ln(s) + 1: the attention logits are divided by t, so multiplied by "
          "0.1 ln s + 1.", None, check.yarn_factor_once, "released-models-yarn"),
    Claim("poptropicasahil-yarn-softens", "poptropicasahil-yarn-notes", "L555, L562 and L567–569",
          "YaRN divides the logits by t√D with t = √(1/s) = 0.1 ln(s) + 1; by softening the softmax, this higher "
          "temperature makes the model attend to more tokens rather than focusing sharply.", None, check.yarn_softens,
          "released-models-yarn"),
    Claim("edifice-ssmax-subtraction", "edifice-ssmax", "module documentation, L9 and L20",
          "SSMax(x)_i = exp(x_i − s·log n) / Σ_j exp(x_j − s·log n), and s > 0 makes attention sharper for "
          "longer sequences.", None, check.ssmax_as_subtraction, "long-shift"),
    Claim("chiang2022overcoming-log-length", "chiang2022overcoming", "log-length scaled attention",
          "Multiplying the attention logits by log n lets one position keep its attention weight as the "
          "length n grows, where a fixed scale lets it fade.", None,
          check.theorem("thm-needle-limit", step=check.gives(1, lhs_has=sp.Symbol(r"\epsilon", positive=True))),
          "thm-needle-limit",
          "the position exceeds each of the others, which tie, by a margin Δ whose product with the constant "
          "in front of log n is above 1"),
    Claim("nakanishi2025scalable-fading-max", "nakanishi2025scalable", "abstract",
          "The maximum element of the output of softmax approaches zero as the input vector size increases.",
          None, check.max_weight_fades, "long-temperatures-measured",
          "the scale and the spread of the inputs stay fixed as the size grows (here: independent N(0, 1) "
          "inputs); a scale that grows with the size, as in Scalable-Softmax, can keep it away from zero"),
    # -- Bounded logits (bounded-logits.md) --------------------------------------------------------
    Claim("gemma2024gemma2-27b-scalar", "gemma2024gemma2", "model configuration, query_pre_attn_scalar",
          "Gemma 2 27B scales its queries by query_pre_attn_scalar^(-1/2) with query_pre_attn_scalar = 144: "
          "its width over its heads, not its head dimension.", "144", check.gemma_query_scalar,
          "bounded-soft-capping"),
    Claim("gemma2024gemma2-soft-cap", "gemma2024gemma2", "§2, logit soft-capping",
          "Soft-capping, logits ← C·tanh(logits/C), keeps every logit within ±C (C = 50 in attention, 30 for "
          "the final logits).", None, check.theorem("thm-soft-cap-bound", step=check.gives(sp.Symbol("C", positive=True))),
          "thm-soft-cap-bound"),
    Claim("velickovic2024softmax-dispersion", "velickovic2024softmax", "abstract",
          "When the logits stay in a bounded range, the attention weights disperse: each tends to 0 as the "
          "number of items grows.", None, check.theorem("thm-dispersion", step=check.gives(0)), "thm-dispersion"),
)


def assess_all(theorems: Mapping | None = None) -> list[Assessment]:
    """Assess every claim in the register, proving each theorem a claim was matched to once.

    Parameters
    ----------
    theorems : attention_scaling.proofs.Proved, optional
        Proved results to read from; by default they are proved here, each once.

    Examples
    --------
    >>> from attention_scaling.site.claims import Verdict, assess_all
    >>> verdicts = {a.claim.key: a.verdict for a in assess_all()}
    >>> verdicts["book-scaled-weights"] is Verdict.FAILS
    True
    """
    theorems = proofs.Proved() if theorems is None else theorems
    return [claim.assess(theorems) for claim in CLAIMS]


def _reference(label: str) -> str:
    role = "prf:ref" if label.startswith(("thm-", "lem-")) else "ref"
    return f"{{{role}}}`{label}`"


def _kinds(counts: dict[str, int]) -> str:
    """Step counts in words: "5 checked, 1 argued"."""
    return ", ".join(f"{count} {kind}" for kind, count in counts.items() if count) or "no steps"


def decided_by(outcome: Outcome) -> str:
    """The table's "how decided" cell: computed, or the theorems matched by hand and how their proofs fared.

    Examples
    --------
    >>> from attention_scaling.site.claims import Outcome, TheoremBasis, decided_by
    >>> decided_by(Outcome("8", True))
    'computed'
    >>> decided_by(Outcome("…", True, theorems=(TheoremBasis("thm-x", {"checked": 5, "cited": 1}),)))
    'by {prf:ref}`thm-x` (proof: 5 checked, 1 cited), matched by hand'
    """
    if outcome.basis is Basis.COMPUTED:
        return "computed"
    parts = [
        f"{_reference(theorem.label)} (proof: {_kinds(theorem.counts) if theorem.proved else 'failed'})"
        for theorem in outcome.theorems
    ]
    return f"by {' and '.join(parts)}, matched by hand"


def premises_table() -> str:
    """The premise each reviewed source states itself, and where: the Claims checked page's rules show it.

    Examples
    --------
    >>> from attention_scaling.site.claims import premises_table
    >>> print(premises_table().splitlines()[2])
    | {cite:t}`reddit-not-stability` | the components of $Q$ and $K$ are about zero-mean with unit variance at initialisation, and $q \\cdot k$ is a sum of $d_k$ independent products with variance 1 | body, second paragraph |
    """
    rows = [[f"{{cite:t}}`{source}`", premise, where] for source, (premise, where) in STATED_PREMISES.items()]
    return markdown_table(["source", "premise it states", "where"], rows, plain=(2,))


def claims_table(assessments: Sequence[Assessment], cite: bool = False) -> str:
    """The assessments (usually of one source) as a MyST Markdown table.

    After the claim come its verdict and how that was decided
    (:func:`decided_by`, with a link to the theorem or section that proves or
    computes the value, unless that is the theorem already named); the
    published and computed values, which can be wide, come last.

    Parameters
    ----------
    assessments : sequence of Assessment
        The rows, in order.
    cite : bool
        Name each claim's source in its first cell, for a table that mixes
        sources (the claims of :data:`LATER_SOURCES`).

    Examples
    --------
    >>> from attention_scaling.site.claims import CLAIMS, claims_table
    >>> table = claims_table([CLAIMS[0].assess()]).splitlines()
    >>> table[0]
    '| claim | verdict | how decided | published → computed |'
    >>> table[2].split(" | ")[2]
    'computed; see {ref}`subtraction-division`'
    """
    rows = []
    for assessment in assessments:
        claim = assessment.claim
        verdict = f"**{assessment.verdict.value}**"
        if assessment.explanation:
            verdict += f"<br>{assessment.explanation}"
        values = assessment.outcome.computed
        if claim.published:
            values = f"{claim.published} → {values}"
        decided = decided_by(assessment.outcome)
        if claim.where not in {theorem.label for theorem in assessment.outcome.theorems}:
            decided += f"; see {_reference(claim.where)}"
        where = f"{{cite:t}}`{claim.source}`, {claim.section}" if cite else claim.section
        rows.append([f"{claim.claim} ({where})", verdict, decided, values])
    # The claims, the reasons for a verdict and the values are quoted or written as the sources
    # write them, in plain text: only how each was decided is the site's own markup.
    return markdown_table(["claim", "verdict", "how decided", "published → computed"], rows, plain=(0, 1, 3))


def by_source(assessments: Sequence[Assessment]) -> dict[str, list[Assessment]]:
    """The assessments grouped as the page shows them: by reviewed source, in the order of
    :data:`SOURCES`, then every claim of :data:`LATER_SOURCES` under :data:`LATER`."""
    grouped = {source: [a for a in assessments if a.claim.source == source] for source in SOURCES}
    grouped[LATER] = [a for a in assessments if a.claim.source in LATER_SOURCES]
    return grouped


def counts(assessments: Sequence[Assessment]) -> tuple[Counter, Counter]:
    """How many claims per source and per verdict."""
    return Counter(a.claim.source for a in assessments), Counter(a.verdict for a in assessments)


def basis_counts(assessments: Sequence[Assessment]) -> Counter:
    """How many verdicts were computed, and how many rest on a theorem matched by hand."""
    return Counter(a.basis for a in assessments)


@dataclass(frozen=True)
class ClaimsSummary:
    """What the Claims checked page shows of the register: counts and one table per source.

    Attributes
    ----------
    total : int
        Claims assessed.
    holds, conditional, fails, unchecked : int
        Claims with each verdict.
    computed, by_theorem : int
        Verdicts computed, and verdicts resting on a theorem matched by hand.
    per_source : dict of str to int
        Claims per source, in the order of ``SOURCES``, then the count of
        claims from ``LATER_SOURCES`` under ``LATER``.
    tables : tuple of (str, str)
        Each reviewed source's claims, and then the claims since 2017 (under
        ``LATER``), as MyST Markdown tables (:func:`claims_table`).
    """

    total: int
    holds: int
    conditional: int
    fails: int
    unchecked: int
    computed: int
    by_theorem: int
    per_source: dict[str, int]
    tables: tuple[tuple[str, str], ...]

    def table(self, source: str) -> str:
        """The table of one source's claims."""
        tables = dict(self.tables)
        if source not in tables:
            raise ValueError(f"source must be one of {tuple(tables)}; got {source!r}")
        return tables[source]


def claims_summary(assessments: Sequence[Assessment]) -> ClaimsSummary:
    """Count the assessments and render one table per source, for the Claims checked page.

    Parameters
    ----------
    assessments : sequence of Assessment
        Usually ``assess_all()``.

    Returns
    -------
    ClaimsSummary

    Raises
    ------
    RuntimeError
        A ``PageCheckError`` when what the page states of the register does
        not hold: a claim is assessed twice, a reviewed source has no claim,
        or the tables do not show every claim exactly once.

    Examples
    --------
    >>> from attention_scaling.site.claims import CLAIMS, SOURCES, claims_summary
    >>> first_of_each = [next(claim for claim in CLAIMS if claim.source == source) for source in SOURCES]
    >>> summary = claims_summary([claim.assess() for claim in first_of_each])
    >>> summary.total, summary.holds + summary.conditional + summary.fails + summary.unchecked, summary.computed + summary.by_theorem
    (6, 6, 6)
    >>> summary.table("book-section-5-3").splitlines()[0]
    '| claim | verdict | how decided | published → computed |'
    """
    where = "claims.md, claims-summary"
    keys = [assessment.claim.key for assessment in assessments]
    repeated = sorted({key for key in keys if keys.count(key) > 1})
    require(not repeated, where, "every claim is assessed once", repeated=repeated)
    per_source, per_verdict = counts(assessments)
    empty = [source for source in SOURCES if per_source[source] == 0]
    require(not empty, where, "every reviewed source has a claim in the register", sources_without_claims=empty)
    grouped = by_source(assessments)
    tables = tuple((group, claims_table(rows, cite=group == LATER)) for group, rows in grouped.items())
    shown = sum(len(table.splitlines()) - 2 for _, table in tables)
    require(shown == len(assessments), where, "the tables show every claim exactly once",
            rows=shown, claims=len(assessments))
    per_basis = basis_counts(assessments)
    return ClaimsSummary(
        total=len(assessments),
        holds=per_verdict[Verdict.HOLDS],
        conditional=per_verdict[Verdict.CONDITIONAL],
        fails=per_verdict[Verdict.FAILS],
        unchecked=per_verdict[Verdict.UNCHECKED],
        computed=per_basis[Basis.COMPUTED],
        by_theorem=per_basis[Basis.THEOREM],
        per_source={group: len(rows) for group, rows in grouped.items()},
        tables=tables,
    )
