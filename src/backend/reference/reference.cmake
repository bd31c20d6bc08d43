# The reference backend: scalar implementations of every op (included from src/backend/CMakeLists.txt).
target_sources(sinter_backend_objects PRIVATE
  reference/reference_backend.cpp reference/ref_access.cpp reference/ref_matmul.cpp reference/ref_norm.cpp
  reference/ref_elementwise.cpp reference/ref_rope.cpp reference/ref_attention.cpp
  reference/ref_moe.cpp reference/ref_recurrent.cpp)
# RWKV's WKV recurrences.
target_sources(sinter_backend_objects PRIVATE reference/ref_rwkv.cpp)
# The gated delta rule (Qwen 3.5, Qwen3-Next).
target_sources(sinter_backend_objects PRIVATE reference/ref_delta_net.cpp)
