"""EdgeConv on a point cloud: k nearest neighbours from pairwise Euclidean distances,
edge features (neighbour minus centre, centre) through a shared Linear and ReLU, then a
max over the neighbours."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_features, out_features, k):
        super().__init__()
        self.k = k
        self.edge_mlp = nn.Linear(2 * in_features, out_features)

    def forward(self, points, feats):
        b, n, c = feats.shape
        dist = torch.cdist(points, points)
        knn = dist.topk(self.k, dim=-1, largest=False).indices  # [b, n, k]
        flat = knn.reshape(b, n * self.k, 1).expand(-1, -1, c)
        neighbours = torch.gather(feats, 1, flat).view(b, n, self.k, c)
        centre = feats.unsqueeze(2).expand_as(neighbours)
        edges = torch.cat((neighbours - centre, centre), dim=-1)
        h = F.relu(self.edge_mlp(edges))
        return h.max(dim=2).values


batch = 16
num_points = 1024
in_features = 64
out_features = 128
k = 16


def get_inputs():
    return [torch.randn(batch, num_points, 3), torch.randn(batch, num_points, in_features)]


def get_init_inputs():
    return [in_features, out_features, k]
