# F32 vector kernels (the attention inner loop, activation functions, row conversions and sums,
# the recurrent layers' convolution and scan):
# generic everywhere; on x86-64 one file per ISA level with its flags.
target_sources(sinter_backend_objects PRIVATE cpu/attention_generic.cpp cpu/activation_generic.cpp
  cpu/row_generic.cpp cpu/recurrent_generic.cpp)
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64|amd64")
  set(sinter_vector_avx512_sources cpu/avx512/attention_avx512.cpp cpu/avx512/activation_avx512.cpp
    cpu/avx512/row_avx512.cpp cpu/avx512/recurrent_avx512.cpp)
  set(sinter_vector_avx2_sources cpu/avx2/attention_avx2.cpp cpu/avx2/activation_avx2.cpp
    cpu/avx2/row_avx2.cpp cpu/avx2/recurrent_avx2.cpp)
  target_sources(sinter_backend_objects PRIVATE ${sinter_vector_avx512_sources} ${sinter_vector_avx2_sources})
  set_source_files_properties(${sinter_vector_avx512_sources} PROPERTIES COMPILE_OPTIONS
    "-mavx512f;-mavx512bw;-mavx512vl;-mavx512dq;-mavx2;-mfma;-mf16c;$<$<CXX_COMPILER_ID:GNU>:-Wno-maybe-uninitialized>")
  set_source_files_properties(${sinter_vector_avx2_sources} PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma;-mf16c")
else()
  target_sources(sinter_backend_objects PRIVATE cpu/vector_kernels_none.cpp)
endif()
