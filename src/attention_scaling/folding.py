r"""How far one optimiser step moves the scores: scaled, unscaled and T5-folded heads.

Three parametrisations of the retrieval head of :mod:`attention_scaling.retrieval`
start from the same draw of :math:`W_Q, W_K` (entries :math:`N(0, 1/d_{model})`):

- ``scaled``: scale :math:`c = 1/\sqrt{d_k}`;
- ``unscaled``: scale 1, the same weights (scores :math:`\sqrt{d_k}` times larger);
- ``folded`` (T5): scale 1 and :math:`W_Q' = W_Q/\sqrt{d_k}`, the same forward
  pass as ``scaled`` (``thm-folded-scale``).

Each takes one step of SGD or of Adam (its first step, from zero moments)
on :math:`W_Q` only, on :math:`W_K` only, or on both, and the change of
every score of the batch is measured. ``scaled`` and ``folded`` compute the
same scores and the same :math:`\partial L/\partial s`, so the ratio of
their changes isolates what the constant does to the update
(``thm-logit-update``): on the :math:`W_Q` path :math:`c^2` under SGD and
:math:`c` under Adam, on the :math:`W_K` path 1. The ``unscaled`` head has
other scores and another :math:`\partial L/\partial s`; its ratio is
reported as measured. Randomness comes only from
``numpy.random.default_rng``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from attention_scaling._checks import integer_at_least, positive_finite_scalar
from attention_scaling.retrieval import forward, init_params, loss_and_grads, retrieval_batch
from attention_scaling.training import _fold

__all__ = ["LogitUpdates", "OPTIMISERS", "PATHS", "logit_updates"]

#: The optimisers compared, and the weights each step updates.
OPTIMISERS = ("sgd", "adam")
PATHS = ("W_Q", "W_K", "both")

# Adam's epsilon (Kingma & Ba, 2015; as in attention_scaling.training): far below every
# gradient entry here, so the first step is eta * sign(gradient) to many digits.
_ADAM_EPSILON = 1e-8


@dataclass(frozen=True)
class LogitUpdates:
    r"""Root-mean-square score changes of one step, and their ratios, per optimiser, path, d_k and seed.

    Attributes
    ----------
    d_ks : tuple of int
        Head dimensions.
    n_seeds : int
        Independent draws (data and weights) per :math:`d_k`.
    lr : float
        The step size :math:`\eta`, the same for every model.
    scaled_over_folded, unscaled_over_folded : dict
        ``{(optimiser, path): array (len(d_ks), n_seeds)}``: for each seed, the
        RMS over the batch of the score change of that model divided by the
        folded model's.
    """

    d_ks: tuple[int, ...]
    n_seeds: int
    lr: float
    scaled_over_folded: dict
    unscaled_over_folded: dict

    def prediction(self, optimiser: str, path: str) -> np.ndarray | None:
        r"""``thm-logit-update``'s scaled/folded ratio per :math:`d_k`: :math:`c^2` (SGD) or :math:`c` (Adam) on W_Q, 1 on W_K; None for both."""
        c = 1.0 / np.sqrt(np.asarray(self.d_ks, dtype=float))
        if path == "W_K":
            return np.ones_like(c)
        if path == "W_Q":
            return c**2 if optimiser == "sgd" else c
        return None

    def quantiles(self, optimiser: str, path: str, which: str = "scaled", q=(0.1, 0.5, 0.9)) -> np.ndarray:
        """Quantiles over seeds of a ratio, shape (len(q), len(d_ks))."""
        table = self.scaled_over_folded if which == "scaled" else self.unscaled_over_folded
        return np.quantile(table[(optimiser, path)], q, axis=1)


def _step(grads: dict, optimiser: str, lr: float, path: str) -> dict:
    """The parameter change of one step on ``path``; Adam's first step is m̂/(√v̂ + ε) = g/(|g| + ε)."""
    names = ("W_Q", "W_K") if path == "both" else (path,)
    change = {}
    for name, gradient in grads.items():
        if name not in names:
            change[name] = np.zeros_like(gradient)
        elif optimiser == "sgd":
            change[name] = -lr * gradient
        else:
            change[name] = -lr * gradient / (np.abs(gradient) + _ADAM_EPSILON)
    return change


def _score_change(params: dict, batch, scale: float, optimiser: str, lr: float, path: str) -> float:
    """RMS over the batch of the change of every score after one step."""
    _, grads = loss_and_grads(params, batch, scale)
    before = forward(params, batch, scale)[1]["scores"]
    change = _step(grads, optimiser, lr, path)
    after = forward({name: params[name] + change[name] for name in params}, batch, scale)[1]["scores"]
    return float(np.sqrt(np.mean((after - before) ** 2)))


def logit_updates(
    d_ks=(16, 64, 256),
    *,
    n_seeds: int = 12,
    d_model: int = 64,
    batch: int = 16,
    n: int = 16,
    noise: float = 0.5,
    lr: float = 1e-3,
    seed: int = 0,
) -> LogitUpdates:
    r"""Measure one optimiser step's change of the scores for the scaled, unscaled and folded heads.

    Parameters
    ----------
    d_ks : sequence of int, default (16, 64, 256)
        Head dimensions, each at least 1.
    n_seeds : int, default 12
        Draws per :math:`d_k`; draw ``r`` at :math:`d_k` uses
        ``default_rng([seed, d_k, r])`` for its batch, then its weights.
    d_model, batch, n : int
        Model width, examples per batch and keys per example.
    noise : float, default 0.5
        The retrieval task's query noise.
    lr : float, default 1e-3
        The step size of every optimiser and model; small, so that one
        step stays in the first-order regime of ``thm-logit-update``.
    seed : int, default 0
        Base seed.

    Returns
    -------
    LogitUpdates

    Raises
    ------
    TypeError, ValueError
        If a size is not an integer of at least 1 (``n`` at least 2), or
        ``lr`` is not finite and positive.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.folding import logit_updates
    >>> result = logit_updates((16,), n_seeds=2, d_model=8, batch=4, n=4)
    >>> ratio = result.scaled_over_folded[("sgd", "W_Q")]
    >>> bool(np.allclose(ratio, 1 / 16, rtol=1e-9))      # c^2 on the query path
    True
    >>> bool(np.allclose(result.scaled_over_folded[("adam", "W_Q")], 1 / 4, rtol=1e-6))   # c under Adam
    True
    """
    if isinstance(d_ks, (int, np.integer)) or len(d_ks) == 0:
        raise ValueError(f"d_ks must be a non-empty sequence of head dimensions; got {d_ks!r}")
    d_ks = tuple(integer_at_least(d_k, "d_k", 1) for d_k in d_ks)
    n_seeds = integer_at_least(n_seeds, "n_seeds", 1)
    d_model = integer_at_least(d_model, "d_model", 1)
    batch_size = integer_at_least(batch, "batch", 1)
    n = integer_at_least(n, "n", 2)
    lr = positive_finite_scalar(lr, "lr")
    seed = integer_at_least(seed, "seed", 0)
    shape = (len(d_ks), n_seeds)
    scaled = {(o, p): np.empty(shape) for o in OPTIMISERS for p in PATHS}
    unscaled = {(o, p): np.empty(shape) for o in OPTIMISERS for p in PATHS}
    for row, d_k in enumerate(d_ks):
        c = 1.0 / math.sqrt(d_k)
        for draw in range(n_seeds):
            rng = np.random.default_rng([seed, d_k, draw])
            data = retrieval_batch(rng, batch_size, n, d_model, noise)
            params = init_params(rng, d_model, d_k)
            folded = {"W_Q": _fold(params["W_Q"], c), "W_K": params["W_K"]}
            for optimiser in OPTIMISERS:
                for path in PATHS:
                    reference = _score_change(folded, data, 1.0, optimiser, lr, path)
                    scaled[optimiser, path][row, draw] = _score_change(params, data, c, optimiser, lr, path) / reference
                    unscaled[optimiser, path][row, draw] = _score_change(params, data, 1.0, optimiser, lr, path) / reference
    return LogitUpdates(d_ks, n_seeds, lr, scaled, unscaled)
