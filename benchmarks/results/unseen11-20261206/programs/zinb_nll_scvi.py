"""scVI (Lopez et al.) single-cell VAE at evaluation: an encoder on log1p counts (linear,
BatchNorm, ReLU, posterior mean), a decoder with a softmax over genes scaled by the
observed library size, gene-wise inverse dispersion exp(px_r) and dropout logits, and the
zero-inflated negative binomial negative log-likelihood per cell (softplus, lgamma and a
where between the zero and non-zero cases)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, genes, hidden, latent):
        super().__init__()
        self.enc = nn.Linear(genes, hidden)
        self.enc_bn = nn.BatchNorm1d(hidden, eps=1e-3)
        self.z_mean = nn.Linear(hidden, latent)
        self.dec = nn.Linear(latent, hidden)
        self.dec_bn = nn.BatchNorm1d(hidden, eps=1e-3)
        self.scale_head = nn.Linear(hidden, genes)
        self.dropout_head = nn.Linear(hidden, genes)
        self.px_r = nn.Parameter(torch.randn(genes) * 0.5)
        with torch.no_grad():
            for bn in (self.enc_bn, self.dec_bn):
                bn.running_mean.uniform_(-0.2, 0.2)
                bn.running_var.uniform_(0.5, 1.5)
        self.eval()

    def forward(self, x):  # x [cells, genes] counts
        eps = 1e-8
        z = self.z_mean(F.relu(self.enc_bn(self.enc(torch.log1p(x)))))
        h = F.relu(self.dec_bn(self.dec(z)))
        library = torch.log(x.sum(dim=1, keepdim=True))
        mu = torch.exp(library) * torch.softmax(self.scale_head(h), dim=-1)
        pi = self.dropout_head(h)
        theta = torch.exp(self.px_r)

        log_theta_mu = torch.log(theta + mu + eps)
        nb_zero = theta * (torch.log(theta + eps) - log_theta_mu)
        zero_case = F.softplus(nb_zero - pi) - F.softplus(-pi)
        nonzero_case = (-pi - F.softplus(-pi) + nb_zero
                        + x * (torch.log(mu + eps) - log_theta_mu)
                        + torch.lgamma(x + theta) - torch.lgamma(theta) - torch.lgamma(x + 1.0))
        ll = torch.where(x < eps, zero_case, nonzero_case)
        return -ll.sum(dim=-1)


cells = 2048
genes = 2000
hidden = 128
latent = 10


def get_inputs():
    rate = torch.rand(cells, genes) ** 3 * 12.0
    keep = (torch.rand(cells, genes) > 0.5).float()
    return [torch.poisson(rate) * keep]


def get_init_inputs():
    return [genes, hidden, latent]
