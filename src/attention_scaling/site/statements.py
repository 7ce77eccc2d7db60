r"""Theorem statements for the pages, printed from the proofs the pages run.

A page states a registered theorem inside a ``prf:theorem`` (or ``prf:lemma``)
directive whose displayed equation is pasted with ``{glue:math}`` under the
theorem's label. The value glued there is the proof's own statement: the
LaTeX of the result steps that the build has just checked, so the statement a
reader sees cannot drift from the check.
"""

from __future__ import annotations

import sympy as sp

from attention_scaling.proofs import Proof
from attention_scaling.proofs.engine import Math

__all__ = ["aligned_display", "displays", "statements"]


def statements(*proofs: Proof) -> dict[str, Math]:
    r"""The glue values of the theorems a page states: each proof's label, and its statement as math.

    Parameters
    ----------
    *proofs : Proof
        Proofs the page has run, in any order.

    Returns
    -------
    dict of str to Math
        ``{proof.label: proof.statement_math()}``, for ``glue(key, value, display=False)``.

    Raises
    ------
    TypeError
        If an argument is not a :class:`~attention_scaling.proofs.Proof`.
    ValueError
        If two proofs have the same label.

    Examples
    --------
    >>> from attention_scaling.proofs import scaled_variance
    >>> from attention_scaling.site.statements import statements
    >>> list(statements(scaled_variance()))
    ['thm-scaled-variance']
    """
    values: dict[str, Math] = {}
    for proof in proofs:
        if not isinstance(proof, Proof):
            raise TypeError(f"statements takes Proof objects; got {type(proof).__name__}")
        if proof.label in values:
            raise ValueError(f"two proofs labelled {proof.label!r}")
        values[proof.label] = proof.statement_math()
    return values


def displays(proofs, extra: dict[str, dict[str, tuple[int, ...]]]) -> dict[str, Math]:
    r"""Each theorem's statement under its label, and the further displays of its steps that ``extra`` names.

    The statements come from :func:`~attention_scaling.site.statements.statements`;
    ``extra`` maps a theorem's label to ``{glue key: step indices}``, each
    shown by :func:`aligned_display`. A key that is an equation label is
    pasted under that label.
    """
    values = statements(*proofs)
    for proof in proofs:
        for key, results in extra.get(proof.label, {}).items():
            values[key] = aligned_display(proof, results)
    return values


def aligned_display(proof: Proof, results: tuple[int, ...]) -> Math:
    r"""Steps of a proof as one display, a row each, aligned at their relations.

    Each row is the step's two sides as SymPy prints them (as in
    :meth:`~attention_scaling.proofs.Step.latex`), so the display is the
    checked steps, laid out for a narrow page.

    Examples
    --------
    >>> from attention_scaling.proofs import needle_limit
    >>> from attention_scaling.site.statements import aligned_display
    >>> aligned_display(needle_limit(), (2,)).latex
    '\\begin{aligned}n^{s z} &= e^{s z \\ln n}\\end{aligned}'
    """
    rows = [f"{sp.latex(step.lhs)} &{step.relation} {sp.latex(step.rhs)}" for step in (proof.steps[i] for i in results)]
    return Math(r"\begin{aligned}" + r",\\ ".join(rows) + r"\end{aligned}")
