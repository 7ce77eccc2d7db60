r"""What a course can cite: theorems, figures and exercises, with BibTeX.

The lists are built from the registries that produce the content
(the theorem names of :mod:`attention_scaling.proofs` and the figures of
:mod:`attention_scaling.figures`)
plus the exercise labels; a test checks that every label exists on the page
named here, so a citation cannot point at nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from attention_scaling import __version__
from attention_scaling.figures import FIGURES
from attention_scaling.proofs import THEOREM_NAMES

__all__ = ["Citable", "EXERCISES", "SITE_TITLE", "bibtex", "citables", "items_markdown", "site_bibtex"]

SITE_TITLE = "Why √d_k: executable, checked derivations of the scaling in attention"

# The page that states each theorem and draws each figure.
_THEOREM_PAGES = {
    "lem-product-variance": "dot-product-variance",
    "thm-dot-product-variance": "dot-product-variance",
    "thm-dot-product-general-moments": "dot-product-variance",
    "thm-correlated-dot-product": "dot-product-variance",
    "thm-correlated-scaling-limits": "correlation",
    "thm-logit-norm-growth": "correlation",
    "thm-projected-dot-product": "initialisation",
    "thm-scaled-variance": "scaling",
    "thm-softmax-shift-invariance": "subtraction-vs-division",
    "thm-softmax-jacobian": "saturation",
    "thm-stable-softmax-bounds": "low-precision",
    "thm-gaussian-logit-moments": "long-sequences",
    "thm-gaussian-max-bound": "long-sequences",
    "thm-needle-limit": "long-sequences",
    "thm-qk-norm-bound": "logit-growth",
}
_FIGURE_PAGES = {
    "variance-vs-dk": "regimes",
    "logit-histograms": "regimes",
    "saturation-onset": "saturation",
    "three-regimes": "regimes",
    "jacobian-vs-spread": "saturation",
    "temperature-patterns": "regimes",
    "training-curves": "training",
    "correlated-logits": "correlation",
    "long-sequence-entropy": "long-sequences",
    "entropy-collapse": "logit-growth",
}

#: Exercise labels and titles, in the order of the Exercises page.
EXERCISES = (
    ("ex-std-512", "Standard deviation at d_k = 512"),
    ("ex-saturation-point", "Where softmax saturates"),
    ("ex-scaling-ablation", "A scaling ablation"),
    ("ex-temperature-sweep", "A temperature sweep"),
    ("ex-jacobian-peaked-uniform", "The Jacobian of peaked and uniform weights"),
    ("ex-nonzero-means", "Non-zero means"),
    ("ex-projection-scale", "Projections with variance sigma^2"),
    ("ex-shift-invariance", "Softmax ignores shifts"),
    ("ex-fp16-overflow", "Overflow in half precision"),
    ("ex-correlated-scale", "Correlated queries and keys"),
)


@dataclass(frozen=True)
class Citable:
    """One citable item: its kind, stable label, title and page."""

    kind: str
    label: str
    title: str
    page: str

    @property
    def anchor(self) -> str:
        """Path and anchor of the item, relative to the site root."""
        return f"{self.page}.html#{self.label}"


def citables() -> list[Citable]:
    """Every theorem, figure and exercise, in the order of the site.

    Examples
    --------
    >>> from attention_scaling.site.citation import citables
    >>> items = citables()
    >>> items[0].kind, items[0].anchor
    ('lemma', 'dot-product-variance.html#lem-product-variance')
    """
    items = []
    for label, name in THEOREM_NAMES.items():
        kind = "lemma" if label.startswith("lem-") else "theorem"
        items.append(Citable(kind, label, name, _THEOREM_PAGES[label]))
    for name, spec in FIGURES.items():
        items.append(Citable("figure", f"fig-{name}", spec.title, _FIGURE_PAGES[name]))
    items += [Citable("exercise", label, title, "exercises") for label, title in EXERCISES]
    return items


def _key(label: str) -> str:
    return "whysqrtdk-" + label


def site_bibtex(version: str = __version__, year: int = 2026) -> str:
    """BibTeX for the site as a whole, with its version.

    Examples
    --------
    >>> from attention_scaling.site.citation import site_bibtex
    >>> print(site_bibtex("1.2.3").splitlines()[0])
    @misc{whysqrtdk,
    """
    return (
        "@misc{whysqrtdk,\n"
        f"  title   = {{{SITE_TITLE}}},\n"
        "  author  = {{The Why √d_k authors}},\n"
        f"  year    = {{{year}}},\n"
        f"  version = {{{version}}},\n"
        f"  note    = {{Version {version}}}\n"
        "}"
    )


def bibtex(item: Citable, version: str = __version__, year: int = 2026) -> str:
    """BibTeX for one item; ``crossref`` points at the site entry.

    Examples
    --------
    >>> from attention_scaling.site.citation import citables, bibtex
    >>> print(bibtex(citables()[0], "1.2.3").splitlines()[0])
    @misc{whysqrtdk-lem-product-variance,
    """
    return (
        f"@misc{{{_key(item.label)},\n"
        f"  title    = {{{item.kind.capitalize()}: {item.title}}},\n"
        "  author   = {{The Why √d_k authors}},\n"
        f"  year     = {{{year}}},\n"
        f"  note     = {{Why √d_k, version {version}, {item.anchor}}},\n"
        "  crossref = {whysqrtdk}\n"
        "}"
    )


_ROLES = {"lemma": "prf:ref", "theorem": "prf:ref", "figure": "numref", "exercise": "ref"}


def items_markdown(items: list[Citable], version: str = __version__) -> str:
    """MyST Markdown for the Cite page: a link and a BibTeX block per item.

    Examples
    --------
    >>> from attention_scaling.site.citation import citables, items_markdown
    >>> print(items_markdown(citables()[:1], "1.2.3").splitlines()[0])
    **{prf:ref}`lem-product-variance`** (label `lem-product-variance`)
    """
    blocks = [
        f"**{{{_ROLES[item.kind]}}}`{item.label}`** (label `{item.label}`)\n\n```bibtex\n{bibtex(item, version)}\n```\n"
        for item in items
    ]
    return "\n".join(blocks)
