# Attention inner loops: generic everywhere; on x86-64 one file per ISA level with its flags.
target_sources(sinter_backend_objects PRIVATE cpu/attention_generic.cpp)
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64|amd64")
  target_sources(sinter_backend_objects PRIVATE cpu/avx512/attention_avx512.cpp cpu/avx2/attention_avx2.cpp)
  set_source_files_properties(cpu/avx512/attention_avx512.cpp PROPERTIES COMPILE_OPTIONS
    "-mavx512f;-mavx512bw;-mavx512vl;-mavx512dq;-mavx2;-mfma;-mf16c;-Wno-maybe-uninitialized")
  set_source_files_properties(cpu/avx2/attention_avx2.cpp PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma;-mf16c")
else()
  target_sources(sinter_backend_objects PRIVATE cpu/attention_none.cpp)
endif()
