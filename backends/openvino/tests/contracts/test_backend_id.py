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


def test_to_backend_finds_the_backend_class_by_the_backend_id():
    from executorch_openvino.preprocess import ExecutorchOpenvinoBackend

    assert ExecutorchOpenvinoBackend.__name__ == BACKEND_ID


def test_library_registers_under_the_python_backend_id():
    assert load_runtime_library().etov_backend_id().decode() == BACKEND_ID


def test_header_declares_every_function_python_calls():
    text = HEADER.read_text()
    functions = ("etov_registration_status", "etov_backend_id", "etov_openvino_version", "etov_set_load_option")
    for function in (*functions, "etov_compile_config"):
        assert re.search(rf"ETOV_API [\w\s\*]+\b{function}\(", text), function


def test_cmake_package_is_installed_at_cmake_prefix_path():
    config = Path(executorch_openvino.cmake_prefix_path) / "executorch_openvino" / "executorch_openvinoConfig.cmake"
    assert config.is_file()
    assert (config.parent / "executorch_openvinoTargets.cmake").is_file()


def python_names() -> dict:
    """Every string constant of backend.h, by its C++ name, as Python spells it."""
    from executorch_openvino.conversion.rewrites.index_bounds import INDEX_ROWS_NAME, SIGNED_INDEX_ROWS_NAME
    from executorch_openvino.conversion.rewrites.kv_cache_growth import CACHE_POSITIONS_NAME, GROWN_CACHE_SUFFIX
    from executorch_openvino.conversion.rewrites.per_sequence_values import (
        PER_SEQUENCE_INPUT_NAME,
        PER_SEQUENCE_SUFFIX,
    )
    from executorch_openvino.native_library import GIVE_BACK_MEMORY
    from executorch_openvino.serialization.named_weights import NAMED_WEIGHT_NAME

    return {
        "kBackendId": BACKEND_ID,
        "kPrecisionKey": INFERENCE_PRECISION,
        "kCacheDirKey": CACHE_DIR,
        "kGiveBackMemoryKey": GIVE_BACK_MEMORY,
        "kCachePositionsName": CACHE_POSITIONS_NAME,
        "kGrownCacheSuffix": GROWN_CACHE_SUFFIX,
        "kPerSequenceSuffix": PER_SEQUENCE_SUFFIX,
        "kPerSequenceInputName": PER_SEQUENCE_INPUT_NAME,
        "kIndexRowsName": INDEX_ROWS_NAME,
        "kNamedWeightName": NAMED_WEIGHT_NAME,
        "kSignedIndexRowsName": SIGNED_INDEX_ROWS_NAME,
    }


def test_every_string_constant_of_the_header_has_its_python_twin():
    declared = set(re.findall(r"inline constexpr const char (k\w+)\[\]", HEADER.read_text()))
    assert declared == set(python_names())


@pytest.mark.parametrize("name", sorted(python_names()))
def test_header_names_are_the_python_names(name):
    assert header_constant(name) == python_names()[name]
