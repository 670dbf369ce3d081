"""One beam-search step: log-softmax of the next-token logits plus each beam's running
score, flattened over beams and vocabulary per batch entry, the top 2 * beams candidates,
and their beam and token indices (floor division and modulo by the vocabulary size)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, num_beams):
        super().__init__()
        self.num_beams = num_beams

    def forward(self, logits, beam_scores):
        vocab = logits.shape[-1]
        batch = logits.shape[0] // self.num_beams
        scores = F.log_softmax(logits, dim=-1) + beam_scores[:, None]
        scores = scores.view(batch, self.num_beams * vocab)
        top_scores, top_idx = torch.topk(scores, 2 * self.num_beams, dim=1, largest=True,
                                         sorted=True)
        beam_idx = torch.div(top_idx, vocab, rounding_mode="floor")
        token_idx = top_idx % vocab
        return top_scores, beam_idx, token_idx


batch, vocab, num_beams = 64, 32000, 8


def get_inputs():
    logits = torch.randn(batch * num_beams, vocab) * 3
    beam_scores = -torch.rand(batch * num_beams) * 10
    return [logits, beam_scores]


def get_init_inputs():
    return [num_beams]
