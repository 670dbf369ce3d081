"""Deep survival analysis with two heads on a shared MLP trunk: a DeepSurv Cox partial
likelihood over mini-batches sorted by ascending time (risk sets as a reverse
logcumsumexp: flip, logcumsumexp, flip) and a discrete-time logistic-hazard head
(nnet-survival) with its likelihood built from an arange < duration mask and torch.gather
at the event bin, plus survival curves by cumprod of (1 - hazard)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_features, hidden, bins):
        super().__init__()
        self.trunk = nn.Sequential(
            nn.Linear(in_features, hidden), nn.ReLU(),
            nn.Linear(hidden, hidden), nn.ReLU())
        self.risk = nn.Linear(hidden, 1)
        self.hazard = nn.Linear(hidden, bins)

    def forward(self, x, event, duration_bin):
        # x [S, N, F] with each group's rows sorted by ascending survival time
        h = self.trunk(x)
        risk = self.risk(h).squeeze(-1)  # [S, N]
        ev = event.to(risk.dtype)
        log_risk_set = torch.logcumsumexp(risk.flip(-1), dim=-1).flip(-1)
        cox = -((risk - log_risk_set) * ev).sum(-1) / ev.sum(-1).clamp_min(1.0)

        logits = self.hazard(h)  # [S, N, K]
        bins = logits.shape[-1]
        before = torch.arange(bins, device=x.device) < duration_bin.unsqueeze(-1)
        survive_ll = torch.where(before, F.logsigmoid(-logits), 0.0).sum(-1)
        at = torch.gather(logits, -1, duration_bin.unsqueeze(-1)).squeeze(-1)
        at_ll = torch.where(event, F.logsigmoid(at), F.logsigmoid(-at))
        hazard_nll = -(survive_ll + at_ll).mean(-1)

        survival = torch.cumprod(1.0 - torch.sigmoid(logits), dim=-1)
        return cox, hazard_nll, survival


groups = 16
group_size = 512
in_features = 256
hidden = 256
bins = 32


def get_inputs():
    x = torch.randn(groups, group_size, in_features)
    event = torch.rand(groups, group_size) < 0.7
    duration_bin = torch.sort(torch.randint(0, bins, (groups, group_size)), dim=-1).values
    return [x, event, duration_bin]


def get_init_inputs():
    return [in_features, hidden, bins]
