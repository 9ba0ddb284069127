"""Models quantized with NNCF: our delegate against OpenVINO running the same model alone.

Three models, each as float32 and quantized:
- 4 x Linear(2048, 2048) with ReLU between them at batch 1 (the shape of an LLM's decode
  step, where weight bytes set the speed): INT8 weight compression (nncf.compress_weights,
  INT8_ASYM) and INT4 (INT4_SYM, group 64, every layer);
- a ViT-Tiny-shaped encoder (16x16 patches of 224x224, dim 192, 3 heads, 4 blocks): the
  same two weight compressions, and INT8 post-training quantization (nncf.quantize,
  transformer preset, 8 calibration images);
- a small CNN (3 convolutions, 32-64 channels, 1x3x64x64): INT8 post-training quantization.
Each weight compression runs twice: at our f32 default (activations in f32), and with
``dynamic_quantization_group_size=32`` ("int8 activations": OpenVINO's own default on
CPUs with VNNI or AMX, where it quantizes the inputs of compressed-weight layers).
Each quantized model is exported again (torch.export) and lowered with
OpenvinoPartitioner. OpenVINO alone compiles the float model converted with
``openvino.convert_model`` and quantized by NNCF's OpenVINO path with the same settings
(see `variants`), with the configuration our runtime uses (OpenvinoOptions().compile_config()).
For INT8 post-training quantization, XNNPACK runs its own INT8 (its PT2E quantizer,
static, per channel) on the same calibration images. All engines run in this process,
alternating over ROUNDS rounds of CALLS calls each; the table gives the median per-call
time, the ratio ours / alone, the .pte size and our output's and OpenVINO alone's error
against the float model in eager PyTorch (max |out - eager| / max |eager|, one input).

Run: python benchmarks/quantized.py   (needs `pip install ".[quantization]"`)
"""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch is imported: see common/bench.py

import torch  # noqa: E402

torch.set_num_threads(1)

import logging  # noqa: E402
import tempfile  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Callable, Dict, List, Optional  # noqa: E402

import nncf  # noqa: E402
import openvino as ov  # noqa: E402
from common import bench  # noqa: E402
from executorch.exir import to_edge_transform_and_lower  # noqa: E402
from executorch_openvino import OpenvinoPartitioner, openvino_compile_specs  # noqa: E402
from executorch_openvino.compile_specs import OpenvinoOptions  # noqa: E402

ROUNDS, CALLS, WARMUP = 6, 100, 20
logger = logging.getLogger("benchmarks.quantized")


def linear_stack() -> torch.nn.Module:
    layers = []
    for index in range(4):
        layers.append(torch.nn.Linear(2048, 2048))
        if index < 3:
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers).eval()


class Cnn(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.convs = torch.nn.Sequential(
            torch.nn.Conv2d(3, 32, 3, padding=1),
            torch.nn.ReLU(),
            torch.nn.Conv2d(32, 64, 3, stride=2, padding=1),
            torch.nn.ReLU(),
            torch.nn.Conv2d(64, 64, 3, padding=1),
            torch.nn.ReLU(),
        )
        self.classifier = torch.nn.Linear(64, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.convs(x).mean((2, 3)))


class VitBlock(torch.nn.Module):
    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = torch.nn.LayerNorm(dim), torch.nn.LayerNorm(dim)
        self.qkv, self.proj = torch.nn.Linear(dim, 3 * dim), torch.nn.Linear(dim, dim)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(dim, 4 * dim), torch.nn.GELU(), torch.nn.Linear(4 * dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, tokens, dim = x.shape
        qkv = self.qkv(self.norm1(x)).reshape(batch, tokens, 3, self.heads, dim // self.heads).permute(2, 0, 3, 1, 4)
        attended = torch.nn.functional.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2])
        x = x + self.proj(attended.transpose(1, 2).reshape(batch, tokens, dim))
        return x + self.mlp(self.norm2(x))


class TinyVit(torch.nn.Module):
    """A ViT-Tiny-shaped encoder: 16x16 patches of a 224x224 image, dim 192, 3 heads, 4 blocks."""

    def __init__(self) -> None:
        super().__init__()
        self.patches = torch.nn.Conv2d(3, 192, 16, stride=16)
        self.blocks = torch.nn.Sequential(*(VitBlock(192, 3) for _ in range(4)))
        self.head = torch.nn.Linear(192, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        tokens = self.patches(x).flatten(2).transpose(1, 2)
        return self.head(self.blocks(tokens).mean(1))


@dataclass
class Row:
    name: str
    original: torch.nn.Module  # the float model, for the error column
    ours: torch.nn.Module  # what we lower: NNCF's torch result
    alone: ov.Model  # what OpenVINO compiles alone
    example: torch.Tensor
    xnnpack: Optional[torch.nn.Module] = None  # XNNPACK's own INT8 (PT2E), where it has one
    options: Dict[str, object] = field(default_factory=dict)  # compile specs, for ours and alone


def _xnnpack_int8(exported: torch.export.ExportedProgram, calibration: List[torch.Tensor]) -> torch.nn.Module:
    """The model quantized by XNNPACK's own PT2E quantizer (static, per channel)."""
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer,
        get_symmetric_quantization_config,
    )
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True))
    prepared = prepare_pt2e(exported.module(), quantizer)
    for sample in calibration:
        prepared(sample)
    return convert_pt2e(prepared)


def variants():
    """The rows of the table.

    OpenVINO alone takes the float model converted with openvino.convert_model and then
    compressed or quantized by NNCF's OpenVINO path, with the same settings: that is how
    OpenVINO users quantize, and openvino.convert_model refuses an exported program
    with NNCF's torch INT4 unpacking (it decomposes the unpacking before converting).
    """
    torch.manual_seed(0)
    int8_weights = dict(mode=nncf.CompressWeightsMode.INT8_ASYM)
    int4_weights = dict(mode=nncf.CompressWeightsMode.INT4_SYM, group_size=64, ratio=1.0, all_layers=True)
    models = [
        ("4 x Linear(2048)", linear_stack(), (1, 2048), True),
        ("ViT-Tiny-shaped", TinyVit().eval(), (1, 3, 224, 224), True),
        ("CNN", Cnn().eval(), (1, 3, 64, 64), False),
    ]
    for label, model, shape, compress in models:
        example = torch.randn(shape)
        exported = torch.export.export(model, (example,))
        float_ir = ov.convert_model(exported)
        yield Row(f"{label} f32", model, exported.module(), float_ir, example)
        if compress:
            for name, settings in (("INT8", int8_weights), ("INT4", int4_weights)):
                compressed = nncf.compress_weights(exported.module(), **settings)
                compressed_ir = nncf.compress_weights(ov.convert_model(exported), **settings)
                yield Row(f"{label} {name} weights", model, compressed, compressed_ir, example)
                # OpenVINO's default on CPUs with VNNI or AMX, off at f32 in ours unless asked.
                yield Row(
                    f"{label} {name} weights, int8 activations",
                    model,
                    compressed,
                    compressed_ir,
                    example,
                    options={"dynamic_quantization_group_size": 32},
                )
        if label == "4 x Linear(2048)":
            continue  # post-training quantization is for activations that vary: images here
        calibration = [torch.randn(shape) for _ in range(8)]
        preset = dict(subset_size=8, model_type=nncf.ModelType.TRANSFORMER if compress else None)
        yield Row(
            f"{label} INT8 (nncf.quantize)",
            model,
            nncf.quantize(exported.module(), nncf.Dataset(calibration), **preset),
            nncf.quantize(ov.convert_model(exported), nncf.Dataset([x.numpy() for x in calibration]), **preset),
            example,
            xnnpack=_xnnpack_int8(exported, calibration),
        )


def _timed(calls: Dict[str, Callable[[], object]]) -> Dict[str, float]:
    """Median ms per call of each engine, over alternating rounds."""
    timings = {engine: bench.Timing() for engine in calls}
    for engine in calls:
        bench.measure(calls[engine], WARMUP, 1)
    for round_index in range(ROUNDS):
        order = bench.round_order(list(calls), round_index)
        for engine in order:
            timings[engine] += bench.measure(calls[engine], 2, CALLS)
    return {engine: timing.median for engine, timing in timings.items()}


def _load(module: torch.nn.Module, example: torch.Tensor, partitioner, path: Path):
    manager = to_edge_transform_and_lower(
        torch.export.export(module, (example,)), partitioner=[partitioner]
    ).to_executorch()
    if bench.cpu_ops(manager):
        logger.warning("%s: ops left on the CPU: %s", path.name, bench.cpu_ops(manager))
    path.write_bytes(manager.buffer)
    return bench.load_method(path)


def main() -> None:
    bench.setup_logging()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for row in variants():
            path = Path(folder) / "ours.pte"
            ours = _load(row.ours, row.example, OpenvinoPartitioner(openvino_compile_specs(**row.options)), path)
            size = path.stat().st_size / 2**20
            alone = ov.Core().compile_model(row.alone, "CPU", OpenvinoOptions(**row.options).compile_config())
            # OpenVINO at its leanest from Python: the input bound once, no result dict built.
            request = alone.create_infer_request()
            request.set_input_tensor(ov.Tensor(row.example.numpy(), shared_memory=True))
            calls = {
                "ours": lambda: ours.execute([row.example]),
                "alone": lambda: (request.start_async(), request.wait()),
            }
            if row.xnnpack is not None:
                from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner

                xnnpack = _load(row.xnnpack, row.example, XnnpackPartitioner(), Path(folder) / "xnnpack.pte")
                calls["xnnpack"] = lambda: xnnpack.execute([row.example])
            medians = _timed(calls)
            with torch.no_grad():
                expected = row.original(row.example)
            error = bench.max_rel_err(ours.execute([row.example])[0], expected)
            alone_error = bench.max_rel_err(torch.from_numpy(alone(row.example.numpy())[0]), expected)
            xnnpack_ms = f"{medians['xnnpack']:.3f}" if "xnnpack" in medians else "-"
            rows.append(
                [
                    row.name,
                    f"{size:.1f}",
                    f"{error:.2g}",
                    f"{alone_error:.2g}",
                    f"{medians['ours']:.3f}",
                    f"{medians['alone']:.3f}",
                    f"{medians['ours'] / medians['alone']:.2f}",
                    xnnpack_ms,
                ]
            )
    bench.print_header(f"NNCF {nncf.__version__}-quantized models: our delegate vs OpenVINO alone", bench.environment())
    bench.print_table(
        [
            "model",
            ".pte MiB",
            "error vs f32",
            "alone's error",
            "ours ms",
            "OpenVINO alone ms",
            "ours / alone",
            "XNNPACK INT8 ms",
        ],
        rows,
    )


if __name__ == "__main__":
    main()
