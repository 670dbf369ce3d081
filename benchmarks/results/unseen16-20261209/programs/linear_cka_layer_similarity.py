"""Linear CKA (Kornblith et al. 2019) between every layer of two networks: centred Gram matrices,
HSIC as a flattened Gram-Gram matmul, normalised by the self-HSIC terms."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, eps=1e-12):
        super().__init__()
        self.eps = eps

    def forward(self, feats_a, feats_b):
        # feats_a: [La, N, Da]; feats_b: [Lb, N, Db] activations on the same N examples
        xa = feats_a - feats_a.mean(dim=1, keepdim=True)
        xb = feats_b - feats_b.mean(dim=1, keepdim=True)
        gram_a = torch.bmm(xa, xa.transpose(1, 2)).flatten(1)  # [La, N*N]
        gram_b = torch.bmm(xb, xb.transpose(1, 2)).flatten(1)  # [Lb, N*N]
        hsic = gram_a @ gram_b.t()  # [La, Lb]
        self_a = gram_a.square().sum(dim=1)
        self_b = gram_b.square().sum(dim=1)
        return hsic / torch.sqrt(self_a[:, None] * self_b[None, :] + self.eps)


layers_a = 12
layers_b = 8
num_examples = 2048
dim_a = 768
dim_b = 1000


def get_inputs():
    shared = torch.randn(num_examples, 64)
    mix_a = torch.randn(layers_a, 64, dim_a) * 0.3
    mix_b = torch.randn(layers_b, 64, dim_b) * 0.3
    feats_a = torch.randn(layers_a, num_examples, dim_a) + shared @ mix_a
    feats_b = torch.relu(torch.randn(layers_b, num_examples, dim_b) + shared @ mix_b)
    return [feats_a, feats_b]


def get_init_inputs():
    return []
