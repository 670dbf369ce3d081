"""Modern Hopfield retrieval (Ramsauer et al. 2020) in fp16: tied L2-normalised projection, three
fixed updates xi <- softmax(beta xi K^T) K with fp32 softmax, V read-out; output and max weight."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, dim, assoc_dim, beta=32.0, num_updates=3):
        super().__init__()
        self.num_updates = num_updates
        self.beta = beta
        self.w_k = nn.Linear(dim, assoc_dim, bias=False)  # shared by state and stored patterns
        self.w_v = nn.Linear(dim, assoc_dim, bias=False)
        self.w_o = nn.Linear(assoc_dim, dim, bias=False)
        self.to(torch.float16)

    def forward(self, state, stored):
        # state: [B, Q, dim] noisy query patterns; stored: [B, S, dim] memory patterns
        xi = F.normalize(self.w_k(state), dim=-1)
        keys = F.normalize(self.w_k(stored), dim=-1)
        values = self.w_v(stored)
        keys_t = keys.transpose(1, 2)
        for _ in range(self.num_updates):
            scores = torch.matmul(xi, keys_t).float() * self.beta
            xi = torch.matmul(scores.softmax(dim=-1).to(keys.dtype), keys)
        attn = (torch.matmul(xi, keys_t).float() * self.beta).softmax(dim=-1)
        out = self.w_o(torch.matmul(attn.to(values.dtype), values))
        return out, attn.amax(dim=-1)


batch = 16
num_queries = 1000
num_stored = 2048
dim = 512
assoc_dim = 256


def get_inputs():
    stored = torch.randn(batch, num_stored, dim)
    pick = torch.randint(0, num_stored, (batch, num_queries))
    state = torch.gather(stored, 1, pick[..., None].expand(-1, -1, dim))
    state = state + 0.7 * torch.randn(batch, num_queries, dim)
    return [state.to(torch.float16), stored.to(torch.float16)]


def get_init_inputs():
    return [dim, assoc_dim]
