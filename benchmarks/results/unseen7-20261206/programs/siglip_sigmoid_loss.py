"""SigLIP pairwise sigmoid loss for image-text pretraining: L2-normalised image and text
embeddings, logits = img @ txt.T * exp(t') + b with a learned temperature and bias
(initialised to log 10 and -10), labels 2 * I - 1, loss -sum(logsigmoid(labels * logits)) / n."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.t_prime = nn.Parameter(torch.tensor(math.log(10.0)))
        self.bias = nn.Parameter(torch.tensor(-10.0))

    def forward(self, img_emb, txt_emb):
        n = img_emb.shape[0]
        zimg = F.normalize(img_emb, dim=-1)
        ztxt = F.normalize(txt_emb, dim=-1)
        logits = zimg @ ztxt.t() * self.t_prime.exp() + self.bias
        labels = 2 * torch.eye(n, device=logits.device, dtype=logits.dtype) - 1
        return -F.logsigmoid(labels * logits).sum() / n


batch = 8192
dim = 1024


def get_inputs():
    img = torch.randn(batch, dim)
    txt = img * 0.3 + torch.randn(batch, dim)
    return [img, txt]


def get_init_inputs():
    return []
