"""Executable, checked derivations of why attention divides its scores by sqrt(d_k).

The public functions live in private-by-convention modules and are
re-exported here, so ``from attention_scaling import softmax`` is the one way
to import them.
"""

from attention_scaling._attention import (
    attention_scores,
    attention_weights,
    layer_norm,
    scaled_dot_product_attention,
)
from attention_scaling._softmax import (
    attention_entropy,
    entropy_from_logits,
    log_softmax,
    naive_softmax,
    saturation_margin,
    softmax,
    softmax_jacobian,
)

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "attention_entropy",
    "attention_scores",
    "attention_weights",
    "entropy_from_logits",
    "layer_norm",
    "log_softmax",
    "naive_softmax",
    "saturation_margin",
    "scaled_dot_product_attention",
    "softmax",
    "softmax_jacobian",
]
