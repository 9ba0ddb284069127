"""Models from transformers other than decoder LLMs lower whole and run like eager: each
is built small from its config with random weights (nothing is downloaded), exported
as transformers defines it, and two inputs run through one loaded method."""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"  # before transformers reads it: nothing is downloaded

from typing import Callable, Dict, Tuple  # noqa: E402

import pytest  # noqa: E402
import torch  # noqa: E402
from harness import check_against_eager  # noqa: E402

transformers = pytest.importorskip("transformers", reason="the huggingface extra installs transformers")

ENCODER = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64)


class FirstOutput(torch.nn.Module):
    """The model's first output (last hidden state, or logits), as one tensor."""

    def __init__(self, model: torch.nn.Module, **options) -> None:
        super().__init__()
        self.model = model.eval()
        self.options = options

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        return self.model(inputs, **self.options)[0]


def tokens(length: int = 12) -> Callable[[], torch.Tensor]:
    return lambda: torch.randint(0, 100, (1, length))


def image(size: int = 32) -> Callable[[], torch.Tensor]:
    return lambda: torch.randn(1, 3, size, size)


def bert():
    return FirstOutput(transformers.BertModel(transformers.BertConfig(vocab_size=100, **ENCODER))), tokens()


def vit():
    config = transformers.ViTConfig(image_size=32, patch_size=8, **ENCODER)
    return FirstOutput(transformers.ViTModel(config, add_pooling_layer=False)), image()


def resnet():
    config = transformers.ResNetConfig(embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], layer_type="basic")
    return FirstOutput(transformers.ResNetModel(config)), image()


def convnext():
    config = transformers.ConvNextConfig(num_stages=2, hidden_sizes=[16, 32], depths=[1, 1])
    return FirstOutput(transformers.ConvNextModel(config)), image()


def swin():
    config = transformers.SwinConfig(image_size=32, patch_size=4, embed_dim=16, depths=[1, 1], num_heads=[2, 2])
    config.window_size = 4
    return FirstOutput(transformers.SwinModel(config)), image()


def clip_vision():
    config = transformers.CLIPVisionConfig(image_size=32, patch_size=8, **ENCODER)
    return FirstOutput(transformers.CLIPVisionModel(config)), image()


def wav2vec2():
    config = transformers.Wav2Vec2Config(
        **ENCODER,
        conv_dim=(16, 16),
        conv_stride=(5, 2),
        conv_kernel=(10, 3),
        num_conv_pos_embeddings=16,
        num_conv_pos_embedding_groups=2,
    )
    return FirstOutput(transformers.Wav2Vec2Model(config)), lambda: torch.randn(1, 1600)


def whisper_encoder():
    config = transformers.WhisperConfig(
        d_model=32,
        encoder_layers=2,
        encoder_attention_heads=2,
        encoder_ffn_dim=64,
        decoder_layers=1,
        decoder_attention_heads=2,
        decoder_ffn_dim=64,
        num_mel_bins=16,
        max_source_positions=16,
    )
    # The encoder takes 2 * max_source_positions frames of num_mel_bins.
    return FirstOutput(transformers.WhisperModel(config).get_encoder()), lambda: torch.randn(1, 16, 32)


def gpt2():
    config = transformers.GPT2Config(vocab_size=100, n_embd=32, n_layer=2, n_head=2, n_positions=64)
    return FirstOutput(transformers.GPT2LMHeadModel(config), use_cache=False), tokens()


MODELS: Dict[str, Callable[[], Tuple[torch.nn.Module, Callable[[], torch.Tensor]]]] = {
    "bert": bert,
    "vit": vit,
    "resnet": resnet,
    "convnext": convnext,
    "swin": swin,
    "clip_vision": clip_vision,
    "wav2vec2": wav2vec2,
    "whisper_encoder": whisper_encoder,
    "gpt2": gpt2,
}


@pytest.mark.parametrize("name", list(MODELS))
def test_model_lowers_whole_and_runs_like_eager(name, tmp_path):
    model, make_input = MODELS[name]()
    program = check_against_eager(model, [(make_input(),), (make_input(),)], tmp_path, rtol=1e-4, atol=1e-4)
    assert program.cpu_ops() == []
