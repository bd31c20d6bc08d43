# RWKV's WKV recurrences (op_rwkv.cpp, rwkv_kernels.h), included from src/backend/CMakeLists.txt.
target_sources(sinter_backend_objects PRIVATE cpu/op_rwkv.cpp cpu/rwkv_generic.cpp cpu/rwkv_kernels_none.cpp)
