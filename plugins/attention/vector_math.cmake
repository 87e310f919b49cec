# switchyard_attention_vector_math(target): the softmax's exponentials through glibc's
# libmvec (vector expf, AVX2/AVX-512 clones picked at load time) where GCC on x86-64 can
# call it; elsewhere flash_attention.cpp keeps the scalar loop. Used by the plugin and by
# tools/bench (which compiles the kernel's sources too).
function(switchyard_attention_vector_math target)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64" AND
     CMAKE_SYSTEM_NAME STREQUAL "Linux")
    target_compile_definitions(${target} PRIVATE SY_ATTENTION_LIBMVEC=1)
    target_compile_options(${target} PRIVATE -fopenmp-simd -fno-math-errno)
    target_link_libraries(${target} PRIVATE mvec)
  endif()
endfunction()
