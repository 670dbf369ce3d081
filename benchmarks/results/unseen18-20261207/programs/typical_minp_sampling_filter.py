"""LLM decoding filter combining min-p and locally typical sampling (Meister et al.) on fp16
logits over an odd vocabulary: a learned fp32 logit bias, per-row temperature, log_softmax,
min-p keeps tokens with p >= min_p * max p, typical sampling computes the entropy, ranks tokens
by |-log p - H| with a stable ascending sort, keeps the shortest prefix whose cumulative
probability (cumsum of the gathered probs) reaches the typical mass and scatters the sorted
keep flags back to vocabulary order; the argmax token is always kept (scatter of True). Returns
the renormalised fp32 distribution, the bool keep mask and the int64 number of kept tokens."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, vocab, min_p, typical_mass):
        super().__init__()
        self.logit_bias = nn.Parameter(torch.randn(vocab) * 0.01)
        self.min_p = min_p
        self.typical_mass = typical_mass

    def forward(self, logits, temperature):
        # logits: [B, V] fp16; temperature: [B] fp32 > 0
        z = (logits.float() + self.logit_bias) / temperature.unsqueeze(1)
        logp = torch.log_softmax(z, dim=-1)
        p = logp.exp()
        p_max = p.amax(dim=-1, keepdim=True)
        keep_minp = p >= self.min_p * p_max

        entropy = -(p * logp).sum(dim=-1, keepdim=True)
        surprise_gap = (-logp - entropy).abs()
        _, order = torch.sort(surprise_gap, dim=-1, stable=True)
        p_sorted = p.gather(1, order)
        mass_before = torch.cumsum(p_sorted, dim=-1) - p_sorted
        keep_sorted = mass_before < self.typical_mass
        keep_typical = torch.zeros_like(keep_sorted).scatter(1, order, keep_sorted)

        keep = keep_minp & keep_typical
        top = z.argmax(dim=-1, keepdim=True)
        keep = keep.scatter(1, top, torch.ones_like(top, dtype=torch.bool))
        filtered = torch.where(keep, z, torch.full_like(z, float("-inf")))
        probs = torch.softmax(filtered, dim=-1)
        return probs, keep, keep.sum(dim=-1)


batch = 64
vocab = 50257


def get_inputs():
    logits = (torch.randn(batch, vocab) * 2.5).half()
    temperature = torch.rand(batch) * 1.2 + 0.3
    return [logits, temperature]


def get_init_inputs():
    return [vocab, 0.02, 0.9]
