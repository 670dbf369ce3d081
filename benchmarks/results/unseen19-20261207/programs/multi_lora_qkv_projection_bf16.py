"""Multi-tenant LoRA serving (Punica / S-LoRA style batched adapters) for the fused QKV projection
of a grouped-query-attention LLM layer, in bf16: every token of a flattened continuous batch
carries an int64 adapter id (-1 = base model only). The base projection is one bf16 matmul; the
LoRA shrink runs the tokens against all stacked A matrices at once, and each token's rank-r slice
is picked with gather; the expand scatters that slice into a zero [T, n_adapters * r] buffer at the
token's adapter slot and multiplies by the stacked B matrices, scaled by a per-adapter gain
gathered by id. The result is split into q, k, v, reshaped to heads and transposed to
non-contiguous [heads, T, head_dim] views, with per-head RMS q/k normalisation in fp32 cast back
to bf16; returns q, k and v."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, hidden, num_heads, num_kv_heads, num_adapters, rank, alpha):
        super().__init__()
        self.num_heads = num_heads
        self.num_kv_heads = num_kv_heads
        self.head_dim = hidden // num_heads
        self.rank = rank
        self.num_adapters = num_adapters
        out = (num_heads + 2 * num_kv_heads) * self.head_dim
        bf = torch.bfloat16
        self.weight = nn.Parameter((torch.randn(out, hidden) * hidden ** -0.5).to(bf))
        self.lora_a = nn.Parameter(
            (torch.randn(num_adapters * rank, hidden) * hidden ** -0.5).to(bf))
        self.lora_b = nn.Parameter((torch.randn(num_adapters * rank, out) * 0.05).to(bf))
        self.lora_scale = nn.Parameter(torch.full((num_adapters,), alpha / rank))
        self.q_norm = nn.Parameter(torch.ones(self.head_dim))
        self.k_norm = nn.Parameter(torch.ones(self.head_dim))

    def _rms(self, t, w):
        tf = t.float()
        tf = tf * torch.rsqrt(tf.pow(2).mean(dim=-1, keepdim=True) + 1e-6)
        return (tf * w).to(t.dtype)

    def forward(self, x, adapter_ids):
        # x: [T, hidden] bf16; adapter_ids: [T] int64 in [-1, num_adapters)
        t = x.shape[0]
        n, r = self.num_adapters, self.rank
        base = x @ self.weight.t()  # [T, out]
        active = adapter_ids >= 0
        ids = adapter_ids.clamp(min=0)
        shrink_all = (x @ self.lora_a.t()).view(t, n, r)  # [T, n, r]
        v = shrink_all.gather(1, ids.view(t, 1, 1).expand(t, 1, r)).squeeze(1)  # [T, r]
        scale = self.lora_scale[ids] * active.float()  # [T]
        v = (v.float() * scale[:, None]).to(x.dtype)
        slot = ids[:, None] * r + torch.arange(r, device=x.device)[None, :]
        buf = torch.zeros(t, n * r, dtype=x.dtype, device=x.device).scatter(1, slot, v)
        y = base + buf @ self.lora_b  # [T, out]

        hd = self.head_dim
        q_sz = self.num_heads * hd
        kv_sz = self.num_kv_heads * hd
        q, k, val = y.split([q_sz, kv_sz, kv_sz], dim=-1)
        q = self._rms(q.reshape(t, self.num_heads, hd), self.q_norm).transpose(0, 1)
        k = self._rms(k.reshape(t, self.num_kv_heads, hd), self.k_norm).transpose(0, 1)
        val = val.reshape(t, self.num_kv_heads, hd).transpose(0, 1)
        return q, k, val


tokens = 8192
hidden = 2048
heads = 16
kv_heads = 4
adapters = 16
rank = 16


def get_inputs():
    x = torch.randn(tokens, hidden).to(torch.bfloat16)
    adapter_ids = torch.randint(-1, adapters, (tokens,))
    return [x, adapter_ids]


def get_init_inputs():
    return [hidden, heads, kv_heads, adapters, rank, 32.0]
