r"""Page support for the section "Temperatures for longer contexts" of ``docs/long-sequences.md``.

One function per subsection, each returning a record of the numbers the
prose states, with the checks that make the prose true inside it
(:func:`~attention_scaling.site.checks.require`), and the exercise's answer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import sympy as sp

from attention_scaling.long_sequences import needle_weight
from attention_scaling.proofs import Proof
from attention_scaling.site import glue_fields
from attention_scaling.site.checks import require
from attention_scaling.site.statements import statements
from attention_scaling.temperatures import TemperatureSweep, multiplier, su_multiplier, yarn_scale

__all__ = [
    "MULTIPLIER_LENGTHS",
    "FreezingLengths",
    "MeasuredTemperatures",
    "Multipliers",
    "NeedleAnswer",
    "freezing_lengths",
    "measured_temperatures",
    "multipliers",
    "needle_answer",
    "section_values",
]

_PAGE = "long-sequences.md"

#: The lengths of the page's table of multipliers.
MULTIPLIER_LENGTHS = (512, 4096, 32768, 131072, 2**20)


def _where(section: str) -> str:
    return f"{_PAGE}, section {section}"


@dataclass(frozen=True)
class Multipliers:
    """The multiplier of each method at the table's lengths, and YaRN's factors at an extension of 8.

    Attributes
    ----------
    m : dict of str to float
        :math:`m(n)` of each method at each length of the table, keyed ``<method>_<n>``, with a hyphen
        of the method's name written as an underscore (``sqrt_log_4096``).
    yarn_scale_8, yarn_logits_8 : float
        YaRN's :math:`\\sqrt{1/t}` and its square at :math:`s = 8`.
    su_needle_threshold : float
        :math:`\\ln 512`: under Su's scale (base scale 1) a needle keeps its weight iff its margin exceeds it.
    """

    m: dict[str, float]
    yarn_scale_8: float
    yarn_logits_8: float
    su_needle_threshold: float


def multipliers(methods=("su", "log", "yarn", "qwen", "llama4", "sqrt-log")) -> Multipliers:
    r"""The table of multipliers, checked: each is 1 at its reference length and none falls with :math:`n`.

    Examples
    --------
    >>> from attention_scaling.site.temperatures import multipliers
    >>> record = multipliers()
    >>> record.m["su_512"], round(record.m["llama4_131072"], 3), round(record.yarn_scale_8, 3)
    (1.0, 1.283, 1.208)
    """
    lengths = np.array(MULTIPLIER_LENGTHS)
    table = {method: multiplier(method, lengths) for method in methods}
    where = _where("long-temperatures")
    require(all(np.all(np.diff(values) >= 0) for values in table.values()), where,
            "every multiplier is non-decreasing in n", table={k: v.tolist() for k, v in table.items()})
    require(math.isclose(table["su"][0], 1.0) and all(math.isclose(table[m][1], 1.0) for m in methods if m != "su"),
            where, "Su's multiplier is 1 at 512, the others at 4096 (Llama 4: below 8192)")
    scale = float(yarn_scale(8))
    m = {f"{method.replace('-', '_')}_{int(n)}": float(value)
         for method in methods for n, value in zip(lengths, table[method])}
    return Multipliers(m, scale, scale**2, math.log(512))


@dataclass(frozen=True)
class FreezingLengths:
    r"""Where Gaussian noise of spread :math:`s` freezes under a multiplier :math:`c \ln n`: :math:`\ln n^\ast = 2/(cs)^2`.

    Attributes
    ----------
    log10_su, log10_log_4096 : float
        :math:`\log_{10} n^\ast` for Su's :math:`c = 1/\ln 512` and for :math:`\ln n / \ln 4096`, at :math:`s = 1`.
    chiang : float
        :math:`n^\ast` for the raw :math:`\ln n` (:math:`c = 1`) at :math:`s = 1`.
    ssmax : float
        :math:`n^\ast` for Scalable-Softmax's :math:`0.43 \ln n` at :math:`s = 1`.
    """

    log10_su: float
    log10_log_4096: float
    chiang: float
    ssmax: float


def freezing_lengths(entropy: Proof, spread: float = 1.0) -> FreezingLengths:
    r"""The freezing length :math:`n^\ast` of each :math:`\ln n` multiplier, from the last step of ``entropy``.

    ``entropy`` is :func:`~attention_scaling.proofs.entropy_temperature`; its last
    step solves :math:`c^2 \sigma^2 \ln n / 2 = 1` for :math:`\ln n`.

    Examples
    --------
    >>> from attention_scaling.proofs import entropy_temperature
    >>> from attention_scaling.site.temperatures import freezing_lengths
    >>> round(freezing_lengths(entropy_temperature()).chiang, 3)
    7.389
    """
    (solution,) = entropy.steps[-1].rhs
    c, s = sp.Symbol("c", positive=True), sp.Symbol(r"\sigma", positive=True)

    def log_length(coefficient: float) -> float:
        return float(solution.subs({c: coefficient, s: spread}))

    values = FreezingLengths(log_length(1 / math.log(512)) / math.log(10), log_length(1 / math.log(4096)) / math.log(10),
                             math.exp(log_length(1.0)), math.exp(log_length(0.43)))
    require(math.isclose(values.chiang, math.exp(2 / spread**2)), _where("long-temperatures-entropy"),
            "the solution is ln n* = 2 / (c sigma)^2", chiang=values.chiang)
    return values


@dataclass(frozen=True)
class MeasuredTemperatures:
    r"""What the page says of the sweep: :math:`H/\ln n` at the shortest and longest length per method, and more.

    A method's key is its name with a hyphen written as an underscore (``sqrt_log``).

    Attributes
    ----------
    h : dict of str to float
        Mean :math:`H/\ln n` at the shortest and the longest length, keyed ``<method>_short`` and
        ``<method>_long``, and its standard error, keyed ``<method>_short_se`` and ``<method>_long_se``.
    worst_plug_in : float
        The largest distance between a measured :math:`H/\ln n` and its plug-in value, over the sweep.
    sqrt_log_range : float
        The spread (max - min) of :math:`H/\ln n` under the :math:`\sqrt{\ln n}` rule.
    pmax : dict of str to float
        The median largest weight at the longest length, keyed ``<method>``, and its 95 % interval,
        keyed ``<method>_low`` and ``<method>_high``.
    npmax : dict of str to float
        The same, times the longest length: how many times the uniform weight :math:`1/n` it is.
    n_short, n_long, trials_short, trials_long : int
        The shortest and longest length and the rows drawn at each.
    """

    h: dict[str, float]
    worst_plug_in: float
    sqrt_log_range: float
    pmax: dict[str, float]
    npmax: dict[str, float]
    n_short: int
    n_long: int
    trials_short: int
    trials_long: int


def measured_temperatures(sweep: TemperatureSweep) -> MeasuredTemperatures:
    r"""Check the prose against the sweep: the fixed scale's :math:`H/\ln n` rises, Su's and YaRN's fall, the :math:`\sqrt{\ln n}` rule's holds.

    Raises
    ------
    RuntimeError
        A ``PageCheckError`` if one of these fails, or a measured value is
        more than 0.01 from its plug-in value.

    Examples
    --------
    >>> from attention_scaling.temperatures import temperature_sweep
    >>> from attention_scaling.site.temperatures import measured_temperatures
    >>> record = measured_temperatures(temperature_sweep((512, 4096, 2**20), budget=2**15, min_trials=2))
    >>> record.h["fixed_long"] > record.h["fixed_short"]
    True
    """
    where = _where("long-temperatures-measured")
    fraction, se = sweep.entropy_fraction, sweep.entropy_fraction_se
    rising = fraction[sweep.index("fixed")]
    require(np.all(np.diff(rising) > 0), where, "under a fixed scale H / ln n rises with n", values=rising.tolist())
    for method in ("su", "yarn"):
        values = fraction[sweep.index(method)]
        require(values[-1] < values[0] - 3 * (se[sweep.index(method), -1] + se[sweep.index(method), 0]), where,
                f"under {method}'s multiplier H / ln n is lower at the longest length", values=values.tolist())
    drops = {m: fraction[sweep.index(m), 0] - fraction[sweep.index(m), -1] for m in ("su", "log", "yarn")}
    require(fraction[sweep.index("yarn"), -1] < min(fraction[sweep.index(m), -1] for m in ("su", "log", "qwen", "llama4")),
            where, "at the longest length YaRN's H / ln n is the lowest", values=fraction[:, -1].tolist())
    require(drops["log"] < drops["su"], where, "ln n / ln 4096 lowers H / ln n less than Su's multiplier", drops=drops)
    growing = [sweep.index(m) for m in sweep.methods if m != "fixed"]
    require(np.all(sweep.max_weight_low[growing, -1] > sweep.max_weight_high[sweep.index("fixed"), -1]), where,
            "at the longest length every growing multiplier keeps the largest weight above the fixed scale's",
            max_weight=sweep.max_weight[:, -1].tolist())
    medians = {m: sweep.max_weight[sweep.index(m), -1] for m in sweep.methods if m != "fixed"}
    require(min(medians, key=medians.get) == "sqrt-log" and max(medians, key=medians.get) == "yarn", where,
            "of the growing multipliers, the sqrt(ln n) rule keeps the smallest and YaRN the largest weight",
            medians=medians)
    held = fraction[sweep.index("sqrt-log")]
    spread = float(held.max() - held.min())
    require(spread < 0.005, where, "the sqrt(ln n) rule holds H / ln n within 0.005", values=held.tolist())
    worst = float(np.max(np.abs(fraction - sweep.plug_in_fraction())))
    require(worst < 0.01, where, "every measured H / ln n is within 0.01 of its plug-in value", worst=worst)
    h, pmax, npmax = {}, {}, {}
    for i, method in enumerate(sweep.methods):
        key = method.replace("-", "_")
        for end, j in (("short", 0), ("long", -1)):
            h[f"{key}_{end}"], h[f"{key}_{end}_se"] = float(fraction[i, j]), float(se[i, j])
        for suffix, top in (("", sweep.max_weight), ("_low", sweep.max_weight_low), ("_high", sweep.max_weight_high)):
            pmax[key + suffix] = float(top[i, -1])
            npmax[key + suffix] = int(sweep.lengths[-1]) * pmax[key + suffix]
    return MeasuredTemperatures(h, worst, spread, pmax, npmax, int(sweep.lengths[0]), int(sweep.lengths[-1]),
                                int(sweep.trials[0]), int(sweep.trials[-1]))


def section_values(lengths: Proof, entropy: Proof, sweep: TemperatureSweep) -> dict:
    """Every glue value of the section: the two statements, the multipliers, the freezing lengths, the measurements.

    Examples
    --------
    >>> from attention_scaling.proofs import entropy_temperature, length_temperatures
    >>> from attention_scaling.temperatures import temperature_sweep
    >>> from attention_scaling.site.temperatures import section_values
    >>> values = section_values(length_temperatures(), entropy_temperature(),
    ...                         temperature_sweep((512, 4096, 2**20), budget=2**15, min_trials=2))
    >>> "thm-length-temperatures" in values, round(values["temp_su_needle_threshold"], 3)
    (True, 6.238)
    """
    return {**statements(lengths, entropy), **glue_fields(multipliers(), "temp"),
            **glue_fields(freezing_lengths(entropy), "temp_freeze"), **glue_fields(measured_temperatures(sweep), "temp")}


@dataclass(frozen=True)
class NeedleAnswer:
    r"""Exercise ``ex-su-needle``: the margin a needle needs under Su's scale, and its weight at a long length.

    Attributes
    ----------
    threshold : float
        The margin threshold :math:`\ln 512` (base scale 1).
    length : int
        The length at which the weights were computed.
    weight : dict of str to float
        The needle's weight at ``length`` for each margin, keyed by the margin as text (``"8"`` for 8.0).
    """

    threshold: float
    length: int
    weight: dict[str, float]


def needle_answer(threshold, length: int, weights: dict) -> NeedleAnswer:
    r"""Check the exercise's answer: the threshold is :math:`\ln 512`, and each weight is the needle's weight under Su's scale.

    Parameters
    ----------
    threshold : float
        The reader's margin threshold (base scale 1).
    length : int
        The length at which the weights were computed.
    weights : dict
        ``{margin: weight}`` as the solution computed them.

    Raises
    ------
    RuntimeError
        A ``PageCheckError`` if the threshold is not :math:`\ln 512`, a weight
        differs from the softmax of explicit scores, or a margin above the
        threshold does not get more weight than one below it.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.long_sequences import needle_weight
    >>> from attention_scaling.temperatures import su_multiplier
    >>> from attention_scaling.site.temperatures import needle_answer
    >>> n = 10**6
    >>> weights = {m: float(needle_weight(n, m, su_multiplier(n))) for m in (5.0, 8.0)}
    >>> round(needle_answer(np.log(512), n, weights).weight["8"], 3)
    0.98
    """
    where = _where("long-temperatures-exercise")
    require(math.isclose(float(threshold), math.log(512), rel_tol=1e-12), where, "the threshold is ln 512",
            threshold=threshold)
    scale = float(su_multiplier(length))
    for margin, weight in weights.items():
        scores = np.zeros(length)
        scores[0] = margin
        shifted = scale * (scores - margin)
        direct = 1.0 / np.sum(np.exp(shifted))
        require(math.isclose(weight, direct, rel_tol=1e-9), where, "each weight is softmax of the explicit scores",
                margin=margin, weight=weight, direct=direct)
        require(math.isclose(weight, float(needle_weight(length, margin, scale)), rel_tol=1e-9), where,
                "each weight is the closed form", margin=margin)
    above = [w for m, w in weights.items() if m > threshold]
    below = [w for m, w in weights.items() if m < threshold]
    require(bool(above) and bool(below) and min(above) > max(below), where,
            "a margin above ln 512 gets more weight than one below", weights=weights)
    return NeedleAnswer(float(threshold), int(length),
                        {f"{margin:g}": weight for margin, weight in weights.items()})
