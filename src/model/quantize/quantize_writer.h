// Writes the quantized model a plan describes: the input's metadata (general.file_type set to
// the mixture's llama.cpp file type, split keys dropped), each tensor converted through F32 or
// copied as it is, atomically (GgufWriter), one tensor in memory at a time.
#pragma once

#include <functional>
#include <string>

#include "core/thread_pool.h"
#include "gguf/gguf_file.h"
#include "model/quantize/quantize_plan.h"
#include "sinter/result.h"

namespace sinter {

// llama.cpp's GGML_QNT_VERSION, written as general.quantization_version.
constexpr uint32_t kQuantizationVersion = 2;

// `plan` must come from plan_quantization(file, ...). `pool` (optional) splits the rows of each
// tensor; `progress(done, total)` is called after each tensor, in bytes written.
Status write_quantized_model(const GgufFile& file, const QuantizePlan& plan, const std::string& path,
                             ThreadPool* pool = nullptr,
                             const std::function<void(size_t, size_t)>& progress = {});

}  // namespace sinter
