// Feeds arbitrary bytes to the GGUF reader: it must return an Error or a file, never crash or
// read outside the buffer.
#include <cstddef>
#include <cstdint>

#include "core/mapped_file.h"
#include "gguf/gguf_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto file = sinter::MappedFile::from_bytes({data, size}, "fuzz.gguf");
  auto gguf = sinter::GgufFile::parse(file);
  if (gguf) {
    // Touch everything the reader handed out.
    size_t sum = 0;
    for (const auto& t : gguf->tensors()) {
      if (t.bytes > 0) sum += t.data[0] + t.data[t.bytes - 1];
    }
    for (const auto& [key, value] : gguf->metadata().entries()) sum += value.to_display().size();
    (void)sum;
  }
  return 0;
}
