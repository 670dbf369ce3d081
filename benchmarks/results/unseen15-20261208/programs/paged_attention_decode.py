"""vLLM-style paged attention for one decode step: fp16 KV blocks gathered through a block table,
GQA."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, num_heads=32, num_kv_heads=8):
        super().__init__()
        self.num_heads, self.num_kv_heads = num_heads, num_kv_heads

    def forward(self, query, key_cache, value_cache, block_tables, context_lens):
        # query [S, H, D]; caches [num_blocks, block_size, KVH, D]; block_tables [S, max_blocks]
        s, _, d = query.shape
        block_size = key_cache.shape[1]
        group = self.num_heads // self.num_kv_heads
        max_ctx = block_tables.shape[1] * block_size
        tables = block_tables.long()
        keys = key_cache[tables].view(s, max_ctx, self.num_kv_heads, d)
        values = value_cache[tables].view(s, max_ctx, self.num_kv_heads, d)
        q = query.view(s, self.num_kv_heads, group, d).float() * d ** -0.5
        scores = torch.einsum("skgd,stkd->skgt", q, keys.float())
        pos = torch.arange(max_ctx, device=query.device)
        live = pos[None, :] < context_lens[:, None].long()  # [S, T]
        scores = scores.masked_fill(~live[:, None, None, :], float("-inf"))
        probs = scores.softmax(dim=-1)
        out = torch.einsum("skgt,stkd->skgd", probs, values.float())
        return out.reshape(s, self.num_heads, d).to(query.dtype)


num_seqs = 16
num_blocks = 1024
block_size = 16
max_blocks_per_seq = 64
head_dim = 128
_NUM_HEADS = 32
_NUM_KV_HEADS = 8


def get_inputs():
    query = torch.randn(num_seqs, _NUM_HEADS, head_dim).half()
    key_cache = torch.randn(num_blocks, block_size, _NUM_KV_HEADS, head_dim).half()
    value_cache = torch.randn(num_blocks, block_size, _NUM_KV_HEADS, head_dim).half()
    block_tables = torch.randint(0, num_blocks, (num_seqs, max_blocks_per_seq),
                                 dtype=torch.int32)
    context_lens = torch.randint(1, max_blocks_per_seq * block_size + 1, (num_seqs,),
                                 dtype=torch.int32)
    return [query, key_cache, value_cache, block_tables, context_lens]


def get_init_inputs():
    return [_NUM_HEADS, _NUM_KV_HEADS]
