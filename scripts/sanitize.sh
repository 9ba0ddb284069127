#!/usr/bin/env bash
# AddressSanitizer and LeakSanitizer over the C++ runtime.
#
# Builds the runtime and its C++ test programs with -fsanitize=address (CMake
# options ETOV_BUILD_TESTS=ON ETOV_SANITIZE=address) into build/asan, lowers a set
# of fully delegated programs with static and dynamic outputs, and runs:
#   - etov_load_runner: every program loaded, executed ITERATIONS times (inputs of
#     dynamic programs change size every call) and destroyed, LOADS times over, all
#     in one process; then again at per-load precision bf16; then twice with a
#     cache_dir (the first load writes the model cache, the second imports it);
#   - etov_tensor_binding_test: the zero-copy binding test;
#   - etov_crc32_test: the blob checksum, folded and table implementations;
#   - etov_blob_driver: real blobs, crafted damaged ones, MUTATIONS randomly mutated
#     ones and the fuzz corpus through the backend's init and destroy.
# Any invalid access or leak makes the program, and this script, fail.
#
#   bash scripts/sanitize.sh                 # uses .venv (set VENV= to change)
#   ITERATIONS=1000 LOADS=5 MUTATIONS=3000 bash scripts/sanitize.sh
#   SANITIZE=address,undefined BUILD=build/asan-ubsan bash scripts/sanitize.sh
#
# Environment it sets, and why:
#   TBB_ENABLE_SANITIZERS=1  oneTBB then loads libtbbbind without RTLD_DEEPBIND,
#                            which AddressSanitizer refuses (google/sanitizers#611).
#   LSAN_OPTIONS=suppressions=backends/openvino/tests/cpp/lsan.supp
#                            leaks inside oneTBB and OpenVINO, explained in that file;
#                            print_suppressions=1 lists it whenever it matched.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
. "${VENV:-.venv}/bin/activate"
BUILD=${BUILD:-build/asan}
ITERATIONS=${ITERATIONS:-100}
LOADS=${LOADS:-3}
MUTATIONS=${MUTATIONS:-300}
SANITIZE=${SANITIZE:-address}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DETOV_BUILD_TESTS=ON -DETOV_SANITIZE="$SANITIZE" -DPython3_EXECUTABLE="$(command -v python)"
cmake --build "$BUILD" --target etov_load_runner etov_tensor_binding_test etov_blob_driver etov_crc32_test

# The programs and blobs are made by the normal (uninstrumented) Python package.
python backends/openvino/tests/cpp_programs.py "$WORK/programs"
python backends/openvino/tests/blob_seeds.py "$WORK/blobs" --crafted --mutations "$MUTATIONS"
# Left out: OpenVINO asks for a petabyte on these, which AddressSanitizer reports
# itself (allocation-size-too-big) where the plain build gets std::bad_alloc.
find "$WORK/blobs" backends/openvino/tests/fuzz_corpus -type f ! -name '*bad_alloc*' | sort > "$WORK/blob-list"

export TBB_ENABLE_SANITIZERS=1
export ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=1:fast_unwind_on_malloc=0:strict_string_checks=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export LSAN_OPTIONS=suppressions=$ROOT/backends/openvino/tests/cpp/lsan.supp:print_suppressions=1

set -x
"$BUILD/etov_load_runner" --iterations "$ITERATIONS" --loads "$LOADS" --vary-dim0 "$WORK"/programs/*.pte > "$WORK/f32.out"
"$BUILD/etov_load_runner" --precision bf16 --iterations "$ITERATIONS" --vary-dim0 "$WORK"/programs/*.pte > "$WORK/bf16.out"
"$BUILD/etov_load_runner" --cache-dir "$WORK/cache" --iterations 10 --loads 2 "$WORK"/programs/*.pte > "$WORK/cached.out"
ls "$WORK"/cache/etov-ir-*.xml > /dev/null  # the model cache holds the IR files
"$BUILD/etov_tensor_binding_test"
"$BUILD/etov_crc32_test"
xargs "$BUILD/etov_blob_driver" < "$WORK/blob-list" > "$WORK/blobs.out"
set +x
echo "sanitize.sh: $(grep -c '^method .* loaded' "$WORK/f32.out") + $(grep -c '^method .* loaded' "$WORK/bf16.out") loads," \
     "$ITERATIONS executes each; $(grep -c '^method .* loaded' "$WORK/cached.out") through a cache_dir;" \
     "tensor binding and CRC-32 tests; $(wc -l < "$WORK/blob-list") blobs through init" \
     "($(grep -c 'loaded and destroyed' "$WORK/blobs.out") loaded): no report from -fsanitize=$SANITIZE or LeakSanitizer"
