"""CTC head with greedy decoding: argmax path, repeat/blank collapse and compaction by cumsum."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, hidden, vocab_size, blank=0, pad_id=-1):
        super().__init__()
        self.blank, self.pad_id = blank, pad_id
        self.norm = nn.LayerNorm(hidden)
        self.head = nn.Linear(hidden, vocab_size)
        with torch.no_grad():  # a trained CTC head prefers blank on most frames
            self.head.bias[blank] += 2.0

    def forward(self, hidden_states, lengths):
        b, t, _ = hidden_states.shape
        log_probs = F.log_softmax(self.head(self.norm(hidden_states)), dim=-1)
        best_lp, best = log_probs.max(dim=-1)  # [B, T]
        valid = torch.arange(t, device=best.device)[None, :] < lengths[:, None]
        prev = F.pad(best[:, :-1], (1, 0), value=self.blank)
        keep = (best != self.blank) & (best != prev) & valid
        pos = torch.cumsum(keep.long(), dim=1) - 1
        out_len = keep.sum(dim=1)
        # non-kept frames write the pad id into a spare last column
        index = torch.where(keep, pos, torch.full_like(pos, t))
        src = torch.where(keep, best, torch.full_like(best, self.pad_id))
        tokens = torch.full((b, t + 1), self.pad_id, dtype=best.dtype, device=best.device)
        tokens = tokens.scatter(1, index, src)[:, :t]
        score = (best_lp * valid).sum(dim=1)
        confidence = torch.exp(score / lengths.to(score.dtype))
        return tokens, out_len, score, confidence


batch = 32
frames = 1000
hidden = 512
vocab_size = 1024


def get_inputs():
    hidden_states = torch.randn(batch, frames, hidden)
    lengths = torch.randint(frames // 2, frames + 1, (batch,))
    return [hidden_states, lengths]


def get_init_inputs():
    return [hidden, vocab_size]
