"""The theorems of long-sequences.md: how each step is known, what it prints, and false claims caught."""

import dataclasses

import pytest
import sympy as sp

from attention_scaling import proofs
from attention_scaling.proofs import ProofError, check

# Planted faults replace the names that the theorems' own module calls.
long_sequences = proofs.long_sequences
s, n = long_sequences.spread, long_sequences.length
LOG_N = sp.Symbol(r"\ln n", positive=True)


# -- How each step is known -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prove", "counts"),
    [
        (proofs.gaussian_logit_moments, {"checked": 9, "cited": 0, "argued": 0, "measured": 0}),
        (proofs.gaussian_max_bound, {"checked": 5, "cited": 1, "argued": 3, "measured": 0}),
        (proofs.needle_limit, {"checked": 7, "cited": 0, "argued": 0, "measured": 0}),
    ],
)
def test_step_kinds(prove, counts):
    proof = prove()
    assert proof.counts() == counts
    assert proof.status == ("checked" if counts["cited"] == counts["argued"] == 0 else "cited")
    assert all(step.kind == "checked" for step in proof.cross_checks)


def test_the_jensen_step_is_cited_with_its_source_and_locator():
    jensen = proofs.gaussian_max_bound().steps[0]
    assert jensen.kind == "cited" and jensen.relation == r"\le"
    assert jensen.basis == "Cover and Thomas (2006), Thm 2.6.2"
    assert jensen.marker() == r"\text{[cited]}" and jensen.note().endswith("Cover and Thomas (2006), Thm 2.6.2")
    assert jensen.latex() == (r"e^{t \mathbb{E}\left[{\max_{i} X_{i}}\right]} \le "
                              r"\mathbb{E}\left[e^{t {\max_{i} X_{i}}}\right]")


def test_the_max_bound_says_which_steps_are_argued():
    steps = proofs.gaussian_max_bound().steps
    argued = [index for index, step in enumerate(steps) if step.kind == "argued"]
    assert argued == [1, 3, 8]
    assert all(steps[index].basis for index in argued)
    # The statement is the last, argued step: the page must not call the theorem checked.
    assert proofs.gaussian_max_bound().results == (-1,)


def test_no_shown_strings_and_no_direct_steps_in_the_module():
    source = (long_sequences.__file__)
    text = open(source, encoding="utf-8").read()
    assert "shown=" not in text and "Step(" not in text and "result_index" not in text


# -- What the steps print -------------------------------------------------------------------------


def test_statements_are_printed_from_the_result_steps():
    moments = proofs.gaussian_logit_moments()
    assert moments.results == (2, 6)
    assert moments.statement == r", \qquad ".join(moments.steps[index].latex() for index in (2, 6))
    assert moments.statement.startswith(r"\mathbb{E}\left[e^{t {X}}\right] = e^{\frac{\sigma^{2} t^{2}}{2}}, \qquad")
    assert proofs.gaussian_max_bound().statement == r"\mathbb{E}\left[{\max_{i} X_{i}}\right] \le \sigma \sqrt{2 \ln n}"
    needle = proofs.needle_limit()
    assert needle.statement == needle.steps[0].latex()


def test_the_checked_sides_print_in_the_page_notation():
    moments = proofs.gaussian_logit_moments()
    latex = [step.latex() for step in moments.steps + moments.cross_checks]
    assert latex[0].startswith(r"e^{t x} \varphi_{\sigma}\left(x\right) =")
    assert latex[1].startswith(r"\int\limits_{-\infty}^{\infty} \varphi_{\sigma}")
    assert r"\ln\left(n \mathbb{E}\left[e^{{X}}\right]\right)" in latex[7]
    assert latex[-1].startswith(r"\left. \frac{d}{d t} M_X\left(t\right) \right|_{\substack{ t=1 }}")
    bound = [step.latex() for step in proofs.gaussian_max_bound().steps]
    assert bound[2].startswith(r"\sum_{i=1}^{n} \mathbb{E}\left[e^{t {X_{i}}}\right] =")
    assert bound[6].startswith(r"\frac{\partial^{2}}{\partial t^{2}}")
    needle = [step.latex() for step in proofs.needle_limit().steps]
    assert all(needle[index].startswith(r"\lim_{n \to \infty}") for index in (1, 4, 5, 6))


def test_the_expectations_are_unevaluated_until_checked():
    step = proofs.gaussian_logit_moments().steps[6]
    assert isinstance(step.lhs, long_sequences._GaussianMean)
    assert sp.simplify(step.lhs.doit() - s**2 * sp.exp(s**2 / 2)) == 0


# -- False claims are caught ----------------------------------------------------------------------


def test_a_density_that_does_not_integrate_to_one_fails_the_moments_theorem(monkeypatch):
    # Drop the 1/sqrt(2 pi) of the normal density: the "density" now has mass sqrt(2 pi).
    monkeypatch.setattr(long_sequences, "_normal_density", lambda x, mean=0: sp.exp(-((x - mean) ** 2) / (2 * s**2)) / s)
    with pytest.raises(ProofError, match="^thm-gaussian-logit-moments"):
        proofs.gaussian_logit_moments()


def test_false_gaussian_moments_are_caught():
    weighted = proofs.gaussian_logit_moments().steps[6].lhs  # E[X e^X], unevaluated
    with pytest.raises(ProofError, match="^thm-gaussian-logit-moments"):
        check("thm-gaussian-logit-moments", weighted, s**2 * sp.exp(s**2))
    with pytest.raises(ProofError, match="^thm-gaussian-logit-moments"):
        check("thm-gaussian-logit-moments", sp.log(n * sp.exp(s**2 / 2)) - s**2, sp.log(n) + s**2 / 2)


def test_a_wrong_moment_generating_function_fails_the_cross_check(monkeypatch):
    # sympy.stats' route must agree: a normal of spread 2s gives another M_X.
    monkeypatch.setattr(long_sequences._MomentGenerating, "doit", lambda self, **hints: sp.exp(2 * self.args[0] ** 2 * s**2))
    with pytest.raises(ProofError, match="^thm-gaussian-logit-moments"):
        proofs.gaussian_logit_moments()


def test_false_max_bound_is_caught():
    t = sp.Symbol("t", positive=True)
    at_best = sp.Subs(LOG_N / t + t * s**2 / 2, t, sp.sqrt(2 * LOG_N) / s)
    with pytest.raises(ProofError, match="^thm-gaussian-max-bound"):
        check("thm-gaussian-max-bound", at_best, s * sp.sqrt(LOG_N))


def test_a_wrong_minimiser_or_a_concave_bound_is_caught():
    t = sp.Symbol("t", positive=True)
    bound = LOG_N / t + t * s**2 / 2
    with pytest.raises(ProofError, match="^thm-gaussian-max-bound"):
        check("thm-gaussian-max-bound", sp.Subs(sp.Derivative(bound, t), t, sp.sqrt(LOG_N) / s), 0)
    with pytest.raises(ProofError, match="^thm-gaussian-max-bound"):
        proofs.engine.check_inequality("thm-gaussian-max-bound", sp.Derivative(LOG_N * t - t**3, (t, 2)), 0, ">")


def test_a_wrong_minimiser_fails_the_max_bound(monkeypatch):
    # sqrt(ln n) / s in place of sqrt(2 ln n) / s: no longer a stationary point, so the proof stops.
    original = sp.sqrt
    monkeypatch.setattr(sp, "sqrt", lambda x, *args: original(x / 2) if x == 2 * LOG_N else original(x, *args))
    with pytest.raises(ProofError, match="^thm-gaussian-max-bound"):
        proofs.gaussian_max_bound()


def test_a_wrong_expectation_of_the_sum_fails_the_max_bound(monkeypatch):
    # A density of spread 2s makes the sum of expectations n e^{2 t^2 s^2}, not n e^{t^2 s^2 / 2}.
    monkeypatch.setattr(long_sequences, "_normal_density",
                        lambda x, mean=0: sp.exp(-((x - mean) ** 2) / (8 * s**2)) / (2 * s * sp.sqrt(2 * sp.pi)))
    with pytest.raises(ProofError, match="^thm-gaussian-max-bound"):
        proofs.gaussian_max_bound()


def test_false_needle_limits_are_caught():
    eps = sp.Symbol(r"\epsilon", positive=True)
    below = sp.Limit(1 / (1 + (n - 1) * n ** (-(1 - eps))), n, sp.oo)
    boundary = sp.Limit(1 / (1 + (n - 1) / n), n, sp.oo)
    with pytest.raises(ProofError, match="^thm-needle-limit"):
        check("thm-needle-limit", below, 1)
    with pytest.raises(ProofError, match="^thm-needle-limit"):
        check("thm-needle-limit", boundary, 1)


def test_a_needle_weight_that_forgets_a_competitor_is_caught():
    beta, margin = sp.Symbol(r"\beta", positive=True), sp.Symbol(r"\Delta", positive=True)
    wrong = sp.exp(beta * margin) / (sp.exp(beta * margin) + n - 2)
    with pytest.raises(ProofError, match="^thm-needle-limit"):
        check("thm-needle-limit", wrong, 1 / (1 + (n - 1) * sp.exp(-beta * margin)))


def test_a_limit_taken_at_a_large_finite_n_fails_the_needle_theorem(monkeypatch):
    # A "limit" that only evaluates at n = 10^6 is not a limit; the first limit step must notice.
    monkeypatch.setattr(sp.Limit, "doit", lambda self, **hints: self.args[0].subs(self.args[1], 10**6))
    with pytest.raises(ProofError, match="^thm-needle-limit"):
        proofs.needle_limit()


def test_the_statement_follows_a_changed_result():
    # The statement is the result steps' own LaTeX: choosing other steps changes it, nothing is typed.
    proof = proofs.needle_limit()
    other = dataclasses.replace(proof, results=(6,))
    assert other.statement == r"\lim_{n \to \infty} \frac{1}{1 + \frac{n - 1}{n}} = \frac{1}{2}"


def test_uses_name_the_results_each_proof_relies_on():
    assert proofs.REGISTRY["thm-gaussian-logit-moments"].uses == ()
    assert proofs.REGISTRY["thm-gaussian-max-bound"].uses == ("thm-gaussian-logit-moments",)
    assert proofs.REGISTRY["thm-needle-limit"].uses == ()
