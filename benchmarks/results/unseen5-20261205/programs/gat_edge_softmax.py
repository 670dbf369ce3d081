"""One graph-attention layer: projected node features, per-edge attention logits from the
source and destination nodes (leaky ReLU), a softmax over each node's incoming edges
(scatter max, exp, scatter sum), weighted messages summed into the destinations, ELU."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_dim, out_dim, heads):
        super().__init__()
        self.heads = heads
        self.out_dim = out_dim
        self.proj = nn.Linear(in_dim, heads * out_dim, bias=False)
        self.att_src = nn.Parameter(torch.randn(1, heads, out_dim) * 0.1)
        self.att_dst = nn.Parameter(torch.randn(1, heads, out_dim) * 0.1)
        self.bias = nn.Parameter(torch.zeros(heads * out_dim))

    def forward(self, x, src, dst):
        n = x.shape[0]
        loop = torch.arange(n, device=x.device)
        src = torch.cat([src, loop])
        dst = torch.cat([dst, loop])

        h = self.proj(x).view(n, self.heads, self.out_dim)
        a_src = (h * self.att_src).sum(dim=-1)
        a_dst = (h * self.att_dst).sum(dim=-1)
        e = F.leaky_relu(a_src.index_select(0, src) + a_dst.index_select(0, dst), 0.2)

        index = dst.unsqueeze(-1).expand_as(e)
        e_max = torch.zeros(n, self.heads, device=x.device, dtype=x.dtype)
        e_max = e_max.scatter_reduce(0, index, e, reduce="amax", include_self=False)
        p = (e - e_max.index_select(0, dst)).exp()
        denom = torch.zeros(n, self.heads, device=x.device, dtype=x.dtype)
        denom = denom.scatter_add(0, index, p)
        alpha = p / (denom.index_select(0, dst) + 1e-16)

        msg = h.index_select(0, src) * alpha.unsqueeze(-1)
        out = torch.zeros_like(h).index_add_(0, dst, msg)
        out = out.reshape(n, self.heads * self.out_dim) + self.bias
        return F.elu(out)


num_nodes, num_edges, in_dim, out_dim, heads = 32768, 262144, 256, 64, 4


def get_inputs():
    x = torch.randn(num_nodes, in_dim)
    src = torch.randint(0, num_nodes, (num_edges,))
    dst = torch.randint(0, num_nodes, (num_edges,))
    return [x, src, dst]


def get_init_inputs():
    return [in_dim, out_dim, heads]
