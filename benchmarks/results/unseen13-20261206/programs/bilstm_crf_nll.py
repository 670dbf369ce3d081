"""BiLSTM-CRF sequence-labelling head (NER): a linear emission layer over the BiLSTM features,
then the linear-chain CRF negative log-likelihood. The partition function is the forward
algorithm (a Python loop over time: broadcast score + transitions + emissions, logsumexp over
the previous tag, kept only where the step is inside the sequence); the gold path score
gathers emissions at the tags and indexes the transition matrix by consecutive tag pairs,
masked by the lengths, plus start/end transitions at the first and last real token."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, hidden_dim, num_tags):
        super().__init__()
        self.hidden2tag = nn.Linear(hidden_dim, num_tags)
        self.transitions = nn.Parameter(torch.empty(num_tags, num_tags).uniform_(-0.1, 0.1))
        self.start_transitions = nn.Parameter(torch.empty(num_tags).uniform_(-0.1, 0.1))
        self.end_transitions = nn.Parameter(torch.empty(num_tags).uniform_(-0.1, 0.1))

    def _compute_log_partition(self, emissions, mask):
        seq_len = emissions.size(1)
        score = self.start_transitions + emissions[:, 0]  # [B, K]
        for i in range(1, seq_len):
            broadcast_score = score.unsqueeze(2)  # [B, K, 1]
            broadcast_emissions = emissions[:, i].unsqueeze(1)  # [B, 1, K]
            next_score = broadcast_score + self.transitions + broadcast_emissions
            next_score = torch.logsumexp(next_score, dim=1)
            score = torch.where(mask[:, i].unsqueeze(1), next_score, score)
        score = score + self.end_transitions
        return torch.logsumexp(score, dim=1)

    def _compute_gold_score(self, emissions, tags, mask):
        batch, seq_len = tags.shape
        maskf = mask.to(emissions.dtype)
        score = self.start_transitions[tags[:, 0]]
        emit = emissions.gather(2, tags.unsqueeze(2)).squeeze(2)  # [B, T]
        score = score + (emit * maskf).sum(1)
        trans = self.transitions[tags[:, :-1], tags[:, 1:]]  # [B, T-1]
        score = score + (trans * maskf[:, 1:]).sum(1)
        seq_ends = mask.long().sum(1) - 1
        last_tags = tags.gather(1, seq_ends.unsqueeze(1)).squeeze(1)
        return score + self.end_transitions[last_tags]

    def forward(self, features, tags, lengths):
        emissions = self.hidden2tag(features)  # [B, T, K]
        seq_len = tags.size(1)
        mask = torch.arange(seq_len, device=tags.device).unsqueeze(0) < lengths.unsqueeze(1)
        log_z = self._compute_log_partition(emissions, mask)
        gold = self._compute_gold_score(emissions, tags, mask)
        return log_z - gold  # per-sentence NLL


batch = 2048
seq_len = 32
hidden_dim = 512
num_tags = 64


def get_inputs():
    features = torch.randn(batch, seq_len, hidden_dim)
    tags = torch.randint(0, num_tags, (batch, seq_len))
    lengths = torch.randint(1, seq_len + 1, (batch,))
    lengths[0] = seq_len
    return [features, tags, lengths]


def get_init_inputs():
    return [hidden_dim, num_tags]
