"""Two-layer GCN (Kipf and Welling) on a batch of graphs with dense adjacency: self loops
added, symmetric normalisation D^-1/2 (A + I) D^-1/2 from the degrees, A_hat X W twice with a
ReLU between, and log-softmax node class scores."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_dim, hidden, num_classes):
        super().__init__()
        self.lin1 = nn.Linear(in_dim, hidden, bias=False)
        self.bias1 = nn.Parameter(torch.zeros(hidden))
        self.lin2 = nn.Linear(hidden, num_classes, bias=False)
        self.bias2 = nn.Parameter(torch.zeros(num_classes))

    def forward(self, x, adj):
        n = adj.shape[-1]
        a = adj.to(x.dtype) + torch.eye(n, device=x.device, dtype=x.dtype)
        dinv = a.sum(dim=-1).pow(-0.5)
        a_hat = dinv.unsqueeze(-1) * a * dinv.unsqueeze(-2)
        h = torch.relu(a_hat @ self.lin1(x) + self.bias1)
        h = a_hat @ self.lin2(h) + self.bias2
        return torch.log_softmax(h, dim=-1)


batch = 32
nodes = 1024
in_dim = 512
hidden = 256
num_classes = 40


def get_inputs():
    x = torch.randn(batch, nodes, in_dim)
    upper = torch.rand(batch, nodes, nodes) < 0.01
    upper = torch.triu(upper, diagonal=1)
    adj = upper | upper.transpose(1, 2)  # symmetric, no self loops
    return [x, adj]


def get_init_inputs():
    return [in_dim, hidden, num_classes]
