"""Tacotron 2 location-sensitive attention over a few teacher-forced decoder steps: the
encoder memory is projected once, each step projects the attention-RNN query, convolves the
stacked (previous, cumulative) alignments with a width-31 Conv1d and projects the result,
scores v^T tanh(q + loc + mem), masks padded encoder frames (lengths -> arange mask) with
-inf, softmaxes over time, takes the context by bmm and accumulates the cumulative alignment
in place. Returns the stacked contexts and alignments."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class LocationLayer(nn.Module):
    def __init__(self, n_filters, kernel_size, attention_dim):
        super().__init__()
        self.location_conv = nn.Conv1d(2, n_filters, kernel_size, padding=(kernel_size - 1) // 2,
                                       bias=False)
        self.location_dense = nn.Linear(n_filters, attention_dim, bias=False)

    def forward(self, attention_weights_cat):
        processed = self.location_conv(attention_weights_cat)  # [B, F, T]
        return self.location_dense(processed.transpose(1, 2))  # [B, T, A]


class Model(nn.Module):
    def __init__(self, query_dim, memory_dim, attention_dim, n_filters, kernel_size=31):
        super().__init__()
        self.query_layer = nn.Linear(query_dim, attention_dim, bias=False)
        self.memory_layer = nn.Linear(memory_dim, attention_dim, bias=False)
        self.v = nn.Linear(attention_dim, 1, bias=False)
        self.location_layer = LocationLayer(n_filters, kernel_size, attention_dim)
        self.score_mask_value = -float("inf")

    def get_alignment_energies(self, query, processed_memory, attention_weights_cat):
        processed_query = self.query_layer(query.unsqueeze(1))  # [B, 1, A]
        processed_attention = self.location_layer(attention_weights_cat)  # [B, T, A]
        energies = self.v(torch.tanh(processed_query + processed_attention + processed_memory))
        return energies.squeeze(-1)  # [B, T]

    def forward(self, queries, memory, memory_lengths):
        B, T, _ = memory.shape
        processed_memory = self.memory_layer(memory)
        mask = torch.arange(T, device=memory.device)[None, :] >= memory_lengths[:, None]
        attention_weights = memory.new_zeros(B, T)
        attention_weights_cum = memory.new_zeros(B, T)
        contexts, alignments = [], []
        for step in range(queries.shape[1]):
            weights_cat = torch.cat(
                (attention_weights.unsqueeze(1), attention_weights_cum.unsqueeze(1)), dim=1)
            alignment = self.get_alignment_energies(queries[:, step], processed_memory,
                                                    weights_cat)
            alignment = alignment.masked_fill(mask, self.score_mask_value)
            attention_weights = F.softmax(alignment, dim=1)
            attention_weights_cum += attention_weights
            context = torch.bmm(attention_weights.unsqueeze(1), memory).squeeze(1)
            contexts.append(context)
            alignments.append(attention_weights)
        return torch.stack(contexts, dim=1), torch.stack(alignments, dim=1)


batch = 64
encoder_steps = 512
decoder_steps = 4
query_dim = 1024
memory_dim = 512
attention_dim = 128
location_filters = 32


def get_inputs():
    queries = torch.randn(batch, decoder_steps, query_dim)
    memory = torch.randn(batch, encoder_steps, memory_dim)
    lengths = torch.randint(encoder_steps // 2, encoder_steps + 1, (batch,))
    lengths[0] = encoder_steps
    return [queries, memory, lengths]


def get_init_inputs():
    return [query_dim, memory_dim, attention_dim, location_filters]
