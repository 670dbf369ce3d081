"""A two-layer LSTM over a batch-first sequence; the last step's hidden state through a
linear classifier (KernelBench level-3 style)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, input_size, hidden, layers, classes):
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden, layers, batch_first=True)
        self.fc = nn.Linear(hidden, classes)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.fc(out[:, -1, :])


batch, seq, input_size, hidden, layers, classes = 16, 64, 128, 256, 2, 10


def get_inputs():
    return [torch.randn(batch, seq, input_size)]


def get_init_inputs():
    return [input_size, hidden, layers, classes]
