"""The public C++ header (executorch_openvino/backend.h) and the Python package agree.

The header is read where `pip install` put it, so these run without a source tree.
"""

import re
from pathlib import Path

import executorch_openvino
import pytest
from executorch_openvino import BACKEND_ID
from executorch_openvino.compile_specs import CACHE_DIR, INFERENCE_PRECISION
from executorch_openvino.native_library import load_runtime_library

PACKAGE_DIR = Path(executorch_openvino.__file__).parent
HEADER = PACKAGE_DIR / "include" / "executorch_openvino" / "backend.h"


def header_constant(name: str) -> str:
    match = re.search(rf'\b{name}\[\]\s*=\s*"([^"]*)"', HEADER.read_text())
    assert match, f"{name} is not defined in {HEADER}"
    return match.group(1)


def test_header_backend_id_is_the_python_backend_id():
    assert header_constant("kBackendId") == BACKEND_ID


@pytest.mark.parametrize("name, key", [("kPrecisionKey", INFERENCE_PRECISION), ("kCacheDirKey", CACHE_DIR)])
def test_header_load_option_keys_are_the_python_keys(name, key):
    assert header_constant(name) == key


def test_library_registers_under_the_python_backend_id():
    assert load_runtime_library().etov_backend_id().decode() == BACKEND_ID


def test_header_declares_every_function_python_calls():
    text = HEADER.read_text()
    for function in ("etov_registration_status", "etov_backend_id", "etov_openvino_version", "etov_set_load_option"):
        assert re.search(rf"ETOV_API [\w\s\*]+\b{function}\(", text), function


def test_cmake_package_is_installed_at_cmake_prefix_path():
    config = Path(executorch_openvino.cmake_prefix_path) / "executorch_openvino" / "executorch_openvinoConfig.cmake"
    assert config.is_file()
    assert (config.parent / "executorch_openvinoTargets.cmake").is_file()


def test_header_cache_names_are_the_python_names():
    from executorch_openvino.conversion.rewrites.kv_cache_growth import CACHE_POSITIONS_NAME, GROWN_CACHE_SUFFIX

    assert header_constant("kCachePositionsName") == CACHE_POSITIONS_NAME
    assert header_constant("kGrownCacheSuffix") == GROWN_CACHE_SUFFIX
