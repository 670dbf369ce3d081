"""EDM deterministic sampler (Karras et al., NeurIPS 2022) with classifier-free guidance on
a small class-conditional latent denoiser (generative models / diffusion).

The Karras sigma schedule (rho = 7) is built in __init__; forward runs the 2nd-order Heun
sampler for a few steps (Euler on the final step to sigma = 0). The denoiser uses EDM
preconditioning (c_skip, c_out, c_in, c_noise = ln(sigma) / 4) around a conv net with
sinusoidal noise embedding + class embedding, GroupNorm/SiLU residual blocks with FiLM
(scale/shift), and CFG that batches conditional and null-class passes with cat/chunk.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class ResBlock(nn.Module):
    def __init__(self, ch, emb_dim, groups):
        super().__init__()
        self.norm1 = nn.GroupNorm(groups, ch)
        self.conv1 = nn.Conv2d(ch, ch, 3, padding=1)
        self.film = nn.Linear(emb_dim, 2 * ch)
        self.norm2 = nn.GroupNorm(groups, ch)
        self.conv2 = nn.Conv2d(ch, ch, 3, padding=1)

    def forward(self, x, emb):
        h = self.conv1(F.silu(self.norm1(x)))
        scale, shift = self.film(emb)[:, :, None, None].chunk(2, dim=1)
        h = self.norm2(h) * (1.0 + scale) + shift
        h = self.conv2(F.silu(h))
        return (x + h) / math.sqrt(2.0)


class Model(nn.Module):
    def __init__(self, in_ch, ch, emb_dim, num_blocks, groups, num_classes, num_steps,
                 sigma_min, sigma_max, sigma_data, rho, guidance):
        super().__init__()
        self.sigma_data = sigma_data
        self.guidance = guidance
        self.num_classes = num_classes
        self.emb_dim = emb_dim
        self.class_emb = nn.Embedding(num_classes + 1, emb_dim)  # last id = null class
        self.emb_mlp = nn.Sequential(nn.Linear(emb_dim, emb_dim), nn.SiLU(),
                                     nn.Linear(emb_dim, emb_dim))
        self.conv_in = nn.Conv2d(in_ch, ch, 3, padding=1)
        self.blocks = nn.ModuleList([ResBlock(ch, emb_dim, groups) for _ in range(num_blocks)])
        self.norm_out = nn.GroupNorm(groups, ch)
        self.conv_out = nn.Conv2d(ch, in_ch, 3, padding=1)
        i = torch.arange(num_steps, dtype=torch.float64)
        smax, smin = sigma_max ** (1 / rho), sigma_min ** (1 / rho)
        sig = (smax + i / (num_steps - 1) * (smin - smax)) ** rho
        self.sigmas = [float(s) for s in sig] + [0.0]
        half = emb_dim // 2
        self.register_buffer("freqs", torch.exp(-math.log(10000.0) * torch.arange(half) / half))

    def _net(self, x, c_noise, labels):
        ang = c_noise * self.freqs
        t_emb = torch.cat([torch.cos(ang), torch.sin(ang)], dim=-1)
        t_emb = F.pad(t_emb, (0, self.emb_dim - t_emb.shape[-1]))
        emb = F.silu(self.emb_mlp(t_emb.expand(x.shape[0], -1)) + self.class_emb(labels))
        h = self.conv_in(x)
        for blk in self.blocks:
            h = blk(h, emb)
        return self.conv_out(F.silu(self.norm_out(h)))

    def _denoise(self, x, sigma, labels):
        sd = self.sigma_data
        c_skip = sd ** 2 / (sigma ** 2 + sd ** 2)
        c_out = sigma * sd / math.sqrt(sigma ** 2 + sd ** 2)
        c_in = 1.0 / math.sqrt(sigma ** 2 + sd ** 2)
        c_noise = x.new_full((1, 1), math.log(sigma) / 4.0)
        null = torch.full_like(labels, self.num_classes)
        xx = torch.cat([x, x], dim=0) * c_in
        f = self._net(xx, c_noise, torch.cat([labels, null], dim=0))
        d_cond, d_uncond = (c_skip * torch.cat([x, x], dim=0) + c_out * f).chunk(2, dim=0)
        return d_uncond + self.guidance * (d_cond - d_uncond)

    def forward(self, noise, labels):
        x = noise * self.sigmas[0]
        for t_cur, t_next in zip(self.sigmas[:-1], self.sigmas[1:], strict=True):
            d = (x - self._denoise(x, t_cur, labels)) / t_cur
            x_next = x + (t_next - t_cur) * d
            if t_next > 0:
                d2 = (x_next - self._denoise(x_next, t_next, labels)) / t_next
                x_next = x + (t_next - t_cur) * 0.5 * (d + d2)
            x = x_next
        return x


batch = 2
in_ch = 4
res = 16
ch = 32
emb_dim = 64
num_blocks = 2
groups = 8
num_classes = 10
num_steps = 4
sigma_min = 0.002
sigma_max = 80.0
sigma_data = 0.5
rho = 7.0
guidance = 2.0


def get_inputs():
    return [torch.randn(batch, in_ch, res, res), torch.randint(0, num_classes, (batch,))]


def get_init_inputs():
    return [in_ch, ch, emb_dim, num_blocks, groups, num_classes, num_steps, sigma_min,
            sigma_max, sigma_data, rho, guidance]
