r"""Theorem statements for the pages, printed from the proofs the pages run.

A page states a registered theorem inside a ``prf:theorem`` (or ``prf:lemma``)
directive whose displayed equation is pasted with ``{glue:math}`` under the
theorem's label. The value glued there is the proof's own statement: the
LaTeX of the result steps that the build has just checked, so the statement a
reader sees cannot drift from the check.
"""

from __future__ import annotations

from attention_scaling.proofs import Proof
from attention_scaling.proofs.engine import Math

__all__ = ["statements"]


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
