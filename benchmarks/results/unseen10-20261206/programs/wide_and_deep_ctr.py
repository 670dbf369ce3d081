"""Wide & Deep (Cheng et al., Google Play) click-through model: the wide part is a
linear model over hashed cross-product features (EmbeddingBag of width 1, sum of the
multi-hot bag), the deep part sums multi-hot categorical fields with one EmbeddingBag
per field (mode='sum', fixed bag length), concatenates them with log1p-transformed dense
count features, and runs a ReLU MLP; the two logits are added and passed through a
sigmoid."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, num_fields, vocab, emb_dim, num_dense, wide_vocab, hidden):
        super().__init__()
        self.fields = nn.ModuleList(
            nn.EmbeddingBag(vocab, emb_dim, mode="sum") for _ in range(num_fields))
        self.wide = nn.EmbeddingBag(wide_vocab, 1, mode="sum")
        self.wide_bias = nn.Parameter(torch.zeros(1))
        self.dense_norm = nn.BatchNorm1d(num_dense)
        in_dim = num_fields * emb_dim + num_dense
        self.mlp = nn.Sequential(
            nn.Linear(in_dim, hidden), nn.ReLU(),
            nn.Linear(hidden, hidden // 2), nn.ReLU(),
            nn.Linear(hidden // 2, hidden // 4), nn.ReLU(),
            nn.Linear(hidden // 4, 1))
        self.eval()

    def forward(self, field_ids, wide_ids, dense):
        embs = [bag(field_ids[:, f]) for f, bag in enumerate(self.fields)]
        dense = self.dense_norm(torch.log1p(dense))
        deep = self.mlp(torch.cat(embs + [dense], dim=1))
        wide = self.wide(wide_ids) + self.wide_bias
        return torch.sigmoid(wide + deep).squeeze(1)


batch = 16384
num_fields = 8
bag_len = 4
vocab = 262144
emb_dim = 32
num_dense = 13
wide_vocab = 1048576
wide_bag = 24
hidden = 1024


def get_inputs():
    field_ids = torch.randint(0, vocab, (batch, num_fields, bag_len), dtype=torch.int64)
    wide_ids = torch.randint(0, wide_vocab, (batch, wide_bag), dtype=torch.int64)
    dense = torch.poisson(torch.rand(batch, num_dense) * 20.0)
    return [field_ids, wide_ids, dense]


def get_init_inputs():
    return [num_fields, vocab, emb_dim, num_dense, wide_vocab, hidden]
