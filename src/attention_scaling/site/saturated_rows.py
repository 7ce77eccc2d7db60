r"""Page support for the section "Saturated rows: the gap between the top two scores" (``docs/saturation.md``).

:func:`gap_numbers` takes the two proofs the section states, a seeded check
of the gap distribution and the sweep over :math:`d_k`, checks what the prose
says of them, and returns a record whose :meth:`~GapNumbers.glue_values` are
the numbers the prose quotes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from attention_scaling.proofs import Proof
from attention_scaling.site.checks import require
from attention_scaling.top_gap import SaturatedRows, gap_density_at_zero, gap_distribution, gap_threshold

__all__ = ["GapNumbers", "gap_numbers"]

_WHERE = "saturation.md, section saturation-gap"


@dataclass(frozen=True)
class GapNumbers:
    r"""The numbers of the section on saturated rows.

    Attributes
    ----------
    values : dict of str to object
        Glue key to value: the step counts of each theorem, the threshold and
        :math:`\ell`, :math:`f_G(0)`, the Monte Carlo check of :math:`F_G`,
        and for the smallest and largest :math:`d_k` the measured fraction,
        its interval, the bound and the asymptote.
    """

    values: dict

    def glue_values(self) -> dict[str, object]:
        """The page's glue keys and their values."""
        return dict(self.values)


def gap_numbers(jacobian: Proof, probability: Proof, mc_gap: float, mc_share: float, mc_se: float,
                data: SaturatedRows, mc_samples: int = 20_000) -> GapNumbers:
    r"""Check and collect the numbers of "Saturated rows: the gap between the top two scores".

    Parameters
    ----------
    jacobian, probability : Proof
        ``saturated_jacobian()`` and ``gap_probability()``.
    mc_gap, mc_share, mc_se : float
        A gap :math:`g`, and a seeded Monte Carlo estimate of :math:`P(G \le g)` for
        ``data.n_keys`` standard normals with its standard error.
    data : SaturatedRows
        The sweep over :math:`d_k` of :func:`~attention_scaling.top_gap.saturated_rows_data`.
    mc_samples : int, default 20 000
        How many rows the Monte Carlo estimate drew.

    Returns
    -------
    GapNumbers

    Raises
    ------
    PageCheckError
        If the Monte Carlo estimate is more than 4 standard errors from the
        integral; if a row breaks :math:`\lVert J \rVert_F \le 4(n-1)e^{-\Delta}`;
        if a measured fraction's 95 % interval lies above the bound; if the
        fraction does not fall as :math:`d_k` grows, with a log-log slope over
        the sweep between -0.65 and -0.35 (the prose: "like
        :math:`1/\sqrt{d_k}`"); or if the median norm at the largest
        :math:`d_k` is not below a thousandth of the mean there, while :math:`\sqrt{d_k}` times
        the mean stays between 0.8 and 2 (the prose: the mean decays only like
        :math:`d_k^{-1/2}` while the median collapses).

    Examples
    --------
    >>> from attention_scaling.proofs import gap_probability, saturated_jacobian
    >>> from attention_scaling.top_gap import gap_monte_carlo, saturated_rows_data
    >>> from attention_scaling.site.saturated_rows import gap_numbers
    >>> (share,), (se,) = gap_monte_carlo([0.5], 8, seed=3)
    >>> numbers = gap_numbers(saturated_jacobian(), gap_probability(), 0.5, share, se, saturated_rows_data())
    >>> round(numbers.glue_values()["gap_f0"], 3)
    1.424
    """
    n, t = data.n_keys, data.t
    integral = float(gap_distribution(mc_gap, n))
    require(abs(mc_share - integral) <= 4 * mc_se, _WHERE, "the Monte Carlo estimate of F_G agrees with the integral",
            estimate=mc_share, standard_error=mc_se, integral=integral)
    require(data.within_bound, _WHERE, "every measured row satisfies ||J||_F <= 4(n - 1) e^(-Delta)")
    require(bool(np.all(data.fraction_low <= data.bound)), _WHERE, "no measured fraction lies above the bound",
            low=data.fraction_low.tolist(), bound=data.bound.tolist())
    slope = float(np.polyfit(np.log(data.d_k), np.log(data.fraction), 1)[0])
    require(bool(np.all(np.diff(data.fraction) < 0)) and -0.65 <= slope <= -0.35, _WHERE,
            "the fraction of rows passing a gradient falls like 1/sqrt(d_k)", fraction=data.fraction.tolist(),
            slope=slope)
    scaled_mean = np.sqrt(data.d_k) * data.mean_norm
    collapsed = data.median_norm[-1] < 1e-3 * data.mean_norm[-1]
    require(bool(np.all((0.8 <= scaled_mean) & (scaled_mean <= 2.0))) and collapsed, _WHERE,
            "sqrt(d_k) times the mean norm stays of order 1 while the median collapses",
            scaled_mean=scaled_mean.tolist(), median=data.median_norm.tolist())
    values: dict[str, object] = {}
    for name, proof in (("jacobian", jacobian), ("probability", probability)):
        for kind, count in proof.counts().items():
            values[f"gap_{name}_{kind}"] = count
    values.update(
        gap_n=n, gap_t=t, gap_ell=gap_threshold(n, t), gap_f0=gap_density_at_zero(n),
        gap_f0_two=1 / math.sqrt(math.pi), gap_mc_g=float(mc_gap), gap_mc_share=float(mc_share), gap_mc_se=float(mc_se),
        gap_mc_integral=integral, gap_mc_n=int(mc_samples), gap_rows=data.n_rows, gap_seed=data.seed, gap_slope=slope,
        gap_scaled_mean_low=float(scaled_mean.min()), gap_scaled_mean_high=float(scaled_mean.max()),
        gap_median_last=float(data.median_norm[-1]),
    )
    for position, tag in ((0, "first"), (-1, "last")):
        values[f"gap_dk_{tag}"] = int(data.d_k[position])
        values[f"gap_fraction_{tag}"] = float(data.fraction[position])
        values[f"gap_fraction_{tag}_low"] = float(data.fraction_low[position])
        values[f"gap_fraction_{tag}_high"] = float(data.fraction_high[position])
        values[f"gap_bound_{tag}"] = float(data.bound[position])
        values[f"gap_asymptote_{tag}"] = float(data.asymptote[position])
    return GapNumbers(values)
