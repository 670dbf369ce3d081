"""Direct Preference Optimisation (Rafailov et al.) loss from the logits of the policy and
the frozen reference model on a batch of chosen and rejected completions concatenated
along the batch: per-token log-probabilities of the labels by log_softmax + gather,
summed over the completion tokens only (a bool loss mask), the chosen / rejected split,
-logsigmoid(beta * (policy log-ratio - reference log-ratio)) with conservative label
smoothing, plus the implicit rewards and the reward accuracy."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, beta, label_smoothing):
        super().__init__()
        self.beta = beta
        self.label_smoothing = label_smoothing

    @staticmethod
    def _seq_logps(logits, labels, mask):
        logp = torch.log_softmax(logits[:, :-1], dim=-1)
        tgt = labels[:, 1:]
        tok = torch.gather(logp, 2, tgt.unsqueeze(-1)).squeeze(-1)
        return (tok * mask[:, 1:].to(tok.dtype)).sum(dim=-1)

    def forward(self, policy_logits, reference_logits, labels, loss_mask):
        pol = self._seq_logps(policy_logits, labels, loss_mask)
        ref = self._seq_logps(reference_logits, labels, loss_mask)
        half = pol.shape[0] // 2
        pi_logratio = pol[:half] - pol[half:]
        ref_logratio = ref[:half] - ref[half:]
        z = self.beta * (pi_logratio - ref_logratio)
        eps = self.label_smoothing
        losses = -F.logsigmoid(z) * (1 - eps) - F.logsigmoid(-z) * eps
        chosen_rewards = self.beta * (pol[:half] - ref[:half])
        rejected_rewards = self.beta * (pol[half:] - ref[half:])
        accuracy = (chosen_rewards > rejected_rewards).to(z.dtype).mean()
        return losses.mean(), chosen_rewards, rejected_rewards, accuracy


pairs = 8
seq_len = 256
vocab = 16384


def get_inputs():
    policy = torch.randn(2 * pairs, seq_len, vocab)
    reference = policy + 0.3 * torch.randn(2 * pairs, seq_len, vocab)
    labels = torch.randint(0, vocab, (2 * pairs, seq_len), dtype=torch.int64)
    prompt_len = torch.randint(seq_len // 8, seq_len // 2, (2 * pairs, 1))
    resp_len = torch.randint(seq_len // 4, seq_len // 2, (2 * pairs, 1))
    pos = torch.arange(seq_len).unsqueeze(0)
    loss_mask = (pos >= prompt_len) & (pos < prompt_len + resp_len)
    return [policy, reference, labels, loss_mask]


def get_init_inputs():
    return [0.1, 0.05]
