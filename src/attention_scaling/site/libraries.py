r"""Page support for "What the libraries do" (``docs/libraries.md``).

:func:`defaults_list` renders the documented defaults; one function per
section recomputes what the section's visible cell shows, checks what its
prose states (raising :class:`~attention_scaling.site.checks.PageCheckError`
if a statement fails) and returns a frozen record whose fields the page
glues (:func:`~attention_scaling.site.glue_fields`). :func:`order_table` renders the
overflow counts of the section "Where the scale is applied".
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import sympy as sp

from attention_scaling._attention import attention_scores
from attention_scaling.libraries import LIBRARY_DEFAULTS, LibraryDefault, scores_by_order
from attention_scaling.site.checks import require
from attention_scaling.site.tables import markdown_table

__all__ = [
    "DefaultScaleSection",
    "OrderLimitAnswer",
    "OrderRow",
    "ScaleOrderSection",
    "default_scale_section",
    "defaults_list",
    "order_limit_answer",
    "order_rows",
    "order_table",
    "scale_order_section",
]


def defaults_list(defaults: Iterable[LibraryDefault] = LIBRARY_DEFAULTS) -> str:
    r"""A Markdown bullet list of the libraries' documented default scales, each with its citation.

    Parameters
    ----------
    defaults : iterable of LibraryDefault, default ``LIBRARY_DEFAULTS``

    Returns
    -------
    str
        One item per library: its name, citation, function, argument and default.

    Examples
    --------
    >>> from attention_scaling.site.libraries import defaults_list
    >>> print(defaults_list().splitlines()[1])
    - **JAX** {cite:p}`jax-dpa`: `jax.nn.dot_product_attention`, argument `scale`, default $1/\sqrt{H}$, $H$ the head dimension of the query.
    """
    return "\n".join(
        f"- **{row.library}** {{cite:p}}`{row.citation}`: `{row.function}`, argument `{row.parameter}`, "
        f"default {row.default}."
        for row in defaults
    )


# -- The documented defaults -----------------------------------------------------------------------


@dataclass(frozen=True)
class DefaultScaleSection:
    r"""What section ``libraries-defaults`` states: the default scale is :math:`1/\sqrt{d_k}`.

    Attributes
    ----------
    head_dims : tuple of int
        The head dimensions at which default and explicit scale were compared.
    head_dims_text : str
        The same, as the prose lists them: separated by commas.
    """

    head_dims: tuple[int, ...]
    head_dims_text: str


def default_scale_section(head_dims: Sequence[int] = (1, 16, 64, 128, 256), *, seed: int = 2026) -> DefaultScaleSection:
    r"""Check that :func:`~attention_scaling.attention_scores` defaults to :math:`1/\sqrt{d_k}`, bit for bit.

    Parameters
    ----------
    head_dims : sequence of int
        Head dimensions to compare at, with 4 seeded queries and keys each.
    seed : int, default 2026
        Seed for ``numpy.random.default_rng``.

    Returns
    -------
    DefaultScaleSection

    Raises
    ------
    PageCheckError
        If the default and the explicit scale give different scores.

    Examples
    --------
    >>> from attention_scaling.site import glue_fields
    >>> from attention_scaling.site.libraries import default_scale_section
    >>> glue_fields(default_scale_section((2, 8)), "libraries")
    {'libraries_head_dims_text': '2, 8'}
    """
    where = "libraries-defaults"
    rng = np.random.default_rng(seed)
    for d_k in head_dims:
        q, k = rng.standard_normal((2, 4, d_k))
        default = attention_scores(q, k)
        explicit = attention_scores(q, k, scale=1 / math.sqrt(d_k))
        require(np.array_equal(default, explicit), where, "the default scale gives the scores of 1/sqrt(d_k)",
                d_k=d_k, largest_difference=float(np.max(np.abs(default - explicit))))
    return DefaultScaleSection(tuple(head_dims), ", ".join(str(d) for d in head_dims))


# -- Where the scale is applied --------------------------------------------------------------------


@dataclass(frozen=True)
class OrderRow:
    r"""Float16 scores of one spread :math:`\sigma` of the queries' and keys' components.

    Attributes
    ----------
    sigma : float
        The spread.
    typical : float
        Median :math:`|q \cdot k|`, computed in float64.
    after, split : float
        Fractions of the scores that overflow with the scale after the
        product, and split between the factors.
    """

    sigma: float
    typical: float
    after: float
    split: float


def order_rows(sigmas: Sequence[float] = (16, 64, 96, 128, 256), *, d_k: int = 128, n: int = 64) -> tuple[OrderRow, ...]:
    r"""Count the float16 scores that overflow in each order, for components of growing spread.

    For each :math:`\sigma`, ``n`` queries and ``n`` keys of length ``d_k``
    are drawn with ``numpy.random.default_rng(sigma)`` (so each row is
    reproducible on its own), scaled by :math:`\sigma` and rounded to
    float16; :func:`~attention_scaling.libraries.scores_by_order` forms their
    scores in each order with the default scale.

    Parameters
    ----------
    sigmas : sequence of int
        The spreads; each is also its row's seed.
    d_k, n : int
        Head dimension and number of queries (and keys).

    Returns
    -------
    tuple of OrderRow

    Examples
    --------
    >>> from attention_scaling.site.libraries import order_rows
    >>> [(row.after, row.split) for row in order_rows((16, 256), d_k=128, n=8)]
    [(0.0, 0.0), (0.90625, 0.25)]
    """
    rows = []
    for sigma in sigmas:
        q, k = (sigma * np.random.default_rng(sigma).standard_normal((2, n, d_k))).astype(np.float16)
        typical = float(np.median(np.abs(q.astype(np.float64) @ k.astype(np.float64).T)))
        after = float(np.isinf(scores_by_order(q, k, order="after")).mean())
        split = float(np.isinf(scores_by_order(q, k, order="split")).mean())
        rows.append(OrderRow(sigma, typical, after, split))
    return tuple(rows)


def order_table(rows: Iterable[OrderRow]) -> str:
    r"""A Markdown table of :func:`order_rows`: per :math:`\sigma`, the typical product and the overflow in each order.

    The heading writes :math:`|q \cdot k|` as ``\lvert q \cdot k\rvert``
    in math: a ``|`` would end the cell.

    Parameters
    ----------
    rows : iterable of OrderRow

    Returns
    -------
    str

    Examples
    --------
    >>> from attention_scaling.site.libraries import OrderRow, order_table
    >>> print(order_table([OrderRow(96, 108000.0, 0.5, 0.0)]))
    | $\sigma$ | typical $\lvert q \cdot k\rvert$ | overflowed, scale after | overflowed, scale split |
    |---|---|---|---|
    | 96 | 108,000 | 50.0% | 0.0% |
    """
    header = [r"$\sigma$", r"typical $\lvert q \cdot k\rvert$", "overflowed, scale after", "overflowed, scale split"]
    return markdown_table(
        header, [[f"{row.sigma}", f"{row.typical:,.0f}", f"{row.after:.1%}", f"{row.split:.1%}"] for row in rows]
    )


@dataclass(frozen=True)
class ScaleOrderSection:
    r"""What section ``libraries-order`` states about the two orders in float16.

    Attributes
    ----------
    d_k : int
        Head dimension of the experiment.
    rows : tuple of OrderRow
        The overflow counts, one row per :math:`\sigma`.
    fp16_max : float
        Largest finite float16 value.
    headroom : float
        :math:`1/\text{scale} = \sqrt{d_k}`, how much larger the split order lets the products grow.
    after_96, split_96, split_256 : float
        Fractions of the scores that overflow in each order at :math:`\sigma = 96` and :math:`\sigma = 256`.
    """

    d_k: int
    rows: tuple[OrderRow, ...]
    fp16_max: float
    headroom: float
    after_96: float
    split_96: float
    split_256: float

    def row(self, sigma: float) -> OrderRow:
        """The row of ``sigma``."""
        for row in self.rows:
            if row.sigma == sigma:
                return row
        raise KeyError(f"sigma must be one of {[row.sigma for row in self.rows]}; got {sigma!r}")

    @property
    def table(self) -> str:
        """:func:`order_table` of the rows."""
        return order_table(self.rows)


def scale_order_section(*, d_k: int = 128, n: int = 64) -> ScaleOrderSection:
    r"""Compare the two orders of applying the scale, exactly and in float16, and check what the page says.

    The checks: SymPy expands :math:`(\sqrt{c}\,q) \cdot (\sqrt{c}\,k) - c\,(q \cdot k)`
    to 0 for :math:`d_k = 4` symbolic components; at every :math:`\sigma` of
    :func:`order_rows` the split order overflows no more often than the other;
    at :math:`\sigma = 96` only the order with the scale after the product
    overflows, and at :math:`\sigma = 256` the split order overflows too.

    Parameters
    ----------
    d_k, n : int
        Head dimension and number of queries (and keys) of :func:`order_rows`.

    Returns
    -------
    ScaleOrderSection

    Raises
    ------
    PageCheckError
        If one of these statements fails.

    Examples
    --------
    >>> from attention_scaling.site import glue_fields
    >>> from attention_scaling.site.libraries import scale_order_section
    >>> section = scale_order_section(n=16)
    >>> section.row(96).split, glue_fields(section, "libraries")["libraries_fp16_max"]
    (0.0, 65504.0)
    """
    where = "libraries-order"
    c = sp.Symbol("c", positive=True)
    q_symbols = sp.Matrix(sp.symbols("q_1:5", real=True))
    k_symbols = sp.Matrix(sp.symbols("k_1:5", real=True))
    split = (sp.sqrt(c) * q_symbols).dot(sp.sqrt(c) * k_symbols)
    after = c * q_symbols.dot(k_symbols)
    difference = sp.expand(split - after)
    require(difference == 0, where, "in exact arithmetic the two orders agree", difference=difference)

    rows = order_rows(d_k=d_k, n=n)
    for row in rows:
        require(row.split <= row.after, where, "the split order overflows no more often than scaling after",
                sigma=row.sigma, after=row.after, split=row.split)
    at_96, at_256 = ({row.sigma: row for row in rows}[sigma] for sigma in (96, 256))
    require(at_96.after > 0 and at_96.split == 0, where, "at sigma = 96 only scaling after the product overflows",
            after=at_96.after, split=at_96.split)
    require(at_256.split > 0, where, "at sigma = 256 the split order overflows too", split=at_256.split)
    return ScaleOrderSection(d_k, rows, float(np.finfo(np.float16).max), headroom=math.sqrt(d_k),
                             after_96=at_96.after, split_96=at_96.split, split_256=at_256.split)


@dataclass(frozen=True)
class OrderLimitAnswer:
    r"""Exercise ``ex-fp16-order-limit``: the largest component :math:`\sigma` whose score stays finite in float16, per order.

    Every attribute is a number the solution quotes.

    Attributes
    ----------
    after, split : float
        The limits with the scale after the product and split between :math:`q` and :math:`k`.
    ratio : float
        ``split / after``, the extra headroom of the split order: :math:`d_k^{1/4}`.
    margin : float
        How far below and above each limit it was confirmed in float16, as a fraction.
    """

    after: float
    split: float
    ratio: float
    margin: float


def order_limit_answer(limits: dict[str, float], d_k: int, margin: float = 0.01) -> OrderLimitAnswer:
    r"""Check each order's limit in float16: finite a little below it, infinite a little above.

    Parameters
    ----------
    limits : dict of str to float
        The solution's limits on :math:`\sigma`, keyed ``"after"`` and ``"split"``.
    d_k : int
        Width of the queries and keys, whose components all equal :math:`\sigma`.
    margin : float, default 0.01
        How far below and above each limit :math:`\sigma` is tried, as a
        fraction: about ten times float16's machine epsilon, :math:`2^{-10}`, so that rounding
        :math:`\sigma` to float16 cannot move it across the limit.

    Returns
    -------
    OrderLimitAnswer

    Raises
    ------
    PageCheckError
        If an order is missing, or its score is not finite at
        ``(1 - margin)`` times its limit and infinite at ``(1 + margin)`` times it.

    Examples
    --------
    >>> import math
    >>> from attention_scaling.site.libraries import order_limit_answer
    >>> answer = order_limit_answer({"after": math.sqrt(65504 / 128), "split": math.sqrt(65504 / math.sqrt(128))}, 128)
    >>> round(answer.ratio, 4)   # d_k ** (1/4)
    3.3636
    """
    where = "libraries.md, exercise ex-fp16-order-limit"
    missing = sorted({"after", "split"} - set(limits))
    require(not missing, where, "both orders have a limit", missing=missing)
    for order, limit in limits.items():
        finite = [bool(np.isfinite(scores_by_order(q, q, order=order)).all())
                  for q in (np.full((1, d_k), factor * limit, dtype=np.float16) for factor in (1 - margin, 1 + margin))]
        require(finite == [True, False], where, "the score is finite just below the limit and overflows just above it",
                order=order, limit=limit, finite_below_and_above=finite)
    after, split = float(limits["after"]), float(limits["split"])
    return OrderLimitAnswer(after, split, split / after, float(margin))
