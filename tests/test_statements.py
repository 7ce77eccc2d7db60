"""A theorem's displayed statement is the one the build checked, and says how it was checked.

Each page states a registered theorem in a ``prf:theorem`` or ``prf:lemma``
directive whose displayed equation is pasted by ``{glue:math}`` from the
proof that the page runs (:func:`attention_scaling.site.statements.statements`);
typed display math there could drift from the check, so it is refused. No
step is made outside the engine, and no display string stands in for a
checked expression.
"""

import ast
import re

import pytest

from attention_scaling.proofs import REGISTRY
from page_sources import PAGES, REPO, page_source


# A statement directive, fenced with three or more backticks, and its body up to the same fence.
STATEMENT = re.compile(r"^(?P<fence>`{3,})\{prf:(?:theorem|lemma)\}[^\n]*\n(?P<body>.*?)^(?P=fence)$", re.S | re.M)
LABEL = re.compile(r"^:label: (\S+)$", re.M)
TYPED_MATH = re.compile(r"\$\$|\\begin\{(?:equation|align)")


def statement_blocks(text: str) -> dict[str, str]:
    """The body of each labelled statement directive, by label."""
    blocks = {}
    for match in STATEMENT.finditer(text):
        label = LABEL.search(match["body"])
        if label:
            blocks[label.group(1)] = match["body"]
    return blocks


def statement_problems(label: str, body: str) -> list[str]:
    """What is wrong with how a registered theorem's statement is displayed (empty if nothing)."""
    problems = []
    if not re.search(rf"^`{{3}}\{{glue:math\}} {re.escape(label)}$", body, re.M):
        problems.append(f"{label}: the statement does not paste the checked result with {{glue:math}} {label}")
    if TYPED_MATH.search(body):
        problems.append(f"{label}: the statement has typed display math, which nothing checks")
    return problems


def stated_theorems() -> dict[str, tuple[str, str]]:
    """Every labelled statement directive of the site: label -> (page, body)."""
    stated = {}
    for page in PAGES:
        for label, body in statement_blocks(page_source(page)).items():
            assert label not in stated, f"{label} is stated on {stated[label][0]} and {page.name}"
            stated[label] = (page.name, body)
    return stated


GOOD = "````{prf:theorem} T\n:label: thm-x\n\nIf ..., then\n\n```{glue:math} thm-x\n:label: eq-x\n```\n````\n"


def test_the_statement_parser_reads_four_backtick_directives():
    assert statement_blocks(GOOD) == {"thm-x": GOOD.split("\n", 1)[1].rsplit("````", 1)[0]}
    assert statement_problems("thm-x", statement_blocks(GOOD)["thm-x"]) == []


def test_a_typed_statement_is_refused():
    # Planted fault: the statement typed beside (or instead of) the pasted check.
    typed = GOOD.replace("If ..., then\n", "If ..., then\n\n$$\n\\operatorname{Var}[q \\cdot k] = 2 d_k\n$$\n")
    assert statement_problems("thm-x", statement_blocks(typed)["thm-x"]) == [
        "thm-x: the statement has typed display math, which nothing checks"]
    untied = GOOD.replace("{glue:math} thm-x", "{glue:math} thm-y")
    assert statement_problems("thm-x", statement_blocks(untied)["thm-x"]) == [
        "thm-x: the statement does not paste the checked result with {glue:math} thm-x"]


def test_every_registered_theorem_is_stated_from_its_check():
    stated = stated_theorems()
    theorems = [label for label, entry in REGISTRY.items() if entry.kind == "theorem"]
    missing = [label for label in theorems if label not in stated]
    assert not missing, f"registered theorems no page states: {missing}"
    problems = [problem for label in theorems for problem in statement_problems(label, stated[label][1])]
    assert not problems, "\n".join(problems)


def test_every_built_statement_is_the_checked_one(repo_html):
    import html

    for label, (page, _) in stated_theorems().items():
        if label in REGISTRY and REGISTRY[label].kind == "theorem":
            built = (repo_html / page.replace(".md", ".html")).read_text(encoding="utf-8")
            assert html.escape(REGISTRY[label].run().statement, quote=False) in built, (label, page)


def _source_files():
    return sorted((REPO / "src").rglob("*.py"))


def steps_made_outside_the_engine(source: str) -> list[int]:
    """Lines of ``source`` that call ``Step(...)`` directly."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "Step"
    ]


def test_no_step_is_made_outside_the_engine():
    engine = REPO / "src" / "attention_scaling" / "proofs" / "engine.py"
    made = {
        str(path.relative_to(REPO)): lines
        for path in _source_files()
        if path != engine and (lines := steps_made_outside_the_engine(path.read_text(encoding="utf-8")))
    }
    pages = {page.name for page in PAGES if re.search(r"\bStep\(", page.read_text(encoding="utf-8"))}
    assert not made and not pages, (made, pages)
    assert steps_made_outside_the_engine("from x import Step\nStep(1, 1)\n") == [2]  # the scan can fail


def display_strings(source: str) -> list[int]:
    """Lines of ``source`` that pass a ``shown=`` keyword: LaTeX typed in place of a checked expression."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call) and any(keyword.arg == "shown" for keyword in node.keywords)
    ]


def test_no_display_string_stands_in_for_a_check():
    offenders = {
        str(path.relative_to(REPO)): lines
        for path in _source_files()
        if (lines := display_strings(path.read_text(encoding="utf-8")))
    }
    pages = [page.name for page in PAGES if re.search(r"\bshown=", page.read_text(encoding="utf-8"))]
    assert not offenders and not pages, (offenders, pages)
    assert display_strings('check("t", x, y, shown=r"x = y")\nshown = 1\n') == [1]  # the scan can fail


def test_a_step_cannot_be_constructed_directly():
    from attention_scaling.proofs import Step

    with pytest.raises(TypeError, match="made only by check"):
        Step(1, 1)
