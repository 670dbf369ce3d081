"""Learning-to-rank loss for a search engine's ranker (RankNet pairs weighted by gain
differences and normalised by the ideal DCG, as in LambdaLoss-style objectives): all document
pairs of each query by broadcasting, ragged lists masked by per-query lengths, an ideal DCG
from a descending sort of the integer relevance gains, and a logistic pair loss per query."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, sigma):
        super().__init__()
        self.sigma = sigma

    def forward(self, scores, relevance, lengths):
        # scores [Q, L] float, relevance [Q, L] int64 in 0..4, lengths [Q] int64
        Q, L = scores.shape
        pos = torch.arange(L, device=scores.device)
        valid = pos.unsqueeze(0) < lengths.unsqueeze(1)
        gains = torch.pow(2.0, relevance.to(scores.dtype)) - 1.0
        gains = gains * valid.to(scores.dtype)
        ideal = torch.sort(gains, dim=1, descending=True).values
        discounts = 1.0 / torch.log2(pos.to(scores.dtype) + 2.0)
        idcg = (ideal * discounts).sum(dim=1).clamp_min(1e-6)

        diff = scores.unsqueeze(2) - scores.unsqueeze(1)  # s_i - s_j
        better = relevance.unsqueeze(2) > relevance.unsqueeze(1)
        pair_mask = better & valid.unsqueeze(2) & valid.unsqueeze(1)
        weight = (gains.unsqueeze(2) - gains.unsqueeze(1)).abs() / idcg.view(Q, 1, 1)
        pair_loss = F.softplus(-self.sigma * diff) * weight
        pair_loss = torch.where(pair_mask, pair_loss, torch.zeros_like(pair_loss))
        num_pairs = pair_mask.sum(dim=(1, 2)).clamp_min(1).to(scores.dtype)
        return pair_loss.sum(dim=(1, 2)) / num_pairs


queries = 1024
list_size = 256
sigma = 1.0


def get_inputs():
    scores = torch.randn(queries, list_size)
    relevance = torch.multinomial(torch.tensor([0.5, 0.25, 0.13, 0.08, 0.04]),
                                  queries * list_size, replacement=True).view(queries, list_size)
    lengths = torch.randint(list_size // 4, list_size + 1, (queries,))
    return [scores, relevance, lengths]


def get_init_inputs():
    return [sigma]
