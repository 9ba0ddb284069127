"""Greedy generation with an encoder-decoder .pte (encoder_decoder.py's layout) from Python.

ExecuTorch's ASR runner does this in C++; its Python wheel has no binding for it, so
this is the loop it runs, through ``executorch.runtime``: the encoder once, then the
decoder one token a call, the prompt first, each new token the argmax of the logits,
until an end-of-sequence id or ``max_new_tokens``.

Example (Whisper; docs/huggingface.md)::

    import executorch_openvino  # registers the delegate the .pte names
    from transformers import WhisperProcessor

    processor = WhisperProcessor.from_pretrained("whisper-tiny")
    features = processor(audio, sampling_rate=16000, return_tensors="pt").input_features
    runner = EncoderDecoderRunner("whisper.pte")
    prompt = processor.tokenizer.convert_tokens_to_ids(
        ["<|startoftranscript|>", "<|en|>", "<|transcribe|>", "<|notimestamps|>"])
    text = processor.tokenizer.decode(runner.generate(features, prompt), skip_special_tokens=True)
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional, Sequence, Union

import torch

from .encoder_decoder import DECODER_METHOD, ENCODER_METHOD


class EncoderDecoderRunner:
    """Loads the program once; :meth:`generate` runs one input through both methods."""

    def __init__(self, program: Union[str, Path]) -> None:
        from executorch.runtime import Runtime

        self._program = Runtime.get().load_program(Path(program))
        self._encoder = self._program.load_method(ENCODER_METHOD)
        self._decoder = self._program.load_method(DECODER_METHOD)
        self.start_id = int(self._constant("decoder_start_token_id"))
        self.eos_ids = [int(token) for token in self._constant("get_eos_ids", [])]
        self.max_seq_len = int(self._constant("get_max_seq_len"))

    def _constant(self, name: str, default: object = None) -> object:
        if name not in self._program.method_names:
            if default is None:
                raise ValueError(f"the program has no method {name!r}; was it exported by export_encoder_decoder?")
            return default
        value = self._program.load_method(name).execute([])
        return value if name == "get_eos_ids" else value[0]

    def encode(self, inputs: torch.Tensor) -> torch.Tensor:
        """The encoder's hidden states for Whisper's features or a text encoder's token ids."""
        return self._encoder.execute([inputs])[0]

    def generate(
        self, inputs: torch.Tensor, prompt: Optional[Sequence[int]] = None, max_new_tokens: Optional[int] = None
    ) -> List[int]:
        """The prompt (the decoder's start token by default) and the tokens generated after it.

        Args:
            inputs: the encoder's input (Whisper's ``input_features``, T5's ``input_ids``).
            prompt: the decoder's first tokens, fed one a call (Whisper's start,
                language, task and no-timestamps tokens).
            max_new_tokens: at most this many new tokens; by default as many as the
                decoder's cache has room for after the prompt.
        """
        tokens = list(prompt) if prompt else [self.start_id]
        room = self.max_seq_len - len(tokens) + 1
        if room < 1:
            raise ValueError(f"a prompt of {len(tokens)} tokens leaves no room in {self.max_seq_len} positions")
        new_tokens = room if max_new_tokens is None else min(max_new_tokens, room)
        hidden = self.encode(inputs)
        generated = 0
        position = 0
        while generated < new_tokens:
            step = [torch.tensor([[tokens[position]]]), hidden, torch.tensor([position])]
            logits = self._decoder.execute(step)[0]
            position += 1
            if position < len(tokens):
                continue  # still feeding the prompt
            tokens.append(int(logits[0, -1].argmax()))
            generated += 1
            if tokens[-1] in self.eos_ids:
                break
        return tokens
