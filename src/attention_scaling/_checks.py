"""Input validation shared by the public functions.

Every error names the argument, what was expected and what was received, so
that a bad call fails loudly instead of returning NaN.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = [
    "as_float_array",
    "integer_at_least",
    "positive_finite_scalar",
    "require_distribution",
    "require_finite",
    "require_ndim",
]


def as_float_array(value, name: str) -> np.ndarray:
    """Return ``value`` as a floating array, keeping a floating dtype if given.

    Integers become float64; booleans, complex numbers and objects are refused
    because none of them is a meaningful attention score.
    """
    try:
        array = np.asarray(value)
    except (TypeError, ValueError) as error:
        raise TypeError(f"{name} must be a real numeric array; got {type(value).__name__}") from error
    if array.dtype.kind in "iu":
        return array.astype(np.float64)
    if array.dtype.kind != "f":
        raise TypeError(f"{name} must be a real numeric array; got dtype {array.dtype}")
    return array


def require_ndim(array: np.ndarray, name: str, ndim: int, layout: str) -> None:
    """Raise ``ValueError`` unless ``array`` has at least ``ndim`` axes."""
    if array.ndim < ndim:
        raise ValueError(f"{name} must have shape {layout}; got shape {array.shape}")


def require_finite(array: np.ndarray, name: str) -> None:
    """Raise ``ValueError`` if ``array`` holds a NaN or an infinity."""
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must contain only finite values; got NaN or infinity")


def integer_at_least(value, name: str, minimum: int) -> int:
    """Return ``value`` as an int after checking it is an integer >= ``minimum``.

    Booleans are refused: ``True`` is an int to Python but never a count.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer; got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}")
    return int(value)


def positive_finite_scalar(value, name: str) -> float:
    """Return ``value`` as a float after checking it is a finite number > 0."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number; got {type(value).__name__}")
    value = float(value)
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be finite and > 0; got {value!r}")
    return value


def require_distribution(p: np.ndarray, name: str) -> None:
    """Raise ``ValueError`` unless ``p`` holds probability vectors on its last axis.

    The sum may differ from one by ``sqrt(eps)`` of the dtype: far more than the
    rounding error of a softmax, far less than any real mistake.
    """
    require_ndim(p, name, 1, "(..., n)")
    if p.shape[-1] == 0:
        raise ValueError(f"{name} must have at least one entry on its last axis; got shape {p.shape}")
    require_finite(p, name)
    if np.any(p < 0):
        raise ValueError(f"{name} must be non-negative; got a minimum of {p.min()!r}")
    tolerance = math.sqrt(np.finfo(p.dtype).eps)
    totals = p.sum(axis=-1)
    worst = np.max(np.abs(totals - 1))
    if worst > tolerance:
        raise ValueError(
            f"{name} must sum to 1 over its last axis (within {tolerance:.1e}); "
            f"got a sum that is off by {worst:.3g}"
        )
