r"""What the attention libraries do by default, and where they apply the scale.

:data:`LIBRARY_DEFAULTS` records what each library's documentation says its
default scale is; the claims are cited on the "What the libraries do" page and
the PyTorch one is checked against PyTorch itself by ``tests/test_pytorch.py``.

:func:`scores_by_order` computes the scores in either of the two orders that
implementations use: scale after the product, ``(q @ k.T) * scale``, or split
the scale between the factors, ``(q * sqrt(scale)) @ (k * sqrt(scale)).T``.
The two are equal in exact arithmetic; in float16 the first can overflow
where the second does not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from attention_scaling._checks import positive_finite_scalar
from attention_scaling._attention import _checked_queries_and_keys

__all__ = ["LIBRARY_DEFAULTS", "LibraryDefault", "SCORE_ORDERS", "scores_by_order"]


@dataclass(frozen=True)
class LibraryDefault:
    """One library's attention function and the default of its scale argument.

    Attributes
    ----------
    library : str
        The library's name.
    function : str
        The function, as the library spells it.
    parameter : str
        The argument that sets the scale.
    default : str
        The default, in the documentation's own terms (MyST markdown).
    citation : str
        The key of the documentation in the site's bibliography.
    """

    library: str
    function: str
    parameter: str
    default: str
    citation: str


#: Each default as documented, with its citation. Three libraries use 1/sqrt(head dim), and Gemma 2's
#: configuration names its scalar and adds soft-capping.
LIBRARY_DEFAULTS = (
    LibraryDefault(
        "PyTorch",
        "torch.nn.functional.scaled_dot_product_attention",
        "scale",
        r"$1/\sqrt{E}$, $E$ the last dimension of the query",
        "pytorch-sdpa",
    ),
    LibraryDefault(
        "JAX",
        "jax.nn.dot_product_attention",
        "scale",
        r"$1/\sqrt{H}$, $H$ the head dimension of the query",
        "jax-dpa",
    ),
    LibraryDefault(
        "FlashAttention",
        "flash_attn.flash_attn_func",
        "softmax_scale",
        r"$1/\sqrt{\mathrm{headdim}}$",
        "flash-attention",
    ),
    LibraryDefault(
        "Hugging Face Transformers, Gemma 2",
        "transformers.Gemma2Config",
        "query_pre_attn_scalar",
        r"256 (the default `head_dim`), the queries being scaled by its $-1/2$ power; the 27B checkpoint sets 144",
        "hf-gemma2",
    ),
    LibraryDefault(
        "Hugging Face Transformers, Gemma 2",
        "transformers.Gemma2Config",
        "attn_logit_softcapping",
        r"50.0: attention logits become $50 \tanh(z/50)$ (`final_logit_softcapping`: 30.0 for the output logits)",
        "hf-gemma2",
    ),
)

#: The orders :func:`scores_by_order` knows.
SCORE_ORDERS = ("after", "split")


def scores_by_order(q, k, *, scale: float | None = None, order: str = "after") -> np.ndarray:
    r"""Scores :math:`\text{scale} \cdot q k^\top` in the input's dtype, in a chosen order.

    ``"after"`` multiplies the finished products by the scale, as Eq. (1) of
    the Transformer paper reads and as the Python code that PyTorch documents
    as equivalent to its ``scaled_dot_product_attention`` does; ``"split"``
    multiplies ``q`` and ``k`` each by :math:`\sqrt{\text{scale}}` first, as
    PyTorch's C++ math backend does. Unlike :func:`~attention_scaling.attention_scores`, an overflow is
    not an error here: it is returned as ``inf`` so that the two orders can be
    compared.

    Parameters
    ----------
    q : array_like, shape (..., n_q, d_k)
        Queries; a float16 array stays float16.
    k : array_like, shape (..., n_k, d_k)
        Keys, of the same dtype as ``q``.
    scale : float, optional
        Defaults to :math:`1/\sqrt{d_k}`. Must be finite and > 0.
    order : {"after", "split"}
        Where the scale is applied.

    Returns
    -------
    numpy.ndarray, shape (..., n_q, n_k)
        The scores, possibly holding ``inf`` where the dtype overflowed.

    Raises
    ------
    TypeError
        If an input is not real and numeric, or ``scale`` is not a number.
    ValueError
        As for :func:`~attention_scaling.attention_scores` (but for overflow),
        if ``q`` and ``k`` differ in dtype, or if ``order`` is unknown.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.libraries import scores_by_order
    >>> q = np.full((1, 64), 40.0, dtype=np.float16)
    >>> k = np.full((2, 64), 40.0, dtype=np.float16)
    >>> scores_by_order(q, k, order="after")   # 64 * 1600 = 102400 > 65504
    array([[inf, inf]], dtype=float16)
    >>> scores_by_order(q, k, order="split").tolist()   # 102400 / 8 = 12800
    [[12800.0, 12800.0]]
    """
    if order not in SCORE_ORDERS:
        raise ValueError(f"order must be one of {SCORE_ORDERS}; got {order!r}")
    q, k = _checked_queries_and_keys(q, k)
    if q.dtype != k.dtype:
        raise ValueError(f"q and k must share a dtype to compare orders; got {q.dtype} and {k.dtype}")
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    scale = positive_finite_scalar(scale, "scale")
    k_transposed = np.swapaxes(k, -1, -2)
    with np.errstate(over="ignore", invalid="ignore"):
        if order == "after":
            return (q @ k_transposed) * q.dtype.type(scale)
        root = q.dtype.type(math.sqrt(scale))
        return (q * root) @ (k_transposed * root)
