# CPU kernels: the generic level everywhere, and on x86-64 one set of files per ISA level, each
# compiled with that level's instruction-set flags (chosen at run time by core/cpu_features).
target_sources(sinter_backend_objects PRIVATE
  cpu/kernels.cpp cpu/kernels_generic.cpp cpu/kernels_pack.cpp)

if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64|amd64")
  set(sinter_avx512_sources
    cpu/avx512/quantize_avx512.cpp cpu/avx512/gemm_legacy_avx512.cpp cpu/avx512/gemm_k_avx512.cpp
    cpu/avx512/gemm_float_avx512.cpp)
  set(sinter_avx2_sources
    cpu/avx2/quantize_avx2.cpp cpu/avx2/gemm_legacy_avx2.cpp cpu/avx2/gemm_k_avx2.cpp cpu/avx2/gemm_float_avx2.cpp)
  target_sources(sinter_backend_objects PRIVATE
    cpu/kernels_isa.cpp ${sinter_avx512_sources} ${sinter_avx2_sources})
  # GCC 12 warns about the _mm512_undefined_* values inside its own reduction intrinsics.
  set_source_files_properties(${sinter_avx512_sources} PROPERTIES COMPILE_OPTIONS
    "-mavx512f;-mavx512bw;-mavx512vl;-mavx512dq;-mavx512vnni;-mavx2;-mfma;-mf16c;-mbmi2;$<$<CXX_COMPILER_ID:GNU>:-Wno-maybe-uninitialized>")
  set_source_files_properties(${sinter_avx2_sources} PROPERTIES COMPILE_OPTIONS
    "-mavx2;-mfma;-mf16c;-mbmi2;$<$<CXX_COMPILER_ID:GNU>:-Wno-maybe-uninitialized>")
else()
  target_sources(sinter_backend_objects PRIVATE cpu/kernels_none.cpp)
endif()
