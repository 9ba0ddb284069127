"""The runtime leaves memory it did not allocate alone unless asked: by default a
load neither unlocks nor drops the program's pages nor trims the heap, and no call
reads /proc (the load option give_back_memory turns the first two on;
test_resident_memory.py checks what they save)."""

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
from executorch_openvino import openvino_compile_specs
from harness import lower

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads Linux's /proc")


class Embed(torch.nn.Module):
    """4 MiB of embedding table, which OpenVINO reads in place at every call."""

    def __init__(self):
        super().__init__()
        self.embedding = torch.nn.Embedding(4096, 256)

    def forward(self, tokens):
        return self.embedding(tokens) * 2


def _resident_bytes_of(path: Path) -> int:
    """Bytes this process has resident through its mappings of the file `path`."""
    resident, inside = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        fields = line.split()
        if "-" in fields[0] and ":" not in fields[0]:
            inside = fields[-1] == str(path.resolve())
        elif inside and fields[0] == "Rss:":
            resident += int(fields[1]) * 1024
    return resident


def test_by_default_a_load_leaves_the_pages_of_a_mapped_program_resident(tmp_path):
    tokens = torch.arange(4096).reshape(1, -1)
    lowered = lower(Embed().eval(), (tokens,), tmp_path)
    size = lowered.path.stat().st_size
    lowered.load_method()
    resident = _resident_bytes_of(lowered.path)
    assert resident > size // 2, f"only {resident} of the program's {size} bytes stay resident: pages were dropped"


# Counts the opens of files under /proc (fopen and open, as OpenVINO's and our code
# use them); the test reads the count through ctypes.
_PROC_OPENS_SHIM = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
static volatile long proc_opens = 0;
long etov_test_proc_opens(void) { return proc_opens; }
static void count(const char* path) {
    if (path && strncmp(path, "/proc/", 6) == 0) __sync_fetch_and_add(&proc_opens, 1);
}
#define FORWARD_FOPEN(name) FILE* name(const char* p, const char* m) { \
    static FILE* (*real)(const char*, const char*); if (!real) real = dlsym(RTLD_NEXT, #name); \
    count(p); return real(p, m); }
FORWARD_FOPEN(fopen)
FORWARD_FOPEN(fopen64)
#define FORWARD_OPEN(name) int name(const char* p, int flags, ...) { \
    static int (*real)(const char*, int, ...); if (!real) real = dlsym(RTLD_NEXT, #name); \
    va_list args; va_start(args, flags); int mode = va_arg(args, int); va_end(args); \
    count(p); return real(p, flags, mode); }
FORWARD_OPEN(open)
FORWARD_OPEN(open64)
"""

_CALLS_OF_NEW_SIZES = textwrap.dedent(
    """
    import ctypes, sys
    import torch
    import executorch_openvino
    from executorch.runtime import Runtime
    shim = ctypes.CDLL(sys.argv[1])
    shim.etov_test_proc_opens.restype = ctypes.c_long
    if sys.argv[3] == "1":
        executorch_openvino.set_load_options(give_back_memory=True)
    for _ in range(2):  # the first load writes the model cache, the second reads it
        method = Runtime.get().load_program(sys.argv[2]).load_method("forward")
    inputs = [(torch.randn(1, length, 512),) for length in (1, 9, 33, 2)]
    before = shim.etov_test_proc_opens()
    for each in inputs:
        method.execute(each)
    print("proc opens:", shim.etov_test_proc_opens() - before)
    """
)


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.up = torch.nn.Linear(512, 1024)
        self.down = torch.nn.Linear(1024, 512)

    def forward(self, x):
        return self.down(torch.relu(self.up(x)))


@pytest.fixture(scope="module")
def shim_and_dynamic_program(tmp_path_factory):
    """The shim, built once, and a program of dynamic length lowered once with a model
    cache (the case that read /proc at calls), for both cases below."""
    if shutil.which("cc") is None:
        pytest.skip("builds an LD_PRELOAD shim with a C compiler")
    folder = tmp_path_factory.mktemp("proc_opens")
    source = folder / "proc_opens.c"
    source.write_text(_PROC_OPENS_SHIM)
    shim = folder / "proc_opens.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", shim, source, "-ldl"], check=True)
    sequence = torch.export.Dim("sequence", min=1, max=64)
    specs = openvino_compile_specs(cache_dir=str(folder / "cache"))
    lowered = lower(
        Mlp().eval(), (torch.randn(1, 3, 512),), folder, compile_specs=specs, dynamic_shapes=({1: sequence},)
    )
    return shim, lowered.path


@pytest.mark.parametrize("give_back_memory", [False, True], ids=["by_default", "giving_back_memory"])
def test_calls_of_new_input_sizes_read_nothing_under_proc(shim_and_dynamic_program, give_back_memory):
    shim, program = shim_and_dynamic_program
    done = subprocess.run(
        [sys.executable, "-c", _CALLS_OF_NEW_SIZES, str(shim), str(program), str(int(give_back_memory))],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "LD_PRELOAD": str(shim)},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[-1] == "0", f"calls of new input sizes opened files under /proc: {done.stdout}"
