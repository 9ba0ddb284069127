#!/usr/bin/env bash
# libFuzzer over blob loading: parse_blob, then the backend's full init
# and destroy, with truncated, bit-flipped, random and structurally mutated blobs.
#
#   bash scripts/fuzz.sh                      # 300 s; FUZZ_SECONDS=600 for longer
#   bash scripts/fuzz.sh path/to/crash-...    # rerun one input (a reproducer)
#
# Needs clang with libFuzzer (Debian: apt-get install clang libclang-rt-14-dev, or
# another version; set CXX=clang++-NN). Builds etov_blob_fuzzer into build/fuzz
# (ETOV_BUILD_TESTS=ON ETOV_BUILD_FUZZER=ON), seeds it with real blobs written by
# serialization/blob.py and crafted damaged ones (tests/blob_seeds.py --crafted) and the committed
# corpus (backends/openvino/tests/fuzz_corpus), and fuzzes under AddressSanitizer and
# LeakSanitizer. New inputs go to build/fuzz/corpus; after the run seeds and new
# inputs are merged into build/fuzz/corpus-min, the smallest set with the same coverage.
# Crashes, leaks, timeouts and out-of-memory inputs are written to build/fuzz/artifacts/.
# TBB_ENABLE_SANITIZERS=1: see scripts/sanitize.sh; the leak suppressions and why
# they differ from sanitize.sh's: backends/openvino/tests/cpp/lsan_fuzz.supp.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
. "${VENV:-.venv}/bin/activate"
BUILD=${BUILD:-build/fuzz}
SECONDS_TO_RUN=${FUZZ_SECONDS:-300}
if [ -z "${CXX:-}" ]; then
  CXX=$(command -v clang++ || ls /usr/bin/clang++-* 2>/dev/null | sort -V | tail -1 || true)
fi
if [ -z "$CXX" ]; then
  echo "fuzz.sh: no clang++ (libFuzzer needs clang); see the comment at the top" >&2
  exit 1
fi

CXX=$CXX cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DETOV_BUILD_TESTS=ON -DETOV_BUILD_FUZZER=ON -DPython3_EXECUTABLE="$(command -v python)"
cmake --build "$BUILD" --target etov_blob_fuzzer

export TBB_ENABLE_SANITIZERS=1
export LSAN_OPTIONS=suppressions=$ROOT/backends/openvino/tests/cpp/lsan_fuzz.supp:print_suppressions=1
FUZZER=("$BUILD/etov_blob_fuzzer" -dict=backends/openvino/tests/cpp/blob_fuzz.dict
        -max_len=16384 -timeout=30 -rss_limit_mb=6144 -malloc_limit_mb=2048)

if [ $# -gt 0 ]; then
  ETOV_FUZZ_VERBOSE=1 exec "${FUZZER[@]}" "$@"
fi

rm -rf "$BUILD/seeds" && mkdir -p "$BUILD/corpus" "$BUILD/seeds" "$BUILD/artifacts"
python backends/openvino/tests/blob_seeds.py "$BUILD/seeds" --crafted
cp backends/openvino/tests/fuzz_corpus/* "$BUILD/seeds/"
# OpenVINO asks for a petabyte on these: AddressSanitizer stops on the request
# itself (allocation-size-too-big), where the plain build gets std::bad_alloc.
rm -f "$BUILD/seeds/"*bad_alloc*
"${FUZZER[@]}" -max_total_time="$SECONDS_TO_RUN" -print_final_stats=1 \
  -artifact_prefix="$BUILD/artifacts/" "$BUILD/corpus" "$BUILD/seeds"
rm -rf "$BUILD/corpus-min" && mkdir -p "$BUILD/corpus-min"
"${FUZZER[@]}" -merge=1 "$BUILD/corpus-min" "$BUILD/seeds" "$BUILD/corpus" > "$BUILD/merge.log" 2>&1
echo "fuzz.sh: $(ls "$BUILD/seeds" | wc -l) seeds and $(ls "$BUILD/corpus" | wc -l) new inputs, merged to" \
     "$(ls "$BUILD/corpus-min" | wc -l) in $BUILD/corpus-min; artifacts (crashes, leaks, timeouts): $(ls "$BUILD/artifacts" | wc -l)"
