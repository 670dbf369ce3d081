"""Cross-attention with a learned null key/value per head, as in lucidrains' x-transformers
and DALL-E 2 / Imagen implementations: the padding mask is left-padded with True for the
null slot, so a query whose context is entirely padding (masked_fill with -inf) still has
one finite score and its softmax never produces NaN; multi-head projections in and out."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim, context_dim, heads, head_dim):
        super().__init__()
        self.heads = heads
        self.scale = head_dim ** -0.5
        inner = heads * head_dim
        self.to_q = nn.Linear(dim, inner, bias=False)
        self.to_kv = nn.Linear(context_dim, 2 * inner, bias=False)
        self.null_kv = nn.Parameter(torch.randn(2, heads, 1, head_dim))
        self.to_out = nn.Linear(inner, dim)

    def forward(self, x, context, context_mask):
        b, n, _ = x.shape
        s = context.shape[1]
        h = self.heads
        q = self.to_q(x).view(b, n, h, -1).transpose(1, 2)
        k, v = self.to_kv(context).chunk(2, dim=-1)
        k = k.reshape(b, s, h, -1).transpose(1, 2)
        v = v.reshape(b, s, h, -1).transpose(1, 2)
        null_k, null_v = self.null_kv.unbind(0)
        k = torch.cat([null_k.unsqueeze(0).expand(b, -1, -1, -1), k], dim=2)
        v = torch.cat([null_v.unsqueeze(0).expand(b, -1, -1, -1), v], dim=2)

        sim = torch.matmul(q, k.transpose(-1, -2)) * self.scale
        keep = torch.cat([context_mask.new_ones(b, 1), context_mask], dim=1)
        sim = sim.masked_fill(~keep[:, None, None, :], float("-inf"))
        attn = sim.softmax(dim=-1)
        out = torch.matmul(attn, v).transpose(1, 2).reshape(b, n, -1)
        return self.to_out(out)


batch = 32
queries = 512
context_len = 512
dim = 512
context_dim = 768
heads = 8
head_dim = 64


def get_inputs():
    x = torch.randn(batch, queries, dim)
    context = torch.randn(batch, context_len, context_dim)
    lengths = torch.randint(0, context_len + 1, (batch,))
    lengths[0] = 0  # an empty context: every key of this sample is padding
    mask = torch.arange(context_len).unsqueeze(0) < lengths.unsqueeze(1)
    return [x, context, mask]


def get_init_inputs():
    return [dim, context_dim, heads, head_dim]
