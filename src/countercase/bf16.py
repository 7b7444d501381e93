"""bfloat16 arithmetic at about float32 speed on a CPU that has no bfloat16.

Under CPU bfloat16 autocast, a CPU without native bfloat16 (no AMX, no AVX512-BF16) runs each
bfloat16 matrix product through PyTorch's reference GEMM, about 15 times slower than float32
(:mod:`countercase.cpu` measures it). That GEMM multiplies bfloat16 operands with float32
accumulation and rounds the result to bfloat16, as AMX does. A product of two bfloat16 numbers
is exact in float32, so the same arithmetic is a float32 GEMM of the operands widened, its
result rounded back: only the order of the float32 sums differs, as it already differs between
AMX and the reference.

:func:`bf16_products` does that, inside a dispatch mode, for the products autocast sends to
bfloat16 (``mm``, ``addmm``, ``bmm``, ``baddbmm``, ``addbmm``) and for CPU flash attention,
whose bfloat16 kernel (``aten/src/ATen/native/cpu/FlashAttentionKernel.cpp``) is followed here
with its rounding points: the softmax numerators rounded to bfloat16 before they meet the
values; in the backward pass, the gradients of the keys and values accumulated in bfloat16
over blocks of query rows, and the score gradients rounded before they meet queries and keys.
Against PyTorch's own kernels on random bfloat16 inputs (``tests/test_bf16.py``), a linear
layer and the attention backward differ in well under 0.1 % of their outputs, the attention
forward in 6 to 15 %, by a unit in the last place: the kernel's exponential is a 20-ulp
polynomial (``exp_u20``), this one is exact. Measured here on 64 corpus chunks, the encoder's
vectors have a cosine of at least 0.99998 to the reference's (float32's: 0.99997), at 1.2
times float32's time (the reference: 5 to 6 times). As with native bfloat16, a text's vector
does not depend on the batch it is embedded in (the criterion of ``index.precision``): the
emulation drops the padding keys and pads each product's rows to a multiple of 64, so that
MKL's float32 GEMM sums every row in the same order.
"""

from __future__ import annotations

import math
from contextlib import contextmanager, nullcontext
from functools import cache

from countercase.cpu import native_bf16

# the flash kernel's blocks: query rows by query length, keys always 512
_Q_SPLITS = ((768, 256), (192, 64), (0, 32))
_KV_SPLIT = 512
# a mask value that makes a key's numerator exactly 0 (transformers closes a padding key with
# the dtype's lowest value, -3.4e38)
_CLOSED = -1e30
# Native bfloat16 gives a text the same vector whatever else is in its batch
# (params.yaml, index.precision). MKL's float32 GEMM gives a row the same sums once a product
# has 32 rows or more, not below (measured here); so a product's rows are padded to a multiple
# of this.
_ROWS = 64


def _q_split(length: int) -> int:
    return next(size for at_least, size in _Q_SPLITS if length >= at_least)


def _scores(q, k, scale, mask, is_causal):
    """float32 ``scale * q @ k.T (+ mask)`` of widened bfloat16 operands."""
    import torch

    scores = q.float() @ k.float().transpose(-2, -1)
    scores.mul_(scale)
    if mask is not None:  # the op takes a mask of the queries' dtype only
        scores.add_(mask.float())
    if is_causal:
        causal = torch.ones(scores.shape[-2:], dtype=torch.bool).tril()
        scores.masked_fill_(~causal, -math.inf)
    return scores


def flash_attention(query, key, value, dropout_p=0.0, is_causal=False, *, attn_mask=None,
                    scale=None):
    """``aten._scaled_dot_product_flash_attention_for_cpu`` on bfloat16 inputs: (output in
    bfloat16, log-sum-exp in float32). Like the kernel, it has no dropout (PyTorch sends
    attention with dropout to its math path, whose products are plain ``bmm``)."""
    import torch

    scale = 1 / math.sqrt(query.shape[-1]) if scale is None else scale
    outs, sums = [], []
    # one sequence at a time (its scores stay in cache), without the padding keys its mask
    # closes to every query: their numerators are exactly 0 and their number depends on the
    # batch, which a float32 GEMM's order of sums would then depend on too
    for row in range(query.shape[0]):
        mask = attn_mask
        if mask is not None and mask.dim() == 4:
            mask = mask[row:row + 1] if mask.shape[0] > 1 else mask
        keys = _open_keys(mask, key.shape[2])
        out, lse = _flash(query[row:row + 1], key[row:row + 1, :, :keys],
                          value[row:row + 1, :, :keys], scale,
                          None if mask is None else mask[..., :keys], is_causal)
        outs.append(out)
        sums.append(lse)
    return torch.cat(outs), torch.cat(sums)


def _open_keys(mask, keys: int) -> int:
    """How many keys are left once the trailing ones the mask closes to every query (a
    padding mask's) are dropped; all of them if it closes every key."""
    if mask is None or mask.shape[-1] != keys:
        return keys
    closed = (mask.float() <= _CLOSED).reshape(-1, keys).all(0)
    open_ = (~closed).nonzero()
    return int(open_[-1]) + 1 if len(open_) else keys


def _flash(query, key, value, scale, mask, is_causal):
    import torch

    scores = _scores(query, key, scale, mask, is_causal)
    # online softmax over blocks of 512 keys, as the kernel does
    peak = total = out = None
    for start in range(0, scores.shape[-1], _KV_SPLIT):
        block = scores[..., start:start + _KV_SPLIT]
        new_peak = block.amax(-1, keepdim=True)
        if peak is not None:
            new_peak = torch.maximum(peak, new_peak)
        safe = new_peak.masked_fill(torch.isinf(new_peak), 0.0)
        numerators = block.sub_(safe).exp_()
        part = numerators.to(torch.bfloat16).float() @ value[..., start:start + _KV_SPLIT, :].float()
        if peak is None:
            total, out = numerators.sum(-1, keepdim=True), part
        else:
            decay = torch.exp(peak.masked_fill(torch.isinf(peak), 0.0) - safe)
            total, out = total * decay + numerators.sum(-1, keepdim=True), out * decay + part
        peak = new_peak
    lse = (peak + torch.log(total)).squeeze(-1)
    return out.div_(total).to(torch.bfloat16), lse


def flash_attention_backward(grad_out, query, key, value, out, logsumexp, dropout_p, is_causal,
                             *, attn_mask=None, scale=None):
    """``aten._scaled_dot_product_flash_attention_for_cpu_backward`` on bfloat16 inputs."""
    import torch

    bf16 = torch.bfloat16
    scale = 1 / math.sqrt(query.shape[-1]) if scale is None else scale
    # the numerators again, from the log-sum-exp, in float32
    attn = torch.exp(_scores(query, key, scale, attn_mask, is_causal) - logsumexp.unsqueeze(-1))
    go = grad_out.float()
    grad_attn = go @ value.float().transpose(-2, -1)
    dsum = (go * out.float()).sum(-1, keepdim=True)
    grad_scores = (attn * (grad_attn - dsum)).to(bf16).float()
    attn = attn.to(bf16).float()
    grad_q = torch.zeros_like(query)
    grad_k, grad_v = torch.zeros_like(key), torch.zeros_like(value)
    rows, keys = query.shape[-2], key.shape[-2]
    split = _q_split(rows)
    # the kernel adds each block's product into the bfloat16 gradients (GEMM with beta 1)
    for m in range(0, rows, split):
        q_rows = slice(m, m + split)
        for n in range(0, keys, _KV_SPLIT):
            k_rows = slice(n, n + _KV_SPLIT)
            block_attn = attn[..., q_rows, k_rows]
            block_grad = grad_scores[..., q_rows, k_rows]
            grad_v[..., k_rows, :] = (grad_v[..., k_rows, :].float()
                                      + block_attn.transpose(-2, -1) @ go[..., q_rows, :]).to(bf16)
            grad_q[..., q_rows, :] = (grad_q[..., q_rows, :].float()
                                      + scale * (block_grad @ key[..., k_rows, :].float())).to(bf16)
            grad_k[..., k_rows, :] = (grad_k[..., k_rows, :].float()
                                      + scale * (block_grad.transpose(-2, -1)
                                                 @ query[..., q_rows, :].float())).to(bf16)
    return grad_q, grad_k, grad_v


def attention_output(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, *,
                     scale=None, enable_gqa=False):
    """``aten.scaled_dot_product_attention`` on bfloat16 inputs, as the flash kernel computes
    it (PyTorch's choice on CPU without dropout), a boolean mask turned to -inf as PyTorch
    turns it; None with dropout, grouped queries or inputs not of four dimensions."""
    import torch

    if dropout_p or enable_gqa or query.dim() != 4:
        return None
    if attn_mask is not None and attn_mask.dtype == torch.bool:
        attn_mask = torch.zeros(attn_mask.shape).masked_fill(~attn_mask, -math.inf)
    return flash_attention(query, key, value, 0.0, is_causal, attn_mask=attn_mask,
                           scale=scale)[0]


def _padded(func, at: int, args, kwargs):
    """``func`` with the rows of its operand ``args[at]`` padded with zeros to a multiple of
    :data:`_ROWS`, the padding cut off again."""
    import torch

    operand = args[at]
    rows = operand.reshape(-1, operand.shape[-1])
    count = rows.shape[0]
    if count % _ROWS:
        rows = torch.cat([rows, rows.new_zeros(_ROWS - count % _ROWS, rows.shape[1])])
    out = func(*args[:at], rows, *args[at + 1:], **kwargs)[:count]
    return out.reshape(*operand.shape[:-1], out.shape[-1])


@cache
def _mode():
    """The dispatch mode that computes bfloat16 products as float32 ones."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_leaves, tree_map

    bf16, aten = torch.bfloat16, torch.ops.aten
    # without autograd (inference) the mode sees linear and attention before they decompose
    products = {aten.mm.default, aten.addmm.default, aten.bmm.default, aten.baddbmm.default,
                aten.addbmm.default, aten.linear.default}
    by_rows = {aten.mm.default: 0, aten.addmm.default: 1, aten.linear.default: 0}
    attention = {aten._scaled_dot_product_flash_attention_for_cpu.default: flash_attention,
                 aten._scaled_dot_product_flash_attention_for_cpu_backward.default:
                     flash_attention_backward,
                 aten.scaled_dot_product_attention.default: attention_output}

    def is_bf16(x) -> bool:
        return isinstance(x, torch.Tensor) and x.dtype == bf16

    def widen(x):
        return x.float() if is_bf16(x) else x

    class Float32Products(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if func in attention and is_bf16(args[1]):  # the keys (forward), queries (backward)
                found = attention[func](*args, **kwargs)
                if found is not None:
                    return found
            if (func in products or func in attention) and any(
                    map(is_bf16, tree_leaves((args, kwargs)))):
                args, kwargs = tree_map(widen, args), tree_map(widen, kwargs)
                if func in by_rows and (func != aten.addmm.default or args[0].dim() < 2):
                    return _padded(func, by_rows[func], args, kwargs).to(bf16)
                return func(*args, **kwargs).to(bf16)
            return func(*args, **kwargs)

    return Float32Products


@contextmanager
def bf16_products(enabled: bool, emulate: bool | None = None):
    """Around a forward pass under bfloat16 autocast and its backward: where this CPU has no
    native bfloat16 (or ``emulate`` says so), the bfloat16 products are computed as described
    above. ``emulate=False`` leaves PyTorch's own kernels (the benchmark's reference)."""
    if emulate is None:
        emulate = not native_bf16()
    with (_mode()() if enabled and emulate else nullcontext()):
        yield
