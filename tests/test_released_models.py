"""The ledger's factors, found by running the libraries' own attention code.

For each row marked "run", a small random model is built offline from the
library's config class (nothing is downloaded), and its attention layer is
run twice on the same weights and tokens: once with the library's own eager
attention, once with attention computed here from the queries, keys and
values that the layer hands to transformers' public ``AttentionInterface``,
scaled by the ledger's formula at the small model's parameters. The two
outputs agree only if the ledger's factor is the one the code applies; the
same comparison with the factor off by a quarter must disagree, so the check
can tell.

Needs PyTorch and transformers (``make torch``); CI installs both.
"""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
import sympy as sp

torch = pytest.importorskip("torch", reason="PyTorch is not installed; `make torch` installs it so that the ledger checks run")
transformers = pytest.importorskip(
    "transformers", reason="transformers is not installed; `make torch` installs it so that the ledger checks run")

from attention_scaling.released_models import LEDGER, SYMBOLS  # noqa: E402

ROWS = {row.name: row for row in LEDGER}
IMPLEMENTATION = "ledger_check"
# float32 attention on 8 tokens: the right factor agrees to about 1e-6, a factor off by 25 % differs by 1e-2 or more.
AGREE, DIFFER = 1e-4, 1e-2
_small = dict(vocab_size=32, hidden_size=64, intermediate_size=64, num_hidden_layers=1, num_attention_heads=4,
              num_key_value_heads=4, initializer_range=0.5, bos_token_id=0, eos_token_id=1, pad_token_id=0)


def _models():
    """Each run row's small model: (model class, config, the formula's parameters in it, config of the model run here)."""
    t = transformers
    # mscale_all_dim = mscale (DeepSeek-V2-Lite's 0.707) keeps the rotary tables unscaled and tests the weight m.
    yarn = {"rope_type": "yarn", "factor": 40.0, "mscale": 0.707, "mscale_all_dim": 0.707,
            "original_max_position_embeddings": 4, "beta_fast": 32, "beta_slow": 1, "rope_theta": 10000.0}
    deepseek = t.DeepseekV3Config(**_small, moe_intermediate_size=32, q_lora_rank=None, kv_lora_rank=16, qk_nope_head_dim=8,
                                  qk_rope_head_dim=8, v_head_dim=8, first_k_dense_replace=1, n_routed_experts=4,
                                  num_experts_per_tok=2, n_group=1, topk_group=1, rope_parameters=yarn, max_position_embeddings=160)
    # Kimi K2's reported rope scaling: factor 32, mscale = mscale_all_dim = 1.
    kimi = copy.deepcopy(deepseek)
    kimi.rope_parameters = dict(yarn, factor=32.0, mscale=1.0, mscale_all_dim=1.0)
    llama4 = t.Llama4TextConfig(**_small, intermediate_size_mlp=64, head_dim=16, no_rope_layers=[0], floor_scale=2,
                                attn_scale=0.1, attn_temperature_tuning=True, num_local_experts=2)
    gpt2 = t.GPT2Config(vocab_size=32, n_embd=64, n_layer=3, n_head=4, scale_attn_by_inverse_layer_idx=True,
                        initializer_range=0.5, bos_token_id=0, eos_token_id=1)
    t5 = t.T5Config(vocab_size=32, d_model=64, d_kv=16, d_ff=64, num_layers=1, num_heads=4, initializer_factor=2.0)
    models = {
        "Llama (transformers)": (t.LlamaModel, t.LlamaConfig(**_small), {"d_k": 16}),
        # Not the head dimension (16): the check sees which of the two the code uses.
        "Gemma 2 2B and 9B": (t.Gemma2Model, t.Gemma2Config(**_small, head_dim=16, query_pre_attn_scalar=16),
                              {"d_k": 16, "query_pre_attn_scalar": 16}),
        "Gemma 2 27B": (t.Gemma2Model, t.Gemma2Config(**_small, head_dim=16, query_pre_attn_scalar=36),
                        {"d_k": 16, "query_pre_attn_scalar": 36}),
        "Granite 3.1 8B": (t.GraniteModel, t.GraniteConfig(**_small, attention_multiplier=1 / 16),
                           {"d_k": 16, "attention_multiplier": 1 / 16}),
        "DeepSeek-V3": (t.DeepseekV3Model, deepseek, {"d_k": 16, "s": 40, "mscale_all_dim": 0.707}),
        "Kimi K2": (t.DeepseekV3Model, kimi, {"d_k": 16, "s": 32, "mscale_all_dim": 1}),
        # The temperature multiplies the query; the model run here has it off, and the ledger's factor puts it back.
        "Llama 4, layers without RoPE": (t.Llama4TextModel, llama4, {"d_k": 16, "floor_scale": 2, "attn_scale": 0.1},
                                         {"attn_temperature_tuning": False}),
        "T5": (t.T5EncoderModel, t5, {"d_k": 16}),
        "GPT-2, scale_attn_by_inverse_layer_idx": (t.GPT2Model, gpt2, {"d_k": 16}),
    }
    return {name: entry if len(entry) == 4 else (*entry, {}) for name, entry in models.items()}


def _factor(row, parameters, module, n_queries):
    """The ledger's factor at the small model's parameters, per query position where it depends on the position."""
    values = dict(parameters, layer=module.layer_idx + 1 if "layer" in {s.name for s in row.factor.free_symbols} else 1)
    formula = row.factor.subs({SYMBOLS[name]: value for name, value in values.items() if name != "position"})
    positions = np.arange(n_queries, dtype=float)
    factor = sp.lambdify(SYMBOLS["position"], formula, "numpy")(positions) * np.ones(n_queries)
    return torch.tensor(factor, dtype=torch.float32)[:, None]


def _attention(scale):
    """Attention computed here, with ``scale(module, n_queries)`` on q.k, in the signature of transformers' AttentionInterface."""
    def attention(module, query, key, value, attention_mask, scaling=None, dropout=0.0, softcap=None, **kwargs):
        repeat = query.shape[1] // key.shape[1]
        key, value = key.repeat_interleave(repeat, 1), value.repeat_interleave(repeat, 1)
        logits = scale(module, query.shape[-2]) * (query.float() @ key.float().transpose(-1, -2))
        if softcap:
            logits = softcap * torch.tanh(logits / softcap)
        if kwargs.get("position_bias") is not None:  # T5 adds its learned bias to the scaled scores
            logits = logits + kwargs["position_bias"]
        if attention_mask is not None:
            logits = logits + attention_mask[..., : key.shape[-2]]
        elif getattr(module, "is_causal", False):
            n, m = logits.shape[-2:]
            logits = logits.masked_fill(torch.ones(n, m, dtype=torch.bool).triu(1 + m - n), float("-inf"))
        return (torch.softmax(logits, -1).to(value.dtype) @ value).transpose(1, 2).contiguous(), None
    return attention


def _run(model_class, config, implementation, state=None):
    model = model_class(copy.deepcopy(config))
    model.set_attn_implementation(implementation)
    if state is not None:
        model.load_state_dict(state)
    torch.manual_seed(1)
    tokens = torch.randint(2, config.vocab_size, (1, 8))
    with torch.no_grad():
        return model, model.eval()(tokens).last_hidden_state


def _gap(name, stretch=1.0):
    """The largest difference between the library's eager attention and the ledger's, with the factor times ``stretch``."""
    model_class, config, parameters, changes = _MODELS[name]
    row = ROWS[name]
    transformers.AttentionInterface.register(
        IMPLEMENTATION, _attention(lambda module, n: stretch * _factor(row, parameters, module, n)))
    torch.manual_seed(0)
    library, expected = _run(model_class, config, "eager")
    ledger_config = copy.deepcopy(config)
    for key, value in changes.items():
        setattr(ledger_config, key, value)
    _, measured = _run(model_class, ledger_config, IMPLEMENTATION, library.state_dict())
    return float((expected - measured).abs().max())


_MODELS = _models()


def test_every_row_marked_run_is_run_here():
    assert {row.name for row in LEDGER if row.how == "run"} == set(_MODELS) | {"PyTorch scaled_dot_product_attention",
                                                                                "JAX jax.nn.dot_product_attention"}


@pytest.mark.parametrize("name", sorted(_MODELS))
def test_the_library_applies_the_ledgers_factor(name):
    assert _gap(name) < AGREE, f"{name}: the ledger's factor {ROWS[name].factor} is not what the code applies"
    assert _gap(name, stretch=1.25) > DIFFER, f"{name}: the check cannot tell a factor 25 % off"


def test_pytorch_scales_by_the_ledgers_factor_when_no_scale_is_given():
    row = ROWS["PyTorch scaled_dot_product_attention"]
    generator = torch.Generator().manual_seed(0)
    q, k, v = (4 * torch.randn(1, 2, 8, 16, generator=generator) for _ in range(3))
    default = torch.nn.functional.scaled_dot_product_attention(q, k, v)
    factor = float(row.factor.subs(SYMBOLS["d_k"], q.shape[-1]))
    for stretch, agrees in ((1.0, True), (1.25, False)):
        given = torch.nn.functional.scaled_dot_product_attention(q, k, v, scale=stretch * factor)
        assert math.isclose(float((default - given).abs().max()), 0, abs_tol=AGREE) is agrees


def test_jax_scales_by_the_ledgers_factor_when_no_scale_is_given():
    jax = pytest.importorskip("jax", reason="JAX is not installed; `make torch` installs it so that the ledger checks run")
    row = ROWS["JAX jax.nn.dot_product_attention"]
    # JAX's layout is (batch, tokens, heads, head dimension); float32 on the CPU.
    q, k, v = (4 * np.random.default_rng(seed).standard_normal((1, 8, 2, 16)).astype(np.float32) for seed in range(3))
    default = np.asarray(jax.nn.dot_product_attention(q, k, v))
    factor = float(row.factor.subs(SYMBOLS["d_k"], q.shape[-1]))
    for stretch, agrees in ((1.0, True), (1.25, False)):
        given = np.asarray(jax.nn.dot_product_attention(q, k, v, scale=stretch * factor))
        assert math.isclose(float(np.abs(default - given).max()), 0, abs_tol=AGREE) is agrees
