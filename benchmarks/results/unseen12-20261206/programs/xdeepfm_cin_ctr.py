"""xDeepFM click-through-rate model (Criteo-style fields): one shared embedding table indexed by
per-field offsets plus field ids, embeddings scaled by per-field values, a Compressed
Interaction Network (per-dimension outer products of the current layer with the base fields by
einsum, compressed by 1x1 Conv1d, split-half direct connections, sum pooling over the embedding
dim), a first-order linear term and a DNN branch, summed into one logit."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, num_fields, vocab_per_field, embed_dim, cin_size, dnn_hidden):
        super().__init__()
        self.m = num_fields
        self.embedding = nn.Embedding(num_fields * vocab_per_field, embed_dim)
        nn.init.normal_(self.embedding.weight, std=0.5)
        self.linear_w = nn.Embedding(num_fields * vocab_per_field, 1)
        nn.init.normal_(self.linear_w.weight, std=0.05)
        self.register_buffer("offsets", torch.arange(num_fields) * vocab_per_field)
        self.cin1 = nn.Conv1d(num_fields * num_fields, cin_size, 1)
        self.cin2 = nn.Conv1d((cin_size // 2) * num_fields, cin_size, 1)
        self.cin_out = nn.Linear(cin_size // 2 + cin_size, 1)
        self.dnn = nn.Sequential(
            nn.Linear(num_fields * embed_dim, dnn_hidden), nn.ReLU(),
            nn.Linear(dnn_hidden, dnn_hidden), nn.ReLU(),
            nn.Linear(dnn_hidden, 1))
        self.bias = nn.Parameter(torch.zeros(1))

    def forward(self, field_ids, field_values):
        # field_ids [B, m] int64 (per-field ids), field_values [B, m] float
        B = field_ids.shape[0]
        idx = field_ids + self.offsets
        x0 = self.embedding(idx) * field_values.unsqueeze(2)  # [B, m, D]
        D = x0.shape[2]
        first_order = (self.linear_w(idx).squeeze(2) * field_values).sum(dim=1, keepdim=True)

        z = torch.einsum("bhd,bmd->bhmd", x0, x0).reshape(B, self.m * self.m, D)
        h1 = F.relu(self.cin1(z))
        direct1, next1 = torch.split(h1, h1.shape[1] // 2, dim=1)
        z = torch.einsum("bhd,bmd->bhmd", next1, x0).reshape(B, -1, D)
        h2 = F.relu(self.cin2(z))
        pooled = torch.cat((direct1, h2), dim=1).sum(dim=2)  # [B, cin/2 + cin]
        cin_logit = self.cin_out(pooled)

        dnn_logit = self.dnn(x0.flatten(1))
        return (first_order + cin_logit + dnn_logit + self.bias).squeeze(1)


batch = 4096
num_fields = 39
vocab_per_field = 4096
embed_dim = 16
cin_size = 64
dnn_hidden = 400


def get_inputs():
    ids = torch.randint(0, vocab_per_field, (batch, num_fields))
    numeric = num_fields // 3  # Criteo: 13 numeric fields carry their (scaled) value
    values = torch.cat((torch.rand(batch, numeric) * 2,
                        torch.ones(batch, num_fields - numeric)), dim=1)
    return [ids, values]


def get_init_inputs():
    return [num_fields, vocab_per_field, embed_dim, cin_size, dnn_hidden]
