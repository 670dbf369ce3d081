"""One decoding step of contrastive search (Su et al., "A Contrastive Framework for Neural Text
Generation") for a batch of sequences: temperature softmax over the vocabulary, top-k candidate
tokens, a cheap one-layer proxy for each candidate's next hidden state (the last hidden state plus
the candidate's tied input embedding, through LayerNorm), cosine similarity of every candidate
against the fp16 cache of previous hidden states (bmm in fp32, positions past each sequence's
int64 length masked), the degeneration penalty as the max similarity over the context, the score
(1 - alpha) * p - alpha * penalty, and an argmax whose winner is gathered back; returns the chosen
int64 token ids, their scores and the chosen candidates' hidden states."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, vocab, dim, top_k, alpha, temperature):
        super().__init__()
        self.top_k = top_k
        self.alpha = alpha
        self.temperature = temperature
        self.embed = nn.Embedding(vocab, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, logits, last_hidden, context_hidden, context_len):
        # logits: [B, V]; last_hidden: [B, D]; context_hidden: [B, S, D] fp16; context_len: [B]
        b, s, _ = context_hidden.shape
        k = min(self.top_k, logits.shape[-1])
        probs = torch.softmax(logits.float() / self.temperature, dim=-1)
        top_p, top_i = probs.topk(k, dim=-1)  # [B, K]
        cand = self.norm(last_hidden.unsqueeze(1) + self.embed(top_i))  # [B, K, D]
        cand_n = F.normalize(cand, dim=-1)
        ctx_n = F.normalize(context_hidden.float(), dim=-1)
        sim = torch.bmm(cand_n, ctx_n.transpose(1, 2))  # [B, K, S]
        pos = torch.arange(s, device=logits.device)
        valid = pos[None, :] < context_len[:, None]  # [B, S]
        sim = sim.masked_fill(~valid[:, None, :], -1.0)
        penalty = sim.amax(dim=-1)  # [B, K]
        score = (1.0 - self.alpha) * top_p - self.alpha * penalty
        best_score, best = score.max(dim=-1)
        next_token = top_i.gather(1, best[:, None]).squeeze(1)
        d = cand.shape[-1]
        next_hidden = cand.gather(1, best.view(b, 1, 1).expand(b, 1, d)).squeeze(1)
        return next_token, best_score, next_hidden


batch = 48
vocab = 50257
dim = 1280
context = 1024
top_k = 8


def get_inputs():
    logits = torch.randn(batch, vocab) * 3.0
    last_hidden = torch.randn(batch, dim)
    context_hidden = torch.randn(batch, context, dim).half()
    context_len = torch.randint(1, context + 1, (batch,))
    return [logits, last_hidden, context_hidden, context_len]


def get_init_inputs():
    return [vocab, dim, top_k, 0.6, 0.7]
