"""Linear-chain CRF Viterbi decoding for sequence tagging (NER/POS heads): fp16 emissions cast
to fp32, a Python loop over time computing max and argmax over the previous tag of
score + transitions (a reduction over the middle dim), updates and backpointers kept only
inside each sequence's int64 length (torch.where, identity backpointers past the end), end
transitions, then backtracking with gather; returns the best scores and the int64 tag paths
(0 past each length)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, num_tags):
        super().__init__()
        self.transitions = nn.Parameter(torch.randn(num_tags, num_tags) * 0.1)  # [prev, next]
        self.start = nn.Parameter(torch.randn(num_tags) * 0.1)
        self.end = nn.Parameter(torch.randn(num_tags) * 0.1)

    def forward(self, emissions, lengths):
        # emissions: [B, T, K] fp16; lengths: [B] int64 in [1, T]
        em = emissions.float()
        b, t_len, k = em.shape
        steps = torch.arange(t_len, device=em.device)
        mask = steps.unsqueeze(0) < lengths.unsqueeze(1)  # [B, T]
        identity = torch.arange(k, device=em.device).expand(b, k)
        score = self.start + em[:, 0]
        backpointers = []
        for i in range(1, t_len):
            cand = score.unsqueeze(2) + self.transitions.unsqueeze(0)  # [B, prev, next]
            best, idx = cand.max(dim=1)
            inside = mask[:, i].unsqueeze(1)
            score = torch.where(inside, best + em[:, i], score)
            backpointers.append(torch.where(inside, idx, identity))
        score = score + self.end
        best_score, tag = score.max(dim=1)
        tags = [tag]
        for bp in reversed(backpointers):
            tag = bp.gather(1, tag.unsqueeze(1)).squeeze(1)
            tags.append(tag)
        path = torch.stack(tags[::-1], dim=1)
        return best_score, path.masked_fill(~mask, 0)


batch = 512
seq_len = 32
num_tags = 48


def get_inputs():
    emissions = torch.randn(batch, seq_len, num_tags).half()
    lengths = torch.randint(1, seq_len + 1, (batch,))
    return [emissions, lengths]


def get_init_inputs():
    return [num_tags]
