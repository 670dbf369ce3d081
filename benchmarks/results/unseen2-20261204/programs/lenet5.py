"""LeNet-5: two conv + ReLU + max-pool stages, flatten, three linear layers."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.c1, self.c2 = nn.Conv2d(1, 6, 5), nn.Conv2d(6, 16, 5)
        self.f1, self.f2, self.f3 = (
            nn.Linear(16 * 5 * 5, 120),
            nn.Linear(120, 84),
            nn.Linear(84, classes),
        )

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.c1(x)), 2)
        x = F.max_pool2d(F.relu(self.c2(x)), 2)
        x = x.view(x.size(0), -1)
        return self.f3(F.relu(self.f2(F.relu(self.f1(x)))))


batch, classes = 256, 10


def get_inputs():
    return [torch.randn(batch, 1, 32, 32)]


def get_init_inputs():
    return [classes]
