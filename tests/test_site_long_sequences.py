"""Page support of long-sequences.md: the records' values, and the page's checks failing when they should."""

import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from attention_scaling import proofs, softmax
from attention_scaling.long_sequences import gaussian_logit_sweep
from attention_scaling.site import glue_fields, long_sequences as page
from attention_scaling.site.checks import PageCheckError
from attention_scaling.site.statements import statements


@pytest.fixture(scope="module")
def sweep():
    # The page's figure data: n = 16, 64, ..., 65536 and s = 0.5, 1, 2, 3, seed 8, 2**19 logits per length.
    return gaussian_logit_sweep([4**k for k in range(2, 9)], [0.5, 1.0, 2.0, 3.0], seed=8, budget=2**19)


@pytest.fixture(scope="module")
def kappa():
    return sp.Symbol("kappa", positive=True)


def _page_logits():
    return np.random.default_rng(seed=1).normal(scale=2.0, size=1000)


def _page_scores():
    return np.random.default_rng(seed=2).normal(size=4096)


def _close(values, expected):
    """Each glued value within half a unit of the last digit the page shows."""
    for key, (value, tolerance) in expected.items():
        assert values[key] == pytest.approx(value, abs=tolerance), key


# -- The records hold the page's numbers ---------------------------------------------------


def test_entropy_identity():
    record = page.entropy_identity(_page_logits())
    assert record.entropy == pytest.approx(record.right_side, rel=1e-12)


def test_plug_in_fraction():
    assert glue_fields(page.plug_in_fraction(s=1.0), "long_plug_in") == {"long_plug_in_fraction": float(np.exp(-0.5)), "long_plug_in_s": 1.0}


def test_measured_against_plug_in(sweep):
    values = glue_fields(page.measured_against_plug_in(sweep), "long")
    assert {key: values[key] for key in ("long_n_min", "long_n_max", "long_trials_at_n_min", "long_trials_at_n_max")} == {
        "long_n_min": 16,
        "long_n_max": 65536,
        "long_trials_at_n_min": 32768,
        "long_trials_at_n_max": 64,
    }
    assert values["long_typical_plug"] == pytest.approx(np.log(4096) - 0.5, rel=1e-12)
    assert values["long_frozen_plug"] == pytest.approx(np.log(16) - 4.5, rel=1e-12)
    assert values["long_frozen_ratio"] == pytest.approx(9 / (2 * np.log(16)), rel=1e-12)
    assert values["long_double_s2_ratio"] == pytest.approx(16 / (2 * np.log(65536)), rel=1e-12)
    _close(values, {
        "long_worst_close": (0.011, 0.0005),
        "long_least_far": (0.60, 0.005),
        "long_typical_value": (7.818, 0.0005),
        "long_typical_standard_error": (0.002, 0.0005),
        "long_frozen_value": (1.153, 0.0005),
        "long_frozen_standard_error": (0.003, 0.0005),
        "long_collision_05_value": (1.0002, 0.00005),
        "long_collision_05_standard_error": (0.0003, 0.00005),
        "long_collision_1_value": (1.0054, 0.00005),
        "long_collision_1_standard_error": (0.0025, 0.00005),
        "long_collision_2_value": (1.41, 0.005),
        "long_collision_2_standard_error": (0.05, 0.005),
        "long_s2_error": (0.022, 0.0005),
        "long_s2_se": (0.009, 0.0005),
        "long_first_far_ratio": (0.36, 0.005),
        "long_first_far_error": (0.24, 0.005),
    })
    assert values["long_far_threshold"] == 0.2
    # The point the overview quotes: s = 2, n = 256, far below the freezing threshold (ratio 1).
    assert values["long_first_far_ratio"] == pytest.approx(4 / (2 * np.log(256)), rel=1e-12)


def test_partition_branches(kappa):
    record = page.partition_branches(1 + kappa, 2 * sp.sqrt(kappa), kappa)
    assert record.square == (sp.sqrt(kappa) - 1) ** 2
    # C^1 but not C^2 at kappa = 1: the second derivative jumps from 0 to -1/2.
    assert glue_fields(record, "long") == {"long_curvature_bulk": 0.0, "long_curvature_top": -0.5}


def test_freezing(sweep):
    values = glue_fields(page.freezing(sweep), "long")
    assert values["long_log_partition_plug"] == float(np.log(16) + 4.5)
    _close(values, {
        "long_share_value": (0.609, 0.0005),
        "long_log_partition_value": (5.852, 0.0005),
        "long_max_ratio_first": (0.75, 0.005),
        "long_max_ratio_last": (0.91, 0.005),
    })


def test_fading_weight(sweep):
    _close(glue_fields(page.fading_weight(sweep), "long_pmax"), {
        "long_pmax_s1_short": (0.246, 0.0005),
        "long_pmax_s1_long": (0.00069, 0.000005),
        "long_pmax_s3_short": (0.609, 0.0005),
        "long_pmax_s3_long": (0.082, 0.0005),
    })


def test_needle_weights():
    record = page.needle_weights()
    values = glue_fields(record, "long")
    lengths = [16, 256, 4096, 65536, 1048576]
    names = ["softmax", "s043", "s02", "s01"]
    assert set(values) == {f"long_needle_{name}_{n}" for name in names for n in lengths} | {"long_noise_length", "long_margin"}
    # Exact closed forms: 1 / (1 + (n - 1) e^(-5)) for beta = 1, and n / (2n - 1) on the boundary.
    for n in lengths:
        assert values[f"long_needle_softmax_{n}"] == pytest.approx(1 / (1 + (n - 1) * np.exp(-5.0)), rel=1e-12)
        assert values[f"long_needle_s02_{n}"] == pytest.approx(n / (2 * n - 1), rel=1e-12)
    assert values["long_needle_softmax_16"] == pytest.approx(0.9082, abs=0.00005)
    assert values["long_needle_softmax_1048576"] == pytest.approx(1.42e-04, abs=5e-7)
    assert values["long_noise_length"] == pytest.approx(np.exp(2 / 0.43**2), rel=1e-12)


def test_shift_versus_scale():
    values = glue_fields(page.shift_versus_scale(_page_scores(), 0.43), "long")
    assert values["long_shift_change"] < 1e-12
    _close(values, {
        "long_scale_change": (0.233, 0.0005),
        "long_plain_max": (0.0052, 0.00005),
        "long_scale_max": (0.2384, 0.00005),
    })


# -- Planted faults: each check can fail ------------------------------------------------------


def test_an_entropy_off_the_identity_is_caught(monkeypatch):
    monkeypatch.setattr(page, "attention_entropy", lambda weights: -np.sum(weights * np.log(weights)) + 1e-6)
    with pytest.raises(PageCheckError, match="long-setting.*ln Z minus the weighted mean logit"):
        page.entropy_identity(_page_logits())


def test_a_wrong_plug_in_entropy_is_caught(monkeypatch, sweep):
    original = page.plug_in_entropy
    monkeypatch.setattr(page, "plug_in_entropy", lambda n, s: original(n, s) - 0.1)
    with pytest.raises(PageCheckError, match="long-measured.*small freezing ratio, small plug-in error"):
        page.measured_against_plug_in(sweep)


def test_a_wrong_plug_in_collision_number_is_caught(monkeypatch, sweep):
    original = page.plug_in_collision_count
    monkeypatch.setattr(page, "plug_in_collision_count", lambda n, s: original(n, s) * 1.05)
    with pytest.raises(PageCheckError, match="s <= 1 the collision number is its plug-in value"):
        page.measured_against_plug_in(sweep)


def test_branches_that_cross_are_caught(kappa):
    with pytest.raises(PageCheckError, match="long-freezing.*meet at kappa = 1 with the same slope"):
        page.partition_branches(1 + kappa + (kappa - 1) / 10, 2 * sp.sqrt(kappa), kappa)


def test_branches_that_join_twice_differentiably_are_caught(kappa):
    # 1 + kappa against 1 + kappa + (kappa - 1)^3: same value, slope and curvature at 1. "Not C^2" must fail.
    with pytest.raises(PageCheckError, match="second derivatives of the two branches differ"):
        page.partition_branches(1 + kappa, 1 + kappa + (kappa - 1) ** 3, kappa)


def test_a_gap_that_is_not_a_square_is_caught(kappa):
    # Meets with the same slope at 1, but is not (sqrt(kappa) - 1)^2.
    with pytest.raises(PageCheckError, match="the gap is a square"):
        page.partition_branches(1 + kappa + (kappa - 1) ** 2, 2 * sp.sqrt(kappa), kappa)


def test_a_plug_in_entropy_that_holds_to_the_threshold_is_caught(monkeypatch, sweep):
    # Were the plug-in value exact between the ratios 0.1 and 0.5, the overview would be wrong.
    original = page.plug_in_entropy

    def exact_below_half(n, s):
        ratio = page.freezing_ratio(n, s)
        if np.shape(ratio) != sweep.entropy.shape:
            return original(n, s)
        return np.where((ratio >= 0.1) & (ratio < 0.5), sweep.entropy, original(n, s))

    monkeypatch.setattr(page, "plug_in_entropy", exact_below_half)
    with pytest.raises(PageCheckError, match="off by more than 0.2 nats already below half the freezing ratio"):
        page.measured_against_plug_in(sweep)


def test_a_too_small_max_bound_is_caught(monkeypatch, sweep):
    original = page.max_logit_bound
    monkeypatch.setattr(page, "max_logit_bound", lambda n, s: original(n, s) * 0.5)
    with pytest.raises(PageCheckError, match="long-freezing.*mean largest logit is below"):
        page.freezing(sweep)


def test_a_too_small_jensen_bound_is_caught(monkeypatch, sweep):
    original = page.plug_in_log_partition
    monkeypatch.setattr(page, "plug_in_log_partition", lambda n, s: original(n, s) - 1.0)
    with pytest.raises(PageCheckError, match="mean of ln Z is below ln n"):
        page.freezing(sweep)


def test_a_largest_weight_that_grows_is_caught(sweep):
    grows = dataclasses.replace(sweep, max_weight=sweep.max_weight[:, ::-1])
    with pytest.raises(PageCheckError, match="long-largest-weight.*falls as the row gets longer"):
        page.fading_weight(grows)


def test_a_wrong_scalable_softmax_is_caught(monkeypatch):
    monkeypatch.setattr(page, "scalable_softmax", lambda z, s: softmax(z))
    with pytest.raises(PageCheckError, match="long-scalings.*Scalable-Softmax of the explicit scores"):
        page.needle_weights()


def test_a_wrong_needle_weight_is_caught(monkeypatch):
    original = page.needle_weight
    monkeypatch.setattr(page, "needle_weight", lambda n, margin, scale: original(n, margin, scale * 1.01))
    with pytest.raises(PageCheckError, match="long-scalings"):
        page.needle_weights()


def test_a_scale_that_changes_nothing_is_caught(monkeypatch):
    monkeypatch.setattr(page, "scalable_softmax", lambda z, s: softmax(z))
    with pytest.raises(PageCheckError, match="long-shift.*multiplying by it does"):
        page.shift_versus_scale(_page_scores(), 0.43)


# -- The theorem statements: printed from the checks ----------------------------------------------

PAGE = Path(__file__).resolve().parents[1] / "docs" / "long-sequences.md"
PROOFS = (proofs.gaussian_logit_moments, proofs.gaussian_max_bound, proofs.needle_limit)


def _displays():
    values = {}
    for prove in PROOFS:
        values.update(page.theorem_displays(prove()))
    return values


def test_every_displayed_equation_of_a_theorem_is_glued_from_its_checked_steps():
    text = PAGE.read_text(encoding="utf-8")
    pasted = dict(re.findall(r"```\{glue:math\} ([\w-]+)\n(?::label: ([\w-]+)\n)?", text))
    # The temperatures section's two theorems are glued by site.temperatures (tests/test_site_temperatures.py).
    displays = {**_displays(), **statements(proofs.length_temperatures(), proofs.entropy_temperature())}
    assert set(pasted) == set(displays)
    # The equation labels of the statements are kept (they are public).
    assert {key: label for key, label in pasted.items() if label} == {
        "thm-gaussian-logit-moments": "eq-gaussian-exp-moments",
        "eq-plug-in-values": "eq-plug-in-values",
        "thm-gaussian-max-bound": "eq-gaussian-max-bound",
        "thm-needle-limit": "eq-needle-weight",
        "thm-length-temperatures": "eq-length-temperatures",
        "thm-entropy-temperature": "eq-entropy-temperature",
    }
    for prove in PROOFS:
        proof = prove()
        assert displays[proof.label].latex == proof.statement
    # No theorem on the page types a displayed equation of its own.
    for theorem in re.findall(r"````\{prf:theorem\}.*?\n````\n", text, flags=re.S):
        assert "$$" not in theorem


def test_each_extra_display_is_the_latex_of_its_checked_steps():
    moments, needle = proofs.gaussian_logit_moments(), proofs.needle_limit()
    displays = _displays()
    assert displays["eq-plug-in-values"].latex == page.aligned_display(moments, (7, 8)).latex
    assert displays["thm-gaussian-logit-moments-particular"].latex == page.aligned_display(moments, (3, 4)).latex
    assert displays["thm-needle-limit-limits"].latex == page.aligned_display(needle, (4, 5, 6)).latex
    # Each row of an aligned display is a checked step's own LaTeX, with the alignment mark before its relation.
    rows = displays["thm-needle-limit-limits"].latex.removeprefix(r"\begin{aligned}").removesuffix(r"\end{aligned}")
    assert [row.replace(" &=", " =") for row in rows.split(",\\\\ ")] == [step.latex() for step in needle.steps[4:7]]
    assert displays["thm-needle-limit-fixed"].latex == r"\begin{aligned}" + needle.steps[1].latex().replace(" =", " &=", 1) + r"\end{aligned}"
    assert all(needle.steps[index].kind == "checked" for index in (1, 3, 4, 5, 6))


def test_a_planted_change_of_a_step_changes_the_display(monkeypatch):
    # The displays are printed from the proof: a theorem that proved something else would show it.
    original = proofs.gaussian_max_bound

    def weaker():
        proof = original()
        last = proofs.engine.argue(proof.label, proof.steps[-1].lhs, 2 * proof.steps[-1].rhs, "planted", r"\le")
        return dataclasses.replace(proof, steps=(*proof.steps[:-1], last))

    monkeypatch.setattr(proofs, "gaussian_max_bound", weaker)
    assert page.theorem_displays(proofs.gaussian_max_bound())["thm-gaussian-max-bound"].latex == (
        r"\mathbb{E}\left[{\max_{i} X_{i}}\right] \le 2 \sigma \sqrt{2 \ln n}")


# -- The prose claims no more than was checked or measured ----------------------------------------


def test_the_overview_quotes_the_measured_failure_of_the_plug_in_entropy():
    text = PAGE.read_text(encoding="utf-8")
    overview = text[text.index("# Long sequences"):text.index("```{code-cell}")]
    assert "until $s^2$ nears" not in overview
    assert "{glue:text}`long_first_far_error" in overview and "{glue:text}`long_first_far_ratio" in overview


def test_the_needle_and_the_branches_are_described_as_what_was_proved():
    text = " ".join(PAGE.read_text(encoding="utf-8").split())
    assert "keeps its weight at every length" not in text
    assert "tends to 1 as $n \\to \\infty$" in text and "keys that tie" in text and "These are limits." in text
    assert "join smoothly" not in text
    assert "continuously differentiable there, but not twice" in text
    assert "{glue:text}`long_curvature_top" in text


def test_the_max_bound_proof_names_its_cited_and_argued_steps():
    text = " ".join(PAGE.read_text(encoding="utf-8").split())
    proof = text[text.index("Fix $t > 0$."):text.index("bound = gaussian_max_bound()")]
    assert "cited, not checked" in proof and "argued in words" in proof and "SymPy finds the best" not in proof
