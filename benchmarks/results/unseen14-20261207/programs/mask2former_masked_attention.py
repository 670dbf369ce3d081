"""Mask2Former decoder layer: mask prediction, masked cross-attention, self-attention and FFN."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)
        self.o = nn.Linear(dim, dim)

    def forward(self, q_in, k_in, v_in, mask=None):
        b, nq, c = q_in.shape
        nk = k_in.size(1)
        hd = c // self.heads
        q = self.q(q_in).view(b, nq, self.heads, hd).transpose(1, 2)
        k = self.k(k_in).view(b, nk, self.heads, hd).transpose(1, 2)
        v = self.v(v_in).view(b, nk, self.heads, hd).transpose(1, 2)
        scores = (q * hd ** -0.5) @ k.transpose(-2, -1)
        if mask is not None:
            scores = scores.masked_fill(mask[:, None], float("-inf"))
        out = scores.softmax(dim=-1) @ v
        return self.o(out.transpose(1, 2).reshape(b, nq, c))


class Model(nn.Module):
    def __init__(self, hidden, num_queries, num_classes, ffn_dim, heads=8):
        super().__init__()
        self.query_pos = nn.Parameter(torch.randn(num_queries, hidden))
        self.level_embed = nn.Parameter(torch.randn(hidden))
        self.decoder_norm = nn.LayerNorm(hidden)
        self.class_embed = nn.Linear(hidden, num_classes + 1)
        self.mask_embed = nn.Sequential(
            nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
            nn.Linear(hidden, hidden))
        self.cross_attn = Attention(hidden, heads)
        self.norm1 = nn.LayerNorm(hidden)
        self.self_attn = Attention(hidden, heads)
        self.norm2 = nn.LayerNorm(hidden)
        self.ffn = nn.Sequential(nn.Linear(hidden, ffn_dim), nn.ReLU(),
                                 nn.Linear(ffn_dim, hidden))
        self.norm3 = nn.LayerNorm(hidden)

    def forward(self, queries, memory, memory_pos, mask_features):
        # queries [B, Q, C]; memory, memory_pos [B, C, h, w]; mask_features [B, C, 4h, 4w]
        b, c, h, w = memory.shape
        decoded = self.decoder_norm(queries)
        class_logits = self.class_embed(decoded)
        mask_emb = self.mask_embed(decoded)
        mask_logits = torch.einsum("bqc,bchw->bqhw", mask_emb, mask_features)
        attn = F.interpolate(mask_logits, size=(h, w), mode="bilinear", align_corners=False)
        attn_mask = attn.sigmoid().flatten(2) < 0.5  # [B, Q, hw], True = not attended
        attn_mask = attn_mask & ~attn_mask.all(dim=-1, keepdim=True)

        mem = memory.flatten(2).transpose(1, 2) + self.level_embed
        pos = memory_pos.flatten(2).transpose(1, 2)
        qpos = self.query_pos.unsqueeze(0)
        tgt = self.norm1(queries + self.cross_attn(queries + qpos, mem + pos, mem, attn_mask))
        tgt = self.norm2(tgt + self.self_attn(tgt + qpos, tgt + qpos, tgt))
        tgt = self.norm3(tgt + self.ffn(tgt))
        return tgt, class_logits, mask_logits


batch = 16
num_queries = 100
hidden = 256
num_classes = 133
ffn_dim = 2048
feat_h = 32
feat_w = 32


def get_inputs():
    queries = torch.randn(batch, num_queries, hidden)
    memory = torch.randn(batch, hidden, feat_h, feat_w)
    memory_pos = torch.randn(batch, hidden, feat_h, feat_w)
    mask_features = torch.randn(batch, hidden, 4 * feat_h, 4 * feat_w)
    return [queries, memory, memory_pos, mask_features]


def get_init_inputs():
    return [hidden, num_queries, num_classes, ffn_dim]
