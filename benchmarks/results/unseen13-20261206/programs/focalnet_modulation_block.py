"""FocalNet block (focal modulation in place of self-attention), channels-last tokens: one
Linear gives query, context and focal_level + 1 gates, permuted to NCHW and torch.split;
hierarchical contexts from stacked depthwise convs (kernel 3, 5) with GELU, each weighted by
its gate and summed, plus a global context (GELU of the spatial mean) with the last gate,
normalised by the level count, a 1x1 conv modulator multiplied into the query, projection;
LayerScale'd residuals around the modulation and a GELU MLP."""

import torch
import torch.nn as nn


class FocalModulation(nn.Module):
    def __init__(self, dim, focal_window=3, focal_level=2, focal_factor=2):
        super().__init__()
        self.focal_level = focal_level
        self.f = nn.Linear(dim, 2 * dim + (focal_level + 1))
        self.h = nn.Conv2d(dim, dim, kernel_size=1)
        self.act = nn.GELU()
        self.proj = nn.Linear(dim, dim)
        self.focal_layers = nn.ModuleList()
        for k in range(focal_level):
            kernel_size = focal_factor * k + focal_window
            self.focal_layers.append(nn.Sequential(
                nn.Conv2d(dim, dim, kernel_size, groups=dim, padding=kernel_size // 2,
                          bias=False),
                nn.GELU()))

    def forward(self, x):
        C = x.shape[-1]
        x = self.f(x).permute(0, 3, 1, 2).contiguous()
        q, ctx, gates = torch.split(x, (C, C, self.focal_level + 1), 1)
        ctx_all = 0
        for level in range(self.focal_level):
            ctx = self.focal_layers[level](ctx)
            ctx_all = ctx_all + ctx * gates[:, level:level + 1]
        ctx_global = self.act(ctx.mean(2, keepdim=True).mean(3, keepdim=True))
        ctx_all = ctx_all + ctx_global * gates[:, self.focal_level:]
        ctx_all = ctx_all / (self.focal_level + 1)
        modulator = self.h(ctx_all)
        x_out = q * modulator
        x_out = x_out.permute(0, 2, 3, 1).contiguous()
        return self.proj(x_out)


class Model(nn.Module):
    def __init__(self, dim, input_resolution, mlp_ratio=4, layerscale_value=1e-1):
        super().__init__()
        self.H, self.W = input_resolution
        self.norm1 = nn.LayerNorm(dim)
        self.modulation = FocalModulation(dim)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, dim * mlp_ratio), nn.GELU(),
                                 nn.Linear(dim * mlp_ratio, dim))
        self.gamma_1 = nn.Parameter(layerscale_value * torch.ones(dim))
        self.gamma_2 = nn.Parameter(layerscale_value * torch.ones(dim))

    def forward(self, x):
        # x: [B, H*W, C] tokens, as FocalNet stages pass them
        H, W = self.H, self.W
        B, L, C = x.shape
        shortcut = x
        x = self.norm1(x).view(B, H, W, C)
        x = self.modulation(x).view(B, H * W, C)
        x = shortcut + self.gamma_1 * x
        x = x + self.gamma_2 * self.mlp(self.norm2(x))
        return x


batch = 16
height = 56
width = 56
dim = 128


def get_inputs():
    return [torch.randn(batch, height * width, dim)]


def get_init_inputs():
    return [dim, (height, width)]
