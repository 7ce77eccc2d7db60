r"""A training ablation of the attention scale, in numpy.

The head of :mod:`attention_scaling.retrieval` learns the retrieval task: to
put its weight on the key that the query copies. The factor :math:`c` of its
scores is fixed by a scaling policy (``"none"``: 1, ``"sqrt"``:
:math:`1/\sqrt{d_k}`, ``"linear"``: :math:`1/d_k`), and :func:`ablation` trains
every (:math:`d_k`, policy) pair with one shared learning rate, the same data
and, for each :math:`d_k`, the same initial weights, so the runs differ only
by :math:`c`. ``train(..., fold=True)`` is T5's way of scaling: :math:`c = 1`
with the factor folded into the initialisation of :math:`W_Q`. One learning
rate for all mixes the effect of :math:`c` with that of the step size;
:mod:`attention_scaling.tuning` gives each variant its own.

Randomness comes only from ``numpy.random.default_rng``; the same seed gives
identical arrays.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from attention_scaling._checks import integer_at_least, positive_finite_scalar
from attention_scaling._softmax import attention_entropy
from attention_scaling.retrieval import _NAMES, _backward, _forward, _nonnegative, init_params, retrieval_batch
from attention_scaling.simulate import scale_for, scaling_policy

__all__ = [
    "OPTIMIZERS",
    "TrainingCurves",
    "TrainingRecord",
    "ablation",
    "train",
    "training_curves_data",
]

#: The optimisers :func:`train` knows, both written out below in a few lines.
OPTIMIZERS = ("adam", "sgd")

# Adam's usual constants (Kingma & Ba, 2015); only the learning rate is varied.
_BETA1, _BETA2, _EPS = 0.9, 0.999, 1e-8


@dataclass(frozen=True)
class TrainingRecord:
    r"""What one training run did, step by step.

    The three curves are measured on each step's training batch *before* that
    step's update, so ``loss[0]`` is the loss of the initial weights. Every
    batch is fresh, so these are also estimates of the test metrics.

    Attributes
    ----------
    d_k : int
        Head dimension.
    policy : str
        The scaling policy's name (a callable's ``__name__``).
    scale : float
        The factor :math:`c` that multiplied the scores.
    lr : float
        Learning rate.
    optimizer : str
        ``"adam"`` or ``"sgd"``.
    seed : int
        The seed of the run.
    loss : numpy.ndarray, shape (steps,)
        Mean cross-entropy :math:`-\ln p_\text{target}`, in nats.
    entropy : numpy.ndarray, shape (steps,)
        Mean entropy of the attention weights, in nats (at most :math:`\ln n`).
    accuracy : numpy.ndarray, shape (steps,)
        Fraction of queries whose highest score is on the target key.
    params : dict
        The weights after the last step, ``{"W_Q": array, "W_K": array}``
        (read-only arrays).
    diverged_at : int or None
        The first step whose scores or loss were not finite, if any; from
        there on the curves hold NaN.
    folded : bool
        Whether the policy's factor was folded into the initial ``W_Q``
        (then ``scale`` is 1); see :func:`train`.

    Examples
    --------
    >>> from attention_scaling.training import train
    >>> record = train(16, "sqrt", steps=20, batch=8, seed=0)
    >>> record.loss.shape, record.policy, record.scale
    ((20,), 'sqrt', 0.25)
    >>> sorted(record.final(window=5))
    ['accuracy', 'entropy', 'loss']
    """

    d_k: int
    policy: str
    scale: float
    lr: float
    optimizer: str
    seed: int
    loss: np.ndarray
    entropy: np.ndarray
    accuracy: np.ndarray
    params: dict[str, np.ndarray]
    diverged_at: int | None = None
    folded: bool = False

    @property
    def steps(self) -> int:
        """Number of training steps."""
        return int(self.loss.shape[0])

    def final(self, window: int = 10) -> dict[str, float]:
        """Means of loss, entropy and accuracy over the last ``window`` steps.

        Averaging a few steps smooths the noise of one batch.
        """
        window = integer_at_least(window, "window", 1)
        tail = slice(max(0, self.steps - window), None)
        return {
            "loss": float(np.mean(self.loss[tail])),
            "entropy": float(np.mean(self.entropy[tail])),
            "accuracy": float(np.mean(self.accuracy[tail])),
        }



def _policy(scale_policy, d_k: int) -> tuple[str, float]:
    """The policy's label and its factor for ``d_k``, with errors that name ``scale_policy``."""
    label, _ = scaling_policy(scale_policy, name="scale_policy")
    return label, scale_for(scale_policy, d_k, name="scale_policy")



# -- Training --------------------------------------------------------------------------


def _training_setup(steps, lr, seed, batch, n, d_model, noise, optimizer) -> dict:
    """Validate the arguments shared by :func:`train` and :func:`ablation`."""
    seed = integer_at_least(seed, "seed", 0)
    if not isinstance(optimizer, str) or optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {OPTIMIZERS}; got {optimizer!r}")
    return {
        "steps": integer_at_least(steps, "steps", 1),
        "lr": positive_finite_scalar(lr, "lr"),
        "seed": seed,
        "batch": integer_at_least(batch, "batch", 1),
        "n": integer_at_least(n, "n", 2),
        "d_model": integer_at_least(d_model, "d_model", 1),
        "noise": _nonnegative(noise, "noise"),
        "optimizer": optimizer,
    }


def _run_many(d_k: int, runs, *, steps, seed, batch, n, d_model, noise, optimizer) -> list[TrainingRecord]:
    """Train several heads on validated arguments, on the same batches from the same start.

    ``runs`` is a sequence of ``(label, c, fold, lr)``. Each run is exactly
    what :func:`train` would do alone (every run's arithmetic is its own);
    training them in one loop only shares the drawing of the batches.
    """
    # Two streams from one seed: the data stream does not depend on d_k or
    # the policy, so every run of an ablation sees the same batches, and the
    # initial weights depend only on (seed, d_k), so the policies compared at
    # one d_k start from the same point.
    data_rng = np.random.default_rng([seed, 0])
    start = init_params(np.random.default_rng([seed, 1]), d_model, d_k)
    states = []
    for _, c, fold, _ in runs:
        params = dict(start)
        if fold:
            params["W_Q"] = _fold(start["W_Q"], c)
        states.append({
            "params": params,
            # A folded head multiplies its scores by 1: the factor sits in W_Q.
            "scale": 1.0 if fold else c,
            "moments": {name: (np.zeros_like(w), np.zeros_like(w)) for name, w in params.items()},
            "curves": np.full((3, steps), np.nan),
            "diverged_at": None,
        })
    for t in range(steps):
        data = retrieval_batch(data_rng, batch, n, d_model, noise)
        for (_, _, _, lr), state in zip(runs, states):
            if state["diverged_at"] is not None:
                continue
            params = state["params"]
            try:
                # Far above its stable rate SGD reaches finite scores near
                # 1e300 whose mean loss overflows: that is divergence too.
                with np.errstate(over="ignore"):
                    loss, cache = _forward(params["W_Q"], params["W_K"], data, state["scale"])
                if not math.isfinite(loss):
                    raise FloatingPointError(f"the loss overflowed at step {t}")
            except FloatingPointError:
                state["diverged_at"] = t
                continue
            grads = _backward(params["W_K"], cache)
            curves = state["curves"]
            curves[0, t] = loss
            curves[1, t] = float(np.mean(attention_entropy(cache["weights"])))
            # Ties (possible only when scores are exactly equal) go to the lowest
            # index, as np.argmax does; with continuous data they have probability 0.
            curves[2, t] = float(np.mean(np.argmax(cache["scores"], axis=1) == cache["targets"]))
            if optimizer == "sgd":
                for name in _NAMES:
                    params[name] = params[name] - lr * grads[name]
            else:
                # Adam with bias correction, exactly as in Kingma & Ba (2015), Alg. 1,
                # in place: the same operations in the same order as
                # m = b1 m + (1 - b1) g, v = b2 v + (1 - b2) g^2 and
                # w - lr m_hat / (sqrt(v_hat) + eps), with fewer temporary arrays.
                for name in _NAMES:
                    m, v = state["moments"][name]
                    m *= _BETA1
                    m += (1 - _BETA1) * grads[name]
                    v *= _BETA2
                    v += (1 - _BETA2) * grads[name] ** 2
                    step = m / (1 - _BETA1 ** (t + 1))
                    step *= lr
                    denominator = np.sqrt(v / (1 - _BETA2 ** (t + 1)))
                    denominator += _EPS
                    step /= denominator
                    params[name] = params[name] - step
    records = []
    for (label, _, fold, lr), state in zip(runs, states):
        # Read-only, so that a record cannot be changed after the fact. (Flag the
        # base array: views taken from it afterwards inherit the flag.)
        params = {name: np.array(w) for name, w in state["params"].items()}
        for array in (state["curves"], *params.values()):
            array.setflags(write=False)
        curves = state["curves"]
        records.append(TrainingRecord(
            d_k=d_k,
            policy=label,
            scale=state["scale"],
            lr=lr,
            optimizer=optimizer,
            seed=seed,
            loss=curves[0],
            entropy=curves[1],
            accuracy=curves[2],
            params=params,
            diverged_at=state["diverged_at"],
            folded=fold,
        ))
    return records


def _fold(w_q: np.ndarray, c: float) -> np.ndarray:
    r"""T5's initial W_Q: the usual one times the score factor ``c``.

    With :math:`W_Q \sim \mathcal{N}(0, 1/d_\text{model})` and :math:`c = 1/\sqrt{d_k}`
    this is :math:`\mathcal{N}(0, 1/(d_\text{model} d_k))`, the initialisation of
    Mesh TensorFlow and Hugging Face's T5. Since
    :math:`c\,(x_q W_Q)\cdot k = (x_q\, c W_Q)\cdot k`, the folded head computes
    the scaled head's scores at initialisation.
    """
    return c * w_q


def train(
    d_k: int,
    scale_policy,
    *,
    steps: int = 200,
    lr: float = 1e-2,
    seed: int = 0,
    batch: int = 64,
    n: int = 16,
    d_model: int = 32,
    noise: float = 0.5,
    optimizer: str = "adam",
    fold: bool = False,
) -> TrainingRecord:
    r"""Train one attention head on the retrieval task and record its progress.

    Each step draws a fresh batch, computes the loss and its gradient with
    :func:`~attention_scaling.retrieval.forward` and :func:`~attention_scaling.retrieval.backward`, records loss, attention entropy and
    accuracy, and takes one optimiser step.

    Parameters
    ----------
    d_k : int
        Head dimension, at least 1.
    scale_policy : {"none", "sqrt", "linear"} or callable
        Gives the score factor :math:`c`: 1, :math:`1/\sqrt{d_k}`,
        :math:`1/d_k`, or ``scale_policy(d_k)``, as in
        :func:`attention_scaling.simulate.scale_for`.
    steps : int, default 200
        Optimiser steps, at least 1.
    lr : float, default 1e-2
        Learning rate, finite and > 0.
    seed : int, default 0
        Seeds both the data and the initial weights.
    batch : int, default 64
        Examples per step.
    n : int, default 16
        Keys per example, at least 2.
    d_model : int, default 32
        Input dimension.
    noise : float, default 0.5
        Query noise, as in :func:`~attention_scaling.retrieval.retrieval_batch`.
    optimizer : {"adam", "sgd"}, default "adam"
        Adam (:math:`\beta = (0.9, 0.999)`, :math:`\epsilon = 10^{-8}`) or plain SGD.
    fold : bool, default False
        Fold the factor into the initialisation instead, as T5 does: the
        scores are multiplied by 1 and the initial ``W_Q`` by :math:`c`
        (``fold=True`` with ``"sqrt"`` gives T5's
        :math:`W_Q \sim \mathcal{N}(0, 1/(d_\text{model} d_k))`). The head then
        computes the same scores at initialisation, but its gradients and
        updates differ.

    Returns
    -------
    TrainingRecord

    Raises
    ------
    TypeError
        If an integer argument is not an integer, ``lr`` or ``noise`` is not a
        number, or ``scale_policy`` is neither a name nor a callable.
    ValueError
        If ``d_k < 1``, ``steps < 1``, ``lr <= 0``, ``n < 2``, ``batch < 1``,
        ``d_model < 1``, ``noise < 0``, ``seed < 0``, or the policy or optimiser
        is unknown.
    TypeError
        If ``fold`` is not a bool.

    Notes
    -----
    The batches come from ``numpy.random.default_rng([seed, 0])`` and the
    initial weights from :func:`~attention_scaling.retrieval.init_params` with
    ``numpy.random.default_rng([seed, 1])``. Neither stream depends on the
    policy, and the batches do not depend on ``d_k`` either, so runs that
    differ only in ``scale_policy`` see the same data from the same start.

    If the scores or the loss overflow, the run stops, ``diverged_at`` records the step
    and the rest of the curves stay NaN, so an ablation still completes.

    Examples
    --------
    >>> from attention_scaling.training import train
    >>> record = train(16, "sqrt", steps=60, seed=0)
    >>> bool(record.loss[-10:].mean() < record.loss[:10].mean())    # it learns
    True
    >>> bool((train(16, "sqrt", steps=5).loss == train(16, "sqrt", steps=5).loss).all())
    True

    T5's folding: the same first loss, another scale in the forward pass.

    >>> t5 = train(16, "sqrt", steps=5, fold=True)
    >>> t5.scale, t5.folded, bool(abs(t5.loss[0] - train(16, "sqrt", steps=5).loss[0]) < 1e-12)
    (1.0, True, True)
    """
    d_k = integer_at_least(d_k, "d_k", 1)
    setup = _training_setup(steps, lr, seed, batch, n, d_model, noise, optimizer)
    label, scale = _policy(scale_policy, d_k)
    fold = _flag(fold, "fold")
    lr = setup.pop("lr")
    return _run_many(d_k, [(label, scale, fold, lr)], **setup)[0]


def _flag(value, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool; got {type(value).__name__}")
    return bool(value)


def ablation(
    d_values: Sequence[int] = (16, 64, 256),
    policies: Sequence[str | Callable[[int], float]] = ("none", "sqrt", "linear"),
    *,
    steps: int = 200,
    lr: float = 1e-2,
    seed: int = 0,
    batch: int = 64,
    n: int = 16,
    d_model: int = 32,
    noise: float = 0.5,
    optimizer: str = "adam",
) -> dict[tuple[int, str], TrainingRecord]:
    r"""Train every (:math:`d_k`, policy) pair with one learning rate and the same seeds.

    All runs see the same sequence of batches; the runs at one :math:`d_k`
    also start from the same weights. Only the score factor differs, so any
    difference between policies at one :math:`d_k` is due to it, including
    through its interaction with the shared learning rate.

    Parameters
    ----------
    d_values : sequence of int, default (16, 64, 256)
        Head dimensions, each at least 1, without repeats.
    policies : sequence, default ("none", "sqrt", "linear")
        Scaling policies, as for :func:`train`, without repeated labels.
    steps, lr, seed, batch, n, d_model, noise, optimizer
        As for :func:`train`, shared by every run.

    Returns
    -------
    dict
        ``{(d_k, policy_label): TrainingRecord}``, in the order
        ``d_values`` x ``policies``.

    Raises
    ------
    TypeError, ValueError
        As for :func:`train`; also ``ValueError`` if ``d_values`` or
        ``policies`` is empty or repeats an entry.

    Examples
    --------
    >>> from attention_scaling.training import ablation
    >>> results = ablation((4, 8), ("sqrt", "linear"), steps=5, batch=8)
    >>> list(results)
    [(4, 'sqrt'), (4, 'linear'), (8, 'sqrt'), (8, 'linear')]
    >>> results[8, "linear"].scale
    0.125
    """
    if isinstance(d_values, (str, bytes)) or not isinstance(d_values, Sequence):
        raise TypeError(f"d_values must be a sequence of integers; got {type(d_values).__name__}")
    if isinstance(policies, (str, bytes)) or not isinstance(policies, Sequence):
        raise TypeError(f"policies must be a sequence of names or callables; got {type(policies).__name__}")
    d_list = [integer_at_least(d, "d_values entry", 1) for d in d_values]
    if not d_list or len(set(d_list)) != len(d_list):
        raise ValueError(f"d_values must be non-empty without repeats; got {list(d_values)!r}")
    if not policies:
        raise ValueError("policies must not be empty")
    setup = _training_setup(steps, lr, seed, batch, n, d_model, noise, optimizer)
    # Resolve every policy up front so that a bad one fails before any training.
    resolved = {(d_k, i): _policy(policy, d_k) for d_k in d_list for i, policy in enumerate(policies)}
    labels = [resolved[d_list[0], i][0] for i in range(len(policies))]
    if len(set(labels)) != len(labels):
        raise ValueError(f"policies must have distinct labels; got {labels!r}")
    lr = setup.pop("lr")
    results = {}
    for d_k in d_list:
        runs = [(*resolved[d_k, i], False, lr) for i in range(len(policies))]
        for record in _run_many(d_k, runs, **setup):
            results[d_k, record.policy] = record
    return results


# -- The data of the site's figure ------------------------------------------------------


@dataclass(frozen=True)
class TrainingCurves:
    """The runs of a training ablation, for the learning-curve figure.

    Attributes
    ----------
    runs : dict
        ``{(d_k, policy_label): TrainingRecord}``, as returned by :func:`ablation`.
    d_values : tuple of int
        The head dimensions, in increasing order.
    policies : tuple of str
        The policy labels, in the order of the ablation.
    """

    runs: dict[tuple[int, str], TrainingRecord]
    d_values: tuple[int, ...]
    policies: tuple[str, ...]


def training_curves_data(seed: int = 0) -> TrainingCurves:
    r"""The default training ablation: :math:`d_k \in \{16, 64, 256\}` under the three policies, one learning rate.

    Parameters
    ----------
    seed : int, default 0
        Seed of the data and the initial weights (see :func:`ablation`).

    Returns
    -------
    TrainingCurves

    Examples
    --------
    >>> from attention_scaling.training import training_curves_data
    >>> data = training_curves_data()
    >>> data.d_values, data.policies
    ((16, 64, 256), ('none', 'sqrt', 'linear'))
    """
    runs = ablation(seed=seed)
    policies = tuple(dict.fromkeys(policy for _, policy in runs))
    return TrainingCurves(runs=runs, d_values=tuple(sorted({d_k for d_k, _ in runs})), policies=policies)
