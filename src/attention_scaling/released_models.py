r"""The factor that released libraries and models put on :math:`q \cdot k`, as formulas with their sources.

Papers write :math:`1/\sqrt{d_k}`; code writes a ``scaling`` attribute, a
config key or a default argument, and several released models put something
else there. :data:`LEDGER` holds one :class:`LedgerRow` per library or model
family: the factor as a SymPy formula in the model's own parameters, the
values those parameters take in the release, and where the factor is written
(file and code line, config key, or paper and equation).

Each row also says how the site knows it: ``"run"`` when the project's tests
build a small random model from the library's own classes and find the factor
that its attention code applies (``tests/test_released_models.py``, which
needs ``make torch``), ``"cited"`` when the code cannot be installed here and
the row rests on reading it.

Symbols
-------
``d_k``
    The length of :math:`q` and :math:`k`, the sum that the score adds up.
``query_pre_attn_scalar``, ``attention_multiplier``
    Gemma 2's and Granite's config keys.
``s``, ``mscale_all_dim``
    The factor :math:`n/L` by which YaRN extends the context, and the weight
    DeepSeek-V3 gives its logarithm (:func:`attention_scaling.temperatures.yarn_scale`
    is YaRN's factor on each of q and k).
``position``, ``floor_scale``, ``attn_scale``
    Llama 4's temperature of the query in its layers without rotary embedding
    (:func:`attention_scaling.temperatures.llama4_multiplier` at ``position + 1``).
``layer``
    The layer number, counted from 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping

import numpy as np
import sympy as sp

__all__ = ["LEDGER", "LedgerRow", "SYMBOLS", "qk_clip", "sigmoid_gate", "sink_margin", "softpick"]

#: The parameters the ledger's formulas are written in, by name.
SYMBOLS: Mapping[str, sp.Symbol] = MappingProxyType({
    name: sp.Symbol(name, positive=True)
    for name in ("d_k", "query_pre_attn_scalar", "attention_multiplier", "s", "mscale_all_dim",
                 "position", "floor_scale", "attn_scale", "layer")
})
_d, _query_scalar, _multiplier, _s, _mscale, _pos, _floor, _attn, _layer = (
    SYMBOLS[name] for name in ("d_k", "query_pre_attn_scalar", "attention_multiplier", "s", "mscale_all_dim", "position",
                               "floor_scale", "attn_scale", "layer"))


def qk_clip(query_weight, key_weight, max_logit: float, threshold: float = 100.0, alpha: float = 0.5):
    r"""QK-Clip: rescale a head's query and key weights so that its largest logit is at most ``threshold``.

    With :math:`\eta = \min(1, \tau / S_{\max})`, where :math:`S_{\max}` is
    the head's largest scaled logit on the batch, the query weights are
    multiplied by :math:`\eta^{\alpha}` and the key weights by
    :math:`\eta^{1 - \alpha}`, so every logit of the head by :math:`\eta`.
    This is the form of Megatron-LM's implementation
    (``megatron/core/transformer/multi_latent_attention.py``, defaults
    ``qk_clip_threshold = 100``, ``qk_clip_alpha = 0.5``), for the part of a
    head without rotary embedding; Kimi K2 is reported to use it with
    :math:`\tau = 100` (arXiv:2507.20534).

    Parameters
    ----------
    query_weight, key_weight : array_like
        The head's :math:`W_Q` and :math:`W_K`.
    max_logit : float
        :math:`S_{\max}`, positive.
    threshold : float, default 100
        :math:`\tau`, positive.
    alpha : float, default 0.5
        The share of the factor the query weights take, in [0, 1].

    Returns
    -------
    tuple of numpy.ndarray
        The rescaled query and key weights (new arrays).

    Raises
    ------
    ValueError
        If ``max_logit`` or ``threshold`` is not positive, or ``alpha`` is outside [0, 1].

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.released_models import qk_clip
    >>> w_q, w_k = qk_clip(np.ones((2, 2)), np.ones((2, 2)), max_logit=400.0)
    >>> w_q[0, 0], w_k[0, 0]
    (np.float64(0.5), np.float64(0.5))
    """
    if not (max_logit > 0 and threshold > 0) or not 0 <= alpha <= 1:
        raise ValueError(f"max_logit and threshold must be positive and alpha in [0, 1]; got {max_logit!r}, {threshold!r}, {alpha!r}")
    eta = min(1.0, threshold / max_logit)
    return np.asarray(query_weight, dtype=float) * eta**alpha, np.asarray(key_weight, dtype=float) * eta ** (1 - alpha)

def softpick(x, axis: int = -1, eps: float = 1e-8) -> np.ndarray:
    r"""Softpick: :math:`\operatorname{ReLU}(e^{x_i} - 1) / \sum_j \lvert e^{x_j} - 1 \rvert`, whose rows need not sum to 1.

    Computed in the shifted form of Zuhri et al. (arXiv:2504.20966, Eq. 2),
    :math:`\operatorname{ReLU}(e^{x_i - m} - e^{-m}) / (\sum_j \lvert
    e^{x_j - m} - e^{-m} \rvert + \varepsilon)` with :math:`m` the largest
    score, which equals Eq. 1 up to :math:`\varepsilon` and cannot overflow.
    The authors' code takes :math:`\varepsilon = 10^{-8}`; the paper says
    only that it is small and positive.

    Parameters
    ----------
    x : array_like
        Finite scores.
    axis : int, default -1
        Axis of the keys.
    eps : float, default 1e-8
        The :math:`\varepsilon` that keeps an all-zero row from dividing by zero.

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    ValueError
        If a score is not finite, or ``eps`` is negative.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.released_models import softpick
    >>> softpick(np.array([1.0, 0.0, -1.0])).round(3).tolist()
    [0.731, 0.0, 0.0]
    """
    x = np.asarray(x, dtype=float)
    if not np.all(np.isfinite(x)) or eps < 0:
        raise ValueError("softpick takes finite scores and a non-negative eps")
    m = np.max(x, axis=axis, keepdims=True)
    shifted = np.exp(x - m) - np.exp(-m)
    return np.maximum(shifted, 0.0) / (np.sum(np.abs(shifted), axis=axis, keepdims=True) + eps)


def sink_margin(n, weight: float) -> np.ndarray:
    r"""The margin over every one of ``n`` other keys' logits at which a sink key's weight is ``weight``.

    A sink whose logit exceeds each of the other :math:`n` logits by
    :math:`\Delta` has weight at least :math:`1/(1 + n e^{-\Delta})`, with
    equality when the others are all equal; that bound is ``weight`` at
    :math:`\Delta = \ln n + \ln(w / (1 - w))`: the margin at which
    :func:`attention_scaling.long_sequences.needle_weight` of ``n + 1`` keys
    is ``w``. The margin is in scaled
    logits: in :math:`q \cdot k` it is :math:`\sqrt{d_k}` times larger.

    Parameters
    ----------
    n : int or array_like
        The number of keys besides the sink, at least 1.
    weight : float
        The sink's weight :math:`w`, in (0, 1).

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    ValueError
        If ``n`` is below 1 or not finite, or ``weight`` is not in (0, 1).

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.released_models import sink_margin
    >>> float(sink_margin(4096, 0.9).round(3))
    10.515
    >>> float(sink_margin(1, 0.5))
    0.0
    """
    n = np.asarray(n, dtype=float)
    if not np.all(np.isfinite(n)) or np.any(n < 1) or not 0 < weight < 1:
        raise ValueError(f"need n >= 1 and a weight in (0, 1); got n={n!r}, weight={weight!r}")
    return np.log(n) + np.log(weight / (1 - weight))


def sigmoid_gate(output, gate_logits) -> np.ndarray:
    r"""Gated attention's output gate: the attention output times :math:`\sigma(z)`, entry by entry.

    Qiu et al. (arXiv:2505.06708, Eq. 5) multiply the output :math:`Y` of
    scaled dot-product attention by :math:`\sigma(X W_\theta)`, a sigmoid of
    a head-specific projection of the layer's input; ``gate_logits`` is that
    :math:`z = X W_\theta`.

    Parameters
    ----------
    output : array_like
        The attention output :math:`Y`.
    gate_logits : array_like
        :math:`z`, broadcastable to ``output``; finite.

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    ValueError
        If a gate logit is not finite.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_scaling.released_models import sigmoid_gate
    >>> sigmoid_gate(np.array([2.0, 2.0]), np.array([0.0, -np.log(3.0)])).tolist()
    [1.0, 0.5]
    """
    z = np.asarray(gate_logits, dtype=float)
    if not np.all(np.isfinite(z)):
        raise ValueError("gate logits must be finite")
    # e^{-|z|} never overflows, and e/(1 + e) keeps full relative precision where sigma(z) is tiny.
    small = np.exp(-np.abs(z))
    return np.asarray(output, dtype=float) * np.where(z >= 0, 1 / (1 + small), small / (1 + small))


@dataclass(frozen=True)
class LedgerRow:
    r"""One library's or model family's factor on :math:`q \cdot k`.

    Attributes
    ----------
    name : str
        The library or model, and the setting the row describes.
    factor : sympy.Expr
        The factor as the code computes it, in :data:`SYMBOLS`.
    parameters : Mapping of str to number
        The values of the formula's symbols in the release; ``d_k`` always.
    source : str
        Where the factor is written: file and code line, config key, or
        paper and equation.
    how : str
        ``"run"`` (found by running the library's code in the tests) or
        ``"cited"`` (read, not run).
    note : str
        What else the reader should know, or ``""``.

    Examples
    --------
    >>> from attention_scaling.released_models import LEDGER
    >>> gemma = next(row for row in LEDGER if row.name == "Gemma 2 27B")
    >>> round(gemma.value, 4), round(gemma.ratio, 3), round(gemma.score_variance, 3)
    (0.0833, 0.943, 0.889)
    """

    name: str
    factor: sp.Expr
    parameters: Mapping[str, float]
    source: str
    how: str
    note: str = ""

    def __post_init__(self):
        if self.how not in ("run", "cited"):
            raise ValueError(f"{self.name}: how is 'run' or 'cited'; got {self.how!r}")
        free = {symbol.name for symbol in self.factor.free_symbols}
        if "d_k" not in self.parameters or not free <= set(self.parameters):
            raise ValueError(f"{self.name}: parameters must give d_k and every symbol of {self.factor}; got {sorted(self.parameters)}")

    @property
    def d_k(self) -> int:
        """The head dimension of the release."""
        return int(self.parameters["d_k"])

    @property
    def value(self) -> float:
        """The factor at the release's parameters."""
        return float(self.factor.subs({SYMBOLS[name]: value for name, value in self.parameters.items()}))

    @property
    def ratio(self) -> float:
        r"""The factor over :math:`1/\sqrt{d_k}` at the same head dimension."""
        return self.value * math.sqrt(self.d_k)

    @property
    def score_variance(self) -> float:
        r"""The variance of the scaled score when :math:`q` and :math:`k` have independent unit-variance entries: factor² · d_k."""
        return self.value**2 * self.d_k


_STANDARD = _d ** sp.Rational(-1, 2)

#: One row per library or model family, in the order the page shows them.
LEDGER: tuple[LedgerRow, ...] = (
    LedgerRow("PyTorch scaled_dot_product_attention", _STANDARD, {"d_k": 128},
              "torch 2.13, torch/nn/functional.py, scaled_dot_product_attention, docstring of scale: "
              "if None, 1/sqrt(E)", "run", "E is the query's last dimension"),
    LedgerRow("JAX jax.nn.dot_product_attention", _STANDARD, {"d_k": 128},
              "jax 0.10.2, jax/_src/nn/functions.py L1199: scale_val = (1.0 / np.sqrt(H)) if scale is None else scale", "run"),
    LedgerRow("FlashAttention flash_attn_func", _STANDARD, {"d_k": 128},
              "Dao-AILab/flash-attention at 0251105a (version 2.8.4 in development), flash_attn/flash_attn_interface.py L849: "
              "softmax_scale = q.shape[-1] ** (-0.5)", "cited", "a softcap argument caps the scaled logits"),
    LedgerRow("Llama (transformers)", _STANDARD, {"d_k": 128},
              "transformers 5.18.0, models/llama/modeling_llama.py: self.scaling = self.head_dim**-0.5", "run"),
    LedgerRow("Gemma 2 2B and 9B", _query_scalar ** sp.Rational(-1, 2), {"d_k": 256, "query_pre_attn_scalar": 256},
              "transformers 5.18.0, models/gemma2/modeling_gemma2.py: self.scaling = config.query_pre_attn_scalar**-0.5; "
              "256 for 2B and 9B: google-deepmind/gemma at d12b1bbe, gemma/transformer.py (BY_ONE_OVER_SQRT_HEAD_DIM)", "run",
              "logits capped at 50 by 50 tanh(x/50)"),
    LedgerRow("Gemma 2 27B", _query_scalar ** sp.Rational(-1, 2), {"d_k": 128, "query_pre_attn_scalar": 144},
              "google/gemma_pytorch at 014acb7a, gemma/config.py L173: query_pre_attn_scalar=144 (hidden_size / num_attention_heads); "
              "run as transformers 5.18.0's Gemma2Attention", "run",
              "144 = 4608/32, the model width over the heads, not the head dimension"),
    LedgerRow("Granite 3.1 8B", _multiplier, {"d_k": 128, "attention_multiplier": sp.Rational(1, 128)},
              "transformers 5.18.0, models/granite/modeling_granite.py: self.scaling = config.attention_multiplier; "
              "0.0078125 reported from copies of ibm-granite/granite-3.1-8b-instruct's config.json", "run",
              "a 1/d_k scale, as muP prescribes; the value is reported, not read in IBM's own file"),
    LedgerRow("DeepSeek-V3", _STANDARD * (_mscale * sp.log(_s) / 10 + 1) ** 2, {"d_k": 192, "s": 40, "mscale_all_dim": 1},
              "deepseek-ai/DeepSeek-V3 at 9b4e9788, inference/model.py L435-437: self.softmax_scale = "
              "self.softmax_scale * mscale * mscale; rope_factor 40 (L83); run as transformers 5.18.0's DeepseekV3Attention", "run", "d_k = 128 + 64, the non-rotary and rotary parts of the head"),
    LedgerRow("Kimi K2", _STANDARD * (_mscale * sp.log(_s) / 10 + 1) ** 2, {"d_k": 192, "s": 32, "mscale_all_dim": 1},
              "MoonshotAI/Kimi-K2 at c6157be8, docs/deploy_guidance.md L195: the DeepSeek-V3 architecture, model_type kimi_k2; "
              "YaRN factor 32 and mscale_all_dim 1 reported from copies of moonshotai/Kimi-K2-Instruct's config.json; "
              "run as transformers 5.18.0's DeepseekV3Attention", "run",
              "the July 2025 release; d_k = 128 + 64 and the YaRN values are reported from copies of its config, not read "
              "in Moonshot's own file; trained with QK-Clip at tau = 100, also reported"),
    # The temperature is attention_scaling.temperatures.llama4_multiplier at n = position + 1, as a formula.
    LedgerRow("Llama 4, layers without RoPE", _STANDARD * (_attn * sp.log(sp.floor((_pos + 1) / _floor) + 1) + 1),
              {"d_k": 128, "position": 131071, "floor_scale": 8192, "attn_scale": sp.Rational(1, 10)},
              "transformers 5.18.0, models/llama4/modeling_llama4.py: "
              "torch.log1p(torch.floor((positions.float() + 1.0) / self.floor_scale)) * self.attn_scale + 1.0", "run",
              "depends on the position; values at the defaults of Llama4TextConfig, at the last of 131,072 positions "
              "(the released configs were not read); 1/sqrt(d_k) before position 8191"),
    LedgerRow("T5", sp.Integer(1), {"d_k": 64},
              "transformers 5.18.0, models/t5/modeling_t5.py: self.scaling = 1.0", "run",
              "the 1/sqrt(d_k) is folded into the initialisation of W_Q"),
    LedgerRow("GPT-2, scale_attn_by_inverse_layer_idx", _STANDARD / _layer, {"d_k": 64, "layer": 12},
              "transformers 5.18.0, models/gpt2/modeling_gpt2.py: self.scaling /= float(self.layer_idx + 1)", "run",
              "off by default; the value is at GPT-2 small's last layer, the 12th"),
    LedgerRow("Megatron-LM, apply_query_key_layer_scaling", _STANDARD, {"d_k": 128},
              "NVIDIA/Megatron-LM at d98e8a64, megatron/core/transformer/dot_product_attention.py L83-91: self.softmax_scale /= coeff "
              "(coeff = layer_number), and FusedScaleMaskSoftmax(scale=coeff) multiplies it back in float32", "cited",
              "the product with 1/layer is taken in low precision, the layer number is restored in float32"),
)
