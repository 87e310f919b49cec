// SY_VECTOR_CLONES on a function: GCC builds it for AVX-512 (x86-64-v4), AVX2+FMA
// (x86-64-v3) and the baseline, and picks one at load time for the CPU at hand. Plugins
// build for the baseline, so without it a hot loop gets SSE2 on every machine.
#pragma once

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define SY_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define SY_VECTOR_CLONES
#endif
