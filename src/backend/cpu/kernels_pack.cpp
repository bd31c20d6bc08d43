// Repacking into 16-row groups. A group is a sequence of records, one per block index (one per
// value for F32/F16/BF16); a record interleaves that block of the 16 rows so that one 64-byte
// load gives 4 bytes of each row (docs/KERNELS.md has every layout).
#include "backend/cpu/kernels_pack.h"

#include <bit>
#include <cstring>

#include "tensor/blocks.h"
#include "tensor/iq_grids.h"

namespace sinter::cpu {
namespace {

// One record: lane r's block `src` (file layout) in, or out.
struct RecordFormat {
  size_t record_bytes;  // for all 16 rows
  void (*pack)(const uint8_t* src, int r, uint8_t* record);
  void (*unpack)(const uint8_t* record, int r, uint8_t* dst);
};

// 4-byte slices: slice t of lane r at record + base + 64t + 4r.
void put_slices(const uint8_t* src, int slices, int r, uint8_t* record, size_t base, uint8_t flip = 0) {
  for (int t = 0; t < slices; ++t) {
    for (int j = 0; j < 4; ++j) record[base + 64 * t + 4 * r + j] = src[4 * t + j] ^ flip;
  }
}
void get_slices(const uint8_t* record, int slices, int r, uint8_t* dst, size_t base, uint8_t flip = 0) {
  for (int t = 0; t < slices; ++t) {
    for (int j = 0; j < 4; ++j) dst[4 * t + j] = record[base + 64 * t + 4 * r + j] ^ flip;
  }
}
// Per-lane fields of `bytes` bytes: lane r at record + base + bytes·r.
void put_lane(const void* src, size_t bytes, int r, uint8_t* record, size_t base) {
  std::memcpy(record + base + bytes * static_cast<size_t>(r), src, bytes);
}
void get_lane(const uint8_t* record, size_t bytes, int r, void* dst, size_t base) {
  std::memcpy(dst, record + base + bytes * static_cast<size_t>(r), bytes);
}

// Q4_0 / IQ4_NL: d[16] | qs slices[4]
constexpr RecordFormat kQ4_0{288,
                             [](const uint8_t* s, int r, uint8_t* rec) {
                               put_lane(s, 2, r, rec, 0);
                               put_slices(s + 2, 4, r, rec, 32);
                             },
                             [](const uint8_t* rec, int r, uint8_t* d) {
                               get_lane(rec, 2, r, d, 0);
                               get_slices(rec, 4, r, d + 2, 32);
                             }};
// MXFP4: scale[16] (F32: 2^(e - 128), the scale of the doubled E2M1 table, whose exponents F16
// cannot all hold) | qs slices[4]
constexpr RecordFormat kMXFP4{
    320,
    [](const uint8_t* s, int r, uint8_t* rec) {
      const float scale = iq::mxfp4_half_scale(s[0]);
      put_lane(&scale, 4, r, rec, 0);
      put_slices(s + 1, 4, r, rec, 64);
    },
    [](const uint8_t* rec, int r, uint8_t* d) {
      float scale;
      get_lane(rec, 4, r, &scale, 0);
      // The exponent back from the power of two (subnormals for e < 2).
      const auto bits = std::bit_cast<uint32_t>(scale);
      d[0] = static_cast<uint8_t>(bits >= 0x00800000u ? (bits >> 23) + 1 : bits == 0x00400000u ? 1 : 0);
      get_slices(rec, 4, r, d + 1, 64);
    }};
// Q8_0: d[16] | q slices[8], each byte q + 128 (so that it is an unsigned operand)
constexpr RecordFormat kQ8_0{544,
                             [](const uint8_t* s, int r, uint8_t* rec) {
                               put_lane(s, 2, r, rec, 0);
                               put_slices(s + 2, 8, r, rec, 32, 0x80);
                             },
                             [](const uint8_t* rec, int r, uint8_t* d) {
                               get_lane(rec, 2, r, d, 0);
                               get_slices(rec, 8, r, d + 2, 32, 0x80);
                             }};
// Q4_1: d[16] | m[16] | qs slices[4]
constexpr RecordFormat kQ4_1{320,
                             [](const uint8_t* s, int r, uint8_t* rec) {
                               put_lane(s, 2, r, rec, 0);
                               put_lane(s + 2, 2, r, rec, 32);
                               put_slices(s + 4, 4, r, rec, 64);
                             },
                             [](const uint8_t* rec, int r, uint8_t* d) {
                               get_lane(rec, 2, r, d, 0);
                               get_lane(rec, 2, r, d + 2, 32);
                               get_slices(rec, 4, r, d + 4, 64);
                             }};
// Q5_0: d[16] | qh[16] (uint32) | qs slices[4]
constexpr RecordFormat kQ5_0{352,
                             [](const uint8_t* s, int r, uint8_t* rec) {
                               put_lane(s, 2, r, rec, 0);
                               put_lane(s + 2, 4, r, rec, 32);
                               put_slices(s + 6, 4, r, rec, 96);
                             },
                             [](const uint8_t* rec, int r, uint8_t* d) {
                               get_lane(rec, 2, r, d, 0);
                               get_lane(rec, 4, r, d + 2, 32);
                               get_slices(rec, 4, r, d + 6, 96);
                             }};
// Q5_1: d[16] | m[16] | qh[16] | qs slices[4]
constexpr RecordFormat kQ5_1{384,
                             [](const uint8_t* s, int r, uint8_t* rec) {
                               put_lane(s, 2, r, rec, 0);
                               put_lane(s + 2, 2, r, rec, 32);
                               put_lane(s + 4, 4, r, rec, 64);
                               put_slices(s + 8, 4, r, rec, 128);
                             },
                             [](const uint8_t* rec, int r, uint8_t* d) {
                               get_lane(rec, 2, r, d, 0);
                               get_lane(rec, 2, r, d + 2, 32);
                               get_lane(rec, 4, r, d + 4, 64);
                               get_slices(rec, 4, r, d + 8, 128);
                             }};

// Q4_K/Q5_K scales and minimums: eight 6-bit values each, packed in 12 bytes.
void unpack_scales_mins(const uint8_t* p, uint8_t* sc, uint8_t* m) {
  for (int g = 0; g < 8; ++g) {
    if (g < 4) {
      sc[g] = p[g] & 63;
      m[g] = p[g + 4] & 63;
    } else {
      sc[g] = static_cast<uint8_t>((p[g + 4] & 0x0f) | (p[g - 4] >> 6) << 4);
      m[g] = static_cast<uint8_t>((p[g + 4] >> 4) | (p[g] >> 6) << 4);
    }
  }
}
void pack_scales_mins(const uint8_t* sc, const uint8_t* m, uint8_t* p) {
  std::memset(p, 0, 12);
  for (int g = 0; g < 8; ++g) {
    if (g < 4) {
      p[g] = static_cast<uint8_t>(p[g] | sc[g]);
      p[g + 4] = static_cast<uint8_t>(p[g + 4] | m[g]);
    } else {
      p[g + 4] = static_cast<uint8_t>((sc[g] & 0x0f) | (m[g] & 0x0f) << 4);
      p[g - 4] = static_cast<uint8_t>(p[g - 4] | (sc[g] >> 4) << 6);
      p[g] = static_cast<uint8_t>(p[g] | (m[g] >> 4) << 6);
    }
  }
}

// Q4_K: d[16] | dmin[16] | sc[8][16] | m[8][16] | qs slices[32] (slice 8c + t: qs[32c + 4t..])
void put_scales_mins(const uint8_t* packed, int r, uint8_t* rec) {
  uint8_t sc[8], m[8];
  unpack_scales_mins(packed, sc, m);
  for (int g = 0; g < 8; ++g) {
    rec[64 + 16 * g + r] = sc[g];
    rec[192 + 16 * g + r] = m[g];
  }
}
void get_scales_mins(const uint8_t* rec, int r, uint8_t* packed) {
  uint8_t sc[8], m[8];
  for (int g = 0; g < 8; ++g) {
    sc[g] = rec[64 + 16 * g + r];
    m[g] = rec[192 + 16 * g + r];
  }
  pack_scales_mins(sc, m, packed);
}
constexpr RecordFormat kQ4_K{2368,
                             [](const uint8_t* s, int r, uint8_t* rec) {
                               const auto* b = reinterpret_cast<const BlockQ4_K*>(s);
                               put_lane(&b->d, 2, r, rec, 0);
                               put_lane(&b->dmin, 2, r, rec, 32);
                               put_scales_mins(b->scales, r, rec);
                               put_slices(b->qs, 32, r, rec, 320);
                             },
                             [](const uint8_t* rec, int r, uint8_t* d) {
                               auto* b = reinterpret_cast<BlockQ4_K*>(d);
                               get_lane(rec, 2, r, &b->d, 0);
                               get_lane(rec, 2, r, &b->dmin, 32);
                               get_scales_mins(rec, r, b->scales);
                               get_slices(rec, 32, r, b->qs, 320);
                             }};
// Q5_K: as Q4_K, with qh slices[8] (qh[4t..4t+3]) before the qs slices
constexpr RecordFormat kQ5_K{2880,
                             [](const uint8_t* s, int r, uint8_t* rec) {
                               const auto* b = reinterpret_cast<const BlockQ5_K*>(s);
                               put_lane(&b->d, 2, r, rec, 0);
                               put_lane(&b->dmin, 2, r, rec, 32);
                               put_scales_mins(b->scales, r, rec);
                               put_slices(b->qh, 8, r, rec, 320);
                               put_slices(b->qs, 32, r, rec, 832);
                             },
                             [](const uint8_t* rec, int r, uint8_t* d) {
                               auto* b = reinterpret_cast<BlockQ5_K*>(d);
                               get_lane(rec, 2, r, &b->d, 0);
                               get_lane(rec, 2, r, &b->dmin, 32);
                               get_scales_mins(rec, r, b->scales);
                               get_slices(rec, 8, r, b->qh, 320);
                               get_slices(rec, 32, r, b->qs, 832);
                             }};

// Q6_K: d[16] | sc[16][16] | ql slices[32] | qh slices[16]. Byte j of ql slice t holds the low
// 4 bits of values 4t + j (low nibble) and 128 + 4t + j (high nibble); byte j of qh slice t
// holds the top 2 bits of values 64s + 4t + j at bits 2s..2s+1 (s = 0..3).
void q6_k_levels(const BlockQ6_K& b, uint8_t* levels) {
  for (int v = 0; v < kQKK; ++v) {
    const int half = v / 128, plane = (v % 128) / 32, l = v % 32;
    const uint8_t low_byte = b.ql[64 * half + 32 * (plane & 1) + l];
    const int low = plane < 2 ? low_byte & 0x0f : low_byte >> 4;
    const int high = (b.qh[32 * half + l] >> (2 * plane)) & 3;
    levels[v] = static_cast<uint8_t>(low | high << 4);
  }
}
void q6_k_store(const uint8_t* levels, BlockQ6_K& b) {
  std::memset(b.ql, 0, sizeof b.ql);
  std::memset(b.qh, 0, sizeof b.qh);
  for (int v = 0; v < kQKK; ++v) {
    const int half = v / 128, plane = (v % 128) / 32, l = v % 32;
    uint8_t& low_byte = b.ql[64 * half + 32 * (plane & 1) + l];
    low_byte = static_cast<uint8_t>(low_byte | (plane < 2 ? levels[v] & 0x0f : (levels[v] & 0x0f) << 4));
    b.qh[32 * half + l] = static_cast<uint8_t>(b.qh[32 * half + l] | (levels[v] >> 4) << (2 * plane));
  }
}
constexpr size_t kQ6Ql = 288, kQ6Qh = 288 + 2048;
constexpr RecordFormat kQ6_K{
    3360,
    [](const uint8_t* s, int r, uint8_t* rec) {
      const auto* b = reinterpret_cast<const BlockQ6_K*>(s);
      uint8_t levels[kQKK];
      q6_k_levels(*b, levels);
      put_lane(&b->d, 2, r, rec, 0);
      for (int g = 0; g < 16; ++g) rec[32 + 16 * g + r] = static_cast<uint8_t>(b->scales[g]);
      for (int t = 0; t < 32; ++t) {
        for (int j = 0; j < 4; ++j) {
          rec[kQ6Ql + 64 * t + 4 * r + j] =
              static_cast<uint8_t>((levels[4 * t + j] & 0x0f) | (levels[128 + 4 * t + j] & 0x0f) << 4);
        }
      }
      for (int t = 0; t < 16; ++t) {
        for (int j = 0; j < 4; ++j) {
          int bits = 0;
          for (int s4 = 0; s4 < 4; ++s4) bits |= (levels[64 * s4 + 4 * t + j] >> 4) << (2 * s4);
          rec[kQ6Qh + 64 * t + 4 * r + j] = static_cast<uint8_t>(bits);
        }
      }
    },
    [](const uint8_t* rec, int r, uint8_t* d) {
      auto* b = reinterpret_cast<BlockQ6_K*>(d);
      uint8_t levels[kQKK];
      for (int t = 0; t < 32; ++t) {
        for (int j = 0; j < 4; ++j) {
          const uint8_t byte = rec[kQ6Ql + 64 * t + 4 * r + j];
          levels[4 * t + j] = byte & 0x0f;
          levels[128 + 4 * t + j] = byte >> 4;
        }
      }
      for (int t = 0; t < 16; ++t) {
        for (int j = 0; j < 4; ++j) {
          const uint8_t bits = rec[kQ6Qh + 64 * t + 4 * r + j];
          for (int s4 = 0; s4 < 4; ++s4) {
            levels[64 * s4 + 4 * t + j] |= static_cast<uint8_t>(((bits >> (2 * s4)) & 3) << 4);
          }
        }
      }
      q6_k_store(levels, *b);
      get_lane(rec, 2, r, &b->d, 0);
      for (int g = 0; g < 16; ++g) b->scales[g] = static_cast<int8_t>(rec[32 + 16 * g + r]);
    }};

// Q2_K: d[16] | dmin[16] | scales[16][16] (the file's bytes: scale low nibble, minimum high) |
// qs slices[16] (slice t = qs[4t..4t+3])
constexpr RecordFormat kQ2_K{1344,
                             [](const uint8_t* s, int r, uint8_t* rec) {
                               const auto* b = reinterpret_cast<const BlockQ2_K*>(s);
                               put_lane(&b->d, 2, r, rec, 0);
                               put_lane(&b->dmin, 2, r, rec, 32);
                               for (int g = 0; g < 16; ++g) rec[64 + 16 * g + r] = b->scales[g];
                               put_slices(b->qs, 16, r, rec, 320);
                             },
                             [](const uint8_t* rec, int r, uint8_t* d) {
                               auto* b = reinterpret_cast<BlockQ2_K*>(d);
                               get_lane(rec, 2, r, &b->d, 0);
                               get_lane(rec, 2, r, &b->dmin, 32);
                               for (int g = 0; g < 16; ++g) b->scales[g] = rec[64 + 16 * g + r];
                               get_slices(rec, 16, r, b->qs, 320);
                             }};

// Q3_K: d[16] | scales[16][16] (int8, −32..31) | qs slices[16] | hmask slices[8]
void q3_k_scales(const uint8_t* packed, int8_t* scales) {
  for (int j = 0; j < 16; ++j) {
    const int low = j < 8 ? packed[j] & 0x0f : packed[j - 8] >> 4;
    const int high = (packed[8 + j % 4] >> (2 * (j / 4))) & 3;
    scales[j] = static_cast<int8_t>((low | high << 4) - 32);
  }
}
void q3_k_pack_scales(const int8_t* scales, uint8_t* packed) {
  std::memset(packed, 0, 12);
  for (int j = 0; j < 16; ++j) {
    const int biased = scales[j] + 32;
    if (j < 8) {
      packed[j] = static_cast<uint8_t>(packed[j] | (biased & 0x0f));
    } else {
      packed[j - 8] = static_cast<uint8_t>(packed[j - 8] | (biased & 0x0f) << 4);
    }
    packed[8 + j % 4] = static_cast<uint8_t>(packed[8 + j % 4] | (biased >> 4) << (2 * (j / 4)));
  }
}
constexpr RecordFormat kQ3_K{1824,
                             [](const uint8_t* s, int r, uint8_t* rec) {
                               const auto* b = reinterpret_cast<const BlockQ3_K*>(s);
                               int8_t scales[16];
                               q3_k_scales(b->scales, scales);
                               put_lane(&b->d, 2, r, rec, 0);
                               for (int g = 0; g < 16; ++g)
                                 rec[32 + 16 * g + r] = static_cast<uint8_t>(scales[g]);
                               put_slices(b->qs, 16, r, rec, 288);
                               put_slices(b->hmask, 8, r, rec, 1312);
                             },
                             [](const uint8_t* rec, int r, uint8_t* d) {
                               auto* b = reinterpret_cast<BlockQ3_K*>(d);
                               int8_t scales[16];
                               for (int g = 0; g < 16; ++g)
                                 scales[g] = static_cast<int8_t>(rec[32 + 16 * g + r]);
                               q3_k_pack_scales(scales, b->scales);
                               get_lane(rec, 2, r, &b->d, 0);
                               get_slices(rec, 16, r, b->qs, 288);
                               get_slices(rec, 8, r, b->hmask, 1312);
                             }};

// IQ4_XS: d[16] | scales[8][16] (int8, −32..31) | qs slices[32] (slice t = qs[4t..4t+3]: group t/4)
constexpr RecordFormat kIQ4_XS{
    2208,
    [](const uint8_t* s, int r, uint8_t* rec) {
      const auto* b = reinterpret_cast<const BlockIQ4_XS*>(s);
      const uint16_t high = b->scales_h;
      put_lane(&b->d, 2, r, rec, 0);
      for (int g = 0; g < 8; ++g) {
        const int low = (b->scales_l[g / 2] >> (4 * (g % 2))) & 0x0f;
        rec[32 + 16 * g + r] = static_cast<uint8_t>((low | ((high >> (2 * g)) & 3) << 4) - 32);
      }
      put_slices(b->qs, 32, r, rec, 160);
    },
    [](const uint8_t* rec, int r, uint8_t* d) {
      auto* b = reinterpret_cast<BlockIQ4_XS*>(d);
      uint16_t high = 0;
      std::memset(b->scales_l, 0, sizeof b->scales_l);
      for (int g = 0; g < 8; ++g) {
        const int biased = static_cast<int8_t>(rec[32 + 16 * g + r]) + 32;
        b->scales_l[g / 2] = static_cast<uint8_t>(b->scales_l[g / 2] | (biased & 0x0f) << (4 * (g % 2)));
        high = static_cast<uint16_t>(high | (biased >> 4) << (2 * g));
      }
      b->scales_h = high;
      get_lane(rec, 2, r, &b->d, 0);
      get_slices(rec, 32, r, b->qs, 160);
    }};

const RecordFormat* record_format(DType type) {
  switch (type) {
    case DType::Q4_0:
    case DType::IQ4_NL: return &kQ4_0;
    case DType::Q8_0: return &kQ8_0;
    case DType::MXFP4: return &kMXFP4;
    case DType::Q4_1: return &kQ4_1;
    case DType::Q5_0: return &kQ5_0;
    case DType::Q5_1: return &kQ5_1;
    case DType::Q4_K: return &kQ4_K;
    case DType::Q5_K: return &kQ5_K;
    case DType::Q6_K: return &kQ6_K;
    case DType::Q2_K: return &kQ2_K;
    case DType::Q3_K: return &kQ3_K;
    case DType::IQ4_XS: return &kIQ4_XS;
    default: return nullptr;
  }
}

// F32, F16, BF16: one record per value, [k][16] elements.
size_t plain_size(DType type) {
  switch (type) {
    case DType::F32: return 4;
    case DType::F16:
    case DType::BF16: return 2;
    default: return 0;
  }
}

}  // namespace

bool has_packed_layout(DType type) { return record_format(type) != nullptr || plain_size(type) != 0; }

size_t packed_group_bytes(DType type, int64_t n_in) {
  if (const size_t size = plain_size(type)) return kGroupRows * size * static_cast<size_t>(n_in);
  const RecordFormat* f = record_format(type);
  return f == nullptr ? 0 : f->record_bytes * static_cast<size_t>(n_in / dtype_traits(type).block_size);
}

void pack_group(DType type, int64_t n_in, const uint8_t* rows, size_t row_stride, int64_t n_out, int64_t g,
                uint8_t* out) {
  std::memset(out, 0, packed_group_bytes(type, n_in));
  const int lanes = static_cast<int>(std::min<int64_t>(kGroupRows, n_out - g * kGroupRows));
  if (const size_t size = plain_size(type)) {
    for (int r = 0; r < lanes; ++r) {
      const uint8_t* row = rows + static_cast<size_t>(g * kGroupRows + r) * row_stride;
      for (int64_t k = 0; k < n_in; ++k) {
        std::memcpy(out + (static_cast<size_t>(k) * kGroupRows + static_cast<size_t>(r)) * size,
                    row + k * size, size);
      }
    }
    return;
  }
  const RecordFormat& f = *record_format(type);
  const size_t block_bytes = dtype_traits(type).block_bytes;
  const int64_t blocks = n_in / dtype_traits(type).block_size;
  for (int r = 0; r < lanes; ++r) {
    const uint8_t* row = rows + static_cast<size_t>(g * kGroupRows + r) * row_stride;
    for (int64_t b = 0; b < blocks; ++b) f.pack(row + b * block_bytes, r, out + b * f.record_bytes);
  }
}

void unpack_row(const PackedMatrix& w, int64_t r, uint8_t* out) {
  const uint8_t* group = w.data + static_cast<size_t>(r / kGroupRows) * w.group_bytes;
  const int lane = static_cast<int>(r % kGroupRows);
  if (const size_t size = plain_size(w.type)) {
    for (int64_t k = 0; k < w.n_in; ++k) {
      std::memcpy(out + k * size,
                  group + (static_cast<size_t>(k) * kGroupRows + static_cast<size_t>(lane)) * size, size);
    }
    return;
  }
  const RecordFormat& f = *record_format(w.type);
  const size_t block_bytes = dtype_traits(w.type).block_bytes;
  for (int64_t b = 0; b < w.n_in / dtype_traits(w.type).block_size; ++b) {
    f.unpack(group + b * f.record_bytes, lane, out + b * block_bytes);
  }
}

Status PackedWeightStore::pack(Tensor* weight, const KernelSet& kernels, ThreadPool* pool) {
  const DType type = weight->type;
  if (gemm_kernel(kernels, type) == nullptr || !has_packed_layout(type)) return ok_status();
  if (weight->ne[1] < 2 || weight->ne[2] != 1 || weight->ne[3] != 1) return ok_status();
  if (weight->ne[0] % dtype_traits(type).block_size != 0 || weight->nb[1] != weight->row_bytes())
    return ok_status();
  PackedMatrix m;
  m.type = type;
  m.n_in = weight->ne[0];
  m.n_out = weight->ne[1];
  m.groups = (m.n_out + kGroupRows - 1) / kGroupRows;
  m.group_bytes = packed_group_bytes(type, m.n_in);
  const size_t total = m.group_bytes * static_cast<size_t>(m.groups);
  Result<LargeBuffer> allocated = LargeBuffer::allocate(total);
  if (!allocated.ok()) return allocated.error().with_context(concat("repacking ", weight->name));
  LargeBuffer buffer = std::move(allocated).value();
  auto pack_share = [&](const ThreadContext& thread) {
    for (int64_t g = thread.share_begin(m.groups); g < thread.share_end(m.groups); ++g) {
      pack_group(type, m.n_in, static_cast<const uint8_t*>(weight->data), weight->nb[1], m.n_out, g,
                 buffer.data() + static_cast<size_t>(g) * m.group_bytes);
    }
  };
  if (pool != nullptr) {
    pool->run(pack_share);
  } else {
    pack_share(ThreadContext{});
  }
  m.data = buffer.data();
  weight->data = buffer.data();
  bytes_ += total;
  entries_.emplace(m.data, Entry{m, std::move(buffer)});
  return ok_status();
}

const PackedMatrix* PackedWeightStore::find(const void* data) const {
  const auto it = entries_.find(data);
  return it == entries_.end() ? nullptr : &it->second.matrix;
}

}  // namespace sinter::cpu
