"""The register of published claims: the tolerance rule, verdicts, and planted faults."""

import dataclasses
import math
import re
from pathlib import Path

import pytest
from scipy import stats

from attention_scaling import proofs
from attention_scaling.proofs.engine import ProofError
from attention_scaling.site import claim_checks, glue_fields
from attention_scaling.site import claims as claims_module
from attention_scaling.site.checks import PageCheckError
from attention_scaling.site.long_sequences import ShiftVersusScale
from attention_scaling.site.sources import label_pages
from attention_scaling.site.claims import (
    CLAIMS,
    LATER_SOURCES,
    SOURCES,
    Basis,
    Claim,
    Outcome,
    TheoremBasis,
    Verdict,
    assess_all,
    claims_summary,
    claims_table,
    decided_by,
    matches_published,
)

DOCS = Path(__file__).resolve().parents[1] / "docs"


@pytest.fixture(scope="module")
def assessments():
    return {a.claim.key: a for a in assess_all()}


@pytest.mark.parametrize(
    ("published", "computed", "expected"),
    [
        ("0.599", [0.5985], True),
        ("0.599", [0.5995], True),
        ("0.599", [0.5996], False),
        ("[0.30, 0.33, 0.37]", [0.28, 0.342, 0.378], False),
        ("[-3, -1, 0]", [-3.0, -1.0, 0.0], True),
        ("1,202,604", [1202604.28], True),
        ("8", [8.49], True),
        ("8", [8.51], False),
        ("[1, 2]", [1.0], False),  # a missing number is a mismatch
    ],
)
def test_tolerance_rule(published, computed, expected):
    assert matches_published(published, computed) is expected


def test_keys_are_unique_and_every_source_is_covered():
    keys = [claim.key for claim in CLAIMS]
    assert len(keys) == len(set(keys))
    sources = {claim.source for claim in CLAIMS}
    assert set(SOURCES) <= sources <= set(SOURCES + LATER_SOURCES)


def test_every_link_target_exists_in_the_docs():
    labels = set(label_pages(DOCS))
    missing = {claim.key: claim.where for claim in CLAIMS if claim.where not in labels}
    assert not missing, f"claims whose 'where' is no label on any page (give it a label that exists): {missing}"


def test_known_verdicts(assessments):
    # Recomputed by hand from the articles; see the Claims checked page.
    assert assessments["book-scaled-weights"].verdict is Verdict.FAILS
    assert assessments["shekhar-exp-50"].verdict is Verdict.FAILS
    assert assessments["division-ratios"].verdict is Verdict.FAILS
    assert assessments["book-unscaled-five"].verdict is Verdict.HOLDS
    assert assessments["shekhar-unscaled-three"].verdict is Verdict.HOLDS
    assert assessments["reddit-xavier"].verdict is Verdict.CONDITIONAL
    assert assessments["reddit-not-stability"].verdict is Verdict.CONDITIONAL
    # The stated reason (small floats are imprecise) is false; what was measured is a loss of resolution.
    assert assessments["stabilizing-instability"].verdict is Verdict.FAILS


def test_all_four_verdicts_occur_and_explanations_are_given(assessments):
    verdicts = {a.verdict for a in assessments.values()}
    assert verdicts == set(Verdict)
    for assessment in assessments.values():
        # A condition is stated as sufficient ("it holds if"), never as necessary ("only if").
        assert "only if" not in assessment.explanation.lower()
        if assessment.verdict is Verdict.CONDITIONAL:
            assert assessment.explanation.startswith(f"It holds if {assessment.claim.assumptions}.")


def test_a_planted_wrong_published_value_flips_the_verdict():
    entry = next(claim for claim in CLAIMS if claim.key == "shekhar-unscaled-three")
    assert entry.assess().verdict is Verdict.HOLDS
    # The same entry with one digit of its printed value changed: the check
    # reads the printed value from the claim, so nothing else needs changing.
    planted = dataclasses.replace(entry, published="[0.867, 0.016, 0.118]")
    assert planted.assess().verdict is Verdict.FAILS


def test_a_numeric_check_without_a_printed_value_is_an_error():
    entry = next(claim for claim in CLAIMS if claim.key == "shekhar-unscaled-three")
    with pytest.raises(ValueError, match="needs the claim's published value"):
        dataclasses.replace(entry, published=None).assess()


def test_a_claim_without_a_check_is_refused():
    with pytest.raises(TypeError, match="claim 'x' has no check"):
        Claim("x", SOURCES[0], "s", "c", None, None, "claims")


def test_a_conditional_needs_its_assumption_stated():
    entry = Claim("x", SOURCES[0], "s", "c", None, lambda _published: Outcome("1", True), "claims", assumptions="it rains")
    assert entry.assess().verdict is Verdict.CONDITIONAL
    assert entry.assess().explanation == "It holds if it rains."
    noted = Claim("x", SOURCES[0], "s", "c", None, lambda _published: Outcome("1", True, "Mostly."), "claims",
                  assumptions="it rains")
    assert noted.assess().explanation == "It holds if it rains. Mostly."


# -- The page's record ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def summary(assessments):
    return claims_summary(list(assessments.values()))


def test_summary_counts_every_claim_once(summary):
    values = glue_fields(summary, "claims")
    assert values["claims_total"] == len(CLAIMS) == summary.total
    assert values["claims_holds"] + values["claims_conditional"] + values["claims_fails"] + values["claims_unchecked"] \
        == len(CLAIMS)
    assert sum(values[f"claims_per_source_{source}"] for source in SOURCES) + values["claims_per_source_since-2017"] \
        == len(CLAIMS)
    assert values["claims_fails"] >= 3 and values["claims_conditional"] >= 1  # see test_known_verdicts
    assert values["claims_computed"] + values["claims_by_theorem"] == len(CLAIMS)
    assert values["claims_computed"] == summary.computed and values["claims_by_theorem"] == summary.by_theorem
    assert all(isinstance(value, int) for value in values.values())


def test_the_summary_glues_every_key_the_page_uses(summary):
    used = set(re.findall(r"\{glue:text\}`([\w-]+)", (DOCS / "claims.md").read_text()))
    assert used == set(glue_fields(summary, "claims"))


def test_summary_tables_are_the_claims_tables_of_each_source(summary, assessments):
    book = [a for a in assessments.values() if a.claim.source == "book-section-5-3"]
    assert summary.table("book-section-5-3") == claims_table(book)
    assert len(summary.table("book-section-5-3").splitlines()) == len(book) + 2
    with pytest.raises(ValueError, match="source must be one of"):
        summary.table("nowhere")


def test_every_claims_table_keeps_one_cell_per_column(summary):
    # A bar inside a cell would split it; the table helper refuses that.
    for _, table in summary.tables:
        for line in table.splitlines():
            assert line.count("|") == 5, line


def test_summary_refuses_a_source_without_claims(assessments):
    without_vaswani = [a for a in assessments.values() if a.claim.source != "vaswani2017attention"]
    with pytest.raises(PageCheckError, match="every reviewed source has a claim.*vaswani2017attention"):
        claims_summary(without_vaswani)


def test_summary_refuses_a_claim_assessed_twice(assessments):
    twice = [*assessments.values(), assessments["book-std-64"]]
    with pytest.raises(PageCheckError, match="every claim is assessed once.*book-std-64"):
        claims_summary(twice)


def test_summary_refuses_tables_that_drop_a_claim(assessments, monkeypatch):
    # Plant a fault in the table renderer: it silently drops the last row.
    original = claims_module.claims_table
    monkeypatch.setattr(claims_module, "claims_table", lambda rows, **options: original(rows[:-1], **options))
    with pytest.raises(PageCheckError, match="the tables show every claim exactly once"):
        claims_summary(list(assessments.values()))


# -- How each verdict was decided ------------------------------------------------------------

def test_every_row_says_how_its_verdict_was_decided(assessments, summary):
    # A verdict is computed, or rests on proved theorems matched by hand (a claim whose check is
    # check.theorem(...)); the row says which, and names the theorems.
    by_theorem = 0
    for assessment in assessments.values():
        cell = decided_by(assessment.outcome)
        if assessment.basis is Basis.THEOREM:
            by_theorem += 1
            labels = tuple(theorem.label for theorem in assessment.outcome.theorems)
            # The row names exactly the theorems the claim's check was matched to, in order.
            assert labels == assessment.claim.check.labels and all(label in proofs.THEOREMS for label in labels), labels
            assert all(theorem.proved for theorem in assessment.outcome.theorems)
            assert cell.startswith("by {prf:ref}") and cell.endswith("matched by hand")
            assert all(f"{{prf:ref}}`{label}` (proof: " in cell for label in labels)
        else:
            assert assessment.basis is Basis.COMPUTED and cell == "computed"
    assert 0 < by_theorem < len(CLAIMS)
    assert (summary.computed, summary.by_theorem) == (len(CLAIMS) - by_theorem, by_theorem)


def test_the_table_shows_how_each_verdict_was_decided(summary, assessments):
    header = summary.table("stabilizing-attention").splitlines()[0]
    assert header == "| claim | verdict | how decided | published → computed |"

    def decided(key):
        return claims_table([assessments[key]]).splitlines()[2].split(" | ")[2]

    # The theorem the verdict rests on is the one the row links to: it is named once.
    assert decided("vaswani-footnote").startswith("by {prf:ref}`thm-dot-product-variance` (proof: ")
    assert decided("vaswani-footnote").count("thm-dot-product-variance") == 1
    assert decided("reddit-std-64") == "computed; see {prf:ref}`thm-dot-product-variance`"
    assert decided("book-stable-softmax").endswith("matched by hand; see {ref}`subtraction-stability`")


def test_the_step_counts_of_a_matched_theorem_are_those_of_its_proof(assessments):
    (basis,) = assessments["vaswani-footnote"].outcome.theorems
    assert basis.counts == proofs.prove("thm-dot-product-variance").counts()


def test_a_verdict_by_theorem_runs_the_theorems_proof(monkeypatch):
    # The check must run the proof, not assume it: count the runs of the registered proofs.
    runs = []
    for label, entry in proofs.REGISTRY.items():
        counted = dataclasses.replace(entry, run=lambda run=entry.run, label=label: runs.append(label) or run())
        monkeypatch.setitem(proofs.REGISTRY, label, counted)
    entry = next(claim for claim in CLAIMS if claim.key == "book-stable-softmax")
    entry.assess()
    assert runs == ["thm-softmax-shift-invariance", "thm-stable-softmax-bounds"]
    # Given the proved results (as assess_all shares them among the claims), it proves nothing again.
    runs.clear()
    entry.assess(proofs.Proved([(label, proofs.prove(label), 0.0) for label in entry.check.labels]))
    assert runs == list(entry.check.labels)  # the two runs of prove above, and none by the check


def test_the_register_proves_each_matched_theorem_once(monkeypatch):
    # assess_all shares one Proved among the claims: a theorem matched by several claims runs once.
    runs = []
    for label, entry in proofs.REGISTRY.items():
        counted = dataclasses.replace(entry, run=lambda run=entry.run, label=label: runs.append(label) or run())
        monkeypatch.setitem(proofs.REGISTRY, label, counted)
    assess_all()
    matched = [label for claim in CLAIMS for label in getattr(claim.check, "labels", ())]
    assert len(matched) > len(set(matched)), "no theorem is matched twice: the test would show nothing"
    assert sorted(runs) == sorted(set(matched))


class _Failing(dict):
    """Planted: every proof looked up fails."""

    def __missing__(self, label):
        raise ProofError(f"{label}: planted failure")


def test_a_failing_proof_fails_the_row():
    # Planted fault: the proof of the theorem a claim was matched to fails.
    entry = next(claim for claim in CLAIMS if claim.key == "vaswani-footnote")
    assessment = entry.assess(_Failing())
    assert assessment.verdict is Verdict.FAILS
    assert assessment.basis is Basis.THEOREM
    assert decided_by(assessment.outcome) == "by {prf:ref}`thm-dot-product-variance` (proof: failed), matched by hand"


def test_a_theorem_without_the_matched_step_stops_the_register():
    # Planted fault: the proof no longer has the step the claim was matched to (here: Var = 1/d_k).
    proof = proofs.prove("thm-scaled-variance")
    steps = tuple(step for step in proof.steps if step.rhs != 1 / proofs.d_k)
    entry = next(claim for claim in CLAIMS if claim.key == "stabilizing-over-scaled")
    with pytest.raises(LookupError, match="no step of the proof of thm-scaled-variance"):
        entry.assess({proof.label: dataclasses.replace(proof, steps=steps)})


def test_decided_by_for_two_theorems():
    outcome = Outcome("…", True, theorems=(TheoremBasis("thm-a", {"checked": 2, "cited": 0}),
                                           TheoremBasis("thm-b", None)))
    assert decided_by(outcome) == ("by {prf:ref}`thm-a` (proof: 2 checked) and {prf:ref}`thm-b` "
                                   "(proof: failed), matched by hand")


# -- The computed checks that replaced verdicts by hand -------------------------------------------


def test_xavier_is_computed_for_separate_and_packed_projections(assessments):
    assessment = assessments["reddit-xavier"]
    assert assessment.basis is Basis.COMPUTED
    computed = assessment.outcome.computed
    assert "separate E × E projections 1 (simulated" in computed
    assert "PyTorch's packed in_proj_weight, shape (3E, E), 1/4 (simulated" in computed
    assert "variance 1/(2E), each query coordinate 1/2, and the scaled scores 1/4" in assessment.explanation


def test_a_wrong_xavier_variance_is_caught_by_the_simulation(monkeypatch):
    # Planted fault: the predicted variance counts Xavier as 1/fan_in + 1/fan_out (twice too large on a
    # square matrix); the seeded simulation, which draws the weights from the bound, disagrees and stops the build.
    from attention_scaling import initialisation

    monkeypatch.setattr(initialisation, "xavier_uniform_variance",
                        lambda fan_in, fan_out, gain=1.0: 1 / fan_in + 1 / fan_out)
    entry = next(claim for claim in CLAIMS if claim.key == "reddit-xavier")
    with pytest.raises(PageCheckError, match="simulated score variance matches in_projection's"):
        entry.assess()


def test_overflow_claim_is_conditional_on_where_the_scale_is_applied(assessments):
    assessment = assessments["reddit-not-stability"]
    assert assessment.basis is Basis.COMPUTED and assessment.claim.where == "subtraction-division"
    computed = assessment.outcome.computed
    assert "as written [nan, 0.000, 0.000], maximum subtracted [0.731, 0.269, 0.000]" in computed
    assert "divided by √d_k after the product inf, q divided by √d_k before it 7068" in computed
    assert "the scale does prevent an overflow" in assessment.explanation


def test_bfloat16_numbers_are_stated_for_scores_divided_by_d_k(assessments):
    # The note once said "scores of size 1/d_k lose nothing", tested only in float32.
    assessment = assessments["stabilizing-instability"]
    assert "lose nothing" not in assessment.explanation
    numbers = [float(x) for x in re.findall(r"(\d+\.\d+)%", assessment.outcome.computed)]
    scores_only, bfloat16, usual = numbers
    assert scores_only < 1 and bfloat16 > 5 and usual < 1
    assert f"{bfloat16:.1f}%" in assessment.explanation


def test_gives_skips_steps_that_are_not_equations_of_expressions():
    # A set of solutions (as check_solutions makes for "the only positive root") or an inequality
    # never matches, and does not break the search for the matched step.
    import sympy as sp

    from attention_scaling.proofs import d_k
    from attention_scaling.proofs.engine import check, check_inequality, check_solutions

    c = sp.Symbol("c", positive=True)
    roots = check_solutions("demo", c, sp.Eq(d_k / c**2, 1), sp.Interval.open(0, sp.oo), sp.FiniteSet(sp.sqrt(d_k)))
    bound = check_inequality("demo", 1 / d_k, 1, r"\le")
    target = check("demo", d_k / d_k**2, 1 / d_k)
    matches = claim_checks.gives(1 / d_k)
    assert [matches(step) for step in (roots, bound, target)] == [False, False, True]
    assert not claim_checks.gives(sp.sqrt(d_k))(roots)


# -- vaswani-suspect: the typical row's gain at the logits, not the mean ------------------------


def test_vaswani_suspect_names_its_quantity_and_reports_the_distribution(assessments):
    assessment = assessments["vaswani-suspect"]
    assert assessment.verdict is Verdict.CONDITIONAL
    computed = assessment.outcome.computed
    assert computed.startswith("gain at the logits ‖J‖_F per query row") and "median" in computed
    assert "95 %" in computed and "rows below" in computed
    # What the claim leaves out is said: the mean, and the raw score with its factor c.
    assert "typical (median) query row" in assessment.claim.assumptions
    assert "mean gain at the logits" in assessment.explanation and "raw score q·k" in assessment.explanation
    ratio = float(re.search(r"is (\d+\.\d) times the scaled", assessment.explanation).group(1))
    assert ratio > 1


def test_vaswani_suspect_fails_when_the_median_does_not_collapse(monkeypatch):
    # Planted fault: the unscaled rows replaced by scaled ones (as if the scores did not grow):
    # the median no longer collapses and the claim must not pass.
    original = claim_checks.gradient_distribution

    def no_growth(*args, **kwargs):
        data = original(*args, **kwargs)
        summaries = dict(data.summaries)
        for (quantity, scaling, d_k), summary in data.summaries.items():
            if scaling == "none":
                summaries[quantity, scaling, d_k] = data.summaries[quantity, "sqrt", d_k]
        return dataclasses.replace(data, summaries=summaries)

    monkeypatch.setattr(claim_checks, "gradient_distribution", no_growth)
    assert not claim_checks.vanishing_with_d_k(None).agrees


def test_a_later_source_is_accepted_and_cited_in_its_table(assessments):
    later = Claim("x", LATER_SOURCES[0], "§2", "c", None, lambda _published: Outcome("1", True), "claims")
    summary = claims_summary([*assessments.values(), later.assess()])
    assert glue_fields(summary, "claims")[f"claims_per_source_{claims_module.LATER}"] == \
        1 + sum(claim.source in LATER_SOURCES for claim in CLAIMS)
    assert f"{{cite:t}}`{LATER_SOURCES[0]}`, §2" in summary.table(claims_module.LATER)


def test_a_source_outside_both_lists_is_refused():
    with pytest.raises(ValueError, match="not one of"):
        Claim("x", "nobody2099", "s", "c", None, lambda _published: Outcome("1", True), "claims")


# -- Temperatures for longer contexts ------------------------------------------------------------


def test_temperature_claims_and_their_verdicts(assessments):
    assert assessments["su2021entropy-512"].verdict is Verdict.HOLDS
    assert assessments["su2021entropy-512"].basis is Basis.THEOREM
    assert assessments["peng2024yarn-both-sides"].verdict is Verdict.HOLDS
    assert assessments["chiang2022overcoming-log-length"].verdict is Verdict.CONDITIONAL
    assert assessments["chiang2022overcoming-log-length"].basis is Basis.THEOREM
    assert assessments["nakanishi2025scalable-fading-max"].verdict is Verdict.CONDITIONAL
    assert assessments["nakanishi2025scalable-fading-max"].basis is Basis.COMPUTED


def test_the_public_restatements_do_not_hold_and_a_correct_one_would(assessments, monkeypatch):
    for key in ("bzhng-yarn-summary-power", "poptropicasahil-yarn-softens", "edifice-ssmax-subtraction"):
        assert assessments[key].verdict is Verdict.FAILS and assessments[key].basis is Basis.COMPUTED
    mistakes = claim_checks.yarn_mistakes(trained=4096, n=32768)
    assert f"{mistakes.weight_wrong_power:.3f}" in assessments["bzhng-yarn-summary-power"].outcome.computed
    # Planted fault: Eq. 22 read as 1/t = 0.1 ln s + 1 (sqrt dropped); the quote would then hold.
    monkeypatch.setattr(claim_checks.sp, "sqrt", lambda x: x)
    assert claim_checks.yarn_factor_once(None).agrees
    monkeypatch.undo()
    # Planted fault: the note's own reading, logits divided by t = 0.1 ln s + 1; the claim would then hold.
    correct = claim_checks.yarn_softens(None).computed
    monkeypatch.setattr(claim_checks, "yarn_multiplier", lambda n, trained: 1 / (0.1 * math.log(n / trained) + 1))
    softened = claim_checks.yarn_softens(None)
    assert softened.agrees and "0.828" in softened.computed and softened.computed != correct
    monkeypatch.undo()
    # Planted fault: a softmax under which the shift changes the weights; the claim would then hold.
    monkeypatch.setattr(claim_checks, "shift_versus_scale", lambda scores, s: ShiftVersusScale(0.1, 0.1, 0.5, 0.5))
    assert claim_checks.ssmax_as_subtraction(None).agrees


def test_a_wrong_su_reference_length_is_caught(monkeypatch):
    # Planted fault: log_512 evaluated in base 1024; the proof the claim rests on fails, and so does the row.
    from attention_scaling.proofs import temperatures

    monkeypatch.setattr(temperatures._LogBase, "doit",
                        lambda self, deep=True, **hints: temperatures._Log(self.args[0]) / temperatures._Log(2 * self.args[1]))
    entry = next(claim for claim in CLAIMS if claim.key == "su2021entropy-512")
    assert entry.assess().verdict is Verdict.FAILS


def test_yarn_scaling_only_the_query_is_caught(monkeypatch):
    # Planted fault: c applied to q alone (the logits would grow by c, not c^2).
    monkeypatch.setattr(claim_checks, "_yarn_logits", lambda q, k, c: claims_module.np.einsum("ij,ij->i", c * q, k))
    assert not claim_checks.yarn_both_sides(None).agrees


def test_a_max_weight_that_does_not_fade_is_caught(monkeypatch):
    # Planted fault: a multiplier growing like (ln n)^2 replaces the fixed scale; the largest weight then grows.
    from attention_scaling import temperatures

    original = temperatures.METHODS["fixed"]
    monkeypatch.setitem(temperatures.METHODS, "fixed", (original[0], lambda n: claims_module.np.log(n) ** 2))
    assert not claim_checks.max_weight_fades(None).agrees


def test_gemma_query_scalar_is_computed_and_a_wrong_value_fails(assessments, monkeypatch):
    assert assessments["gemma2024gemma2-27b-scalar"].verdict is Verdict.HOLDS
    # Plant a fault: a configuration whose scalar is the head dimension.
    monkeypatch.setitem(claim_checks.GEMMA2, "27B", (4608, 32, 128, 128))
    assert not claim_checks.gemma_query_scalar("144").agrees


# -- Issue 53: premises the sources state, and the claims the register lacked --------------------------


def test_a_claim_is_judged_under_the_premise_its_source_states(assessments):
    # The same premise gets the same verdict in one source: none of these is "under conditions" for it.
    for key in ("book-std-64", "book-unit-variance", "shekhar-variance-exact", "shekhar-term-count", "reddit-variance",
                "stabilizing-variance", "stabilizing-over-scaled", "stabilizing-unit-variance"):
        assert assessments[key].verdict is Verdict.HOLDS, key
    # A source that states no premise (01) still gets the condition.
    assert assessments["division-sqrt-not-dk"].verdict is Verdict.CONDITIONAL


def test_a_condition_a_source_states_itself_is_refused_with_what_to_do():
    entry = next(claim for claim in CLAIMS if claim.key == "book-std-64")
    with pytest.raises(ValueError, match="its source states the premise itself .* drop the condition"):
        dataclasses.replace(entry, assumptions=claims_module._INIT)


def test_easily_is_the_chance_of_such_scores_and_it_is_small(assessments):
    assessment = assessments["reddit-easily"]
    # One of 4 independent N(0, 64) scores at |25| or beyond, from scipy rather than the check's erfc.
    chance = 1 - (1 - 2 * stats.norm.sf(25, scale=8)) ** 4
    assert f"{chance:.2%}" in assessment.outcome.computed and assessment.verdict is Verdict.FAILS
    assert chance < claim_checks.EASILY < 10 * chance  # a verdict of about 0.7 % against one in twenty


def test_universally_fails_on_a_released_configuration_and_holds_without_it(assessments, monkeypatch):
    assert assessments["book-universal"].verdict is Verdict.FAILS
    assert "$1/\\sqrt{144}$ (`query_pre_attn_scalar`) at head dimension 128" in assessments["book-universal"].outcome.computed
    # Planted: Gemma 2 27B with its scalar equal to its head dimension, as the smaller models have.
    monkeypatch.setitem(claim_checks.GEMMA2, "27B", (4608, 32, 128, 128))
    entry = next(claim for claim in CLAIMS if claim.key == "book-universal")
    assert entry.assess().verdict is Verdict.HOLDS


def test_exactly_this_reason_fails_on_what_the_paper_writes_and_on_the_moments(assessments):
    assessment = assessments["shekhar-exact-reason"]
    assert assessment.verdict is Verdict.FAILS and assessment.basis is Basis.THEOREM
    assert "We suspect" in assessment.explanation and "§3.2.1" in assessment.explanation


def test_a_claim_no_measurement_can_decide_is_not_checked_unless_refuted():
    # kim-l2-lipschitz: finitely many points cannot show a Lipschitz bound for every input.
    entry = next(claim for claim in CLAIMS if claim.key == "kim-l2-lipschitz")
    assessment = entry.assess()
    assert assessment.verdict is Verdict.UNCHECKED
    assert assessment.explanation.startswith("Not checked: finitely many points cannot show a bound")
    # Planted: the same entry with a check whose measurement contradicts the claim; a refutation decides.
    refuted = dataclasses.replace(entry, check=lambda _published: Outcome("the norm grows without bound", False))
    assert refuted.assess().verdict is Verdict.FAILS
