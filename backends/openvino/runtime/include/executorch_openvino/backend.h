/*
 * The public interface of libexecutorch_openvino_runtime.so, installed with the
 * CMake package executorch_openvino (target executorch_openvino::backend).
 *
 * Loading the library registers the OpenVINO delegate with ExecuTorch's runtime
 * under kBackendId. Programs lowered with executorch_openvino.OpenvinoPartitioner
 * then load with ExecuTorch's Program or Module API as usual.
 *
 * Call etov_registration_status() once before loading programs: it reports
 * whether the registration worked. Nothing else in an application refers to
 * the library (ExecuTorch finds the delegate by name), so with -Wl,--as-needed,
 * the default of several Linux distributions, a library that is never called
 * would be dropped and the delegate never registered. The CMake target links it
 * with --no-as-needed; the call also keeps it linked where that target is not
 * used, whatever the linker flags or their order.
 */
#pragma once

#include <stddef.h>

#define ETOV_API __attribute__((visibility("default")))

namespace executorch_openvino {

// Every string constant below has a twin in the Python package (the backend id,
// the load-option keys, the tensor-name markers that lowering writes and this
// runtime reads); tests/contracts/test_backend_id.py checks that each agrees with its twin
// and that none lacks one.

/// The id the delegate registers under. Must equal BACKEND_ID in
/// backends/openvino/preprocess.py.
inline constexpr const char kBackendId[] = "ExecutorchOpenvinoBackend";

/// Load-option keys, for executorch::runtime::set_option (process-wide, or
/// etov_set_load_option) and for a LoadBackendOptionsMap given to
/// Program::load_method (one load). They win over the program's compile specs.
inline constexpr const char kPrecisionKey[] = "inference_precision";  // "f32", "f16" or "bf16"
inline constexpr const char kCacheDirKey[] = "cache_dir";             // a folder for OpenVINO's model cache
/// "1": once compiled, give back memory the runtime did not allocate (off, "0", by
/// default; docs/runtime.md says what it saves): unlock and drop the resident pages
/// of a program mapped from its file, drop those of OpenVINO's mappings of the model
/// cache's files, and trim glibc's heap. These change process-wide state that the
/// application owns, so they are its choice.
inline constexpr const char kGiveBackMemoryKey[] = "give_back_memory";

/// The name a delegate's positions input carries when its KV cache grows by
/// concatenation (conversion/rewrites/kv_cache_growth.py), followed by ".max=<positions the cache holds>".
/// Each call must then continue the sequence or start again at position 0.
inline constexpr const char kCachePositionsName[] = "executorch_openvino.cache_positions";
/// What the id of a grown cache's variable ends with; a restart at position 0 empties those.
inline constexpr const char kGrownCacheSuffix[] = ".grown";
/// What the id of a variable ends with that holds values computed from inputs fixed over
/// a sequence (conversion/rewrites/per_sequence_values.py); a restart at position 0
/// empties those too, so that the next call computes them from its inputs.
inline constexpr const char kPerSequenceSuffix[] = ".per_sequence";
/// The name an input carries whose values those variables are computed from: its shape
/// must stay the one it had at position 0 until the sequence starts again.
inline constexpr const char kPerSequenceInputName[] = "executorch_openvino.per_sequence_input";
/// The name, followed by the size n of the dimension it indexes, of an input that an
/// indexing op (embedding, index_select, gather, scatter...) reads as its indices
/// (conversion/rewrites/index_bounds.py): a call with an index outside 0 .. n - 1 fails.
inline constexpr const char kIndexRowsName[] = "executorch_openvino.index_rows=";
/// The same for indices that may count from the end (x[i], index_put): -n .. n - 1.
inline constexpr const char kSignedIndexRowsName[] = "executorch_openvino.signed_index_rows=";
/// The name of an IR Parameter that stands for a weight stored once in the program's
/// named data (serialization/named_weights.py), followed by its key there, ".crc=" and
/// the CRC-32 of its bytes in 8 hex digits: init puts a Constant over those bytes in its place.
inline constexpr const char kNamedWeightName[] = "executorch_openvino.named_weight=";

}  // namespace executorch_openvino

extern "C" {

/// 0 (executorch::runtime::Error::Ok) when the delegate is registered, else the
/// Error that register_backend returned. See above for why applications call it.
ETOV_API int etov_registration_status();

/// kBackendId, for callers that use the C functions only (the Python package).
ETOV_API const char* etov_backend_id();

/// The build number of the OpenVINO release the library runs with.
ETOV_API const char* etov_openvino_version();

/// Sets a process-wide load option (kPrecisionKey, kCacheDirKey, kGiveBackMemoryKey) for every
/// delegate loaded afterwards; an empty value clears it. Returns an
/// executorch::runtime::Error code: 0 on success.
ETOV_API int etov_set_load_option(const char* key, const char* value);

/// The configuration the runtime gives ov::Core::compile_model for a delegate
/// lowered with the compile specs keys[i] = values[i], written into `out` as
/// "KEY=VALUE" lines (a nested map's entries as "KEY.NESTED_KEY=VALUE"), sorted.
/// has_fake_quantize: whether the IR has FakeQuantize operations (the blob's model
/// facts); cpu_sums_exactly: 1 or 0 to say whether the CPU's 8-bit dot products are
/// exact, -1 to ask this CPU. Returns an executorch::runtime::Error code: 0 on
/// success, InvalidArgument for a bad spec or an `out` too small. Lowering's checking
/// compile uses it (the Python package).
ETOV_API int etov_compile_config(const char* const* keys, const char* const* values, size_t count,
                                 int has_fake_quantize, int cpu_sums_exactly, char* out, size_t out_size);

}  // extern "C"
