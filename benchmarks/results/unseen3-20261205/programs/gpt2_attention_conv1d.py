"""GPT-2 attention as the Hugging Face code writes it: Conv1D projections (addmm with an
[in, out] weight), qkv split, a lower-triangular bias buffer applied with torch.where and
the dtype's minimum, softmax, output projection."""

import torch
import torch.nn as nn


class Conv1D(nn.Module):
    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.randn(nx, nf) * 0.02)
        self.bias = nn.Parameter(torch.zeros(nf))

    def forward(self, x):
        size_out = x.size()[:-1] + (self.nf,)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


class Model(nn.Module):
    def __init__(self, embed, heads, max_pos):
        super().__init__()
        self.heads = heads
        self.c_attn = Conv1D(3 * embed, embed)
        self.c_proj = Conv1D(embed, embed)
        self.register_buffer(
            "bias",
            torch.tril(torch.ones(max_pos, max_pos, dtype=torch.bool)).view(1, 1, max_pos, max_pos),
            persistent=False,
        )

    def _split(self, t):
        b, s, e = t.shape
        return t.view(b, s, self.heads, e // self.heads).permute(0, 2, 1, 3)

    def forward(self, x):
        q, k, v = self.c_attn(x).split(x.size(-1), dim=2)
        q, k, v = self._split(q), self._split(k), self._split(v)
        w = torch.matmul(q, k.transpose(-1, -2)) / (v.size(-1) ** 0.5)
        s = q.size(-2)
        causal = self.bias[:, :, :s, :s]
        w = torch.where(
            causal, w, torch.tensor(torch.finfo(w.dtype).min, dtype=w.dtype, device=w.device)
        )
        w = nn.functional.softmax(w, dim=-1)
        out = torch.matmul(w, v).permute(0, 2, 1, 3).contiguous()
        out = out.view(out.size(0), out.size(1), -1)
        return self.c_proj(out)


batch, seq, embed, heads, max_pos = 8, 512, 768, 12, 1024


def get_inputs():
    return [torch.randn(batch, seq, embed)]


def get_init_inputs():
    return [embed, heads, max_pos]
