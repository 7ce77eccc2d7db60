"""The records of site.exercises: each solution's numbers, and the checks that can stop the build."""

import re
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from attention_scaling import naive_softmax, saturation_margin, softmax, softmax_jacobian
from attention_scaling.proofs import d_k
from attention_scaling.simulate import Estimate, dot_product_samples, variance_estimate
from attention_scaling.regimes import attention_regimes
from attention_scaling.site import exercises
from attention_scaling.site.checks import PageCheckError

DOCS = Path(__file__).resolve().parents[1] / "docs"
# An exercise and its solution, up to the solution's end, named by its label.
EXERCISE = re.compile(r"```\{exercise\}[^\n]*\n:label: (ex-[\w-]+)\n.*?```\{solution-end\}", re.S)


def exercise_pages() -> dict[str, tuple[str, str]]:
    """Each exercise of the site, by label: its page and its text with its solution, as written."""
    return {match[1]: (page.stem, match[0]) for page in sorted(DOCS.glob("*.md")) for match in EXERCISE.finditer(page.read_text())}



@pytest.fixture(scope="module")
def answers():
    """Every answer record, from the solutions' own computations (as on the page)."""
    ablation = {
        policy: attention_regimes([16, 1024], policy, n_keys=16, n_queries=200, seed=21)
        for policy in ("none", "sqrt", "linear")
    }
    sweep = {
        factor: attention_regimes([64], lambda d, f=factor: 1 / (f * np.sqrt(d)), n_keys=16, n_queries=500, seed=22)
        for factor in (0.5, 1.0, 2.0)
    }
    margin = saturation_margin(4, fraction=0.1)
    x = np.array([1.0, 2.0, 3.0])
    scores = np.array([12.0, 11.0, 0.0], dtype=np.float16)
    largest = float(np.finfo(np.float16).max)
    return {
        "ex-std-512": exercises.std_512_answer(np.sqrt(512), 20_000, variance_estimate(dot_product_samples(512, 20_000, seed=512))),
        "ex-saturation-point": exercises.saturation_answer(margin, softmax([margin, 0.0, 0.0, 0.0])[0]),
        "ex-scaling-ablation": exercises.ablation_answer(ablation),
        "ex-temperature-sweep": exercises.temperature_answer(sweep),
        "ex-jacobian-peaked-uniform": exercises.jacobian_answer(softmax_jacobian(np.array([0.97, 0.01, 0.01, 0.01])), softmax_jacobian(np.full(4, 0.25))),
        "ex-shift-invariance": exercises.shift_answer(x, (softmax(x), softmax(10 * x))),
        "ex-fp16-overflow": exercises.fp16_answer(largest, float(np.log(largest)), naive_softmax(scores), softmax(scores)),
        "ex-correlated-scale": exercises.correlated_answer(0.5 * 1024 / np.sqrt(1024), 0.5 * 1024 / 1024),
    }


@pytest.fixture(scope="module")
def values(answers):
    merged = {}
    for answer in answers.values():
        assert not set(merged) & set(answer.glue_values())
        merged |= answer.glue_values()
    return merged


def test_each_record_glues_the_keys_its_solution_uses(answers):
    texts = exercise_pages()
    for label, answer in answers.items():
        assert set(re.findall(r"\{glue:text\}`([\w-]+)", texts[label][1])) == set(answer.glue_values()), label


def test_values(values):
    assert values["ex_std_512"] == pytest.approx(22.627, abs=1e-3)
    assert values["ex_std_512_n"] == 20_000 and isinstance(values["ex_std_512_n"], int)
    assert values["ex_std_512_mc"] == pytest.approx(22.6, abs=0.3)
    assert values["ex_saturation_weight"] == pytest.approx(0.974, abs=1e-3)
    assert values["ex_ablation_none_max"] > values["ex_ablation_sqrt_max"] > values["ex_ablation_linear_max"] > 1 / 16
    assert values["ex_tau_half_max"] > values["ex_tau_one_max"] > values["ex_tau_two_max"]
    assert values["ex_jac_uniform"] == pytest.approx(np.sqrt(3) / 4)
    assert values["ex_shift_a"] == "[0.09  0.245 0.665]"
    assert values["ex_fp16_max"] == 65504.0 and values["ex_fp16_naive"] == "[nan  0.  0.]"
    assert (values["ex_corr_sqrt"], values["ex_corr_linear"]) == (16.0, 0.5)


def test_the_projection_constant_is_checked():
    sigma = sp.Symbol("sigma", positive=True)
    assert exercises.projection_scale_answer([sigma**2 * sp.sqrt(d_k)]) == sigma**2 * sp.sqrt(d_k)
    with pytest.raises(PageCheckError, match="ex-projection-scale: check failed"):
        exercises.projection_scale_answer([sigma * sp.sqrt(d_k)])
    with pytest.raises(PageCheckError, match="ex-projection-scale"):
        exercises.projection_scale_answer([-(sigma**2) * sp.sqrt(d_k), sigma**2 * sp.sqrt(d_k)])


def test_a_simulation_that_disagrees_stops_the_page():
    with pytest.raises(PageCheckError, match="ex-std-512: check failed: the simulated variance agrees"):
        exercises.std_512_answer(np.sqrt(512), 20_000, Estimate(530.0, 5.0))
    with pytest.raises(PageCheckError, match="the answer is sqrt"):
        exercises.std_512_answer(np.sqrt(511), 20_000, Estimate(512.0, 5.0))


def test_a_softmax_that_is_not_shift_invariant_stops_the_page(monkeypatch):
    # Plant a fault: a softmax that forgets to normalise depends on the shift.
    monkeypatch.setattr(exercises, "softmax", lambda x: np.exp(np.asarray(x) - 1000.0))
    x = np.array([1.0, 2.0, 3.0])
    with pytest.raises(PageCheckError, match=r"ex-shift-invariance: check failed: softmax\(x \+ 1000\)"):
        exercises.shift_answer(x, (softmax(x), softmax(10 * x)))


def test_equal_ratios_with_equal_weights_stop_the_page():
    x = np.array([1.0, 2.0, 3.0])
    with pytest.raises(PageCheckError, match="equal ratios, different weights"):
        exercises.shift_answer(x, (softmax(x), softmax(x)))


def test_an_overflow_that_did_not_happen_stops_the_page():
    scores = np.array([12.0, 11.0, 0.0], dtype=np.float16)
    with pytest.raises(PageCheckError, match="the unshifted softmax overflows"):
        exercises.fp16_answer(65504.0, float(np.log(65504.0)), softmax(scores), softmax(scores))


def test_the_other_checks_can_fail(answers):
    with pytest.raises(PageCheckError, match="ex-saturation-point"):
        exercises.saturation_answer(3.0, softmax([3.0, 0.0, 0.0, 0.0])[0])
    with pytest.raises(PageCheckError, match="ex-jacobian-peaked-uniform"):
        exercises.jacobian_answer(softmax_jacobian(np.full(4, 0.25)), softmax_jacobian(np.array([0.97, 0.01, 0.01, 0.01])))
    with pytest.raises(PageCheckError, match="ex-correlated-scale"):
        exercises.correlated_answer(0.5, 16.0)
    curves = attention_regimes([1024], "sqrt", n_keys=16, n_queries=20, seed=0)
    with pytest.raises(PageCheckError, match="ex-scaling-ablation.*falls"):
        exercises.ablation_answer({"none": curves, "sqrt": curves, "linear": curves})
    with pytest.raises(PageCheckError, match="every policy was simulated"):
        exercises.ablation_answer({"none": curves})
    with pytest.raises(PageCheckError, match="ex-temperature-sweep"):
        exercises.temperature_answer({0.5: curves, 1.0: curves, 2.0: curves})

