# RWKV's WKV recurrences (op_rwkv.cpp, rwkv_kernels.h): generic everywhere; on x86-64 one file per
# ISA level with its flags (included from src/backend/CMakeLists.txt).
target_sources(sinter_backend_objects PRIVATE cpu/op_rwkv.cpp cpu/rwkv_generic.cpp)
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64|amd64")
  target_sources(sinter_backend_objects PRIVATE cpu/avx512/rwkv_avx512.cpp cpu/avx2/rwkv_avx2.cpp)
  set_source_files_properties(cpu/avx512/rwkv_avx512.cpp PROPERTIES COMPILE_OPTIONS
    "-mavx512f;-mavx512bw;-mavx512vl;-mavx512dq;-mavx2;-mfma;-mf16c;$<$<CXX_COMPILER_ID:GNU>:-Wno-maybe-uninitialized>")
  set_source_files_properties(cpu/avx2/rwkv_avx2.cpp PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma;-mf16c")
else()
  target_sources(sinter_backend_objects PRIVATE cpu/rwkv_kernels_none.cpp)
endif()
