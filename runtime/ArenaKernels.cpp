//===- ArenaKernels.cpp - calling the arena kernels -----------------------===//
//
// Argument lists of the arena kernels, in the order of
// gacc-build-arena-kernels; names and sizes from abi/ArenaABI.h.
//
//===----------------------------------------------------------------------===//

#include "runtime/ArenaKernels.h"

#include "abi/ArenaABI.h"

using namespace gaccrt;
namespace abi = ::gacc::abi;

/// The kernels handle 4 elements per vector and have no tail: a length
/// that is not a multiple of 4 would leave its last elements untouched.
static llvm::Error checkLength(const ArenaBuffers &a) {
  if (a.length % 4 == 0)
    return llvm::Error::success();
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "arena length " + std::to_string(a.length) +
          " is not a multiple of 4 (the arena kernels read 16-byte vectors)");
}

llvm::Error gaccrt::callAccumulate(CpuJit &jit, const std::string &step,
                                   const std::string &gradType,
                                   const ArenaBuffers &a, void *grad,
                                   float weight, bool first) {
  if (llvm::Error e = checkLength(a))
    return e;
  return jit.call(abi::accumulateArenaName(step, gradType),
                  {JitArg::buffer(a.accs, a.length),
                   JitArg::buffer(grad, a.length), JitArg::f32(weight),
                   JitArg::i64(first ? 1 : 0),
                   JitArg::buffer(a.nonfinite, 1)});
}

llvm::Error gaccrt::callSumSquares(CpuJit &jit, const std::string &step,
                                   const ArenaBuffers &a) {
  if (llvm::Error e = checkLength(a))
    return e;
  return jit.call(abi::sumSquaresArenaName(step),
                  {JitArg::buffer(a.accs, a.length),
                   JitArg::buffer(a.partials, abi::kPartials),
                   JitArg::buffer(a.sumSquares, 1)});
}

llvm::Error gaccrt::callUpdate(CpuJit &jit, const std::string &step,
                               const ArenaBuffers &a, int64_t decayEnd,
                               float baseLr, int64_t stepIndex,
                               float lossScale) {
  if (llvm::Error e = checkLength(a))
    return e;
  std::vector<JitArg> args = {JitArg::buffer(a.params, a.length),
                              JitArg::buffer(a.accs, a.length)};
  for (float *s : a.states)
    args.push_back(JitArg::buffer(s, a.length));
  args.insert(args.end(),
              {JitArg::i64(decayEnd), JitArg::buffer(a.count, 1),
               JitArg::buffer(a.sumSquares, 1), JitArg::buffer(a.nonfinite, 1),
               JitArg::f32(baseLr), JitArg::i64(stepIndex),
               JitArg::f32(lossScale)});
  return jit.call(abi::updateArenaName(step), args);
}
