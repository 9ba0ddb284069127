/*
 * A plain main() for the blob fuzz target (blob_fuzz_target.cpp), for compilers
 * without libFuzzer: runs every file named on the command line (or every file in
 * a named directory) through LLVMFuzzerTestOneInput and prints one line per file:
 *
 *   <path>: refused by parse_blob (InvalidArgument)
 *   <path>: parsed, refused by init (DelegateInvalidCompatibility)
 *   <path>: loaded and destroyed (model facts 0x<the model facts parse_blob read>)
 *
 * The target aborts on anything unexpected, so a zero exit status means every
 * file either loaded or was refused cleanly with an error log line.
 */
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <executorch/runtime/core/error.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" int etov_fuzz_last_outcome;
extern "C" int etov_fuzz_last_error;
extern "C" unsigned etov_fuzz_last_model_facts;

int main(int argc, char** argv) {
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path path(argv[i]);
    if (std::filesystem::is_directory(path)) {
      std::vector<std::string> found;
      for (const auto& entry : std::filesystem::directory_iterator(path)) {
        if (entry.is_regular_file()) found.push_back(entry.path().string());
      }
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else {
      files.push_back(path.string());
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "usage: %s blob-or-directory [...]\n", argv[0]);
    return 1;
  }
  for (const std::string& file : files) {
    std::ifstream stream(file, std::ios::binary);
    if (!stream) {
      std::fprintf(stderr, "cannot read %s\n", file.c_str());
      return 1;
    }
    const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(stream)), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
    const char* error = executorch::runtime::to_string(static_cast<executorch::runtime::Error>(etov_fuzz_last_error));
    switch (etov_fuzz_last_outcome) {
      case 0:
        std::printf("%s: refused by parse_blob (%s)\n", file.c_str(), error);
        break;
      case 1:
        std::printf("%s: parsed, refused by init (%s)\n", file.c_str(), error);
        break;
      default:
        std::printf("%s: loaded and destroyed (model facts 0x%x)\n", file.c_str(), etov_fuzz_last_model_facts);
        break;
    }
    std::fflush(stdout);
  }
  std::printf("%zu files, no crash\n", files.size());
  return 0;
}
