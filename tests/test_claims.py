"""The register of published claims: the tolerance rule, verdicts, and planted faults."""

import dataclasses
import re
from pathlib import Path

import pytest

from attention_scaling.site import claims as claims_module
from attention_scaling.site.checks import PageCheckError
from attention_scaling.site.claims import (
    CLAIMS,
    SOURCES,
    Claim,
    Outcome,
    Verdict,
    assess_all,
    claims_summary,
    claims_table,
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
    assert {claim.source for claim in CLAIMS} == set(SOURCES)


def test_every_link_target_exists_in_the_docs():
    labels = set()
    for page in DOCS.glob("*.md"):
        text = page.read_text()
        labels |= set(re.findall(r"^\(([\w-]+)\)=", text, flags=re.MULTILINE))
        labels |= set(re.findall(r":label: ([\w-]+)", text))
    missing = {claim.where for claim in CLAIMS} - labels
    assert not missing


def test_known_verdicts(assessments):
    # Recomputed by hand from the articles; see the Claims checked page.
    assert assessments["book-scaled-weights"].verdict is Verdict.FAILS
    assert assessments["shekhar-exp-50"].verdict is Verdict.FAILS
    assert assessments["division-ratios"].verdict is Verdict.FAILS
    assert assessments["book-unscaled-five"].verdict is Verdict.HOLDS
    assert assessments["shekhar-unscaled-three"].verdict is Verdict.HOLDS
    assert assessments["reddit-xavier"].verdict is Verdict.CONDITIONAL


def test_all_three_verdicts_occur_and_explanations_are_given(assessments):
    verdicts = {a.verdict for a in assessments.values()}
    assert verdicts == set(Verdict)
    for assessment in assessments.values():
        if assessment.verdict is Verdict.CONDITIONAL:
            assert assessment.explanation.startswith("Only if")


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
    assert entry.assess().explanation == "Only if it rains."


# -- The page's record ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def summary(assessments):
    return claims_summary(list(assessments.values()))


def test_summary_counts_every_claim_once(summary):
    values = summary.glue_values()
    assert values["claims_total"] == len(CLAIMS) == summary.total
    assert values["claims_holds"] + values["claims_conditional"] + values["claims_fails"] == len(CLAIMS)
    assert sum(values[f"claims_from_{source}"] for source in SOURCES) == len(CLAIMS)
    assert values["claims_fails"] >= 3 and values["claims_conditional"] >= 1  # see test_known_verdicts
    assert all(isinstance(value, int) for value in values.values())


def test_the_summary_glues_every_key_the_page_uses(summary):
    used = set(re.findall(r"\{glue:text\}`([\w-]+)", (DOCS / "claims.md").read_text()))
    assert used == set(summary.glue_values())


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
    monkeypatch.setattr(claims_module, "claims_table", lambda rows: original(rows[:-1]))
    with pytest.raises(PageCheckError, match="the tables show every claim exactly once"):
        claims_summary(list(assessments.values()))
