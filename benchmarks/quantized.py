"""Models quantized with NNCF: our delegate against OpenVINO running the same model alone.

Two models, each in float and quantized form:
- a stack of 4 x Linear(2048, 2048) with ReLU between them at batch 1 (the shape of an
  LLM's decode step, where weight bytes set the speed), as float32, with INT8 weight
  compression (nncf.compress_weights, INT8_ASYM) and with INT4 (INT4_SYM, group 128,
  every layer);
- a small CNN (3 convolutions, 32-64 channels, 1x3x64x64), as float32 and after INT8
  post-training quantization (nncf.quantize, 8 calibration images).
Each quantized model is exported again (torch.export) and lowered with
OpenvinoPartitioner. OpenVINO alone compiles the float model converted with
``openvino.convert_model`` and quantized by NNCF's OpenVINO path with the same settings
(see `variants`), with the configuration our runtime uses (OpenvinoOptions().compile_config()).
Both run in this process, alternating over ROUNDS rounds of CALLS calls each; the table
gives the median per-call time, the ratio ours / alone and the .pte size.

Run: python benchmarks/quantized.py   (needs `pip install ".[quantization]"`)
"""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch is imported: see _common.py

import torch  # noqa: E402

torch.set_num_threads(1)

import logging  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

import nncf  # noqa: E402
import openvino as ov  # noqa: E402
from executorch.exir import to_edge_transform_and_lower  # noqa: E402

import _common  # noqa: E402
from executorch_openvino import OpenvinoPartitioner  # noqa: E402
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
            torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.ReLU(),
            torch.nn.Conv2d(32, 64, 3, stride=2, padding=1), torch.nn.ReLU(),
            torch.nn.Conv2d(64, 64, 3, padding=1), torch.nn.ReLU())
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


def variants():
    """(name, module we lower, the model OpenVINO compiles alone, example input) per row.

    OpenVINO alone takes the float model converted with openvino.convert_model and then
    compressed or quantized by NNCF's OpenVINO path, with the same settings: that is how
    OpenVINO users quantize, and openvino.convert_model refuses an exported program
    with NNCF's torch INT4 unpacking (it decomposes the unpacking before converting).
    """
    torch.manual_seed(0)
    tokens = torch.randn(1, 2048)
    stack = torch.export.export(linear_stack(), (tokens,))
    int8_weights = dict(mode=nncf.CompressWeightsMode.INT8_ASYM)
    int4_weights = dict(mode=nncf.CompressWeightsMode.INT4_SYM, group_size=128, ratio=1.0, all_layers=True)
    yield "linear stack f32", stack.module(), ov.convert_model(stack), tokens
    for name, settings in (("INT8", int8_weights), ("INT4", int4_weights)):
        yield (f"linear stack {name} weights", nncf.compress_weights(stack.module(), **settings),
               nncf.compress_weights(ov.convert_model(stack), **settings), tokens)

    picture = torch.randn(1, 3, 224, 224)
    vit = torch.export.export(TinyVit().eval(), (picture,))
    pictures = nncf.Dataset([torch.randn(1, 3, 224, 224) for _ in range(4)])
    yield "ViT-Tiny-shaped f32", vit.module(), ov.convert_model(vit), picture
    yield ("ViT-Tiny-shaped INT8 (nncf.quantize)",
           nncf.quantize(vit.module(), pictures, subset_size=4, model_type=nncf.ModelType.TRANSFORMER),
           nncf.quantize(ov.convert_model(vit), nncf.Dataset([x.numpy() for x in pictures.get_data()]),
                         subset_size=4, model_type=nncf.ModelType.TRANSFORMER), picture)

    image = torch.randn(1, 3, 64, 64)
    cnn = torch.export.export(Cnn().eval(), (image,))
    calibration = nncf.Dataset([torch.randn(1, 3, 64, 64) for _ in range(8)])
    yield "CNN f32", cnn.module(), ov.convert_model(cnn), image
    yield ("CNN INT8 (nncf.quantize)", nncf.quantize(cnn.module(), calibration, subset_size=8),
           nncf.quantize(ov.convert_model(cnn), nncf.Dataset([x.numpy() for x in calibration.get_data()]),
                         subset_size=8), image)


def main() -> None:
    _common.setup_logging()
    config = OpenvinoOptions().compile_config()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for name, module, alone_model, example in variants():
            exported = torch.export.export(module, (example,))
            manager = to_edge_transform_and_lower(exported, partitioner=[OpenvinoPartitioner()]).to_executorch()
            if _common.cpu_ops(manager):
                logger.warning("%s: ops left on the CPU: %s", name, _common.cpu_ops(manager))
            path = Path(folder) / "model.pte"
            path.write_bytes(manager.buffer)
            ours = _common.load_method(path)
            alone = ov.Core().compile_model(alone_model, "CPU", config)
            # OpenVINO at its leanest from Python: the input bound once, no result dict built.
            request = alone.create_infer_request()
            request.set_input_tensor(ov.Tensor(example.numpy(), shared_memory=True))
            timings = {"ours": _common.Timing(), "alone": _common.Timing()}
            calls = {"ours": lambda: ours.execute([example]), "alone": lambda: (request.start_async(), request.wait())}
            for engine in calls:
                _common.measure(calls[engine], WARMUP, 1)
            for round_index in range(ROUNDS):
                order = ("ours", "alone") if round_index % 2 == 0 else ("alone", "ours")
                for engine in order:
                    timings[engine] += _common.measure(calls[engine], 2, CALLS)
            rows.append([name, f"{path.stat().st_size / 2**20:.1f}", f"{timings['ours'].median:.3f}",
                         f"{timings['alone'].median:.3f}",
                         f"{timings['ours'].median / timings['alone'].median:.2f}"])
    _common.print_header(f"NNCF {nncf.__version__}-quantized models: our delegate vs OpenVINO alone",
                         _common.environment())
    _common.print_table(["model", ".pte MiB", "ours ms", "OpenVINO alone ms", "ours / alone"], rows)


if __name__ == "__main__":
    main()
