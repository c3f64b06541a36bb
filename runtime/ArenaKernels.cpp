//===- ArenaKernels.cpp - calling the arena kernels -----------------------===//
//
// Argument lists of the arena kernels, in the order of
// gacc-build-arena-kernels (passes/ArenaSignature.h).
//
//===----------------------------------------------------------------------===//

#include "runtime/ArenaKernels.h"

#include "passes/ArenaSignature.h"

using namespace gaccrt;
namespace arena = mlir::gacc::arena;

llvm::Error gaccrt::callAccumulate(CpuJit &jit, const std::string &step,
                                   const std::string &gradType,
                                   const ArenaBuffers &a, void *grad,
                                   float weight, bool first) {
  return jit.call(arena::accumulateName(step, gradType),
                  {JitArg::buffer(a.accs, a.length),
                   JitArg::buffer(grad, a.length), JitArg::f32(weight),
                   JitArg::i64(first ? 1 : 0),
                   JitArg::buffer(a.nonfinite, 1)});
}

llvm::Error gaccrt::callSumSquares(CpuJit &jit, const std::string &step,
                                   const ArenaBuffers &a) {
  return jit.call(arena::sumSquaresName(step),
                  {JitArg::buffer(a.accs, a.length),
                   JitArg::buffer(a.partials, arena::kPartials),
                   JitArg::buffer(a.sumSquares, 1)});
}

llvm::Error gaccrt::callUpdate(CpuJit &jit, const std::string &step,
                               const ArenaBuffers &a, int64_t decayEnd,
                               float baseLr, int64_t stepIndex,
                               float lossScale) {
  std::vector<JitArg> args = {JitArg::buffer(a.params, a.length),
                              JitArg::buffer(a.accs, a.length)};
  for (float *s : a.states)
    args.push_back(JitArg::buffer(s, a.length));
  args.insert(args.end(),
              {JitArg::i64(decayEnd), JitArg::buffer(a.count, 1),
               JitArg::buffer(a.sumSquares, 1), JitArg::buffer(a.nonfinite, 1),
               JitArg::f32(baseLr), JitArg::i64(stepIndex),
               JitArg::f32(lossScale)});
  return jit.call(arena::updateName(step), args);
}
