"""What stays resident once a program is loaded with the load option give_back_memory:
OpenVINO repacks most weights into its own memory while it compiles, so the program's
copy of the IR weights need not stay in memory as well, where it can be given back
without losing data. (Off by default: test_memory_side_effects.py.)"""

import platform
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
from executorch_openvino import openvino_compile_specs, set_load_options
from harness import assert_close, eager, lower, run

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="reads the resident set from Linux's /proc/self/smaps"
)


@pytest.fixture(autouse=True)
def giving_back_memory():
    set_load_options(give_back_memory=True)
    yield
    set_load_options(give_back_memory=False)


VOCABULARY = 4096
WIDTH = 256


class EmbedAndProject(torch.nn.Module):
    """4 MiB of embedding table, which OpenVINO reads in place at every call, and a
    projection, which it repacks."""

    def __init__(self):
        super().__init__()
        self.embedding = torch.nn.Embedding(VOCABULARY, WIDTH)
        self.projection = torch.nn.Linear(WIDTH, WIDTH)

    def forward(self, tokens):
        return self.projection(self.embedding(tokens))


def _token_sets():
    return [(torch.tensor([[3, 4000, 17, 512]]),), (torch.tensor([[9, 1, 2048, 4095]]),)]


def _resident_bytes_of(path: Path) -> int:
    """Bytes this process has resident through its mappings of the file `path`, or
    of the files in the folder `path`."""
    path = path.resolve()
    resident, inside = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        fields = line.split()
        if "-" in fields[0] and ":" not in fields[0]:
            inside = fields[-1] == str(path) or fields[-1].startswith(f"{path}/")
        elif inside and fields[0] == "Rss:":
            resident += int(fields[1]) * 1024
    return resident


def _resident_after_loading_then_runs_like_eager(model: torch.nn.Module, lowered, *files: Path) -> int:
    """Loads `lowered` from its file, measures what stays resident of it and of
    `files`, then checks that calls, which read some pages back, still give eager's
    results."""
    method = lowered.load_method()
    resident = sum(_resident_bytes_of(path) for path in (lowered.path, *files))
    for tokens in _token_sets():
        assert_close(run(method, tokens), eager(model, tokens))
    return resident


def test_a_program_mapped_from_its_file_gives_back_the_weights_pages_after_compiling(tmp_path):
    model = EmbedAndProject().eval()
    lowered = lower(model, _token_sets()[0], tmp_path)
    size = lowered.path.stat().st_size
    resident = _resident_after_loading_then_runs_like_eager(model, lowered)
    assert resident < size // 8, f"{resident} of the program's {size} bytes stay resident after loading"


def test_a_program_compiled_through_the_model_cache_keeps_neither_its_blob_nor_the_cache_files(tmp_path):
    model = EmbedAndProject().eval()
    cache = tmp_path / "cache"
    lowered = lower(model, _token_sets()[0], tmp_path, compile_specs=openvino_compile_specs(cache_dir=str(cache)))
    size = lowered.path.stat().st_size
    for load in ("writes the cache", "reads the cache"):
        resident = _resident_after_loading_then_runs_like_eager(model, lowered, cache)
        assert resident < size // 8, f"a load that {load}: {resident} of the program's {size} bytes stay resident"


class Mlp(torch.nn.Module):
    """8 MiB of matrix weights, which OpenVINO repacks; with a dynamic sequence length
    it prepares some kernels only at the first call of a size, reading the originals
    back in to pack them (at 1 token, then again from 8). (A model compiled through
    the model cache reads OpenVINO's mappings of the cache files instead, whose pages
    are dropped at load only: finding them again would read /proc at a call.)"""

    def __init__(self):
        super().__init__()
        self.up = torch.nn.Linear(512, 2048)
        self.down = torch.nn.Linear(2048, 512)

    def forward(self, x):
        return self.down(torch.relu(self.up(x)))


def test_a_dynamic_program_gives_back_the_weights_that_calls_of_new_sizes_read_again(tmp_path):
    model = Mlp().eval()
    sequence = torch.export.Dim("sequence", min=1, max=64)
    lowered = lower(model, (torch.randn(1, 3, 512),), tmp_path, dynamic_shapes=({1: sequence},))
    method = lowered.load_method()
    size = lowered.path.stat().st_size
    for length in (1, 9, 1):
        inputs = (torch.randn(1, length, 512),)
        assert_close(run(method, inputs), eager(model, inputs))
        resident = _resident_bytes_of(lowered.path)
        assert resident < size // 8, f"after a call of {length} tokens {resident} of {size} bytes stay resident"


# Run in a fresh process: the first compile in a process is the one that frees most
# (OpenVINO initializes its CPU plugin then), and the test's own heap stays out.
_LOAD_THEN_TRIM = textwrap.dedent(
    """
    import ctypes, sys
    import executorch_openvino
    from executorch.runtime import Runtime
    executorch_openvino.set_load_options(give_back_memory=True)
    resident = lambda: int(open("/proc/self/statm").read().split()[1])
    method = Runtime.get().load_program(sys.argv[1]).load_method("forward")
    loaded = resident()
    ctypes.CDLL(None).malloc_trim(0)
    print((loaded - resident()) * ctypes.CDLL(None).getpagesize())
    """
)


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's malloc keeps freed heap pages resident")
def test_loading_gives_back_the_heap_pages_that_compiling_freed(tmp_path):
    lowered = lower(EmbedAndProject().eval(), _token_sets()[0], tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", _LOAD_THEN_TRIM, str(lowered.path)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    left = int(done.stdout.split()[-1])
    assert left < 1 << 20, f"{left} bytes of freed heap were still resident after loading"
