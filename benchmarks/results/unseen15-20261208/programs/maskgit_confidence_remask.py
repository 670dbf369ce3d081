"""MaskGIT parallel decoding step: Gumbel-max sampling, cosine mask schedule, re-mask the least
confident tokens."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, step=3, total_steps=8, temperature=1.0, choice_temperature=4.5):
        super().__init__()
        self.ratio = (step + 1) / total_steps
        self.temperature, self.choice_temperature = temperature, choice_temperature

    def forward(self, logits, token_ids, sample_noise, choice_noise):
        # logits [B, N, V]; token_ids [B, N] with V as the mask id; noises uniform in (0, 1)
        b, n, v = logits.shape
        mask_id = v
        unknown = token_ids == mask_id
        scaled = logits / self.temperature
        gumbel = -torch.log(-torch.log(sample_noise.clamp(1e-20, 1.0 - 1e-7)))
        sampled = torch.argmax(scaled + gumbel, dim=-1)
        sampled = torch.where(unknown, sampled, token_ids)
        log_probs = F.log_softmax(scaled, dim=-1)
        selected = log_probs.gather(-1, sampled.unsqueeze(-1)).squeeze(-1)
        selected = torch.where(unknown, selected, torch.full_like(selected, float("inf")))

        mask_ratio = math.cos(math.pi / 2 * self.ratio)
        n_unknown = unknown.sum(dim=-1, keepdim=True)
        mask_len = torch.full_like(n_unknown, math.floor(n * mask_ratio))
        mask_len = torch.maximum(torch.ones_like(mask_len), torch.minimum(n_unknown - 1, mask_len))

        g2 = -torch.log(-torch.log(choice_noise.clamp(1e-20, 1.0 - 1e-7)))
        confidence = selected + self.choice_temperature * (1.0 - self.ratio) * g2
        sorted_conf = torch.sort(confidence, dim=-1).values
        cut_off = sorted_conf.gather(-1, mask_len)
        masking = confidence < cut_off
        new_ids = torch.where(masking, torch.full_like(sampled, mask_id), sampled)
        log_likelihood = torch.where(unknown, selected, torch.zeros_like(selected)).sum(-1)
        return new_ids, masking, log_likelihood


batch = 32
num_tokens = 256
codebook_size = 1024


def get_inputs():
    logits = torch.randn(batch, num_tokens, codebook_size) * 2.0
    ids = torch.randint(0, codebook_size, (batch, num_tokens))
    ids = torch.where(torch.rand(batch, num_tokens) < 0.6, torch.full_like(ids, codebook_size), ids)
    sample_noise = torch.rand(batch, num_tokens, codebook_size)
    choice_noise = torch.rand(batch, num_tokens)
    return [logits, ids, sample_noise, choice_noise]


def get_init_inputs():
    return []
