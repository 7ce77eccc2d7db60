"""The evidence page's checks: every proved value inside its measured interval."""

import dataclasses

import pytest

from attention_scaling.site import evidence as evidence_module
from attention_scaling import proofs
from attention_scaling.site.evidence import EvidenceRow, evidence, evidence_table


@pytest.fixture(scope="module")
def rows():
    return evidence()


def test_every_proved_value_lies_in_its_interval(rows):
    failures = [row for row in rows if not row.holds]
    assert not failures, failures


def test_every_theorem_is_measured(rows):
    assert {row.theorem for row in rows} == set(proofs.THEOREMS)


def test_a_wrong_theorem_is_caught(monkeypatch):
    # Plant Var[q.k] = 2 d_k in the proof record the evidence reads. (An error
    # smaller than about three standard errors, such as d_k + 1 at d_k = 64,
    # is beyond what a Monte Carlo check of this size can see.)
    original = proofs.dot_product_variance

    def wrong(cross_check=True):
        proof = original(cross_check=False)
        last = proof.steps[-1]
        steps = (*proof.steps[:-1], dataclasses.replace(last, rhs=2 * last.rhs))
        return dataclasses.replace(proof, steps=steps)

    monkeypatch.setattr(proofs, "dot_product_variance", wrong)
    failing = [row for row in evidence() if not row.holds]
    assert failing and {row.theorem for row in failing} == {"thm-dot-product-variance"}


def test_intervals_are_what_make_the_check(monkeypatch):
    # With zero-width intervals a Monte Carlo estimate never equals the proved value.
    monkeypatch.setattr(evidence_module, "Z", 0.0)
    assert not all(row.holds for row in evidence())


def test_table_links_every_row(rows):
    table = evidence_table(rows).splitlines()
    assert len(table) == len(rows) + 2
    assert all("{prf:ref}`" in line for line in table[2:])


def test_row_holds_uses_the_interval():
    assert EvidenceRow("t", "q", 1.0, 1.0, 0.5, 1.5, "").holds
    assert not EvidenceRow("t", "q", 2.0, 1.0, 0.5, 1.5, "").holds
