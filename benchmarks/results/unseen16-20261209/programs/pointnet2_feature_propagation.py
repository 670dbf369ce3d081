"""PointNet++ feature propagation: 3-nearest-neighbour inverse-distance interpolation of sparse
point features onto dense points (topk + gather), skip concat, two Conv1d+BN+ReLU layers."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, c_skip, c_sparse, mlp_hidden, mlp_out):
        super().__init__()
        self.mlp = nn.Sequential(
            nn.Conv1d(c_skip + c_sparse, mlp_hidden, 1),
            nn.BatchNorm1d(mlp_hidden),
            nn.ReLU(),
            nn.Conv1d(mlp_hidden, mlp_out, 1),
            nn.BatchNorm1d(mlp_out),
            nn.ReLU(),
        )

    def forward(self, xyz_dense, xyz_sparse, feats_dense, feats_sparse):
        # xyz_dense [B, N, 3], xyz_sparse [B, S, 3], feats_dense [B, C1, N], feats_sparse [B, C2, S]
        b, n, _ = xyz_dense.shape
        c2 = feats_sparse.shape[1]
        dist = (xyz_dense.square().sum(-1, keepdim=True)
                + xyz_sparse.square().sum(-1).unsqueeze(1)
                - 2.0 * torch.bmm(xyz_dense, xyz_sparse.transpose(1, 2))).clamp(min=0)
        knn_dist, knn_idx = dist.topk(3, dim=-1, largest=False)  # [B, N, 3]
        recip = 1.0 / (knn_dist + 1e-8)
        weight = recip / recip.sum(dim=-1, keepdim=True)
        src = feats_sparse.permute(0, 2, 1)  # [B, S, C2], non-contiguous
        gathered = torch.gather(
            src.unsqueeze(1).expand(b, n, -1, c2), 2,
            knn_idx.unsqueeze(-1).expand(b, n, 3, c2))  # [B, N, 3, C2]
        interp = (gathered * weight.unsqueeze(-1)).sum(dim=2)  # [B, N, C2]
        x = torch.cat([feats_dense, interp.permute(0, 2, 1)], dim=1)
        return self.mlp(x)


batch = 16
num_dense = 4096
num_sparse = 1000
c_skip = 128
c_sparse = 256
mlp_hidden = 256
mlp_out = 128


def get_inputs():
    xyz_dense = torch.rand(batch, num_dense, 3)
    xyz_sparse = torch.rand(batch, num_sparse, 3)
    feats_dense = torch.randn(batch, c_skip, num_dense)
    feats_sparse = torch.randn(batch, c_sparse, num_sparse)
    return [xyz_dense, xyz_sparse, feats_dense, feats_sparse]


def get_init_inputs():
    return [c_skip, c_sparse, mlp_hidden, mlp_out]
