"""Point Transformer layer (Zhao et al.) on batched point clouds: k nearest neighbours from the
expanded squared-distance formula (|p|^2 + |q|^2 - 2 p.q via bmm) and topk(largest=False), a
batched gather of neighbour positions and features through flattened indices (idx + b * N), a
positional encoding MLP on relative coordinates, vector attention whose weights come from an MLP
on (q_i - k_j + delta_ij) with LayerNorm and ReLU, shared across channel groups by a reshape
(share_planes), a softmax over the neighbour dimension (dim=2 of [B, N, k, G, C/G]) and an
attention-weighted sum of (v_j + delta_ij); wrapped by input/output linears with a residual.
Returns the new features and the int64 neighbour indices."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels, k, share_planes):
        super().__init__()
        self.k = k
        self.share = share_planes
        self.lin_in = nn.Linear(channels, channels)
        self.norm_in = nn.LayerNorm(channels)
        self.to_q = nn.Linear(channels, channels)
        self.to_k = nn.Linear(channels, channels)
        self.to_v = nn.Linear(channels, channels)
        self.pos = nn.Sequential(nn.Linear(3, 3), nn.LayerNorm(3), nn.ReLU(),
                                 nn.Linear(3, channels))
        g = channels // share_planes
        self.attn = nn.Sequential(nn.LayerNorm(channels), nn.ReLU(),
                                  nn.Linear(channels, g), nn.LayerNorm(g), nn.ReLU(),
                                  nn.Linear(g, g))
        self.lin_out = nn.Linear(channels, channels)
        self.norm_out = nn.LayerNorm(channels)

    def forward(self, xyz, feats):
        # xyz: [B, N, 3]; feats: [B, N, C]
        b, n, c = feats.shape
        k = min(self.k, n)
        sq = (xyz * xyz).sum(-1)
        dist = sq[:, :, None] + sq[:, None, :] - 2.0 * torch.bmm(xyz, xyz.transpose(1, 2))
        idx = dist.topk(k, dim=-1, largest=False).indices  # [B, N, k]
        flat = (idx + torch.arange(b, device=xyz.device).view(b, 1, 1) * n).view(-1)

        x = torch.relu(self.norm_in(self.lin_in(feats)))
        q = self.to_q(x)
        kf = self.to_k(x).reshape(b * n, c)[flat].view(b, n, k, c)
        vf = self.to_v(x).reshape(b * n, c)[flat].view(b, n, k, c)
        rel = xyz.reshape(b * n, 3)[flat].view(b, n, k, 3) - xyz.unsqueeze(2)
        delta = self.pos(rel)  # [B, N, k, C]
        w = self.attn(q.unsqueeze(2) - kf + delta)  # [B, N, k, G]
        w = torch.softmax(w, dim=2)
        g = w.shape[-1]
        val = (vf + delta).view(b, n, k, self.share, g)
        y = (val * w.unsqueeze(3)).sum(dim=2).reshape(b, n, c)
        y = torch.relu(self.norm_out(self.lin_out(y)))
        return feats + y, idx


batch = 16
points = 4096
channels = 64
neighbours = 16
share_planes = 8


def get_inputs():
    xyz = torch.rand(batch, points, 3) * 4.0
    feats = torch.randn(batch, points, channels)
    return [xyz, feats]


def get_init_inputs():
    return [channels, neighbours, share_planes]
