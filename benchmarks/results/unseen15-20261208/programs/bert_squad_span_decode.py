"""BERT extractive QA head: start/end logits over context tokens, span loss, best span under a
length limit."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, hidden, max_answer_len=30):
        super().__init__()
        self.max_answer_len = max_answer_len
        self.qa_outputs = nn.Linear(hidden, 2)

    def forward(self, sequence_output, token_type_ids, attention_mask, start_positions,
                end_positions):
        b, seq, _ = sequence_output.shape
        logits = self.qa_outputs(sequence_output)
        start_logits, end_logits = logits.split(1, dim=-1)
        start_logits = start_logits.squeeze(-1)
        end_logits = end_logits.squeeze(-1)
        context = (token_type_ids == 1) & (attention_mask == 1)
        start_logits = start_logits.masked_fill(~context, -10000.0)
        end_logits = end_logits.masked_fill(~context, -10000.0)
        loss = 0.5 * (F.cross_entropy(start_logits, start_positions)
                      + F.cross_entropy(end_logits, end_positions))

        start_lp = F.log_softmax(start_logits, dim=-1)
        end_lp = F.log_softmax(end_logits, dim=-1)
        scores = start_lp[:, :, None] + end_lp[:, None, :]  # [B, L_start, L_end]
        idx = torch.arange(seq, device=scores.device)
        length = idx[None, :] - idx[:, None]
        valid = (length >= 0) & (length < self.max_answer_len)
        scores = scores.masked_fill(~valid, float("-inf"))
        flat = scores.view(b, seq * seq)
        best = flat.argmax(dim=-1)
        start_idx = torch.div(best, seq, rounding_mode="floor")
        end_idx = best % seq
        span_prob = flat.gather(1, best[:, None]).squeeze(1).exp()
        return start_idx, end_idx, span_prob, loss


batch = 32
seq_len = 384
hidden = 768


def get_inputs():
    sequence_output = torch.randn(batch, seq_len, hidden)
    pos = torch.arange(seq_len)[None, :]
    lengths = torch.randint(seq_len // 2, seq_len + 1, (batch, 1))
    q_len = torch.randint(1, seq_len // 4 + 1, (batch, 1))  # [CLS] question [SEP] first
    attention_mask = (pos < lengths).long()
    token_type_ids = ((pos >= q_len) & (pos < lengths)).long()
    span = (lengths - q_len).squeeze(1)
    start_positions = q_len.squeeze(1) + (torch.rand(batch) * span).long()
    end_positions = torch.minimum(start_positions + torch.randint(0, 16, (batch,)),
                                  lengths.squeeze(1) - 1)
    return [sequence_output, token_type_ids, attention_mask, start_positions, end_positions]


def get_init_inputs():
    return [hidden]
