"""Knowledge distillation loss over a large vocabulary: temperature-softened KL divergence
from teacher to student (times T^2), label-smoothed cross entropy on the hard labels, and
the fraction of rows where student and teacher agree on the argmax."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, temperature, smoothing):
        super().__init__()
        self.t = temperature
        self.smoothing = smoothing

    def forward(self, student, teacher, labels):
        log_p = F.log_softmax(student / self.t, dim=-1)
        q = F.softmax(teacher / self.t, dim=-1)
        soft = F.kl_div(log_p, q, reduction="batchmean") * (self.t ** 2)
        hard = F.cross_entropy(student, labels, label_smoothing=self.smoothing)
        agree = student.argmax(dim=-1).eq(teacher.argmax(dim=-1)).float().mean()
        return soft, hard, agree


batch = 512
vocab = 32768


def get_inputs():
    teacher = torch.randn(batch, vocab) * 2.0
    student = teacher + torch.randn(batch, vocab)
    labels = torch.randint(0, vocab, (batch,))
    return [student, teacher, labels]


def get_init_inputs():
    return [4.0, 0.1]
