r"""How a page-support function reports that something its page states is false.

The prose of a page says what its numbers show ("the ratio is exactly
:math:`c^2`", "no head violates the bound"). The page-support function that
computes the numbers checks each such statement with :func:`require`; a
failure raises :class:`PageCheckError`, which stops the build at the cell
that asked for the numbers, as the ``assert`` that once stood in the page did.
"""

from __future__ import annotations

__all__ = ["PageCheckError", "require"]


class PageCheckError(RuntimeError):
    """A statement a page makes about its computed numbers does not hold."""


def require(condition, where: str, check: str, **values) -> None:
    r"""Raise :class:`PageCheckError` unless ``condition`` is true.

    Parameters
    ----------
    condition : bool or numpy.bool\_
        The outcome of the check.
    where : str
        The page section (its label) whose prose states the check.
    check : str
        The statement, in words or as the expression that was tested.
    **values
        The values the check compared, shown in the error message.

    Raises
    ------
    PageCheckError
        If ``condition`` is false; the message names ``where``, ``check`` and
        every value.

    Examples
    --------
    >>> from attention_scaling.site.checks import PageCheckError, require
    >>> require(3 > 2, "some-page", "three exceeds two")
    >>> try:
    ...     require(1 > 2, "some-page", "one exceeds two", one=1, two=2)
    ... except PageCheckError as error:
    ...     print(error)
    some-page: check failed: one exceeds two (one=1, two=2)
    """
    if not bool(condition):
        shown = ", ".join(f"{name}={value!r}" for name, value in values.items())
        raise PageCheckError(f"{where}: check failed: {check}" + (f" ({shown})" if shown else ""))
