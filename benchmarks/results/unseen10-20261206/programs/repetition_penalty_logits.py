"""The sampler's penalties on next-token logits over the tokens generated so far (as in
Hugging Face's RepetitionPenaltyLogitsProcessor and vLLM's frequency / presence penalties):
the logits of previous tokens gathered, multiplied by the penalty when negative and divided
by it when positive, scattered back (duplicates write equal values); token counts built
with scatter_add of ones, minus frequency * count and presence * (count > 0); finally
log_softmax at a temperature."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, repetition_penalty, frequency_penalty, presence_penalty, temperature):
        super().__init__()
        self.rep = repetition_penalty
        self.freq = frequency_penalty
        self.pres = presence_penalty
        self.temperature = temperature

    def forward(self, logits, prev_tokens):
        score = torch.gather(logits, 1, prev_tokens)
        score = torch.where(score < 0, score * self.rep, score / self.rep)
        out = logits.scatter(1, prev_tokens, score)

        counts = torch.zeros_like(logits).scatter_add(
            1, prev_tokens, torch.ones_like(prev_tokens, dtype=logits.dtype))
        out = out - self.freq * counts - self.pres * (counts > 0).to(logits.dtype)
        return torch.log_softmax(out / self.temperature, dim=-1)


batch = 128
vocab = 151936
history = 1024


def get_inputs():
    logits = torch.randn(batch, vocab) * 3.0
    # a skewed history: repeated tokens are common
    prev = (torch.rand(batch, history) ** 3 * vocab).long().clamp_(max=vocab - 1)
    return [logits, prev]


def get_init_inputs():
    return [1.3, 0.4, 0.6, 0.8]
