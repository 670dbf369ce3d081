"""Calibrated prediction: softmax(logits / T), then the top-1 confidence and predicted class
(torch.max over the classes), plus the mean confidence."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, temperature):
        super().__init__()
        self.temperature = temperature

    def forward(self, logits):
        probs = torch.softmax(logits / self.temperature, dim=-1)
        conf, pred = torch.max(probs, dim=-1)
        return conf, pred, conf.mean()


batch = 16384
num_classes = 4096
temperature = 1.7


def get_inputs():
    return [torch.randn(batch, num_classes) * 3]


def get_init_inputs():
    return [temperature]
