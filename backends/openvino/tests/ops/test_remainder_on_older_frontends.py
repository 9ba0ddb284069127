"""``aten.remainder`` where OpenVINO's frontend lacks it (2025.1.0 and 2025.4.1).

There the op stayed on ExecuTorch 1.5.1's portable kernel, which gives C's remainder for
negative integers (``-5 % 3`` is -2, not 1). On those releases our translator
(conversion/translators/remainder.py) takes it into the delegate. The pinned release
converts it itself, so these tests put the translator in, as an older release does, and
count its calls.
"""

from __future__ import annotations

from typing import List

import pytest
import torch
from executorch_openvino.conversion import translators
from executorch_openvino.conversion.translators.remainder import frontend_converts_remainder
from harness import check_against_eager


@pytest.fixture
def translated(monkeypatch) -> List[str]:
    """Registers the remainder translators as on an older release; lists the ops each call converted."""
    calls: List[str] = []
    for op, translator in translators.FOR_OLDER_FRONTENDS.items():

        def counted(context, op=op, translator=translator):
            calls.append(op)
            return translator(context)

        monkeypatch.setitem(translators.TRANSLATORS, op, counted)
    return calls


class Remainders(torch.nn.Module):
    def forward(self, x, y):
        return torch.remainder(x, y), x % 3, x % -4


def signed(seed: int, dtype: torch.dtype) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    return torch.randint(-60, 60, (4, 5), generator=generator, dtype=dtype)


def nonzero(seed: int, dtype: torch.dtype) -> torch.Tensor:
    values = signed(seed, dtype)
    return torch.where(values == 0, torch.ones_like(values), values)


def test_releases_before_2026_4_take_our_translator():
    assert not frontend_converts_remainder("2025.1.0-18503-6fec06580ab")
    assert not frontend_converts_remainder("2025.4.1-20426-82bbf0292c5")
    assert frontend_converts_remainder("2026.4.1-21234-2f2d5fe8b95")


@pytest.mark.parametrize("dtype", [torch.int8, torch.int16, torch.int32, torch.int64], ids=str)
def test_integer_remainders_take_the_divisors_sign(translated, dtype, tmp_path):
    input_sets = [(signed(seed, dtype), nonzero(seed + 10, dtype)) for seed in (0, 1)]
    check_against_eager(Remainders(), input_sets, tmp_path, rtol=0, atol=0, expect_delegated=["aten.remainder.Tensor"])
    assert set(translated) == {"aten.remainder.Tensor", "aten.remainder.Scalar"}


def test_float_remainders_match_eager(translated, tmp_path):
    generator = torch.Generator().manual_seed(2)
    input_sets = [(torch.randn(4, 5, generator=generator) * 9, torch.randn(4, 5, generator=generator))]
    input_sets.append((torch.randn(4, 5, generator=generator) * 9, torch.randn(4, 5, generator=generator)))
    check_against_eager(Remainders(), input_sets, tmp_path, expect_delegated=["aten.remainder.Tensor"])
    assert "aten.remainder.Tensor" in translated


class ByAFloat(torch.nn.Module):
    def forward(self, x):
        return x % 2.5


def test_an_integer_tensor_by_a_float_number_gives_float32(translated, tmp_path):
    lowered = check_against_eager(ByAFloat(), [(signed(3, torch.int32),), (signed(4, torch.int32),)], tmp_path)
    assert "aten.remainder.Scalar" in translated
    assert "aten.remainder.Scalar" in lowered.delegated_ops()


class Mixed(torch.nn.Module):
    def forward(self, x, y, z):
        return torch.remainder(x, y), torch.remainder(y, z), torch.remainder(z, x[0, 0])


def test_tensors_of_two_types_take_pytorchs_result_type(translated, tmp_path):
    # int32 and int64 make int64; int64 and float32 make float32; a 0-d int32 keeps float32.
    input_sets = [(signed(s, torch.int32), nonzero(s + 10, torch.int64), torch.randn(4, 5) * 9) for s in (5, 6)]
    lowered = check_against_eager(Mixed(), input_sets, tmp_path)
    assert set(translated) == {"aten.remainder.Tensor"}
    assert "aten.remainder.Tensor" in lowered.delegated_ops()
