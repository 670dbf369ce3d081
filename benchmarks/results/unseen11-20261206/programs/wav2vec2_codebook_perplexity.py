"""wav2vec 2.0 product quantizer at evaluation: hard argmax over each group's codebook
logits, one_hot codeword selection (an einsum with the codebooks), the project_q linear
layer, and the diversity statistics over non-padded frames: a code-usage histogram built
with scatter_add and a masked softmax average, each turned into a perplexity
exp(-sum p log p) per group."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, groups, codes, code_dim, out_dim):
        super().__init__()
        self.groups = groups
        self.codes = codes
        self.codebooks = nn.Parameter(torch.randn(groups, codes, code_dim))
        self.project_q = nn.Linear(groups * code_dim, out_dim)

    def forward(self, logits, lengths):  # logits [B, T, G*V], lengths [B]
        b, t, _ = logits.shape
        g, v = self.groups, self.codes
        logits = logits.view(b * t, g, v)
        valid = (torch.arange(t, device=logits.device)[None, :] < lengths[:, None]).reshape(-1)
        vf = valid.to(logits.dtype)

        idx = logits.argmax(dim=-1)  # [BT, G]
        onehot = F.one_hot(idx, v).to(logits.dtype)
        q = torch.einsum("ngv,gvd->ngd", onehot, self.codebooks).reshape(b, t, -1)
        q = self.project_q(q)

        flat = (idx + torch.arange(g, device=idx.device) * v).reshape(-1)
        weights = vf[:, None].expand(-1, g).reshape(-1)
        counts = torch.zeros(g * v, dtype=logits.dtype, device=logits.device)
        counts = counts.scatter_add(0, flat, weights).view(g, v)
        n = vf.sum()
        hard_p = counts / n
        hard_ppl = torch.exp(-(hard_p * torch.log(hard_p + 1e-7)).sum(dim=-1))

        probs = torch.softmax(logits, dim=-1)
        soft_p = torch.where(valid[:, None, None], probs, 0.0).sum(dim=0) / n
        soft_ppl = torch.exp(-(soft_p * torch.log(soft_p + 1e-7)).sum(dim=-1))
        return q, hard_ppl, soft_ppl


batch = 16
frames = 500
groups = 2
codes = 320
code_dim = 128
out_dim = 256


def get_inputs():
    logits = torch.randn(batch, frames, groups * codes) * 2.0
    lengths = torch.randint(frames // 2, frames + 1, (batch,))
    return [logits, lengths]


def get_init_inputs():
    return [groups, codes, code_dim, out_dim]
