"""What the load option give_back_memory saves: the resident growth of loading a
program and calling it, in a fresh process per case, with the option off (the
default) and on, loading from the program's path (mapped) and through a model cache.

    python benchmarks/give_back_memory.py [--vocabulary 16384] [--width 512]
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402
from common.bench import environment, growth_in_fresh_process, lower_to_pte, print_header, print_table  # noqa: E402


class EmbedAndMlp(torch.nn.Module):
    """An embedding table, which OpenVINO reads in place, and an MLP, which it repacks."""

    def __init__(self, vocabulary: int, width: int):
        super().__init__()
        self.embedding = torch.nn.Embedding(vocabulary, width)
        self.up = torch.nn.Linear(width, 4 * width)
        self.down = torch.nn.Linear(4 * width, width)

    def forward(self, tokens):
        return self.down(torch.relu(self.up(self.embedding(tokens))))


def growth_mb(pte: Path, give_back: bool, cache_dir: str) -> float:
    """Resident growth (MB) of loading `pte` from its path and calling it twice."""
    setup = (
        "import torch, executorch_openvino; from executorch.runtime import Runtime;"
        f"executorch_openvino.set_load_options(give_back_memory={give_back}, cache_dir={cache_dir!r});"
        f"{cache_dir!r} and Runtime.get().load_program({str(pte)!r}).load_method('forward')"  # writes the cache
    )
    work = (
        f"m = Runtime.get().load_program({str(pte)!r}).load_method('forward');"
        "[m.execute([torch.tensor([[1, 2, 3, 4]])]) for _ in range(2)]"
    )
    return growth_in_fresh_process(setup, work)[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vocabulary", type=int, default=16384)
    parser.add_argument("--width", type=int, default=512)
    options = parser.parse_args()
    model = EmbedAndMlp(options.vocabulary, options.width).eval()
    weights_mb = sum(p.numel() * p.element_size() for p in model.parameters()) / 1e6
    title = f"give_back_memory: resident growth of a load and two calls, {weights_mb:.1f} MB of weights"
    print_header(title, environment())
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        pte = lower_to_pte(model, (torch.tensor([[1, 2, 3, 4]]),), Path(folder) / "model.pte")
        for load, cache in (("mapped program", ""), ("model cache", str(Path(folder) / "cache"))):
            for give_back in (False, True):
                if cache:
                    cache = str(Path(folder) / f"cache_{give_back}")
                rows.append([load, "on" if give_back else "off (default)", growth_mb(pte, give_back, cache)])
    print_table(["load", "give_back_memory", "resident growth MB"], rows)


if __name__ == "__main__":
    main()
