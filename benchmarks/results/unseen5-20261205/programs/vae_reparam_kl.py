"""VAE head loss: one Linear gives mu and log-variance, z = mu + exp(logvar / 2) * eps,
a Linear decoder with a sigmoid reconstructs the target; summed binary cross entropy plus
the Gaussian KL term, both per sample."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, hidden, latent, out_dim):
        super().__init__()
        self.to_stats = nn.Linear(hidden, 2 * latent)
        self.decoder = nn.Linear(latent, out_dim)

    def forward(self, h, eps, target):
        mu, logvar = self.to_stats(h).chunk(2, dim=-1)
        z = mu + torch.exp(0.5 * logvar) * eps
        recon = torch.sigmoid(self.decoder(z))
        n = h.shape[0]
        bce = F.binary_cross_entropy(recon, target, reduction="sum") / n
        kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp()) / n
        return bce + kl


batch, hidden, latent, out_dim = 2048, 1024, 128, 4096


def get_inputs():
    return [torch.randn(batch, hidden), torch.randn(batch, latent), torch.rand(batch, out_dim)]


def get_init_inputs():
    return [hidden, latent, out_dim]
