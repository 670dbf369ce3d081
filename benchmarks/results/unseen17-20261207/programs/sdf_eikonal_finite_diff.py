"""Neural signed distance field training losses (IGR/SIREN-style) without autograd gradients:
an MLP with softplus(beta=100) evaluated on each point and its six +-eps axis neighbours (a
broadcast stencil, one batched pass), central finite-difference gradients, surface SDF |f|,
normal alignment by cosine similarity, the eikonal term (|grad f| - 1)^2 on space samples and
an exp(-a|f|) off-surface penalty. Returns the weighted total and the gradients."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, hidden, num_layers, eps, w_sdf, w_normal, w_eik, w_off):
        super().__init__()
        self.layers = nn.ModuleList(
            [nn.Linear(3 if i == 0 else hidden, hidden) for i in range(num_layers)])
        self.out = nn.Linear(hidden, 1)
        self.eps = eps
        self.w_sdf = w_sdf
        self.w_normal = w_normal
        self.w_eik = w_eik
        self.w_off = w_off

    def sdf(self, p):
        h = p
        for layer in self.layers:
            h = F.softplus(layer(h), beta=100.0)
        return self.out(h).squeeze(-1)

    def forward(self, surface, normals, space):
        # surface, normals: [S, 3]; space: [Q, 3] uniform samples in the bounding box
        n_surf = surface.shape[0]
        pts = torch.cat([surface, space], dim=0)  # [M, 3]
        offsets = torch.eye(3, dtype=pts.dtype, device=pts.device) * self.eps
        stencil = torch.cat([torch.zeros_like(offsets[:1]), offsets, -offsets], dim=0)  # [7, 3]
        f = self.sdf(pts.unsqueeze(1) + stencil).view(-1, 7)  # [M, 7]
        grad = (f[:, 1:4] - f[:, 4:7]) / (2.0 * self.eps)  # [M, 3]
        loss_sdf = f[:n_surf, 0].abs().mean()
        loss_normal = (1.0 - F.cosine_similarity(grad[:n_surf], normals, dim=-1)).mean()
        loss_eik = (grad[n_surf:].norm(dim=-1) - 1.0).pow(2).mean()
        loss_off = torch.exp(-100.0 * f[n_surf:, 0].abs()).mean()
        total = (self.w_sdf * loss_sdf + self.w_normal * loss_normal
                 + self.w_eik * loss_eik + self.w_off * loss_off)
        return total, grad


num_surface = 4096
num_space = 4096
hidden = 256


def get_inputs():
    surface = torch.randn(num_surface, 3)
    surface = surface / surface.norm(dim=-1, keepdim=True).clamp(min=1e-6) * 0.5
    normals = surface * 2.0
    space = torch.rand(num_space, 3) * 2.0 - 1.0
    return [surface, normals, space]


def get_init_inputs():
    return [hidden, 4, 1e-3, 3000.0, 100.0, 50.0, 100.0]
