"""ColBERTv2 late-interaction MaxSim scores with n-way cross-entropy and teacher KL loss."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, hidden, proj_dim, n_way=8):
        super().__init__()
        self.n_way = n_way
        self.proj = nn.Linear(hidden, proj_dim, bias=False)

    def forward(self, q_hidden, d_hidden, d_lengths, teacher_scores):
        b, _, _ = q_hidden.shape
        q = F.normalize(self.proj(q_hidden), dim=-1)  # [B, Lq, P]
        d = F.normalize(self.proj(d_hidden), dim=-1)  # [B * n, Ld, P]
        d = d.view(b, self.n_way, d.size(1), d.size(2))
        sim = torch.einsum("bqp,bnkp->bnqk", q, d)  # [B, n, Lq, Ld]
        doc_len = d.size(2)
        pad = torch.arange(doc_len, device=d.device) >= d_lengths[:, :, None]  # [B, n, Ld]
        sim = sim.masked_fill(pad[:, :, None, :], float("-inf"))
        scores = sim.max(dim=-1).values.sum(dim=-1)  # [B, n]
        target = torch.zeros(b, dtype=torch.long, device=scores.device)
        ce = F.cross_entropy(scores, target)
        kl = F.kl_div(F.log_softmax(scores, dim=-1), F.log_softmax(teacher_scores, dim=-1),
                      reduction="batchmean", log_target=True)
        return ce + kl, scores


batch = 64
n_way = 8
q_len = 32
doc_len = 128
hidden = 768
proj_dim = 128


def get_inputs():
    q_hidden = torch.randn(batch, q_len, hidden)
    d_hidden = torch.randn(batch * n_way, doc_len, hidden)
    d_lengths = torch.randint(doc_len // 4, doc_len + 1, (batch, n_way))
    teacher_scores = torch.randn(batch, n_way) * 4
    return [q_hidden, d_hidden, d_lengths, teacher_scores]


def get_init_inputs():
    return [hidden, proj_dim, n_way]
