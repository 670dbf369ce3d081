"""Graph-level mean pooling (readout): node features scattered into their graph's row by
scatter_add along dim 0, divided by each graph's node count, then tanh."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, num_graphs):
        super().__init__()
        self.num_graphs = num_graphs

    def forward(self, x, batch):
        index = batch[:, None].expand(-1, x.shape[1])
        sums = torch.zeros(self.num_graphs, x.shape[1], device=x.device).scatter_add(0, index, x)
        counts = torch.zeros(self.num_graphs, device=x.device).scatter_add(
            0, batch, torch.ones_like(batch, dtype=x.dtype))
        return torch.tanh(sums / counts.clamp(min=1.0)[:, None])


num_nodes = 1048576
dim = 128
num_graphs = 1024


def get_inputs():
    return [torch.randn(num_nodes, dim), torch.randint(0, num_graphs, (num_nodes,))]


def get_init_inputs():
    return [num_graphs]
