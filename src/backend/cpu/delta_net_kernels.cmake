# The gated delta rule (op_delta_net.cpp, delta_net_kernels.h): generic everywhere; on x86-64 one
# file per ISA level with its flags (included from src/backend/CMakeLists.txt).
target_sources(sinter_backend_objects PRIVATE cpu/op_delta_net.cpp cpu/delta_net_generic.cpp)
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64|amd64")
  target_sources(sinter_backend_objects PRIVATE cpu/avx512/delta_net_avx512.cpp cpu/avx2/delta_net_avx2.cpp)
  set_source_files_properties(cpu/avx512/delta_net_avx512.cpp PROPERTIES COMPILE_OPTIONS
    "-mavx512f;-mavx512bw;-mavx512vl;-mavx512dq;-mavx2;-mfma;-mf16c;$<$<CXX_COMPILER_ID:GNU>:-Wno-maybe-uninitialized>")
  set_source_files_properties(cpu/avx2/delta_net_avx2.cpp PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma;-mf16c")
else()
  target_sources(sinter_backend_objects PRIVATE cpu/delta_net_kernels_none.cpp)
endif()
