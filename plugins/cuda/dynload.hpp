// cuda plugin, internal: cuBLASLt and cuDNN, opened with dlopen on first use.
//
// Linked normally, the two libraries (over 600 MB of cuBLASLt alone) would be loaded and
// relocated whenever the plugin is, on every machine with the CUDA toolkit, GPU or not:
// measured here, 0.2-0.5 s and 150 MB more per process that loads every plugin. Opened
// on first use instead, they cost nothing where no GPU is usable (first use only follows
// a usable device). The entry points keep their names, as members: lib::lt().cublasLtMatmul(...).
#pragma once

#include <cublasLt.h>

#ifdef SY_CUDA_WITH_CUDNN
#include <cudnn.h>
#endif

namespace sycuda::lib {

// An X-macro list, laid out by hand.
// clang-format off
#define SY_CUBLASLT_FUNCTIONS(X)                                                                          \
  X(cublasLtCreate) X(cublasLtGetStatusString) X(cublasLtGetStatusName) X(cublasLtMatmulDescCreate)        \
  X(cublasLtMatmulDescDestroy) X(cublasLtMatmulDescSetAttribute) X(cublasLtMatrixLayoutCreate)              \
  X(cublasLtMatrixLayoutDestroy) X(cublasLtMatrixLayoutSetAttribute) X(cublasLtMatmulPreferenceCreate)      \
  X(cublasLtMatmulPreferenceDestroy) X(cublasLtMatmulPreferenceSetAttribute) X(cublasLtMatmulAlgoGetHeuristic) \
  X(cublasLtMatmul)
// clang-format on

#define SY_DECLARE_MEMBER(name) decltype(&::name) name = nullptr;

struct CublasLt {
  SY_CUBLASLT_FUNCTIONS(SY_DECLARE_MEMBER)
};
// Throws sy::Error naming the library and dlopen's or dlsym's message when it cannot be had.
const CublasLt& lt();

#ifdef SY_CUDA_WITH_CUDNN
// An X-macro list, laid out by hand.
// clang-format off
#define SY_CUDNN_FUNCTIONS(X)                                                                                   \
  X(cudnnCreate) X(cudnnSetStream) X(cudnnGetErrorString) X(cudnnCreateTensorDescriptor)                        \
  X(cudnnDestroyTensorDescriptor) X(cudnnSetTensor4dDescriptor) X(cudnnCreateFilterDescriptor)                  \
  X(cudnnDestroyFilterDescriptor) X(cudnnSetFilter4dDescriptor) X(cudnnCreateConvolutionDescriptor)             \
  X(cudnnDestroyConvolutionDescriptor) X(cudnnSetConvolution2dDescriptor) X(cudnnSetConvolutionGroupCount)       \
  X(cudnnSetConvolutionMathType) X(cudnnGetConvolution2dForwardOutputDim) X(cudnnGetConvolutionForwardAlgorithm_v7) \
  X(cudnnGetConvolutionForwardWorkspaceSize) X(cudnnConvolutionForward) X(cudnnCreatePoolingDescriptor)          \
  X(cudnnDestroyPoolingDescriptor) X(cudnnSetPooling2dDescriptor) X(cudnnPoolingForward)
// clang-format on

struct Cudnn {
  SY_CUDNN_FUNCTIONS(SY_DECLARE_MEMBER)
};
const Cudnn& dnn();
#endif

#undef SY_DECLARE_MEMBER

}  // namespace sycuda::lib
