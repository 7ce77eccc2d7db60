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
from collections.abc import Mapping
from types import ModuleType

import numpy as np

__all__ = ["glue_fields", "import_pages"]


def glue_fields(record, prefix: str) -> dict[str, object]:
    """A page record's glue keys and values: ``<prefix>_<field>`` for each field that is a number or a string.

    A page glues them all in one line. A field that is itself a record, or a
    mapping with string keys, is glued through: its numbers are
    ``<prefix>_<field>_<name>``, to any depth. Arrays, tuples and lists are
    not glued. A NumPy number is given as the Python number it holds, which
    myst-nb's ``{glue:text}`` formats.

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
    ValueError
        If two fields give the same key (a field ``a_b`` beside a record
        ``a`` with a field ``b``).

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> from attention_scaling.site import glue_fields
    >>> from attention_scaling.simulate import Estimate
    >>> @dataclass(frozen=True)
    ... class Measured:
    ...     d_k: int
    ...     variance: float
    ...     samples: tuple
    ...     by_policy: dict
    >>> import numpy as np
    >>> glue_fields(Measured(64, np.float64(1.01), (0.5, 1.5), {"sqrt": Estimate(1.0, 0.02)}), "demo")
    {'demo_d_k': 64, 'demo_variance': 1.01, 'demo_by_policy_sqrt_value': 1.0, 'demo_by_policy_sqrt_standard_error': 0.02}
    """
    if not dataclasses.is_dataclass(record) or isinstance(record, type):
        raise TypeError(f"glue_fields takes a dataclass record; got {type(record).__name__}")
    return _glued(prefix, {field.name: getattr(record, field.name) for field in dataclasses.fields(record)})


def _glued(prefix: str, values: Mapping) -> dict[str, object]:
    keys: dict[str, object] = {}
    for name, value in values.items():
        key = f"{prefix}_{name}"
        # myst-nb formats a glued number from its text; a NumPy scalar's text (np.float64(0.5)) it cannot read.
        value = value.item() if isinstance(value, np.generic) else value
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            inner = _glued(key, {field.name: getattr(value, field.name) for field in dataclasses.fields(value)})
        elif isinstance(value, Mapping) and all(isinstance(name, str) for name in value):
            inner = _glued(key, value)
        # bool is a Number too, but a page states a verdict in words, not as True or False.
        elif isinstance(value, (numbers.Number, str)) and not isinstance(value, bool):
            inner = {key: value}
        else:
            continue
        # A field a_b beside a record a with a field b would give the same key twice; one would be lost.
        if clash := sorted(keys.keys() & inner.keys()):
            raise ValueError(f"glue_fields: the keys {clash} come from two fields; rename one of them")
        keys |= inner
    return keys


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
