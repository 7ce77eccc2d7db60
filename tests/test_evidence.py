"""The evidence page's checks: every proved value inside its measured interval."""

import dataclasses
import re
from collections import ChainMap
from pathlib import Path

import numpy as np
import pytest

from attention_scaling.site import evidence as evidence_module
from attention_scaling.site import glue_fields, import_pages
from attention_scaling import proofs
from attention_scaling.site.checks import PageCheckError
from attention_scaling.site.evidence import EvidenceRow, evidence, evidence_summary, evidence_table


@pytest.fixture(scope="module")
def outcomes():
    return proofs.prove_all()


@pytest.fixture(scope="module")
def rows(outcomes):
    return evidence(theorems=proofs.Proved(outcomes))


def test_rows_given_the_proved_results_prove_nothing_again(outcomes, rows, monkeypatch):
    # The graph page passes what its prove_all found: then not one proof runs again. Without them,
    # each proof the rows read runs once, and the rows are the same.
    runs = []
    for label, entry in proofs.REGISTRY.items():
        counted = dataclasses.replace(entry, run=lambda run=entry.run, label=label: runs.append(label) or run())
        monkeypatch.setitem(proofs.REGISTRY, label, counted)
    assert evidence(theorems=proofs.Proved(outcomes)) == rows and not runs
    assert evidence() == rows
    assert runs and len(runs) == len(set(runs)), "each proof the rows read runs once"


def test_every_proved_value_lies_in_its_interval(rows):
    failures = [row for row in rows if not row.holds]
    assert not failures, failures


def test_every_theorem_is_measured(rows):
    measured = {row.theorem for row in rows}
    unmeasured = [label for label in proofs.THEOREMS if label not in measured]
    assert not unmeasured, (f"theorems with no evidence row: {unmeasured}: in the page's support module, add a function"
                            " of a generator that measures each and decorate it with"
                            " attention_scaling.site.evidence.register_evidence (Contributing, 'Registering')")
    assert measured <= set(proofs.THEOREMS), f"rows of no registered theorem: {sorted(measured - set(proofs.THEOREMS))}"


def test_a_wrong_theorem_is_caught_by_its_rows_and_by_the_page(outcomes):
    # Plant Var[q.k] = 2 d_k in the proof record the evidence reads. (An error
    # smaller than about three standard errors, such as d_k + 1 at d_k = 64,
    # is beyond what a Monte Carlo check of this size can see.) The registered
    # proof is not patched, only the result handed to the rows.
    proof = proofs.dot_product_variance(cross_check=False)
    last = proof.steps[-1]
    wrong = dataclasses.replace(proof, steps=(*proof.steps[:-1], dataclasses.replace(last, rhs=2 * last.rhs)))
    measured = evidence(theorems=ChainMap({proof.label: wrong}, proofs.Proved(outcomes)))
    failing = [row for row in measured if not row.holds]
    assert failing and {row.theorem for row in failing} == {"thm-dot-product-variance"}
    # The page's own check stops on the same rows, naming the theorem.
    with pytest.raises(PageCheckError, match="thm-dot-product-variance"):
        evidence_summary(measured)


def test_intervals_are_what_make_the_check(monkeypatch):
    # The rows of one theorem, measured twice from the same seed: they hold with
    # the page's intervals, and with zero-width ones a Monte Carlo estimate never
    # equals the proved value.
    theorems = proofs.Proved()
    measure = lambda: evidence_module._product_rows(np.random.default_rng(2017), theorems, 200_000)  # noqa: E731
    assert all(row.holds for row in measure())
    monkeypatch.setattr(evidence_module, "Z", 0.0)
    assert not any(row.holds for row in measure())


def test_table_links_every_row(rows):
    table = evidence_table(rows).splitlines()
    assert len(table) == len(rows) + 2
    assert all("{prf:ref}`" in line for line in table[2:])


def test_row_holds_uses_the_interval():
    assert EvidenceRow("t", "q", 1.0, 1.0, 0.5, 1.5, "").holds
    assert not EvidenceRow("t", "q", 2.0, 1.0, 0.5, 1.5, "").holds


# -- The page's record ---------------------------------------------------------------------


def test_summary_values(rows):
    summary = evidence_summary(rows)
    values = glue_fields(summary, "evidence")
    assert values["evidence_n_rows"] == len(rows) == len(summary.rows)
    assert values["evidence_theorems"] == len(proofs.THEOREMS)
    # About 1 in 370 for three standard errors either side.
    assert values["evidence_one_in"] == pytest.approx(370.4, abs=0.1)
    assert summary.table == evidence_table(rows)


def test_the_summary_glues_every_key_the_page_uses(rows):
    page = (Path(__file__).resolve().parents[1] / "docs" / "evidence.md").read_text()
    # Every number of the summary is in the prose; its table is shown by a cell of its own.
    glued = set(glue_fields(evidence_summary(rows), "evidence")) - {"evidence_table"}
    assert set(re.findall(r"\{glue:text\}`([\w-]+)", page)) == glued


def test_summary_refuses_a_proved_value_outside_its_interval(rows):
    planted = dataclasses.replace(rows[0], proved=rows[0].high + 1.0)
    with pytest.raises(PageCheckError, match=r"every proved value lies inside.*failures=\[EvidenceRow\(theorem='"):
        evidence_summary([planted, *rows[1:]])


def test_summary_refuses_no_rows():
    with pytest.raises(PageCheckError, match="at least one measurement"):
        evidence_summary([])


# -- The Gaussian max bound: E max_i X_i itself, measured against s sqrt(2 ln n) -------------------


@pytest.fixture(scope="module")
def max_rows(outcomes):
    return evidence_module._gaussian_max_rows(np.random.default_rng(2024), proofs.Proved(outcomes))


def _expected_max(length):
    """E max of `length` independent standard normals, by quadrature of x n phi(x) Phi(x)^(n - 1)."""
    import math

    from scipy import integrate, stats

    value, _ = integrate.quad(lambda x: x * length * stats.norm.pdf(x) * stats.norm.cdf(x) ** (length - 1),
                              -math.inf, math.inf)
    return value


def test_max_bound_rows_measure_the_mean_maximum_at_several_n_and_s(max_rows):
    import math
    import re as regex

    measured = [row for row in max_rows if row.quantity.startswith(r"\mathbb{E}\max")]
    points = {(int(regex.search(r"n = (\d+)", row.quantity).group(1)),
               float(regex.search(r"\(0, ([\d.]+)\^2\)", row.quantity).group(1))) for row in measured}
    assert points == {(n, s) for n in (16, 256, 4096) for s in (0.5, 2.0)}
    for row in measured:
        n, s = (int(regex.search(r"n = (\d+)", row.quantity).group(1)),
                float(regex.search(r"\(0, ([\d.]+)\^2\)", row.quantity).group(1)))
        assert row.theorem == "thm-gaussian-max-bound" and row.holds
        assert row.proved == pytest.approx(s * math.sqrt(2 * math.log(n)), rel=1e-12)
        # A one-sided interval: the bound fails only if it lies Z standard errors below the estimate.
        assert row.high == math.inf and row.low < row.measured < row.proved
        # The estimate is of E max_i X_i itself: within Z standard errors of the exact value.
        standard_error = (row.measured - row.low) / evidence_module.Z
        assert abs(row.measured - s * _expected_max(n)) < evidence_module.Z * standard_error
    # The minimisation over t is still measured as well.
    assert any(row.quantity.startswith(r"\min_{t > 0}") and row.holds for row in max_rows)


def test_a_max_bound_that_is_too_small_fails_its_rows(outcomes):
    proof = proofs.Proved(outcomes)["thm-gaussian-max-bound"]
    last = proof.steps[-1]
    weaker = proofs.engine.argue(proof.label, last.lhs, last.rhs / 2, "planted", r"\le")
    halved = dataclasses.replace(proof, steps=(*proof.steps[:-1], weaker))
    rows = evidence_module._gaussian_max_rows(np.random.default_rng(2024), {proof.label: halved})
    failing = [row for row in rows if not row.holds]
    assert len(failing) == 6 and all(row.quantity.startswith(r"\mathbb{E}\max") for row in failing)


def test_a_one_sided_row_shows_its_bound_in_the_table(max_rows):
    line = evidence_table([max_rows[0]]).splitlines()[-1]
    assert "| ≤ 1.17741 |" in line and "inf" not in line


def test_registered_evidence_is_measured_from_a_generator_of_its_own(monkeypatch):
    # The registered rows are left out (a planted empty registry) to keep this fast. Every page is
    # imported first, so that nothing registers itself into the planted registry.
    import_pages()
    monkeypatch.setattr(evidence_module, "EVIDENCE", [])
    draws = {}

    @evidence_module.register_evidence
    def first(rng, theorems):
        draws["first"] = rng.standard_normal(3)
        return [evidence_module.rounding_row("thm-a", "a", 1.0, 1.0, 1e-12)]

    @evidence_module.register_evidence
    def second(rng, theorems):
        draws["second"] = rng.standard_normal(3)
        return [evidence_module.rounding_row("thm-b", "b", 2.0, 1.0, 1e-12)]  # planted: a wrong proved value

    rows = evidence()
    assert [row.theorem for row in rows] == ["thm-a", "thm-b"]
    assert not np.allclose(draws["first"], draws["second"]), "each function draws from its own generator"
    again = dict(draws)
    # Registered in the other order, each function still gets the same draws, and the rows come in the same order.
    evidence_module.EVIDENCE.reverse()
    assert [row.theorem for row in evidence()] == ["thm-a", "thm-b"]
    assert all(np.array_equal(again[name], draws[name]) for name in draws), "a function's draws follow from its name"
    with pytest.raises(PageCheckError, match="thm-b"):
        evidence_summary(rows)
    with pytest.raises(ValueError, match="registered twice"):
        evidence_module.register_evidence(first)


def test_rows_come_grouped_by_theorem_in_the_order_of_the_registry(monkeypatch):
    import_pages()
    monkeypatch.setattr(evidence_module, "EVIDENCE", [])
    first, last = list(proofs.REGISTRY)[0], list(proofs.REGISTRY)[-1]

    @evidence_module.register_evidence
    def a_rows(rng, theorems):  # runs first (by name), and measures the last theorem and an unregistered label
        return [evidence_module.rounding_row(last, "x", 0.0, 0.0, 1e-12),
                evidence_module.rounding_row("thm-not-registered", "y", 0.0, 0.0, 1e-12)]

    @evidence_module.register_evidence
    def b_rows(rng, theorems):
        return [evidence_module.rounding_row(first, "z", 0.0, 0.0, 1e-12)]

    assert [row.theorem for row in evidence()] == [first, last, "thm-not-registered"]
