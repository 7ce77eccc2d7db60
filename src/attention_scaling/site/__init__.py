"""Page support: what only the site needs.

The library (the rest of :mod:`attention_scaling`) computes; this subpackage
turns its results into what a page shows. Each page (or section) has one
function here that runs the page's experiments, checks what the prose says of
them and returns a typed record of named values for the page to glue; pytest
tests these functions, so a page holds prose, figures and glue only.

Also here: the one Markdown-table helper (:mod:`.tables`), and the site's
registries of claims (:mod:`.claims`), evidence (:mod:`.evidence`) and
citable items (:mod:`.citation`).

A page's support module may register the page's own theorems
(:func:`attention_scaling.proofs.theorem`), figures
(:func:`.figures.register_figure`) and evidence
(:func:`.evidence.register_evidence`). What needs every registered entry (the
graph and evidence pages, ``python -m attention_scaling``, the tests) calls
:func:`import_pages` first.

Nothing in the library imports from here.
"""

from __future__ import annotations

import dataclasses
import importlib
import numbers
import pkgutil
from types import ModuleType

import numpy as np

__all__ = ["glue_fields", "import_pages"]


def glue_fields(record, prefix: str) -> dict[str, object]:
    """A page record's glue keys and values: ``<prefix>_<field>`` for each field that is a number or a string.

    A page glues them all in one line; fields that are arrays, tuples or
    other records are not glued. A NumPy number is given as the Python
    number it holds, which myst-nb's ``{glue:text}`` formats.

    Parameters
    ----------
    record : dataclass instance
        What a page-support function returned.
    prefix : str
        The page's module name, so that keys are unique across pages.

    Returns
    -------
    dict of str to object

    Raises
    ------
    TypeError
        If ``record`` is not a dataclass instance.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> from attention_scaling.site import glue_fields
    >>> @dataclass(frozen=True)
    ... class Measured:
    ...     d_k: int
    ...     variance: float
    ...     samples: tuple
    >>> import numpy as np
    >>> glue_fields(Measured(64, np.float64(1.01), (0.5, 1.5)), "demo")
    {'demo_d_k': 64, 'demo_variance': 1.01}
    """
    if not dataclasses.is_dataclass(record) or isinstance(record, type):
        raise TypeError(f"glue_fields takes a dataclass record; got {type(record).__name__}")
    # myst-nb formats a glued number from its text; a NumPy scalar's text (np.float64(0.5)) it cannot read.
    values = {field.name: getattr(record, field.name) for field in dataclasses.fields(record)}
    values = {name: value.item() if isinstance(value, np.generic) else value for name, value in values.items()}
    # bool is a Number too, but a page states a verdict in words, not as True or False.
    return {f"{prefix}_{name}": value for name, value in values.items()
            if isinstance(value, (numbers.Number, str)) and not isinstance(value, bool)}


def import_pages() -> tuple[ModuleType, ...]:
    """Import every module of the page support, so that all they register is registered.

    The modules not yet imported are imported in the order of their names.
    A page's theorem that ``uses`` a theorem of another page imports that
    page's module first, so that it is registered before. Importing a module
    twice is free: Python keeps it.

    Returns
    -------
    tuple of module
        The modules of ``attention_scaling.site``, by name.

    Examples
    --------
    >>> from attention_scaling.site import import_pages
    >>> [module.__name__ for module in import_pages()][:2]
    ['attention_scaling.site.bounded_logits', 'attention_scaling.site.checks']
    """
    # pkgutil lists the modules sorted by name, whatever order the file system gives.
    return tuple(importlib.import_module(f"{__name__}.{info.name}") for info in pkgutil.iter_modules(__path__))
