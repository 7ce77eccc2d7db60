"""Matrix products for the small arrays of the training and initialisation code."""

from __future__ import annotations

import numpy as np

__all__ = ["product"]


def product(subscripts: str, *operands: np.ndarray) -> np.ndarray:
    """``np.einsum`` without ``optimize``: numpy's own single-threaded loops, no BLAS.

    The matrices these modules multiply are small, and the pages execute two
    at a time on a 2-core machine. There a multithreaded BLAS spends far more
    on waking and synchronising its threads than on arithmetic: a 200-step
    training run at d_k = 256 took about 7 s with OpenBLAS's threads and 0.4 s
    without, and 30 products of 64 x 1024 by 1024 x 128 took 2.0 s against
    0.2 s. Plain einsum also makes every result independent of the BLAS and
    its thread count.
    """
    return np.einsum(subscripts, *operands)
