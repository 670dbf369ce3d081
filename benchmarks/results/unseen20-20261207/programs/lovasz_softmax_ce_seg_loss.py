"""Semantic-segmentation training loss: per-image Lovasz-Softmax (Berman et al., CVPR 2018)
plus cross-entropy, with a void label.

Per image and class, errors |onehot - p| are sorted descending, the ground truth is permuted
the same way (gather) and the Lovasz-extension gradient of the Jaccard loss comes from cumsum
over the sorted foreground; only classes present in an image are averaged. Pixels labelled
`num_classes` are void (zero error, so they sort last; ignored by cross_entropy). Uses sort,
gather, cumsum, one_hot, masked reductions and F.cross_entropy with ignore_index.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, num_classes, lovasz_weight):
        super().__init__()
        self.num_classes = num_classes
        self.lovasz_weight = lovasz_weight

    def forward(self, logits, labels):
        # logits [B, C, H, W]; labels [B, H, W] in [0, C], C meaning void
        b, c = logits.shape[:2]
        probs = torch.softmax(logits, dim=1).flatten(2)  # [B, C, N]
        lab = labels.flatten(1)  # [B, N]
        valid = (lab < c).unsqueeze(1).to(probs.dtype)  # [B, 1, N]
        fg = F.one_hot(lab.clamp(max=c - 1), c).permute(0, 2, 1).to(probs.dtype) * valid

        errors = (fg - probs).abs() * valid
        errors_sorted, perm = torch.sort(errors, dim=-1, descending=True)
        fg_sorted = torch.gather(fg, -1, perm)
        gts = fg_sorted.sum(dim=-1, keepdim=True)
        intersection = gts - fg_sorted.cumsum(dim=-1)
        union = gts + (1.0 - fg_sorted).cumsum(dim=-1)
        jaccard = 1.0 - intersection / union
        grad = torch.cat([jaccard[..., :1], jaccard[..., 1:] - jaccard[..., :-1]], dim=-1)
        class_loss = (errors_sorted * grad).sum(dim=-1)  # [B, C]

        present = (gts.squeeze(-1) > 0).to(probs.dtype)
        per_image = (class_loss * present).sum(-1) / present.sum(-1).clamp(min=1.0)
        lovasz = per_image.mean()
        ce = F.cross_entropy(logits, labels, ignore_index=c)
        return ce + self.lovasz_weight * lovasz, lovasz, ce


batch = 4
num_classes = 21
height = 64
width = 64
lovasz_weight = 0.5


def get_inputs():
    return [
        torch.randn(batch, num_classes, height, width),
        torch.randint(0, num_classes + 1, (batch, height, width)),
    ]


def get_init_inputs():
    return [num_classes, lovasz_weight]
