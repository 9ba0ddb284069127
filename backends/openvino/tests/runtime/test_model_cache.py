"""The model cache (cache_dir): the IR goes there as files named by its digest, and
OpenVINO's cache keyed on that path makes later loads skip the weights entirely.
A cached model must never stand in for another program or for a damaged IR."""

import copy
import os
import re
import shutil
import struct
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from executorch_openvino import openvino_compile_specs
from executorch_openvino.serialization.blob import (
    CHECKSUM_OFFSET,
    DIGEST_OFFSET,
    DIGEST_SIZE,
    HEADER_SIZE,
    MAGIC,
    checksum,
    ir_digest,
)
from harness import LoweredProgram, assert_runs_like_eager, lower


class Linear(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(16, 16)

    def forward(self, x):
        return self.linear(x)


def _inputs():
    return [(torch.randn(4, 16),) for _ in range(2)]


def _lowered(tmp_path: Path, cache: Path, name: str = "model") -> tuple:
    model = Linear().eval()
    specs = openvino_compile_specs(cache_dir=str(cache))
    return model, lower(model, _inputs()[0], tmp_path, compile_specs=specs, name=name)


def _blob_offset(program: bytes) -> int:
    """Where the blob starts in the .pte file's bytes, for tests that damage the file."""
    offset = program.find(MAGIC)
    assert offset >= 0, "the program holds no OpenVINO blob"
    return offset


def _blob(lowered: LoweredProgram):
    [blob] = lowered.blobs()
    return blob


def _ir_files(cache: Path, lowered: LoweredProgram) -> tuple:
    stem = cache / f"etov-ir-{_blob(lowered).ir_digest.hex()}"
    return stem.with_suffix(".xml"), stem.with_suffix(".bin")


def _check_runs_like_eager(model, lowered, rtol=None, atol=None):
    assert_runs_like_eager(model, lowered, _inputs(), rtol=rtol, atol=atol)


def _weights_at(data: bytes, lowered: LoweredProgram) -> int:
    return data.index(_blob(lowered).ir_weights, _blob_offset(data) + HEADER_SIZE)


def test_first_load_writes_the_ir_named_by_its_digest_and_openvinos_compiled_model(tmp_path):
    cache = tmp_path / "cache"
    model, lowered = _lowered(tmp_path, cache)
    _check_runs_like_eager(model, lowered)
    xml, weights = _ir_files(cache, lowered)
    blob = _blob(lowered)
    assert xml.read_bytes() == blob.ir_xml and weights.read_bytes() == blob.ir_weights
    assert _compiled_models(cache), "OpenVINO wrote no compiled model next to the IR"
    # A successful load logs nothing, so that the next one is seen importing by what
    # it does not read: see test_cache_hit_does_not_read_the_programs_weights.
    _check_runs_like_eager(model, lowered)


def test_cache_hit_does_not_read_the_programs_weights(tmp_path, capfd):
    """A hit needs only the blob's header: damaged weights after it go unread.

    Without the cache the same damage fails the load on the checksum."""
    cache = tmp_path / "cache"
    model, lowered = _lowered(tmp_path, cache)
    _check_runs_like_eager(model, lowered)
    data = bytearray(lowered.path.read_bytes())
    weights_at = _weights_at(data, lowered)
    data[weights_at : weights_at + len(_blob(lowered).ir_weights)] = bytes(len(_blob(lowered).ir_weights))
    lowered.path.write_bytes(bytes(data))

    _check_runs_like_eager(model, lowered)  # imported: a compile would fail on the checksum, as below
    for file in _compiled_models(cache):
        file.unlink()
    with pytest.raises(RuntimeError):
        lowered.load_method()
    assert "checksum" in capfd.readouterr().err


def test_damaged_ir_file_is_written_again_before_openvino_compiles_it_into_the_cache(tmp_path, capfd):
    cache = tmp_path / "cache"
    model, lowered = _lowered(tmp_path, cache)
    _check_runs_like_eager(model, lowered)
    _, weights = _ir_files(cache, lowered)
    good_weights = weights.read_bytes()
    # The first constant, the bias, set to zero: the IR still compiles, to a wrong model.
    assert b'shape="16" offset="0" size="64"' in _blob(lowered).ir_xml
    weights.write_bytes(bytes(64) + good_weights[64:])
    # Without its cached model (a new OpenVINO release, a cleaned cache), OpenVINO
    # compiles the files.
    for file in _compiled_models(cache):
        file.unlink()

    _check_runs_like_eager(model, lowered)
    assert "does not hold this program's IR" in capfd.readouterr().err
    assert weights.read_bytes() == good_weights
    # The model OpenVINO compiled from the damaged files (a zero bias) is never imported.
    _check_runs_like_eager(model, lowered)


def _with_weights_doubled(model: torch.nn.Module, lowered: LoweredProgram, path: Path) -> tuple:
    """`model` with every parameter doubled, and its program made from `lowered` by
    doubling the IR's float constants: the same IR XML byte for byte, other weights."""
    data = bytearray(lowered.path.read_bytes())
    blob = _blob(lowered)
    doubled = bytearray(blob.ir_weights)
    constants = re.findall(rb'element_type="f32" shape="[0-9, ]+" offset="(\d+)" size="(\d+)"', blob.ir_xml)
    assert sum(int(size) for _, size in constants) == (16 * 16 + 16) * 4, "expected the Linear's weight and bias"
    for offset, size in constants:
        begin, end = int(offset), int(offset) + int(size)
        doubled[begin:end] = (np.frombuffer(blob.ir_weights[begin:end], dtype=np.float32) * 2).tobytes()
    doubled = bytes(doubled)
    weights_at = _weights_at(data, lowered)
    data[weights_at : weights_at + len(doubled)] = doubled
    header_at = _blob_offset(data)
    struct.pack_into(
        f"<I{DIGEST_SIZE}s",
        data,
        header_at + CHECKSUM_OFFSET,
        checksum(blob.ir_xml, doubled),
        ir_digest(blob.ir_xml, doubled),
    )
    path.write_bytes(bytes(data))
    doubled_model = copy.deepcopy(model)
    with torch.no_grad():
        for parameter in doubled_model.parameters():
            parameter.mul_(2)
    return doubled_model, LoweredProgram(lowered.manager, path)


def test_programs_with_the_same_ir_xml_and_other_weights_never_share_a_cached_model(tmp_path):
    cache = tmp_path / "cache"
    model, lowered = _lowered(tmp_path, cache)
    doubled_model, doubled = _with_weights_doubled(model, lowered, tmp_path / "doubled.pte")
    assert _blob(doubled).ir_xml == _blob(lowered).ir_xml
    for _ in range(2):
        _check_runs_like_eager(model, lowered)
        _check_runs_like_eager(doubled_model, doubled)
    assert len(list(cache.glob("etov-ir-*.xml"))) == 2


def test_a_load_removes_the_temporary_files_of_writers_that_died_and_nothing_else(tmp_path):
    """A process killed while writing the IR leaves a weights-sized temporary file."""
    cache = tmp_path / "cache"
    model, lowered = _lowered(tmp_path, cache)
    _check_runs_like_eager(model, lowered)
    stem = _ir_files(cache, lowered)[0].stem
    finished = subprocess.Popen(["true"])
    finished.wait()
    running = subprocess.Popen(["sleep", "600"])
    abandoned = cache / f"{stem}.tmp-{finished.pid}-0.bin"
    being_written = cache / f"{stem}.tmp-{running.pid}-0.bin"
    just_written = cache / f"{stem}.tmp-{finished.pid}-1.bin"
    not_ours = cache / f"weights.tmp-{finished.pid}-0.bin"
    two_minutes_ago = time.time() - 120
    for file in (abandoned, being_written, just_written, not_ours):
        file.write_bytes(b"half of the weights")
        if file != just_written:
            os.utime(file, (two_minutes_ago, two_minutes_ago))
    try:
        _check_runs_like_eager(model, lowered)  # a cache hit
    finally:
        running.kill()
        running.wait()
    assert not abandoned.exists()
    assert being_written.exists() and just_written.exists() and not_ours.exists()


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler to build the shared library")
def test_a_shared_library_inside_the_cache_folder_keeps_working_after_a_load(tmp_path):
    """A cache_dir that holds other files (".", a home folder with a virtual
    environment): the pages a load drops are the cache files' own. A library's
    relocated read-only pages (RELRO) look like an unwritten view of its file;
    dropped, they came back unrelocated and the next call through them crashed."""
    cache = tmp_path / "cache"
    model, lowered = _lowered(tmp_path, cache)
    library = cache / "venv" / "lib" / "libtable.so"
    library.parent.mkdir(parents=True)
    source = tmp_path / "table.c"
    source.write_text(
        "static int one(void) { return 1; }\n"
        "static int two(void) { return 2; }\n"
        "int (*const table[])(void) = {one, two};  /* relocated at load, then read-only */\n"
        "int call(int i) { return table[i](); }\n"
    )
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(library), str(source)], check=True)
    code = (
        "import ctypes, torch, executorch_openvino\n"
        "from executorch.runtime import Runtime\n"
        f"library = ctypes.CDLL({str(library)!r})\n"
        "for _ in range(2):  # the first load writes the cache, the second reads it\n"
        f"    method = Runtime.get().load_program({str(lowered.path)!r}).load_method('forward')\n"
        "    method.execute([torch.randn(4, 16)])\n"
        "print(library.call(0), library.call(1))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"exit status {result.returncode}: {result.stderr[-2000:]}"
    assert result.stdout.split()[-2:] == ["1", "2"]
    _check_runs_like_eager(model, lowered)


def test_program_without_a_digest_uses_openvinos_own_cache(tmp_path):
    """Programs exported before the digest existed carry zeros in its place."""
    cache = tmp_path / "cache"
    model, lowered = _lowered(tmp_path, cache)
    data = bytearray(lowered.path.read_bytes())
    digest_at = _blob_offset(data) + DIGEST_OFFSET
    data[digest_at : digest_at + DIGEST_SIZE] = bytes(DIGEST_SIZE)
    lowered.path.write_bytes(bytes(data))

    _check_runs_like_eager(model, lowered)
    _check_runs_like_eager(model, lowered)
    assert _compiled_models(cache), "OpenVINO's own cache holds no compiled model"
    assert not list(cache.glob("etov-ir-*")), "a program without a digest got IR files"


def _compiled_models(cache: Path) -> list:
    """OpenVINO's compiled models in the cache: in a folder per compile configuration."""
    return list(cache.glob("compiled-*/*.blob"))


def test_loads_at_other_precisions_never_share_a_cached_model(tmp_path):
    """OpenVINO keys its cache on the model alone and bakes an f16 precision into what it
    caches (workarounds.py: model_cache_key_leaves_out_settings): a load of the program at
    its f32 after a load at f16 through one folder computed in f16."""
    import openvino as ov
    from executorch_openvino import set_load_options

    if "FP16" not in ov.Core().get_property("CPU", "OPTIMIZATION_CAPABILITIES"):
        pytest.skip("this CPU has no f16 arithmetic for OpenVINO: an f16 load computes in f32 here")
    cache = tmp_path / "cache"
    model, lowered = _lowered(tmp_path, cache)
    x = torch.randn(4, 16) * 3
    with torch.no_grad():
        want = model(x)
    try:
        set_load_options(inference_precision="f16")
        at_f16 = lowered.load_method().execute([x])[0]
    finally:
        set_load_options(inference_precision="")
    assert not torch.allclose(at_f16, want, rtol=1e-6, atol=1e-6), "the f16 load computed in f32"
    for _ in range(2):  # compiled, then imported from the cache
        torch.testing.assert_close(lowered.load_method().execute([x])[0], want, rtol=1e-5, atol=1e-5)
    assert len(_compiled_models(cache)) == 2


def test_cache_dir_that_cannot_be_created_loads_without_the_cache_naming_it(tmp_path, capfd):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    model, lowered = _lowered(tmp_path, blocker / "cache")
    _check_runs_like_eager(model, lowered)
    log = capfd.readouterr().err
    assert f"cannot create {blocker / 'cache'}" in log
    assert f"cache_dir {blocker / 'cache'} cannot be used; loading without the cache" in log


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc, a folder no file can be written to")
def test_cache_dir_that_cannot_be_written_loads_without_the_cache(tmp_path, capfd):
    """OpenVINO 2025.4 on its own fails such a load, 2026.4 goes on: ours always goes on."""
    model, lowered = _lowered(tmp_path, Path("/proc/self"))
    _check_runs_like_eager(model, lowered)
    log = capfd.readouterr().err
    assert "OpenVINO model cache: cannot write /proc/self/etov-ir-" in log
    assert "cache_dir /proc/self cannot be used; loading without the cache" in log
