"""Multi-task e-commerce ranking head combining MMoE (Ma et al., multi-gate mixture of experts)
with ESMM (entire-space CTR x CVR modelling): categorical int64 fields looked up in one shared
embedding table through per-field offsets (a registered buffer), a user behaviour sequence of
item ids (0 = padding) mean-pooled under its mask, log1p-scaled dense features, all concatenated;
the experts are evaluated together by einsum over stacked weights, each task has its own softmax
gate over the experts and its own tower, and the outputs are pCTR, pCVR and pCTCVR = pCTR * pCVR
together with the gate distributions."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, num_fields, field_vocab, item_vocab, emb_dim, num_dense, num_experts,
                 expert_hidden, expert_out, tower_hidden):
        super().__init__()
        self.embed = nn.Embedding(num_fields * field_vocab, emb_dim)
        self.item_embed = nn.Embedding(item_vocab, emb_dim, padding_idx=0)
        self.register_buffer("offsets", torch.arange(num_fields) * field_vocab)
        in_dim = (num_fields + 1) * emb_dim + num_dense
        self.dense_norm = nn.LayerNorm(num_dense)
        self.w1 = nn.Parameter(torch.randn(num_experts, in_dim, expert_hidden) * in_dim ** -0.5)
        self.b1 = nn.Parameter(torch.zeros(num_experts, expert_hidden))
        self.w2 = nn.Parameter(
            torch.randn(num_experts, expert_hidden, expert_out) * expert_hidden ** -0.5)
        self.b2 = nn.Parameter(torch.zeros(num_experts, expert_out))
        self.gates = nn.Linear(in_dim, 2 * num_experts)
        self.towers = nn.ModuleList([
            nn.Sequential(nn.Linear(expert_out, tower_hidden), nn.ReLU(),
                          nn.Linear(tower_hidden, 1))
            for _ in range(2)
        ])

    def forward(self, sparse_ids, behaviour_ids, dense):
        # sparse_ids: [B, F] int64 per-field ids; behaviour_ids: [B, L] int64; dense: [B, Nd]
        b = sparse_ids.shape[0]
        fields = self.embed(sparse_ids + self.offsets).flatten(1)  # [B, F * E]
        mask = (behaviour_ids != 0).unsqueeze(-1).float()
        seq = self.item_embed(behaviour_ids)
        pooled = (seq * mask).sum(1) / mask.sum(1).clamp(min=1.0)
        dense_f = self.dense_norm(torch.log1p(dense.clamp(min=0.0)))
        h = torch.cat([fields, pooled, dense_f], dim=1)  # [B, in_dim]

        e = torch.relu(torch.einsum("bi,eih->beh", h, self.w1) + self.b1)
        e = torch.relu(torch.einsum("beh,eho->beo", e, self.w2) + self.b2)  # [B, nE, out]
        gate = self.gates(h).view(b, 2, -1).softmax(dim=-1)  # [B, 2, nE]
        task_in = torch.einsum("bte,beo->bto", gate, e)  # [B, 2, out]
        p_ctr = torch.sigmoid(self.towers[0](task_in[:, 0])).squeeze(-1)
        p_cvr = torch.sigmoid(self.towers[1](task_in[:, 1])).squeeze(-1)
        return p_ctr, p_cvr, p_ctr * p_cvr, gate


batch = 16384
num_fields = 26
field_vocab = 40000
item_vocab = 200000
emb_dim = 16
seq_len = 64
num_dense = 13
num_experts = 8
expert_hidden = 256
expert_out = 128
tower_hidden = 64


def get_inputs():
    sparse_ids = torch.randint(0, field_vocab, (batch, num_fields))
    behaviour_ids = torch.randint(1, item_vocab, (batch, seq_len))
    lengths = torch.randint(0, seq_len + 1, (batch, 1))
    behaviour_ids = behaviour_ids.masked_fill(torch.arange(seq_len)[None, :] >= lengths, 0)
    dense = torch.rand(batch, num_dense).pow(3) * 1000.0
    return [sparse_ids, behaviour_ids, dense]


def get_init_inputs():
    return [num_fields, field_vocab, item_vocab, emb_dim, num_dense, num_experts,
            expert_hidden, expert_out, tower_hidden]
