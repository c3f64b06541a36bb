//===- RuntimeABI.h - functions compiled code calls -------------*- C++ -*-===//
//
// The names of the runtime functions that the compiler's lowerings call and
// the runtime defines (runtime/Runtime.h, Collectives.h, CudaRuntime.h),
// and the defaults of dynamic loss scaling, shared by the dialect's
// attribute and the runtime's settings.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_ABI_RUNTIMEABI_H
#define GACC_ABI_RUNTIMEABI_H

#include <cstdint>
#include <string>

namespace gacc::abi {

/// gacc_sgemm(A, B, C, transA: i32, transB: i32, beta: f32): OpenBLAS
/// cblas_sgemm on strided 2-D memrefs (convert-gacc-to-blas).
constexpr const char *kSgemm = "gacc_sgemm";
/// gacc_sgemm_batched(A, B, C, transA: i32, transB: i32, beta: f32): the
/// same per matrix of rank-3 strided memrefs (a linalg.batch_matmul).
constexpr const char *kSgemmBatched = "gacc_sgemm_batched";
/// The same on device memory through cuBLAS, queued on the step's stream.
constexpr const char *kCublasSgemm = "gacc_cublas_sgemm";
/// gacc_cublaslt_sgemm(A, B, C, transA: i32, transB: i32, beta: f32,
/// inputs: i32): the same through cuBLASLt, its plans chosen once per shape
/// (runtime/CublasLt.h); `inputs` is a GemmInputs, the values the fp32
/// operands A and B hold.
constexpr const char *kCublasLtSgemm = "gacc_cublaslt_sgemm";
/// gacc_cublaslt_sgemm_batched(A, B, C, transA, transB, beta, inputs): the
/// same per matrix of rank-3 memrefs, as one strided batched cuBLASLt
/// GEMM.
constexpr const char *kCublasLtSgemmBatched = "gacc_cublaslt_sgemm_batched";
/// gacc_cublaslt_sgemm_epilogue(A, B, C, bias, transA, transB, beta,
/// inputs, epilogue: i32): gacc_cublaslt_sgemm followed by a GemmEpilogue
/// (bias: a rank-1 fp32 memref of C's column count, added to every row of
/// C), in one cuBLASLt call (convert-gacc-to-blas: a linear layer's GEMM,
/// its bias add and its ReLU). Its lowOperandsGemm form for bf16 takes A,
/// B, C and the bias all bf16, and no `inputs`: C is the sum (or its ReLU)
/// rounded once to bf16.
constexpr const char *kCublasLtSgemmEpilogue = "gacc_cublaslt_sgemm_epilogue";
/// What gacc_cublaslt_sgemm_epilogue applies to beta·C + op(A)·op(B):
/// C[i, j] += bias[j] (cuBLASLt's BIAS epilogue), or that followed by
/// max(·, 0) (RELU_BIAS).
enum class GemmEpilogue : int32_t { bias = 0, reluBias = 1 };
/// gacc_cublaslt_sgemm_gelu_bias(A, B, Y, bias, X, transA, transB, beta,
/// inputs): X = beta·Y + op(A)·op(B) + bias (bias per column, as above)
/// and Y = GELU(X), the tanh approximation (Hendrycks and Gimpel 2016), in
/// one cuBLASLt call (GELU_AUX_BIAS: a linear layer's forward into the
/// tanh GELU, whose adjoint reads X). Y and X are fp32 [m, n], X's row
/// stride a multiple of 8 (cuBLASLt's rule); A and B fp32.
constexpr const char *kCublasLtSgemmGeluBias = "gacc_cublaslt_sgemm_gelu_bias";
/// gacc_cublaslt_sgemm_gelu_grad(A, B, Y, X, transA, transB, beta,
/// inputs): Y = (beta·Y + op(A)·op(B)) · GELU'(X) elementwise, in one
/// cuBLASLt call (DGELU: the gradient that reaches a tanh GELU from the
/// next layer's product, times the GELU's derivative at its input X).
/// Shapes and types as kCublasLtSgemmGeluBias's.
constexpr const char *kCublasLtSgemmGeluGrad = "gacc_cublaslt_sgemm_gelu_grad";
/// Whether a GEMM entry point above (`callee`, of any operand type) writes
/// its memref operand number `index` (counting memrefs only, from 0): C,
/// the third, and kCublasLtSgemmGeluBias's X, its fifth. Every other memref
/// operand (A, B, a bias, DGELU's X) is only read.
inline bool gemmWritesMemref(const std::string &callee, unsigned index) {
  return index == 2 ||
         (index == 4 && callee.rfind(kCublasLtSgemmGeluBias, 0) == 0);
}

/// The entry point of a GEMM whose A and B are bf16 (`type` "bf16") or
/// fp16 ("f16") memrefs, C fp32: the name of `f32EntryPoint` (kSgemm,
/// kSgemmBatched, kCublasSgemm, kCublasLtSgemm, kCublasLtSgemmBatched, and
/// kCublasLtSgemmEpilogue for bf16, whose C and bias are bf16 too)
/// followed by "_" and the type, with the same arguments but `inputs`
/// (gacc_sgemm_bf16(A, B, C, transA, transB, beta)). Each product is of the
/// operands extended to fp32, which is exact; the sums are fp32. The
/// lowering of a narrowed step's products (gacc-narrow-stored-values,
/// convert-gacc-to-blas) names them, the runtime defines them.
inline std::string lowOperandsGemm(const char *f32EntryPoint,
                                   const char *type) {
  return std::string(f32EntryPoint) + "_" + type;
}
/// The operand types of lowOperandsGemm.
constexpr const char *kBF16Operands = "bf16", *kF16Operands = "f16";

/// gacc_cudnn_attention_forward_<type>(q, k, v, o, stats, scale: f32,
/// causal: i32) and gacc_cudnn_attention_backward_<type>(q, k, v, o, dO,
/// stats, dq, dk, dv, scale, causal): cuDNN's fused scaled-dot-product
/// attention (runtime/CudnnAttention.h) on rank-4 strided memrefs [m, H,
/// T, d] of bf16 (`type` "bf16") or fp16 ("f16") and fp32 statistics
/// [m, H, T, 1] (convert-gacc-to-cudnn: gacc.fused_attention and its
/// backward).
inline std::string cudnnAttention(bool backward, const char *type) {
  return std::string(backward ? "gacc_cudnn_attention_backward_"
                              : "gacc_cudnn_attention_forward_") +
         type;
}

/// What the fp32 operands of a cuBLASLt GEMM hold: any fp32 values, or
/// values already rounded to bf16 or fp16 (a step of that `precision`,
/// whose micro-batch body rounds every value it computes), which tensor
/// cores multiply exactly (CUBLAS_COMPUTE_32F_FAST_16BF / _16F).
enum class GemmInputs : int32_t { fp32 = 0, bf16 = 1, fp16 = 2 };
/// gacc_all_reduce_sum_f32(buffer): in-place sum over the ranks
/// (convert-gacc-to-runtime).
constexpr const char *kAllReduceSumF32 = "gacc_all_reduce_sum_f32";
/// gacc_step_arena(bytes: index) -> memref<?xi8>: the step arena, at
/// least `bytes` long and aligned to a page, that holds a CPU step's
/// transient buffers at offsets chosen at compile time
/// (gacc-place-transient-buffers). Its contents do not outlive the call of
/// the function that asks for it; one arena per thread. Called through
/// MLIR's C interface: _mlir_ciface_gacc_step_arena(result descriptor,
/// bytes) (runtime/StepArena.cpp).
constexpr const char *kStepArena = "gacc_step_arena";
/// gacc_cuda_synchronize(): waits for the step's stream
/// (gacc-async-launches).
constexpr const char *kCudaSynchronize = "gacc_cuda_synchronize";

/// torch.cuda.amp.GradScaler's defaults, those of #gacc.loss_scaling.
constexpr double kLossScaleInit = 65536.0, kLossScaleGrowthFactor = 2.0,
                 kLossScaleBackoffFactor = 0.5;
constexpr int64_t kLossScaleGrowthInterval = 2000;

} // namespace gacc::abi

#endif // GACC_ABI_RUNTIMEABI_H
