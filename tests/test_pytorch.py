"""Cross-check: our scaled_dot_product_attention against PyTorch's.

PyTorch is optional (``make torch`` installs the CPU build; CI does). Without
it every test here is skipped with the reason below. Everything runs in
float64, where the two implementations must agree to rounding.
"""

import math

import numpy as np
import pytest

from attention_scaling import scaled_dot_product_attention

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed; `make torch` installs its CPU build so that this cross-check runs"
)
F = torch.nn.functional

rng = np.random.default_rng(60939)


def theirs(q, k, v, **kwargs):
    tensors = (torch.from_numpy(np.ascontiguousarray(a)) for a in (q, k, v))
    return F.scaled_dot_product_attention(*tensors, **kwargs).numpy()


def random_qkv(batch=(2, 3), n_q=5, n_k=7, d_k=16, d_v=8, spread=1.0):
    return (
        spread * rng.standard_normal((*batch, n_q, d_k)),
        spread * rng.standard_normal((*batch, n_k, d_k)),
        rng.standard_normal((*batch, n_k, d_v)),
    )


def random_mask(shape):
    mask = rng.random(shape) < 0.5
    mask[..., 0] = True  # every query keeps a key, or both sides are undefined
    return mask


@pytest.mark.parametrize("d_k", [1, 8, 64, 256])
def test_default_scale_matches_pytorch(d_k):
    q, k, v = random_qkv(d_k=d_k, spread=2.0)
    np.testing.assert_allclose(scaled_dot_product_attention(q, k, v), theirs(q, k, v), rtol=1e-10, atol=1e-12)


def test_pytorch_default_is_one_over_root_of_the_query_dimension():
    q, k, v = random_qkv(d_k=48, d_v=3, spread=3.0)
    np.testing.assert_allclose(theirs(q, k, v), theirs(q, k, v, scale=1 / math.sqrt(48)), rtol=1e-12)
    assert not np.allclose(theirs(q, k, v), theirs(q, k, v, scale=1 / 48))


@pytest.mark.parametrize("scale", [1.0, 1 / 32, 0.3])
def test_explicit_scale_matches_pytorch(scale):
    q, k, v = random_qkv(d_k=32)
    ours = scaled_dot_product_attention(q, k, v, scale=scale)
    np.testing.assert_allclose(ours, theirs(q, k, v, scale=scale), rtol=1e-10, atol=1e-12)


def test_boolean_mask_matches_pytorch():
    q, k, v = random_qkv()
    mask = random_mask((2, 3, 5, 7))
    ours = scaled_dot_product_attention(q, k, v, mask=mask)
    np.testing.assert_allclose(ours, theirs(q, k, v, attn_mask=torch.from_numpy(mask)), rtol=1e-10, atol=1e-12)


def test_broadcast_mask_matches_pytorch():
    q, k, v = random_qkv()
    mask = random_mask((5, 7))  # one mask shared by every batch and head
    ours = scaled_dot_product_attention(q, k, v, mask=mask)
    np.testing.assert_allclose(ours, theirs(q, k, v, attn_mask=torch.from_numpy(mask)), rtol=1e-10, atol=1e-12)


def test_lower_triangular_mask_matches_is_causal():
    q, k, v = random_qkv(n_q=6, n_k=6)
    causal = np.tril(np.ones((6, 6), dtype=bool))
    ours = scaled_dot_product_attention(q, k, v, mask=causal)
    np.testing.assert_allclose(ours, theirs(q, k, v, is_causal=True), rtol=1e-10, atol=1e-12)


def test_a_wrong_scale_would_be_caught():
    """The comparison is sharp enough to see 1/d_k in place of 1/sqrt(d_k)."""
    q, k, v = random_qkv(d_k=64)
    wrong = scaled_dot_product_attention(q, k, v, scale=1 / 64)
    assert np.abs(wrong - theirs(q, k, v)).max() > 1e-3


def test_a_query_with_no_key_is_an_error_here_and_zeros_in_pytorch():
    """Softmax over no keys is 0/0; we refuse it, PyTorch 2.13 returns zeros."""
    q, k, v = random_qkv(batch=(), n_q=2, n_k=3)
    mask = np.array([[True, False, True], [False, False, False]])
    with pytest.raises(ValueError, match="allows no key for the query at index"):
        scaled_dot_product_attention(q, k, v, mask=mask)
    out = theirs(q, k, v, attn_mask=torch.from_numpy(mask))
    np.testing.assert_array_equal(out[1], 0.0)
    assert np.all(np.isfinite(out[0]))
