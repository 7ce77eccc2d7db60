"""The evidence page's checks: every proved value inside its measured interval."""

import dataclasses
import re
from pathlib import Path

import pytest

from attention_scaling.site import evidence as evidence_module
from attention_scaling import proofs
from attention_scaling.site.checks import PageCheckError
from attention_scaling.site.evidence import EvidenceRow, evidence, evidence_summary, evidence_table


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


# -- The page's record ---------------------------------------------------------------------


def test_summary_values(rows):
    summary = evidence_summary(rows)
    values = summary.glue_values()
    assert values["evidence_rows"] == len(rows) == len(summary.rows)
    assert values["evidence_theorems"] == len(proofs.THEOREMS)
    # About 1 in 370 for three standard errors either side.
    assert values["evidence_one_in"] == pytest.approx(370.4, abs=0.1)
    assert summary.table == evidence_table(rows)


def test_the_summary_glues_every_key_the_page_uses(rows):
    page = (Path(__file__).resolve().parents[1] / "docs" / "evidence.md").read_text()
    assert set(re.findall(r"\{glue:text\}`([\w-]+)", page)) == set(evidence_summary(rows).glue_values())


def test_summary_refuses_a_proved_value_outside_its_interval(rows):
    planted = dataclasses.replace(rows[0], proved=rows[0].high + 1.0)
    with pytest.raises(PageCheckError, match=r"every proved value lies inside.*failures=\[EvidenceRow\(theorem='"):
        evidence_summary([planted, *rows[1:]])


def test_summary_fails_when_a_theorem_is_wrong(monkeypatch):
    # The same planted fault as above, now caught by the page's own check.
    original = proofs.dot_product_variance

    def wrong(cross_check=True):
        proof = original(cross_check=False)
        last = proof.steps[-1]
        return dataclasses.replace(proof, steps=(*proof.steps[:-1], dataclasses.replace(last, rhs=2 * last.rhs)))

    monkeypatch.setattr(proofs, "dot_product_variance", wrong)
    with pytest.raises(PageCheckError, match="thm-dot-product-variance"):
        evidence_summary(evidence())


def test_summary_refuses_no_rows():
    with pytest.raises(PageCheckError, match="at least one measurement"):
        evidence_summary([])
