"""bfloat16 through float32 GEMMs (countercase.bf16), against PyTorch's own bfloat16 kernels:
the reference GEMM on a CPU without native bfloat16, oneDNN (AMX) on one with it. The shares of
outputs allowed to differ are several times those measured against the reference on an AVX2
EPYC (0.015 % for a linear layer, 6 to 15 % for the attention forward, under 0.04 % backward),
since AMX orders its sums otherwise again; float32 itself differs in most of them."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from countercase import bf16  # noqa: E402

BF16 = torch.bfloat16


def _within_a_step(found, expected) -> bool:
    """Each element within one bfloat16 step (8 significant bits) of the tensor's largest
    magnitude: a sum that cancels keeps the error of its terms, not of its result."""
    found, expected = found.float(), expected.float()
    return bool(((found - expected).abs() <= expected.abs().max() * 2.0 ** -7).all())


def _share_differing(found, expected) -> float:
    return (found != expected).float().mean().item()


def test_a_linear_layer_under_autocast_is_pytorchs_bfloat16_up_to_the_order_of_sums():
    torch.manual_seed(0)
    layer, x = torch.nn.Linear(384, 1536), torch.randn(64, 384)

    def forward(emulate):
        with bf16.bf16_products(True, emulate=emulate):
            with torch.autocast("cpu", dtype=BF16):
                return layer(x)

    emulated, own = forward(True), forward(False)
    assert emulated.dtype == own.dtype == BF16
    assert _share_differing(emulated, own) < 0.01
    assert _within_a_step(emulated, own)
    # and the emulation is not float32: rounding to bfloat16 changed most outputs
    assert _share_differing(emulated.float(), layer(x)) > 0.5


@pytest.mark.parametrize("keys", [128, 600])
def test_flash_attention_follows_the_kernels_rounding_points(keys):
    torch.manual_seed(1)
    q, k, v = (torch.randn(2, 4, keys, 32).to(BF16) for _ in range(3))
    # a padding mask as transformers builds it: the second sequence's last 30 keys closed
    closed = torch.zeros(2, 1, 1, keys)
    closed[1, ..., -30:] = torch.finfo(BF16).min
    mask = closed.to(BF16)
    out, lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v,
                                                                          attn_mask=mask)
    mine, my_lse = bf16.flash_attention(q, k, v, attn_mask=mask)
    assert mine.dtype == BF16 and my_lse.dtype == torch.float32
    # the kernel's exponential is a 20-ulp polynomial: some numerators round the other way
    assert _share_differing(mine, out) < 0.3 and _within_a_step(mine, out)
    assert torch.allclose(my_lse, lse, atol=1e-4)
    # a float32 kernel on the widened inputs, without the kernel's rounding of the numerators,
    # is further away
    wide, _ = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(
        q.float(), k.float(), v.float(), attn_mask=mask.float())
    assert _share_differing(wide.to(BF16), out) > _share_differing(mine, out)

    grad = torch.randn_like(out)
    own = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward(
        grad, q, k, v, out, lse, 0.0, False, attn_mask=mask)
    found = bf16.flash_attention_backward(grad, q, k, v, out, lse, 0.0, False, attn_mask=mask)
    for name, a, b in zip("qkv", found, own):
        assert a.dtype == BF16, name
        assert _share_differing(a, b) < 0.01, name
        assert _within_a_step(a, b), name


def test_a_sequence_whose_every_key_is_closed_still_gets_the_kernels_output():
    torch.manual_seed(2)
    q, k, v = (torch.randn(1, 2, 40, 16).to(BF16) for _ in range(3))
    mask = torch.full((1, 1, 1, 40), torch.finfo(BF16).min).to(BF16)
    out, _ = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, attn_mask=mask)
    mine, _ = bf16.flash_attention(q, k, v, attn_mask=mask)
    assert torch.isfinite(mine.float()).all()
    assert _within_a_step(mine, out)


def _tiny_tagger():
    from transformers import BertConfig, BertForTokenClassification

    torch.manual_seed(3)
    config = BertConfig(vocab_size=500, hidden_size=64, num_hidden_layers=2,
                        num_attention_heads=4, intermediate_size=128, num_labels=5)
    return BertForTokenClassification(config).train()


def test_a_training_step_through_the_emulation_is_pytorchs_bfloat16_step():
    ids = torch.randint(5, 500, (4, 48), generator=torch.Generator().manual_seed(4))
    labels = torch.randint(0, 5, (4, 48), generator=torch.Generator().manual_seed(5))
    found = []
    for emulate in (True, False):
        model = _tiny_tagger()
        torch.manual_seed(6)  # the same dropout masks
        with bf16.bf16_products(True, emulate=emulate):
            with torch.autocast("cpu", dtype=BF16):
                loss = model(input_ids=ids, labels=labels).loss
            loss.backward()
        grads = torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None])
        found.append((loss.item(), grads))
    (loss, grads), (own_loss, own_grads) = found
    assert loss == pytest.approx(own_loss, rel=1e-3)
    assert torch.isfinite(grads).all()
    assert torch.nn.functional.cosine_similarity(grads, own_grads, dim=0) > 0.999


def test_the_mode_is_entered_only_where_bfloat16_is_emulated(monkeypatch):
    from torch.utils._python_dispatch import _get_current_dispatch_mode

    monkeypatch.setattr(bf16, "native_bf16", lambda: True)
    with bf16.bf16_products(True):
        assert _get_current_dispatch_mode() is None
    monkeypatch.setattr(bf16, "native_bf16", lambda: False)
    with bf16.bf16_products(True):
        assert _get_current_dispatch_mode() is not None
    with bf16.bf16_products(False):  # float32 asked: nothing to emulate
        assert _get_current_dispatch_mode() is None


@pytest.mark.skipif(bf16.native_bf16(), reason="native bfloat16 here: the emulation is not used "
                                               "(its invariance is encoder_bench --parity's)")
def test_a_texts_vector_does_not_depend_on_its_batch(aila_files):
    """The criterion of params.yaml's index.precision, kept by the emulation where it runs: real
    query sentences, a short one (under the 32 rows where MKL changed its order of sums on the
    EPYC) among them."""
    from countercase.index.encoders import embed, load_encoder

    queries = aila_files.queries()
    texts = [next(iter(queries.values()))[:60]]  # a few words
    texts += [text[:1200] for text in list(queries.values())[1:4]]
    encoder = load_encoder("all-MiniLM-L6-v2", precision="bfloat16")
    together = embed(encoder, texts, batch_size=len(texts), precision="bfloat16")
    for i, text in enumerate(texts):
        alone = embed(encoder, [text], batch_size=1, precision="bfloat16")
        assert (alone[0] == together[i]).all(), i
