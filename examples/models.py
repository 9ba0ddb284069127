"""Small real models shared by the tests, the demo and the benchmarks."""

from typing import Optional

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
        self.mlp = torch.nn.Sequential(torch.nn.Linear(dim, 4 * dim), torch.nn.GELU(), torch.nn.Linear(4 * dim, dim))

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


def small_llama(
    *,
    enable_dynamic_shape: bool = False,
    layers: int = 6,
    max_seq_len: int = 256,
    dim: int = 288,
    heads: Optional[int] = None,
    kv_heads: Optional[int] = None,
) -> torch.nn.Module:
    """The Llama of the executorch wheel with a KV cache in mutable buffers, random weights.

    By default dim 288, 6 heads, 2 KV heads, vocab 32000: the size of the stories15M checkpoint.
    Below dim 1024 heads are 48 wide with a third as many KV heads; from dim 1024 there are
    32 heads and 8 KV heads (with 16 layers, dim 2048 is the shape of Llama 3.2 1B), unless
    `heads` and `kv_heads` say otherwise.
    With `enable_dynamic_shape` its code is written for a dynamic sequence length
    (it slices its caches by ``input_pos[0].item()``), as ExecuTorch's LLM export does.
    Call it as ``model(tokens, {"input_pos": positions})``.
    """
    from executorch.examples.models.llama.llama_transformer import construct_transformer
    from executorch.examples.models.llama.model_args import ModelArgs

    heads = heads or (max(1, dim // 48) if dim < 1024 else 32)
    kv_heads = kv_heads or (max(1, heads // 3) if dim < 1024 else 8)
    args = ModelArgs(
        dim=dim,
        n_layers=layers,
        n_heads=heads,
        n_kv_heads=kv_heads,
        vocab_size=32000,
        max_seq_len=max_seq_len,
        max_context_len=max_seq_len,
        use_kv_cache=True,
        enable_dynamic_shape=enable_dynamic_shape,
    )
    return construct_transformer(args).eval()
