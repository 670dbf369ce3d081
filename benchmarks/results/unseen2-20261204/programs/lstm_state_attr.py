"""An LSTM whose initial states are tensors made in the constructor (plain attributes,
moved to the input's device in forward), as model scripts often write them."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, input_size, hidden, layers, classes, batch):
        super().__init__()
        self.h0 = torch.randn(layers, batch, hidden)
        self.c0 = torch.randn(layers, batch, hidden)
        self.lstm = nn.LSTM(input_size, hidden, layers, batch_first=True)
        self.fc = nn.Linear(hidden, classes)

    def forward(self, x):
        self.h0 = self.h0.to(x.device)
        self.c0 = self.c0.to(x.device)
        out, (hn, cn) = self.lstm(x, (self.h0, self.c0))
        return self.fc(out[:, -1, :])


batch, seq, input_size, hidden, layers, classes = 10, 32, 64, 128, 2, 10


def get_inputs():
    return [torch.randn(batch, seq, input_size)]


def get_init_inputs():
    return [input_size, hidden, layers, classes, batch]
