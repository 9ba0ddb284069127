"""Calibration text for data-aware weight compression, as inputs of an exported LLM.

NNCF's data-aware 4-bit algorithms (AWQ, scale estimation) and its
mixed 4/8-bit choice of layers (a ``ratio`` below 1) read activations: they run the
model on samples. This module only turns plain text (one sample a line) into the
inputs the exported decoder takes, ``(tokens [1, S], {"input_pos": positions})``:

- a dynamic-length export gets each line in one call from position 0;
- a static export (one token a call) gets each line token by token, its positions
  counting up, so that the KV cache holds the line as it goes.

The algorithms are NNCF's, called by weight_compression.py (``compressed_module``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple, Union

import torch

#: The data-aware algorithms and NNCF's argument for each.
DATA_AWARE = ("awq", "scale_estimation", "gptq", "lora_correction")

Inputs = Tuple[torch.Tensor, Dict[str, torch.Tensor]]


def read_samples(path: Union[str, Path], count: int) -> List[str]:
    """The first `count` non-empty lines of a text file; refuses a missing or empty file."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"calibration dataset {path}: no such file")
    if count < 1:
        raise ValueError(f"num_samples is {count}; calibration takes at least one sample")
    lines = [line.strip() for line in path.read_text(encoding="utf-8", errors="replace").splitlines()]
    samples = [line for line in lines if line][:count]
    if not samples:
        raise ValueError(f"calibration dataset {path} has no text: give one sample a line")
    return samples


def load_tokenizer(path: Union[str, Path]) -> Any:
    """A tokenizer file the LLM runner reads too (tokenizer.json, tokenizer.model, tiktoken),
    through the executorch wheel's pytorch_tokenizers."""
    from pytorch_tokenizers import get_tokenizer

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"tokenizer {path}: no such file")
    return get_tokenizer(str(path))


def folder_tokenizer(folder: Union[str, Path]) -> Any:
    """The tokenizer of a Hugging Face model folder (its tokenizer.json or tokenizer.model)."""
    for name in ("tokenizer.json", "tokenizer.model"):
        if (Path(folder) / name).is_file():
            return load_tokenizer(Path(folder) / name)
    raise FileNotFoundError(f"{folder}: no tokenizer.json or tokenizer.model to tokenize the calibration text with")


def calibration_inputs(
    texts: Sequence[str],
    tokenizer: Any,
    *,
    vocab_size: int,
    max_seq_len: int,
    dynamic_shape: bool,
    bos_id: int,
) -> List[Inputs]:
    """The exported decoder's inputs for each text, tokenized with `tokenizer` (a
    pytorch_tokenizers tokenizer: ``encode(text, bos=, eos=)``), after the bos token.

    Refuses a tokenizer whose ids do not fit the model's `vocab_size`.
    """
    size = int(getattr(tokenizer, "n_words", 0) or 0)
    if size > vocab_size:
        raise ValueError(
            f"the tokenizer has {size} tokens and the model's embedding {vocab_size}: the tokenizer is not this model's"
        )
    inputs: List[Inputs] = []
    for text in texts:
        ids = [bos_id, *tokenizer.encode(text, bos=False, eos=False)][: max_seq_len - 1]
        if max(ids) >= vocab_size:
            raise ValueError(f"the tokenizer gives id {max(ids)} for a model of {vocab_size} tokens")
        if dynamic_shape:
            inputs.append((torch.tensor([ids]), {"input_pos": torch.tensor([0])}))
        else:
            inputs.extend((torch.tensor([[token]]), {"input_pos": torch.tensor([i])}) for i, token in enumerate(ids))
    return inputs
