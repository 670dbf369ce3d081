"""Bag-of-words text classifier: nn.EmbeddingBag with offsets (mean mode), a Linear, ReLU
and a second Linear."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, vocab, dim, classes):
        super().__init__()
        self.bag = nn.EmbeddingBag(vocab, dim, mode="mean")
        self.fc1 = nn.Linear(dim, dim)
        self.fc2 = nn.Linear(dim, classes)

    def forward(self, tokens, offsets):
        return self.fc2(torch.relu(self.fc1(self.bag(tokens, offsets))))


vocab, dim, classes, bags, per_bag = 50000, 256, 16, 2048, 32


def get_inputs():
    tokens = torch.randint(0, vocab, (bags * per_bag,))
    offsets = torch.arange(0, bags * per_bag, per_bag)
    return [tokens, offsets]


def get_init_inputs():
    return [vocab, dim, classes]
