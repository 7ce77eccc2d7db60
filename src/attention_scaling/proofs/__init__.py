r"""The site's theorems, each step checked by SymPy or marked as cited, argued or measured.

The engine (:mod:`attention_scaling.proofs.engine`) makes the checked steps
and holds the one registry, ``REGISTRY``. The theorems live in one module per
chapter of the site, and register themselves when imported:

========================  =========================================================
``variance``              products, the dot product, general moments, correlated pairs
``correlation``           correlated scaling limits, logit-norm growth
``scaling``               the scaled variance
``initialisation``        the dot product of projected tokens
``softmax``               shift invariance, the Jacobian, the max-subtracted bounds
``saturation``            the Jacobian against the top-two gap; how often Gaussian rows pass a gradient
``long_sequences``        Gaussian logit moments, the max bound, the needle limit
``logit_growth``          the QK-norm bound; the quadratic growth and entropy-bound
                          derivations
``folding``               folding the constant into W_Q (T5); the logit update
``depth``                 the contraction of pure attention; dot-product attention is not Lipschitz
``temperatures``          length multipliers and the needle; the entropy-holding scale
``bounded_logits``        soft-capping; QK-norm's learned scale; dispersion
========================  =========================================================

Everything public is imported from here: ``from attention_scaling.proofs
import check, prove_all, qk_norm_bound_theorem``.
"""

# The import order is the registration order, which is the order in which
# ``prove`` runs and lists the entries and in which THEOREM_NAMES gives the
# theorems (the citation list reads it): keep it; do not let a sorter reorder it.
# isort: off
from attention_scaling.proofs.engine import (
    KINDS,
    REGISTRY,
    THEOREM_NAMES,
    THEOREMS,
    Derivation,
    E,
    Proof,
    ProofError,
    RandomVariables,
    Registered,
    Step,
    Var,
    argue,
    check,
    check_inequality,
    check_nonnegative,
    check_nonzero,
    check_solutions,
    cite,
    derivation,
    measure,
    Proved,
    prove,
    prove_all,
    step_counts,
    theorem,
)
from attention_scaling.proofs.variance import (
    correlated_dot_product,
    d_k,
    dot_product_general_moments,
    dot_product_variance,
    mu_k,
    mu_q,
    product_variance,
    rho,
    sigma_k,
    sigma_q,
)
from attention_scaling.proofs.correlation import correlated_scaling_limits, logit_norm_growth
from attention_scaling.proofs.scaling import scaled_variance
from attention_scaling.proofs.initialisation import d_model, projected_dot_product, sigma_K, sigma_Q
from attention_scaling.proofs.softmax import softmax_jacobian_theorem, softmax_shift_invariance, stable_softmax_bounds
from attention_scaling.proofs.saturation import gap_probability, mean_jacobian_limit, saturated_jacobian
from attention_scaling.proofs.long_sequences import (
    gaussian_logit_moments,
    gaussian_max_bound,
    length,
    needle_limit,
    spread,
)
from attention_scaling.proofs.logit_growth import (
    entropy_bound_derivation,
    qk_norm_bound_theorem,
    quadratic_growth_step,
)
from attention_scaling.proofs.folding import folded_scale, logit_update
from attention_scaling.proofs.depth import attention_contraction, dot_product_not_lipschitz
from attention_scaling.proofs.temperatures import entropy_temperature, length_temperatures
from attention_scaling.proofs.bounded_logits import dispersion, qknorm_scale, soft_cap_bound

# isort: on

__all__ = [
    "Derivation",
    "E",
    "KINDS",
    "Proof",
    "ProofError",
    "Proved",
    "REGISTRY",
    "RandomVariables",
    "Registered",
    "Step",
    "THEOREMS",
    "THEOREM_NAMES",
    "Var",
    "argue",
    "check",
    "check_inequality",
    "check_nonnegative",
    "check_nonzero",
    "check_solutions",
    "cite",
    "correlated_dot_product",
    "correlated_scaling_limits",
    "d_k",
    "d_model",
    "derivation",
    "dot_product_general_moments",
    "dot_product_variance",
    "entropy_bound_derivation",
    "folded_scale",
    "gaussian_logit_moments",
    "gaussian_max_bound",
    "length",
    "logit_norm_growth",
    "logit_update",
    "measure",
    "mu_k",
    "mu_q",
    "needle_limit",
    "product_variance",
    "projected_dot_product",
    "prove",
    "prove_all",
    "qk_norm_bound_theorem",
    "quadratic_growth_step",
    "rho",
    "scaled_variance",
    "sigma_K",
    "sigma_Q",
    "sigma_k",
    "sigma_q",
    "softmax_jacobian_theorem",
    "spread",
    "softmax_shift_invariance",
    "stable_softmax_bounds",
    "gap_probability",
    "mean_jacobian_limit",
    "saturated_jacobian",
    "attention_contraction",
    "dot_product_not_lipschitz",
    "entropy_temperature",
    "length_temperatures",
    "dispersion",
    "qknorm_scale",
    "soft_cap_bound",
    "theorem",
]
