"""Small real models shared by the tests, the demo and the benchmarks."""

import torch


class SmallCnn(torch.nn.Module):
    """Two conv blocks and a classifier, for 3 x 32 x 32 images."""

    def __init__(self, classes: int = 10):
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(3, 16, 3, padding=1),
            torch.nn.BatchNorm2d(16),
            torch.nn.ReLU(),
            torch.nn.MaxPool2d(2),
            torch.nn.Conv2d(16, 32, 3, padding=1),
            torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(1),
        )
        self.classifier = torch.nn.Linear(32, classes)

    def forward(self, image):
        return self.classifier(torch.flatten(self.features(image), 1))


class TransformerBlock(torch.nn.Module):
    """Pre-norm self-attention and MLP, as in a small decoder layer."""

    def __init__(self, dim: int = 64, heads: int = 4):
        super().__init__()
        self.heads = heads
        self.norm1 = torch.nn.LayerNorm(dim)
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.proj = torch.nn.Linear(dim, dim)
        self.norm2 = torch.nn.LayerNorm(dim)
        self.mlp = torch.nn.Sequential(
            torch.nn.Linear(dim, 4 * dim), torch.nn.GELU(), torch.nn.Linear(4 * dim, dim)
        )

    def forward(self, x):
        batch, tokens, dim = x.shape
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)

        def split(t):
            return t.view(batch, tokens, self.heads, dim // self.heads).transpose(1, 2)

        scores = split(q) @ split(k).transpose(-2, -1) / (dim // self.heads) ** 0.5
        attended = (torch.softmax(scores, dim=-1) @ split(v)).transpose(1, 2).reshape(batch, tokens, dim)
        x = x + self.proj(attended)
        return x + self.mlp(self.norm2(x))


class Mlp(torch.nn.Module):
    """`layers` x Linear(width) with ReLU between."""

    def __init__(self, width: int = 256, layers: int = 4):
        super().__init__()
        blocks = []
        for index in range(layers):
            blocks.append(torch.nn.Linear(width, width))
            if index < layers - 1:
                blocks.append(torch.nn.ReLU())
        self.layers = torch.nn.Sequential(*blocks)

    def forward(self, x):
        return self.layers(x)


class Tiny(torch.nn.Module):
    """One add of two small tensors: what a call costs when there is almost nothing to compute."""

    def forward(self, x, y):
        return x + y
