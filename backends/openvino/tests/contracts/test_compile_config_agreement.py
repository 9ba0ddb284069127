"""The meaning of each compile spec is defined once, in the runtime (options.cpp):
lowering's checking compile asks the runtime for its configuration
(etov_compile_config), and the Python copy that serves hosts without the runtime
library (OpenvinoOptions.compile_config) gives the same, field by field, for every
key, every kind of value and every place the CPU's settings go."""

import itertools

import pytest
from executorch_openvino import native_library, openvino_compile_specs
from executorch_openvino.compile_specs import KNOWN_KEYS, cpu_settings_place, parse_compile_specs

# Where the CPU plugin's settings go: at the top, under DEVICE_PROPERTIES, nowhere.
DEVICES = ("CPU", "BATCH:CPU", "AUTO", "AUTO:GPU,CPU", "MULTI:CPU", "HETERO:GPU,CPU", "GPU", "GPU.1", "AUTO:GPU", "NPU")
VALUES = {
    "inference_precision": ("f32", "f16", "bf16"),
    "performance_hint": ("LATENCY", "THROUGHPUT", "CUMULATIVE_THROUGHPUT"),
    "cache_dir": ("/tmp/etov-cache",),
    "num_streams": ("AUTO", "3"),
    "inference_num_threads": (0, 4),
    "dynamic_quantization_group_size": (0, 32),
    "one_token_model": (False, True),
    "paged_attention": (False, True),
    "kv_cache_precision": ("f32", "f16", "bf16", "u8"),
    "per_sequence_inputs": ("encoder_hidden_states", "a,b"),
    "shared_weights": ("0123456789abcdef01234567",),
}


def _spec_sets():
    """Each set of _settings alone and with a cache_dir, whose folder for compiled models
    is named after the rest of the configuration."""
    for specs in _settings():
        yield specs
        yield {**specs, "cache_dir": "/tmp/etov-cache"}


def _settings():
    """Each device alone, with each value of each key, and with each pair of
    inference and KV-cache precisions (the one interaction between keys)."""
    for device in DEVICES:
        yield {"device": device}
        for key, values in VALUES.items():
            for value in values:
                yield {"device": device, key: value}
        for precision, kv in itertools.product(VALUES["inference_precision"], VALUES["kv_cache_precision"]):
            yield {"device": device, "inference_precision": precision, "kv_cache_precision": kv}


def _flat_text(config: dict, prefix: str = "") -> dict:
    """Python's configuration as the runtime writes it: nested keys joined by dots,
    values as OpenVINO prints them."""
    flat = {}
    for key, value in config.items():
        if isinstance(value, dict):
            flat.update(_flat_text(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = ("YES" if value else "NO") if isinstance(value, bool) else str(value)
    return flat


@pytest.mark.parametrize("has_fake_quantize", [False, True], ids=["float_model", "with_fake_quantize"])
def test_the_python_copy_of_the_configuration_is_the_runtimes(has_fake_quantize):
    differences = []
    for specs in _spec_sets():
        lowered = openvino_compile_specs(**specs)
        options = parse_compile_specs(lowered)
        # A CPU whose 8-bit dot products saturate: the runtime turns the CPU plugin's
        # low-precision transformations off wherever the CPU may run the model.
        float_kernels = has_fake_quantize and cpu_settings_place(options.device) is not None
        python = _flat_text(options.compile_config(float_kernels_for_quantized_layers=float_kernels))
        runtime = native_library.runtime_compile_config(
            [(spec.key, spec.value.decode()) for spec in lowered],
            has_fake_quantize=has_fake_quantize,
            cpu_sums_exactly=False,
        )
        if python != runtime:
            differences.append(f"{specs}: Python {python} != runtime {runtime}")
    assert not differences, "\n".join(differences[:10])


def test_every_python_key_is_compared():
    assert {"device", *VALUES} == set(KNOWN_KEYS)


# Values the runtime refuses, by key; Python refuses them when it builds the specs.
BAD_VALUES = {
    "inference_precision": ("fp32", "F16", ""),
    "performance_hint": ("latency", ""),
    "num_streams": ("0", "-1", "auto", "1234567890"),
    "inference_num_threads": ("-1", "four", "1234567890"),
    "dynamic_quantization_group_size": ("-1", "1.5"),
    "one_token_model": ("yes", "2"),
    "kv_cache_precision": ("i8", "F32"),
    "per_sequence_inputs": ("",),
    "shared_weights": ("",),
}


@pytest.mark.parametrize("key", sorted(BAD_VALUES))
def test_python_and_the_runtime_refuse_the_same_values(key):
    for value in BAD_VALUES[key]:
        with pytest.raises(ValueError):
            openvino_compile_specs(**{key: value})
        with pytest.raises(ValueError, match="refused"):
            native_library.runtime_compile_config([(key, value)], has_fake_quantize=False)


def test_the_runtime_refuses_a_spec_it_does_not_know():
    with pytest.raises(ValueError, match="refused"):
        native_library.runtime_compile_config([("precision", "f32")], has_fake_quantize=False)


def test_python_and_the_runtime_refuse_a_repeated_spec():
    from executorch.exir.backend.compile_spec_schema import CompileSpec

    with pytest.raises(ValueError, match="given twice"):
        parse_compile_specs([CompileSpec("device", b"CPU"), CompileSpec("device", b"AUTO")])
    with pytest.raises(ValueError, match="refused"):
        native_library.runtime_compile_config([("device", "CPU"), ("device", "AUTO")], has_fake_quantize=False)


def _tiny_model():
    import numpy as np
    import openvino as ov
    import openvino.opset13 as ops

    x = ops.parameter([2], ov.Type.f32)
    return ov.Model([ops.add(x, ops.constant(np.ones(2, np.float32)))], [x])


def test_lowering_checks_with_the_runtimes_configuration_without_its_cache():
    from executorch_openvino.preprocess import checking_config

    specs = openvino_compile_specs(inference_precision="bf16", cache_dir="/tmp/etov-cache", num_streams="AUTO")
    config = checking_config(_tiny_model(), parse_compile_specs(specs), specs)
    assert config == {
        "INFERENCE_PRECISION_HINT": "bf16",
        "KV_CACHE_PRECISION": "bf16",
        "NUM_STREAMS": "AUTO",
        "PERFORMANCE_HINT": "LATENCY",
    }


def test_without_the_runtime_library_lowering_checks_with_the_python_copy(monkeypatch):
    from executorch_openvino import preprocess

    def unavailable(*args, **kwargs):
        raise native_library.RuntimeLibraryUnavailable("hidden for this test")

    monkeypatch.setattr(preprocess, "runtime_compile_config", unavailable)
    specs = openvino_compile_specs(inference_precision="bf16", cache_dir="/tmp/etov-cache")
    options = parse_compile_specs(specs)
    config = preprocess.checking_config(_tiny_model(), options, specs)
    assert config == {key: value for key, value in options.compile_config().items() if key != "CACHE_DIR"}
