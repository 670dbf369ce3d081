"""Integer tensor chains: argmax -> one_hot -> clamp/where with integer labels, then
a float result from the integer masks."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.num_classes = num_classes

    def forward(self, logits, labels):
        pred = logits.argmax(dim=-1)
        oh = F.one_hot(pred, self.num_classes)
        lab = torch.clamp(labels - 1, min=0, max=self.num_classes - 1)
        lab_oh = F.one_hot(lab, self.num_classes)
        agree = torch.where(oh == lab_oh, oh + lab_oh, torch.zeros_like(oh))
        return agree.float() * logits


batch = 65536
num_classes = 1000


def get_inputs():
    return [torch.randn(batch, num_classes), torch.randint(0, num_classes + 1, (batch,))]


def get_init_inputs():
    return [num_classes]
