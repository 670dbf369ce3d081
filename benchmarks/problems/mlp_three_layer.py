"""Three-layer MLP: Linear-GELU-Linear-SiLU-Linear."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_features, hidden, out_features):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, out_features)

    def forward(self, x):
        x = F.gelu(self.fc1(x))
        x = F.silu(self.fc2(x))
        return self.fc3(x)


batch = 4096
in_features = 2048
hidden = 4096
out_features = 1024


def get_inputs():
    return [torch.randn(batch, in_features)]


def get_init_inputs():
    return [in_features, hidden, out_features]
