"""A bidirectional single-layer GRU; the mean over time of its output."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, input_size, hidden):
        super().__init__()
        self.gru = nn.GRU(input_size, hidden, batch_first=True, bidirectional=True)

    def forward(self, x):
        return self.gru(x)[0].mean(dim=1)


batch, seq, input_size, hidden = 16, 48, 64, 128


def get_inputs():
    return [torch.randn(batch, seq, input_size)]


def get_init_inputs():
    return [input_size, hidden]
