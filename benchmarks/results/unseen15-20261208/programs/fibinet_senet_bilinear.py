"""FiBiNET CTR model: field embeddings, SENET field reweighting, field-each bilinear pair
interactions, DNN."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, num_fields, vocab_per_field, embed_dim, mlp_hidden, reduction=3):
        super().__init__()
        self.num_fields = num_fields
        self.embedding = nn.Embedding(num_fields * vocab_per_field, embed_dim)
        nn.init.normal_(self.embedding.weight, std=0.05)
        self.register_buffer("offsets", torch.arange(num_fields) * vocab_per_field)
        squeeze = max(1, num_fields // reduction)
        self.se = nn.Sequential(nn.Linear(num_fields, squeeze, bias=False), nn.ReLU(),
                                nn.Linear(squeeze, num_fields, bias=False), nn.ReLU())
        # "field-each" bilinear: one D x D matrix per left field
        self.bilinear = nn.Parameter(torch.randn(num_fields, embed_dim, embed_dim)
                                     * embed_dim ** -0.5)
        pairs = torch.triu_indices(num_fields, num_fields, offset=1)
        self.register_buffer("left", pairs[0])
        self.register_buffer("right", pairs[1])
        n_pairs = pairs.shape[1]
        self.dnn = nn.Sequential(
            nn.Linear(2 * n_pairs * embed_dim, mlp_hidden), nn.ReLU(),
            nn.Linear(mlp_hidden, mlp_hidden), nn.ReLU(),
            nn.Linear(mlp_hidden, 1))

    def interactions(self, e):
        vw = torch.einsum("bfd,fde->bfe", e, self.bilinear)  # v_i W_i for every field i
        return vw[:, self.left] * e[:, self.right]  # [B, P, D]

    def forward(self, sparse_ids):
        e = self.embedding(sparse_ids + self.offsets)  # [B, F, D]
        z = e.mean(dim=-1)  # squeeze: one statistic per field
        a = self.se(z)
        v = e * a.unsqueeze(-1)
        p = self.interactions(e)
        q = self.interactions(v)
        h = torch.cat((p.flatten(1), q.flatten(1)), dim=1)
        logit = self.dnn(h).squeeze(-1)
        return torch.sigmoid(logit), a


batch = 2048
vocab_per_field = 10000
embed_dim = 16
mlp_hidden = 400
_NUM_FIELDS = 24


def get_inputs():
    return [torch.randint(0, vocab_per_field, (batch, _NUM_FIELDS))]


def get_init_inputs():
    return [_NUM_FIELDS, vocab_per_field, embed_dim, mlp_hidden]
