"""Two-tower candidate-retrieval model trained with in-batch sampled softmax and logQ
correction (Yi et al., RecSys 2019, YouTube retrieval).

User tower: user-id embedding, masked mean of a padded watch history (padding id 0) and dense
features; item tower: item-id and category embeddings plus dense features; both are MLPs with
L2-normalised outputs. Exercises nn.Embedding(padding_idx), F.normalize, a [B, B] similarity
matmul, a gathered log-frequency correction, id-equality masking of duplicate positives,
cross_entropy against arange labels, and in-batch recall@k via topk.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


def _mlp(d_in, d_hidden, d_out):
    return nn.Sequential(
        nn.Linear(d_in, d_hidden), nn.ReLU(), nn.Linear(d_hidden, d_hidden), nn.ReLU(),
        nn.Linear(d_hidden, d_out),
    )


class Model(nn.Module):
    def __init__(self, num_users, num_items, num_categories, user_dense, item_dense,
                 emb_dim, hidden, out_dim, temperature, recall_k):
        super().__init__()
        self.user_emb = nn.Embedding(num_users, emb_dim)
        self.item_emb = nn.Embedding(num_items, emb_dim, padding_idx=0)
        self.cat_emb = nn.Embedding(num_categories, emb_dim // 2)
        self.user_tower = _mlp(2 * emb_dim + user_dense, hidden, out_dim)
        self.item_tower = _mlp(emb_dim + emb_dim // 2 + item_dense, hidden, out_dim)
        self.temperature = temperature
        self.recall_k = recall_k
        # Streaming estimate of the item sampling probability (Zipf-like popularity).
        rank = torch.arange(num_items, dtype=torch.float32)
        freq = (rank + 1.0) ** -0.8
        self.register_buffer("log_q", torch.log(freq / freq.sum()))

    def forward(self, user_ids, history, user_feats, item_ids, item_cats, item_feats):
        hist_mask = (history != 0).unsqueeze(-1).to(user_feats.dtype)
        hist = (self.item_emb(history) * hist_mask).sum(1) / hist_mask.sum(1).clamp(min=1.0)
        u_in = torch.cat([self.user_emb(user_ids), hist, user_feats], dim=-1)
        u = F.normalize(self.user_tower(u_in), dim=-1)

        i_in = torch.cat([self.item_emb(item_ids), self.cat_emb(item_cats), item_feats], dim=-1)
        v = F.normalize(self.item_tower(i_in), dim=-1)

        logits = (u @ v.t()) / self.temperature
        logits = logits - self.log_q.index_select(0, item_ids).unsqueeze(0)
        same = item_ids.unsqueeze(0) == item_ids.unsqueeze(1)
        eye = torch.eye(same.shape[0], dtype=torch.bool, device=same.device)
        logits = logits.masked_fill(same & ~eye, -1e9)

        labels = torch.arange(logits.shape[0], device=logits.device)
        loss = F.cross_entropy(logits, labels)
        topk = logits.topk(self.recall_k, dim=-1).indices
        recall = (topk == labels.unsqueeze(1)).any(dim=-1).float().mean()
        return loss, recall, logits


batch = 512
hist_len = 30
num_users = 10000
num_items = 20000
num_categories = 200
user_dense = 8
item_dense = 16
emb_dim = 64
hidden = 256
out_dim = 64
temperature = 0.05
recall_k = 10


def get_inputs():
    return [
        torch.randint(0, num_users, (batch,)),
        torch.randint(0, num_items, (batch, hist_len)),
        torch.randn(batch, user_dense),
        torch.randint(0, num_items, (batch,)),
        torch.randint(0, num_categories, (batch,)),
        torch.randn(batch, item_dense),
    ]


def get_init_inputs():
    return [num_users, num_items, num_categories, user_dense, item_dense, emb_dim, hidden,
            out_dim, temperature, recall_k]
