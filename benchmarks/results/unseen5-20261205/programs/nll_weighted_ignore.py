"""Sum of three losses: class-weighted negative log likelihood of log_softmax logits with
ignored (-100) targets, a Gaussian NLL with predicted variances, and a Poisson NLL on
log-rates."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.register_buffer("class_weight", torch.linspace(0.5, 2.0, classes))

    def forward(self, logits, target, mean, obs, var, log_rate, counts):
        nll = F.nll_loss(F.log_softmax(logits, dim=1), target, weight=self.class_weight,
                         ignore_index=-100)
        gauss = F.gaussian_nll_loss(mean, obs, var)
        pois = F.poisson_nll_loss(log_rate, counts)
        return nll + gauss + pois


batch, classes, dim = 8192, 1024, 512


def get_inputs():
    gen = torch.Generator().manual_seed(0)
    labels = torch.randint(0, classes, (batch,), generator=gen)
    drop = torch.rand(batch, generator=gen) < 0.2
    target = torch.where(drop, torch.full_like(labels, -100), labels)
    var = torch.rand(batch, dim, generator=gen) + 0.1
    counts = torch.floor(torch.rand(batch, dim, generator=gen) * 8.0)
    return [torch.randn(batch, classes, generator=gen), target,
            torch.randn(batch, dim, generator=gen), torch.randn(batch, dim, generator=gen),
            var, torch.randn(batch, dim, generator=gen), counts]


def get_init_inputs():
    return [classes]
