"""Deformable DETR encoder layer with multi-scale deformable attention in pure PyTorch: the
flattened 4-level feature pyramid gets per-level embeddings (repeat_interleave of level ids),
reference points are the pixel centres of each level from meshgrid/linspace, each query
predicts per-head/level/point sampling offsets (normalised by the level's (W, H)) and softmaxed
attention weights; the projected values are split per level, reshaped to [B*heads, Dh, H, W]
maps and bilinearly sampled with F.grid_sample at 2*loc-1, weighted and summed over levels and
points; output projection, residual LayerNorm and a ReLU FFN with residual LayerNorm."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class MSDeformAttn(nn.Module):
    def __init__(self, d_model, n_levels, n_heads, n_points):
        super().__init__()
        self.n_levels, self.n_heads, self.n_points = n_levels, n_heads, n_points
        self.head_dim = d_model // n_heads
        self.sampling_offsets = nn.Linear(d_model, n_heads * n_levels * n_points * 2)
        self.attention_weights = nn.Linear(d_model, n_heads * n_levels * n_points)
        self.value_proj = nn.Linear(d_model, d_model)
        self.output_proj = nn.Linear(d_model, d_model)
        with torch.no_grad():
            self.sampling_offsets.weight.normal_(0.0, 0.01)
            thetas = torch.arange(n_heads, dtype=torch.float32) * (2.0 * math.pi / n_heads)
            grid = torch.stack([thetas.cos(), thetas.sin()], -1)
            grid = grid / grid.abs().max(-1, keepdim=True)[0]
            grid = grid.view(n_heads, 1, 1, 2).repeat(1, n_levels, n_points, 1)
            grid = grid * torch.arange(1, n_points + 1, dtype=torch.float32).view(1, 1, -1, 1)
            self.sampling_offsets.bias.copy_(grid.flatten())

    def forward(self, query, reference_points, src, spatial_shapes):
        N, Lq, _ = query.shape
        M, L, P, Dh = self.n_heads, self.n_levels, self.n_points, self.head_dim
        value = self.value_proj(src).view(N, -1, M, Dh)
        offsets = self.sampling_offsets(query).view(N, Lq, M, L, P, 2)
        weights = self.attention_weights(query).view(N, Lq, M, L * P)
        weights = F.softmax(weights, -1).view(N, Lq, M, L, P)
        normalizer = torch.tensor([[w, h] for h, w in spatial_shapes],
                                  dtype=query.dtype, device=query.device)
        locations = (reference_points[:, :, None, :, None, :]
                     + offsets / normalizer[None, None, None, :, None, :])
        grids = 2 * locations - 1  # grid_sample coordinates in [-1, 1]
        values = value.split([h * w for h, w in spatial_shapes], dim=1)
        sampled = []
        for lvl, (h, w) in enumerate(spatial_shapes):
            v = values[lvl].permute(0, 2, 3, 1).reshape(N * M, Dh, h, w)
            g = grids[:, :, :, lvl].transpose(1, 2).reshape(N * M, Lq, P, 2)
            sampled.append(F.grid_sample(v, g, mode="bilinear", padding_mode="zeros",
                                         align_corners=False))  # [N*M, Dh, Lq, P]
        sampled = torch.stack(sampled, dim=3)  # [N*M, Dh, Lq, L, P]
        attn = weights.transpose(1, 2).reshape(N * M, 1, Lq, L, P)
        out = (sampled * attn).sum(dim=(3, 4)).view(N, M * Dh, Lq).transpose(1, 2)
        return self.output_proj(out)


class Model(nn.Module):
    def __init__(self, d_model, height, width, n_levels=4, n_heads=8, n_points=4, d_ffn=1024):
        super().__init__()
        self.spatial_shapes = [(height >> lvl, width >> lvl) for lvl in range(n_levels)]
        self.level_embed = nn.Parameter(torch.randn(n_levels, d_model) * 0.02)
        self.self_attn = MSDeformAttn(d_model, n_levels, n_heads, n_points)
        self.norm1 = nn.LayerNorm(d_model)
        self.linear1 = nn.Linear(d_model, d_ffn)
        self.linear2 = nn.Linear(d_ffn, d_model)
        self.norm2 = nn.LayerNorm(d_model)

    def reference_points(self, device, dtype):
        refs = []
        for h, w in self.spatial_shapes:
            ref_y, ref_x = torch.meshgrid(
                torch.linspace(0.5, h - 0.5, h, dtype=dtype, device=device),
                torch.linspace(0.5, w - 0.5, w, dtype=dtype, device=device), indexing="ij")
            refs.append(torch.stack((ref_x.reshape(-1) / w, ref_y.reshape(-1) / h), -1))
        ref = torch.cat(refs, 0)  # [S, 2]
        return ref[None, :, None, :].expand(1, -1, len(self.spatial_shapes), 2)

    def forward(self, src, pos):
        # src, pos: [B, S, C] with S = sum of the levels' h * w
        sizes = torch.tensor([h * w for h, w in self.spatial_shapes], device=src.device)
        level_ids = torch.repeat_interleave(torch.arange(len(sizes), device=src.device), sizes,
                                            output_size=src.size(1))
        pos = pos + self.level_embed[level_ids]
        ref = self.reference_points(src.device, src.dtype).expand(src.size(0), -1, -1, -1)
        src2 = self.self_attn(src + pos, ref, src, self.spatial_shapes)
        src = self.norm1(src + src2)
        src2 = self.linear2(F.relu(self.linear1(src)))
        return self.norm2(src + src2)


batch = 2
height = 64
width = 64
d_model = 256
n_levels = 4


def _tokens():
    return sum((height >> lvl) * (width >> lvl) for lvl in range(n_levels))


def get_inputs():
    return [torch.randn(batch, _tokens(), d_model), torch.randn(batch, _tokens(), d_model)]


def get_init_inputs():
    return [d_model, height, width, n_levels]
