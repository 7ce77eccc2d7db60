"""Executable, checked derivations of why attention divides its scores by sqrt(d_k).

The public API follows one re-export policy:

* The core functions (softmax and its relatives, attention scores and
  weights, LayerNorm) live in the private modules ``_softmax`` and
  ``_attention`` and are re-exported here, so
  ``from attention_scaling import softmax`` is the one way to import them.
* The chapter modules are public submodules, imported by their own name and
  not re-exported: ``attention_scaling.simulate``, ``gradients``,
  ``saturation``, ``training``, ``tuning``, ``initialisation``, ``folding``,
  ``correlation``, ``long_sequences``, ``low_precision``, ``logit_growth``,
  ``libraries``, ``proofs`` (and ``figures``), as in
  ``from attention_scaling.simulate import mean_estimate``.
* ``attention_scaling.site`` is page support for the documentation site, not
  library API; nothing in the library imports it.

No name exported here is also the name of a submodule, so an attribute of
the package is never a function in one place and a module in another.
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
