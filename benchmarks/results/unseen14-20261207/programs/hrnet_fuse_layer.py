"""HRNet-W32 three-resolution stage: per-branch BasicBlocks and the multi-scale fusion unit."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def _bn(channels):
    bn = nn.BatchNorm2d(channels, momentum=0.1)
    with torch.no_grad():
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.uniform_(-0.2, 0.2)
        bn.running_mean.uniform_(-0.2, 0.2)
        bn.running_var.uniform_(0.5, 1.5)
    return bn


class BasicBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = _bn(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = _bn(channels)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + x)


class Model(nn.Module):
    def __init__(self, base_channels, num_branches=3):
        super().__init__()
        chans = [base_channels * 2 ** i for i in range(num_branches)]
        self.num_branches = num_branches
        self.branches = nn.ModuleList(BasicBlock(c) for c in chans)
        self.fuse = nn.ModuleList()
        for i in range(num_branches):
            row = nn.ModuleList()
            for j in range(num_branches):
                if j > i:
                    row.append(nn.Sequential(
                        nn.Conv2d(chans[j], chans[i], 1, bias=False), _bn(chans[i]),
                        nn.Upsample(scale_factor=2 ** (j - i), mode="nearest")))
                elif j == i:
                    row.append(nn.Identity())
                else:
                    steps = []
                    for k in range(i - j):
                        last = k == i - j - 1
                        cout = chans[i] if last else chans[j]
                        steps += [nn.Conv2d(chans[j], cout, 3, 2, 1, bias=False), _bn(cout)]
                        if not last:
                            steps.append(nn.ReLU())
                    row.append(nn.Sequential(*steps))
            self.fuse.append(row)
        self.eval()

    def forward(self, x0, x1, x2):
        xs = [branch(x) for branch, x in zip(self.branches, (x0, x1, x2), strict=True)]
        outs = []
        for i in range(self.num_branches):
            y = xs[0] if i == 0 else self.fuse[i][0](xs[0])
            for j in range(1, self.num_branches):
                y = y + (xs[j] if i == j else self.fuse[i][j](xs[j]))
            outs.append(F.relu(y))
        return tuple(outs)


batch = 32
base_channels = 32
height = 64
width = 48


def get_inputs():
    return [torch.randn(batch, base_channels * 2 ** i, height // 2 ** i, width // 2 ** i)
            for i in range(3)]


def get_init_inputs():
    return [base_channels]
