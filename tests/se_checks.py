"""Seeded Monte Carlo estimates, checked against what they estimate within a few standard errors.

NumPy does not promise that a seeded ``Generator`` method gives the same
stream from one release to the next, so a test that pins a seeded result to
the digits one run printed breaks on an upgrade with nothing wrong. The tests
compare each estimate instead to its true value -- derived analytically, or
computed independently (numerical integration, or a larger simulation that
does not share the product's code) -- within :data:`Z` standard errors. The
standard error is the one the code under test reports, or one derived from the
sample size; either way it is stated next to the check. ``tests/`` is on
``sys.path`` under pytest.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

#: Tolerance in standard errors. A correct estimate with a normal error lands
#: further than 5 SE from its true value with probability 6e-7, so a failure
#: means a fault, not bad luck; a factor of 2, a lost sqrt or a wrong scale
#: still moves these estimates by tens of SE or more.
Z = 5.0

#: A standard error the code under test reports is itself estimated from the
#: draws; at the sample sizes here its relative error is a few per cent at
#: most, so it must match the one theory predicts to within this fraction. That
#: catches a standard error that is off by a factor (sqrt(2), 2, sqrt(n)).
SE_REL = 0.15


def within(true, se, z: float = Z):
    """``pytest.approx(true)`` to within ``z`` standard errors: use as ``estimate == within(true, se)``."""
    se = np.asarray(se, dtype=float)
    assert np.all(se > 0) and np.all(np.isfinite(se)), f"a standard error must be finite and > 0; got {se}"
    return pytest.approx(true, rel=0, abs=float(np.max(z * se)) if se.ndim else z * se)


def combined_se(*standard_errors) -> float:
    """The standard error of a difference of independent estimates."""
    return math.sqrt(sum(float(s) ** 2 for s in standard_errors))


def agree(estimate, se, reference, reference_se, z: float = Z) -> None:
    """Assert that two independent estimates of one quantity differ by at most ``z`` combined standard errors."""
    tolerance = z * combined_se(se, reference_se)
    assert abs(estimate - reference) <= tolerance, (
        f"{estimate} ± {se} and the reference {reference} ± {reference_se} differ by "
        f"{abs(estimate - reference):.3g} > {z:g} combined SE ({tolerance:.3g})")


def proportion_se(p: float, n: int) -> float:
    """Standard error of a proportion ``p`` of ``n`` independent draws."""
    return math.sqrt(p * (1 - p) / n)


def dot_variance_se(d_k: int, n: int) -> float:
    r"""Standard error of the sample variance of ``n`` dot products of two ``d_k``-vectors of independent N(0, 1).

    :math:`q \cdot k` has variance :math:`d_k` and fourth moment
    :math:`3 d_k^2 + 6 d_k` (each product :math:`q_i k_i` has variance 1 and
    fourth moment 9), so :math:`\operatorname{Var}[s^2] \approx (\mu_4 - \sigma^4)/n = (2 d_k^2 + 6 d_k)/n`.
    """
    return math.sqrt((2 * d_k**2 + 6 * d_k) / n)


def mean_and_se(samples) -> tuple[float, float]:
    """Sample mean and its standard error, computed here (not with the package's estimator)."""
    x = np.asarray(samples, dtype=float).ravel()
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size))
