r"""How a page-support function fails: one error type and one helper that raises it.

A page used to ``assert`` what its prose states; the page-support functions
now make those checks, and a failed one raises :class:`PageCheckError`
naming the page or section, the check and the values it saw, so the build
stops where the page's cell used to stop it and pytest can provoke it.
"""

from __future__ import annotations

__all__ = ["PageCheckError", "require"]


class PageCheckError(RuntimeError):
    """A check of what a page states failed; the message names where, what and the values."""


def require(condition, where: str, check: str, **values) -> None:
    r"""Raise :class:`PageCheckError` unless ``condition`` holds.

    Parameters
    ----------
    condition : bool
        The outcome of the check (anything with a truth value, such as a
        numpy boolean).
    where : str
        The page and section, e.g. ``"initialisation.md, initialisation-schemes"``.
    check : str
        What was checked, in words, as the prose states it.
    **values
        The values the check saw, shown in the message.

    Raises
    ------
    PageCheckError
        If ``condition`` is false.

    Examples
    --------
    >>> from attention_scaling.site.checks import PageCheckError, require
    >>> require(2 < 3, "page.md, section", "two is below three", low=2, high=3)
    >>> try:
    ...     require(4 < 3, "page.md, section", "four is below three", low=4, high=3)
    ... except PageCheckError as error:
    ...     print(error)
    page.md, section: check failed: four is below three (low=4, high=3)
    """
    if not bool(condition):
        shown = ", ".join(f"{name}={value!r}" for name, value in values.items())
        raise PageCheckError(f"{where}: check failed: {check}" + (f" ({shown})" if shown else ""))
