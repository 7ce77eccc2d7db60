r"""Create a new chapter: ``make page NAME=slug TITLE="..."`` runs this.

It writes three files and appends the page to the contents, at the end of
the chapters (so no number a course has cited changes):

- ``docs/<slug>.md``: front matter, an overview, one theorem proved by the
  engine, one seeded figure, glued numbers and an exercise section with one
  exercise;
- ``src/attention_scaling/site/<module>.py``: its support, where the theorem,
  the figure and the evidence row register themselves;
- ``tests/test_site_<module>.py``: the tests of that support.

``<module>`` is the slug with ``_`` for ``-``. The page builds and passes
``make check`` as created; the contributor then replaces its example with
the chapter's own. Nothing is written unless every check passes, and a file
or label that exists already is never overwritten.
"""

from __future__ import annotations

import argparse
import keyword
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SLUG = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
# Pages that Sphinx or the site writes themselves, whose names a chapter must not take.
RESERVED = {"index", "search", "genindex", "py-modindex", "404"}
# Characters a title may not hold: the title goes into YAML, a Markdown heading and a Python docstring as typed.
MARKUP = set('"\\`$*_[]<>#|{}~')
# The chapters' toctree of docs/index.md: its options, then one page per line, up to the closing fence.
CHAPTERS = re.compile(r"(```\{toctree\}\n:caption: Chapters\n(?::[^\n]*\n)*\n(?:[^\n`]+\n)*)```", re.M)

PAGE = '''---
description: "__TITLE__: a theorem checked by SymPy, a seeded measurement, a figure and an exercise."
file_format: mystnb
kernelspec:
  name: python3
  display_name: Python 3
---

(__SLUG__)=
# __TITLE__

Dividing attention scores by a constant $c$ divides their variance by $c^2$.
This chapter proves it, measures it on seeded scores and draws them. It is
the step from "the scores have variance $d_k$" to "divide by $\\sqrt{d_k}$":
the one constant that gives the scores unit variance whatever the width of
the head. (Made by `make page`: replace this example with the chapter's own.)

```{code-cell} ipython3
:tags: [remove-cell]

%matplotlib inline
from myst_nb import glue
from attention_scaling.site import glue_fields
from attention_scaling.site import __MODULE__ as page
from attention_scaling.site.figures import make_figure
from attention_scaling.site.statements import statements
```

(__SLUG__-theorem)=
## The theorem

````{prf:theorem} Dividing by a constant
:label: thm-__SLUG__

If $X$ has mean $0$ and variance $\\sigma^2$, and $c \\neq 0$ is a constant, then

```{glue:math} thm-__SLUG__
```
````

Each step below was checked by SymPy:

```{code-cell} ipython3
proof = page.scaled_variance()
proof
```

```{code-cell} ipython3
:tags: [remove-cell]

for key, value in statements(proof).items(): glue(key, value, display=False)
```

The theorem needs no distribution, only the mean and the variance of $X$.
Take $X = q \\cdot k$, whose variance is $d_k$ when the $d_k$ coordinates of
$q$ and $k$ are independent with mean $0$ and variance $1$: dividing by
$c = \\sqrt{d_k}$ gives variance $1$ at every width, while dividing by
$c = d_k$ gives $1/d_k$, which shrinks as the head widens.

(__SLUG__-measured)=
## Measured

The scores $q \\cdot k$ of $d_k$ independent standard normal pairs have
variance $d_k$, so the theorem gives the scaled scores
$q \\cdot k / \\sqrt{d_k}$ variance $1$. The draws are seeded, so that every
build measures the same scores and glues the same numbers below.

```{code-cell} ipython3
scores = page.scaled_scores()  # seeded; d_k = 64
glue("fig-__SLUG__", make_figure("__SLUG__", scores), display=False)
```

```{code-cell} ipython3
:tags: [remove-cell]

for key, value in glue_fields(scores, "__MODULE__").items(): glue(key, value, display=False)
```

Over {glue:text}`__MODULE___n:,` seeded pairs at $d_k =$
{glue:text}`__MODULE___d_k`, the scaled scores have variance
{glue:text}`__MODULE___variance:.3f` with a standard error of
{glue:text}`__MODULE___variance_se:.3f`, and their histogram follows the
standard normal density:

```{glue:figure} fig-__SLUG__
:name: fig-__SLUG__
:alt: A histogram of the scaled scores lying on the standard normal density curve.

Seeded scores $q \\cdot k / \\sqrt{d_k}$ against the density of $\\mathcal{N}(0, 1)$.
```

The figure checks the consequence for one width. The theorem itself is
measured on the {doc}`evidence` page, for one $\\sigma$ and one $c$, beside
every other result of the site; the {doc}`graph` shows how it was checked.

(__SLUG__-exercises)=
## Exercises

```{exercise} The constant that gives unit variance
:label: ex-__SLUG__
:class: difficulty-basic

The scores $q \\cdot k$ of the standard case have variance $d_k$. Which
positive constant $c$ gives $q \\cdot k / c$ variance $1$?
```

```{solution-start} ex-__SLUG__
:class: dropdown
```

By the theorem the variance is $d_k / c^2$, which is $1$ only at
$c = \\sqrt{d_k}$. SymPy solves it:

```{code-cell} ipython3
page.unit_variance_scale()
```

```{solution-end}
```
'''

MODULE = '''r"""Page support for "__TITLE__" (``docs/__SLUG__.md``): its theorem, measurement, figure and evidence."""

from dataclasses import dataclass

import numpy as np
import sympy as sp

from attention_scaling.proofs import E, Proof, RandomVariables, Var, check, theorem
from attention_scaling.simulate import dot_product_samples, variance_estimate
from attention_scaling.site.checks import require
from attention_scaling.site.evidence import monte_carlo_row, register_evidence
from attention_scaling.site.figures import register_figure

__all__ = ["LABEL", "ScaledScores", "draw_scaled_scores", "scaled_scores", "scaled_variance", "scaled_variance_rows",
           "unit_variance_scale"]

LABEL = "thm-__SLUG__"
_sigma = sp.Symbol(r"\\sigma", positive=True)
_c = sp.Symbol("c", real=True, nonzero=True)


@theorem(LABEL, "Dividing by a constant")
def scaled_variance() -> Proof:
    r"""Dividing a centred random variable by a constant divides its variance by the square.

    Examples
    --------
    >>> from attention_scaling.site.__MODULE__ import scaled_variance
    >>> scaled_variance().statement
    '\\\\operatorname{Var}\\\\left[\\\\frac{X}{c}\\\\right] = \\\\frac{\\\\sigma^{2}}{c^{2}}'
    """
    rv = RandomVariables()
    X = rv.add("X", 0, _sigma**2)
    steps = (check(LABEL, E(X / _c), 0, rv, "linearity; E[X] = 0"),
             check(LABEL, Var(X / _c), _sigma**2 / _c**2, rv, "definition of variance"))
    return Proof("Dividing by a constant", LABEL, ("X has mean 0 and variance sigma^2", "c is a non-zero constant"), steps)


@dataclass(frozen=True)
class ScaledScores:
    """``n`` seeded scores q.k / sqrt(d_k) (``values``), their sample variance and its standard error."""

    d_k: int
    n: int
    values: np.ndarray
    variance: float
    variance_se: float


def scaled_scores(d_k: int = 64, n: int = 20_000, seed: int = 0) -> ScaledScores:
    """Draw ``n`` seeded standard normal pairs; check that their scaled scores have variance 1 (3 s.e.).

    Raises ``ValueError`` for ``d_k`` below 1 or ``n`` below 2, and ``PageCheckError`` if the check fails.

    Examples
    --------
    >>> from attention_scaling.site.__MODULE__ import scaled_scores
    >>> scores = scaled_scores(d_k=16, n=4_000, seed=1)
    >>> scores.values.shape, abs(scores.variance - 1) <= 3 * scores.variance_se
    ((4000,), True)
    """
    if d_k < 1 or n < 2:
        raise ValueError(f"d_k must be at least 1 and n at least 2; got d_k={d_k!r}, n={n!r}")
    values = dot_product_samples(d_k, n, seed=seed) / np.sqrt(d_k)
    estimate = variance_estimate(values)
    require(abs(estimate.value - 1) <= 3 * estimate.standard_error, "__SLUG__.md, __SLUG__-measured",
            "the scaled scores have variance 1 within 3 standard errors", variance=estimate.value, se=estimate.standard_error)
    return ScaledScores(d_k, n, values, estimate.value, estimate.standard_error)


def draw_scaled_scores(axes, scores: ScaledScores) -> list:
    """Draw the histogram of the scaled scores and the standard normal density on ``axes``; return the artists.

    Examples
    --------
    >>> from attention_scaling.site.figures import make_figure
    >>> make_figure("__SLUG__").axes[0].get_ylabel()
    'density'
    """
    grid = np.linspace(-4, 4, 201)
    *_, bars = axes.hist(scores.values, bins=60, range=(-4, 4), density=True, alpha=0.5, label="measured")
    (curve,) = axes.plot(grid, np.exp(-grid**2 / 2) / np.sqrt(2 * np.pi), label=r"$\\mathcal{N}(0, 1)$")
    axes.set(xlabel=r"$q \\cdot k / \\sqrt{d_k}$", ylabel="density", title=f"Scaled scores, $d_k = {scores.d_k}$")
    axes.legend()
    return [bars, curve]


register_figure("__SLUG__", scaled_scores, draw_scaled_scores, "Scaled scores against N(0, 1)")


@register_evidence
def scaled_variance_rows(rng: np.random.Generator, theorems) -> list:
    """The theorem's variance at sigma = 3, c = 2, read off its proof in ``theorems``, against draws from ``rng``.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.site.__MODULE__ import scaled_variance_rows
    >>> from attention_scaling.proofs import Proved
    >>> [row.holds for row in scaled_variance_rows(np.random.default_rng(0), Proved())]
    [True]
    """
    proved = theorems[LABEL].result.rhs.subs({_sigma: 3, _c: 2})
    return [monte_carlo_row(LABEL, r"\\operatorname{Var}[X/c],\\ X \\sim \\mathcal{N}(0, 3^2),\\ c = 2", proved,
                            variance_estimate(3 * rng.standard_normal(20_000) / 2))]


def unit_variance_scale() -> sp.Expr:
    """The positive ``c`` with ``d_k / c**2 = 1``, solved by SymPy.

    Examples
    --------
    >>> from attention_scaling.site.__MODULE__ import unit_variance_scale
    >>> unit_variance_scale()
    sqrt(d_k)
    """
    d_k, scale = sp.symbols("d_k c", positive=True)
    (root,) = sp.solve(sp.Eq(d_k / scale**2, 1), scale)
    return root
'''

TEST = '''"""The page support of docs/__SLUG__.md: its theorem, measurement, figure and evidence."""

import numpy as np
import pytest

from attention_scaling.proofs import Proved
from attention_scaling.site import __MODULE__ as page
from attention_scaling.site.checks import PageCheckError
from attention_scaling.site.evidence import EVIDENCE
from attention_scaling.site.figures import FIGURES, make_figure
from figure_checks import assert_labelled_axes


def test_the_theorem_is_checked_in_every_step():
    proof = page.scaled_variance()
    assert proof.label == page.LABEL and proof.counts()["checked"] == len(proof.steps)


def test_the_scaled_scores_have_unit_variance_within_their_standard_error():
    scores = page.scaled_scores(d_k=32, n=10_000, seed=3)
    assert abs(scores.variance - 1) <= 3 * scores.variance_se


def test_scores_of_the_wrong_variance_are_refused(monkeypatch):
    # Planted fault: scores whose variance is 2 d_k, not d_k.
    samples = page.dot_product_samples
    monkeypatch.setattr(page, "dot_product_samples", lambda *args, **kwargs: np.sqrt(2) * samples(*args, **kwargs))
    with pytest.raises(PageCheckError, match="__SLUG__-measured"):
        page.scaled_scores()


def test_bad_sizes_are_refused():
    with pytest.raises(ValueError, match="d_k must be at least 1"):
        page.scaled_scores(d_k=0)


def test_the_figure_and_evidence_are_registered():
    assert FIGURES["__SLUG__"].draw is page.draw_scaled_scores
    assert_labelled_axes(make_figure("__SLUG__"), "__SLUG__")
    assert page.scaled_variance_rows in EVIDENCE
    (row,) = page.scaled_variance_rows(np.random.default_rng(0), Proved())
    assert row.theorem == page.LABEL and row.holds
'''


def fail(message: str) -> None:
    print(f"make page: {message}", file=sys.stderr)
    raise SystemExit(2)


def plan(slug: str, title: str, repo: Path = REPO) -> dict[Path, str]:
    """The files to write (new ones whole, docs/index.md with the page appended), after every check."""
    if not SLUG.fullmatch(slug):
        fail(f"NAME={slug!r}: give a slug of lower-case letters and digits joined by single hyphens, e.g. NAME=my-chapter")
    module = slug.replace("-", "_")
    if keyword.iskeyword(module):
        fail(f"NAME={slug!r}: {module} is a Python keyword and cannot name a module; choose another name")
    if slug in RESERVED:
        fail(f"NAME={slug!r}: that is a name Sphinx gives a page of its own; choose another NAME")
    if not title.strip() or any(character in MARKUP or not character.isprintable() for character in title):
        fail(f"TITLE={title!r}: give a one-line title without quotes, backslashes or the marks Markdown and HTML"
             f" read ({' '.join(sorted(MARKUP))})")
    files = {
        repo / "docs" / f"{slug}.md": PAGE,
        repo / "src" / "attention_scaling" / "site" / f"{module}.py": MODULE,
        repo / "tests" / f"test_site_{module}.py": TEST,
    }
    for path in [*files, repo / "src" / "attention_scaling" / f"{module}.py"]:
        if path.exists():
            fail(f"{path.relative_to(repo)} exists already: choose another NAME")
    labels = (f"({slug})=", f"thm-{slug}\n", f"fig-{slug}\n", f"ex-{slug}\n", f"({slug}-")
    for page in sorted((repo / "docs").glob("*.md")):
        text = page.read_text(encoding="utf-8")
        for label in labels:
            if label in text:
                fail(f"a label {label.strip()} of the new page is used in docs/{page.name} already: choose another NAME")
    index = repo / "docs" / "index.md"
    contents = index.read_text(encoding="utf-8")
    chapters = CHAPTERS.search(contents)
    if not chapters:
        fail("docs/index.md has no toctree captioned Chapters to append the page to")
    written = {path: text.replace("__SLUG__", slug).replace("__MODULE__", module).replace("__TITLE__", title.strip())
               for path, text in files.items()}
    written[index] = contents[:chapters.end(1)] + f"{slug}\n" + contents[chapters.end(1):]
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Create a new chapter page, its support module and its tests.")
    parser.add_argument("slug", help="the page's name, e.g. my-chapter")
    parser.add_argument("title", help="the page's title")
    args = parser.parse_args(argv)
    written = plan(args.slug, args.title)
    for path, text in written.items():
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(REPO)}")
    print(f"Next: make html, then make check; append the new numbered items to tests/published_numbers.txt as"
          f" tests/test_numbering.py asks. The page is docs/{args.slug}.md.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
