"""The site's promise, on the home and evidence pages, is exactly as strong as the step kinds allow."""

from pathlib import Path

from attention_scaling.proofs.engine import KINDS

DOCS = Path(__file__).resolve().parents[1] / "docs"


def _opening(page: str) -> str:
    """The page's text before its first code cell: where the promise is made."""
    text = (DOCS / page).read_text()
    return text[: text.index("```{code-cell}")]


def test_the_home_page_does_not_promise_that_every_step_is_checked():
    opening = _opening("index.md")
    assert "checks every step" not in opening
    # What is promised instead: SymPy checks the steps marked with a check mark; the others say
    # what they rest on, one word per kind of step the engine makes.
    assert "SymPy verifies\nevery step marked ✓" in opening
    assert all(word in opening for word in ("cited", "argument", "measurement"))


def test_the_evidence_page_does_not_say_every_theorem_is_proved_by_sympy():
    opening = _opening("evidence.md")
    assert "proved by SymPy" not in opening
    assert "checked by SymPy (✓)" in opening
    assert KINDS == ("checked", "cited", "argued", "measured")
    assert all(kind in opening for kind in ("cited", "argued", "measured"))


def test_the_home_pages_plan_does_not_say_the_derivations_are_proved_by_sympy():
    text = (DOCS / "index.md").read_text()
    plan = text[text.index("(index-plan)="):]
    assert "proved by SymPy" not in plan
    assert "by SymPy wherever\n   a step is marked ✓" in plan
