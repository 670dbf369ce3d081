"""TuckER (Balazevic et al.) knowledge-graph link prediction, 1-N scoring: subject and
relation embeddings contracted with the core tensor in a three-operand einsum
("bi,ijk,bj->bk"), BatchNorm (eval) before and after, scores against every entity
embedding, and a label-smoothed binary cross entropy with logits per query."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, num_entities, num_relations, ent_dim, rel_dim, smoothing):
        super().__init__()
        self.smoothing = smoothing
        self.entity = nn.Embedding(num_entities, ent_dim)
        self.relation = nn.Embedding(num_relations, rel_dim)
        self.core = nn.Parameter(torch.empty(rel_dim, ent_dim, ent_dim).uniform_(-0.3, 0.3))
        self.bn0 = nn.BatchNorm1d(ent_dim)
        self.bn1 = nn.BatchNorm1d(ent_dim)
        with torch.no_grad():
            self.entity.weight.mul_(0.3)
            for bn in (self.bn0, self.bn1):
                bn.running_mean.uniform_(-0.1, 0.1)
                bn.running_var.uniform_(0.5, 1.5)
        self.eval()

    def forward(self, subj, rel, targets):  # targets [B, E] multi-hot
        e = self.bn0(self.entity(subj))
        r = self.relation(rel)
        x = torch.einsum("bi,ijk,bj->bk", r, self.core, e) / e.shape[-1] ** 0.5
        x = self.bn1(x)
        logits = x @ self.entity.weight.t()
        n = targets.shape[-1]
        smooth = (1.0 - self.smoothing) * targets + 1.0 / n
        loss = F.binary_cross_entropy_with_logits(logits, smooth, reduction="none").mean(-1)
        return torch.sigmoid(logits), loss


batch = 512
num_entities = 16384
num_relations = 22
ent_dim = 200
rel_dim = 32
smoothing = 0.1


def get_inputs():
    subj = torch.randint(0, num_entities, (batch,))
    rel = torch.randint(0, num_relations, (batch,))
    targets = (torch.rand(batch, num_entities) < 0.001).float()
    return [subj, rel, targets]


def get_init_inputs():
    return [num_entities, num_relations, ent_dim, rel_dim, smoothing]
