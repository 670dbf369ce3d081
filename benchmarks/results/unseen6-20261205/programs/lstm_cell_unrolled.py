"""An LSTM cell stepped by hand over a fixed number of time steps; the hidden states of
every step are stacked, and a linear classifier reads the last one."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, num_classes):
        super().__init__()
        self.cell = nn.LSTMCell(input_size, hidden_size)
        self.head = nn.Linear(hidden_size, num_classes)

    def forward(self, x):
        h = x.new_zeros(x.size(1), self.cell.hidden_size)
        c = torch.zeros_like(h)
        states = []
        for t in range(x.size(0)):
            h, c = self.cell(x[t], (h, c))
            states.append(h)
        hs = torch.stack(states)
        return self.head(hs[-1]), hs


_time_steps = 16  # fixed unroll length, not a size
batch, input_size, hidden_size, num_classes = 512, 1024, 1024, 256


def get_inputs():
    return [torch.randn(_time_steps, batch, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_classes]
