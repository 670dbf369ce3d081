"""CapsNet (Sabour et al.) on 28x28 digits: a 9x9 ReLU conv, primary capsules from a strided
9x9 conv reshaped into 8-d vectors and squashed, per-(input, output)-capsule transformation
matrices applied by broadcast matmul to get predictions u_hat, three iterations of routing by
agreement (softmax of logits over output capsules, weighted sum, squash, agreement dot
products added to the logits; u_hat detached inside the loop), then the margin loss against
the one-hot labels and the label-masked capsules fed to the reconstruction decoder."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def squash(s, dim=-1, eps=1e-8):
    sq_norm = (s * s).sum(dim=dim, keepdim=True)
    return sq_norm / (1.0 + sq_norm) * s / torch.sqrt(sq_norm + eps)


class Model(nn.Module):
    def __init__(self, conv_channels, caps_types, primary_dim, num_classes, out_dim,
                 routing_iters=3):
        super().__init__()
        self.conv1 = nn.Conv2d(1, conv_channels, kernel_size=9)
        self.primary = nn.Conv2d(conv_channels, caps_types * primary_dim, kernel_size=9, stride=2)
        self.caps_types, self.primary_dim = caps_types, primary_dim
        num_primary = caps_types * 6 * 6
        self.W = nn.Parameter(0.3 * torch.randn(1, num_primary, num_classes, out_dim, primary_dim))
        self.num_classes = num_classes
        self.routing_iters = routing_iters
        self.decoder = nn.Sequential(
            nn.Linear(num_classes * out_dim, 512), nn.ReLU(inplace=True),
            nn.Linear(512, 1024), nn.ReLU(inplace=True),
            nn.Linear(1024, 784), nn.Sigmoid(),
        )

    def forward(self, images, labels):
        B = images.size(0)
        x = F.relu(self.conv1(images))  # [B, C, 20, 20]
        u = self.primary(x)  # [B, types*dim, 6, 6]
        u = u.view(B, self.caps_types, self.primary_dim, 6, 6)
        u = u.permute(0, 1, 3, 4, 2).reshape(B, -1, self.primary_dim)
        u = squash(u)  # [B, N_in, 8]
        u_hat = torch.matmul(self.W, u[:, :, None, :, None]).squeeze(-1)  # [B, N_in, J, D]
        u_hat_detached = u_hat.detach()
        b = torch.zeros(B, u_hat.size(1), self.num_classes, device=u.device, dtype=u.dtype)
        for it in range(self.routing_iters):
            c = F.softmax(b, dim=2)
            if it == self.routing_iters - 1:
                v = squash((c.unsqueeze(-1) * u_hat).sum(dim=1))  # [B, J, D]
            else:
                v = squash((c.unsqueeze(-1) * u_hat_detached).sum(dim=1))
                b = b + (u_hat_detached * v.unsqueeze(1)).sum(dim=-1)
        lengths = v.norm(dim=-1)  # [B, J]
        t = F.one_hot(labels, self.num_classes).to(v.dtype)
        margin = t * F.relu(0.9 - lengths) ** 2 + 0.5 * (1 - t) * F.relu(lengths - 0.1) ** 2
        margin_loss = margin.sum(dim=1).mean()
        recon = self.decoder((v * t.unsqueeze(-1)).flatten(1))
        return lengths, margin_loss, recon.view(B, 1, 28, 28)


batch = 64
conv_channels = 256
caps_types = 32
primary_dim = 8
num_classes = 10
out_dim = 16


def get_inputs():
    images = torch.rand(batch, 1, 28, 28)
    labels = torch.randint(0, num_classes, (batch,))
    return [images, labels]


def get_init_inputs():
    return [conv_channels, caps_types, primary_dim, num_classes, out_dim]
