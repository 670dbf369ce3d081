"""One classifier-free-guided DDIM sampling step (Ho and Salimans; Song et al.) with a tiny
class-conditional latent denoiser: the batch is doubled (class embedding vs. a learned null
embedding), a sinusoidal timestep embedding goes through an MLP, conditions a GroupNorm by
scale and shift (ADM's use_scale_shift_norm), the two noise predictions are combined as
uncond + w * (cond - uncond), and x0 / x_prev follow the DDIM update (eta = 0) with
alphas_cumprod gathered by the integer timesteps."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def _timestep_embedding(t, dim):
    half = dim // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half, device=t.device) / half)
    args = t.to(freqs.dtype).unsqueeze(1) * freqs.unsqueeze(0)
    return torch.cat([torch.cos(args), torch.sin(args)], dim=1)


class Model(nn.Module):
    def __init__(self, channels, hidden, emb_dim, num_classes, groups, num_timesteps,
                 num_steps, guidance):
        super().__init__()
        self.emb_dim = emb_dim
        self.time_mlp = nn.Sequential(
            nn.Linear(emb_dim, emb_dim * 4), nn.SiLU(), nn.Linear(emb_dim * 4, emb_dim * 4))
        self.class_emb = nn.Embedding(num_classes, emb_dim * 4)
        self.null_emb = nn.Parameter(torch.randn(1, emb_dim * 4) * 0.02)
        self.conv_in = nn.Conv2d(channels, hidden, 3, padding=1)
        self.norm = nn.GroupNorm(groups, hidden, affine=False)
        self.emb_proj = nn.Linear(emb_dim * 4, 2 * hidden)
        self.conv_out = nn.Conv2d(hidden, channels, 3, padding=1)
        betas = torch.linspace(1e-4, 0.02, num_timesteps, dtype=torch.float64)
        alphas_cumprod = torch.cumprod(1.0 - betas, dim=0).to(torch.float32)
        self.register_buffer("alphas_cumprod", alphas_cumprod)
        self.stride = max(num_timesteps // num_steps, 1)
        self.guidance = guidance

    def forward(self, x, t, labels):
        b = x.shape[0]
        cond = torch.cat([self.class_emb(labels), self.null_emb.expand(b, -1)], dim=0)
        tt = torch.cat([t, t], dim=0)
        emb = self.time_mlp(_timestep_embedding(tt, self.emb_dim)) + cond
        scale, shift = self.emb_proj(F.silu(emb)).chunk(2, dim=1)
        h = self.conv_in(torch.cat([x, x], dim=0))
        h = self.norm(h) * (1 + scale[:, :, None, None]) + shift[:, :, None, None]
        eps_cond, eps_uncond = self.conv_out(F.silu(h)).chunk(2, dim=0)
        eps = eps_uncond + self.guidance * (eps_cond - eps_uncond)

        a_t = self.alphas_cumprod[t].view(b, 1, 1, 1)
        a_prev = self.alphas_cumprod[(t - self.stride).clamp(min=0)].view(b, 1, 1, 1)
        x0 = ((x - (1 - a_t).sqrt() * eps) / a_t.sqrt()).clamp(-1.0, 1.0)
        return a_prev.sqrt() * x0 + (1 - a_prev).sqrt() * eps


batch = 32
channels = 4
height = 64
width = 64
hidden = 256
emb_dim = 128
num_classes = 1000
groups = 8
num_timesteps = 1000
num_steps = 50


def get_inputs():
    x = torch.randn(batch, channels, height, width)
    t = torch.randint(1, num_timesteps, (batch,), dtype=torch.int64)
    labels = torch.randint(0, num_classes, (batch,), dtype=torch.int64)
    return [x, t, labels]


def get_init_inputs():
    return [channels, hidden, emb_dim, num_classes, groups, num_timesteps, num_steps, 7.5]
