// <immintrin.h> for the kernel files: include this instead of it. gcc 12 warns that an
// _mm512_undefined_*() value (self-initialized) is used uninitialized wherever an inlined
// AVX-512 broadcast, unpack, shuffle or reduction takes it as its unused pass-through operand: a
// false positive, silenced here because the state that counts is the one at the header's lines
// (so the first include of <immintrin.h> in a file must be this one).
#pragma once

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
