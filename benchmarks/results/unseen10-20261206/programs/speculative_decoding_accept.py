"""Speculative decoding verification (Leviathan et al.; Chen et al.): the target model's
and the draft model's distributions at the K drafted positions, the acceptance test
u < min(1, p(x) / q(x)) done in log space on log_softmax values gathered at the drafted
tokens, the accepted prefix length from a cumulative product of the accept flags, and the
distribution to sample the next token from: the normalised residual max(p - q, 0) at the
first rejected position, or the target's bonus distribution after K acceptances."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, temperature):
        super().__init__()
        self.temperature = temperature

    def forward(self, target_logits, draft_logits, draft_tokens, uniforms):
        b, k, v = draft_logits.shape
        logp = torch.log_softmax(target_logits / self.temperature, dim=-1)  # [b, k + 1, v]
        logq = torch.log_softmax(draft_logits / self.temperature, dim=-1)   # [b, k, v]
        tok = draft_tokens.unsqueeze(-1)
        logp_tok = logp[:, :k].gather(-1, tok).squeeze(-1)
        logq_tok = logq.gather(-1, tok).squeeze(-1)
        log_ratio = (logp_tok - logq_tok).clamp(max=0.0)
        accept = (torch.log(uniforms) < log_ratio).to(torch.int64)
        n_accepted = torch.cumprod(accept, dim=1).sum(dim=1)  # [b]

        pos = n_accepted.view(b, 1, 1).expand(b, 1, v)
        p_next = logp.gather(1, pos).squeeze(1).exp()
        q_pad = torch.cat([logq.exp(), torch.zeros_like(logq[:, :1])], dim=1)
        q_next = q_pad.gather(1, pos).squeeze(1)
        residual = (p_next - q_next).clamp(min=0.0)
        residual = residual / residual.sum(dim=-1, keepdim=True)
        return n_accepted, residual


batch = 128
num_draft = 7
vocab = 32000


def get_inputs():
    target = torch.randn(batch, num_draft + 1, vocab) * 2.0
    draft = target[:, :num_draft] + torch.randn(batch, num_draft, vocab)
    q = torch.softmax(draft, dim=-1)
    tokens = torch.multinomial(q.reshape(-1, vocab), 1).view(batch, num_draft)
    uniforms = torch.rand(batch, num_draft)
    return [target, draft, tokens, uniforms]


def get_init_inputs():
    return [1.0]
