//===- PhiloxTest.cpp - the counter-based generator of random ops ---------===//
//
// Builds LinalgBuilders' buildPhilox4x32 into a function, compiles it
// through gacc-lower-to-cpu-pipeline, runs it with CpuJit and compares its
// four words with the known-answer vectors of Random123 (Salmon et al.
// 2011), the reference implementation of Philox 4x32-10.
//
//===----------------------------------------------------------------------===//

#include "dialect/LinalgBuilders.h"
#include "passes/Pipelines.h"
#include "runtime/CpuJit.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>

namespace {

using Words = std::array<uint32_t, 4>;

/// Philox 4x32-10 of `counter` under `key`, by compiled code:
/// `func.func @philox(%in: memref<6xi32>, %out: memref<4xi32>)` reads the
/// counter and key from %in and writes the four words to %out.
Words runCompiled(Words counter, std::array<uint32_t, 2> key) {
  mlir::DialectRegistry registry;
  mlir::gacc::registerGAccDialectsAndInterfaces(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  mlir::OpBuilder b(&context);
  mlir::Location loc = b.getUnknownLoc();
  auto module = mlir::ModuleOp::create(loc);
  b.setInsertionPointToEnd(module.getBody());
  auto i32 = b.getI32Type();
  auto in = mlir::MemRefType::get({6}, i32), out = mlir::MemRefType::get({4}, i32);
  auto func = mlir::func::FuncOp::create(b, loc, "philox",
                                         b.getFunctionType({in, out}, {}));
  b.setInsertionPointToStart(func.addEntryBlock());
  auto load = [&](int64_t i) -> mlir::Value {
    mlir::Value index = mlir::arith::ConstantIndexOp::create(b, loc, i);
    return mlir::memref::LoadOp::create(b, loc, func.getArgument(0),
                                        mlir::ValueRange{index});
  };
  std::array<mlir::Value, 4> words = mlir::gacc::buildPhilox4x32(
      b, loc, {load(0), load(1), load(2), load(3)}, {load(4), load(5)});
  for (int64_t i = 0; i < 4; ++i) {
    mlir::Value index = mlir::arith::ConstantIndexOp::create(b, loc, i);
    mlir::memref::StoreOp::create(b, loc, words[i], func.getArgument(1),
                                  mlir::ValueRange{index});
  }
  mlir::func::ReturnOp::create(b, loc);
  mlir::PassManager pm(&context);
  mlir::gacc::buildLowerToCPUPipeline(pm, mlir::gacc::CPUPipelineOptions());
  EXPECT_TRUE(mlir::succeeded(pm.run(module)));
  auto jit = gaccrt::CpuJit::create(module);
  EXPECT_TRUE(bool(jit)) << llvm::toString(jit.takeError());
  std::array<uint32_t, 6> x = {counter[0], counter[1], counter[2],
                               counter[3], key[0],     key[1]};
  Words y = {};
  llvm::Error error =
      (*jit)->call("philox", {gaccrt::JitArg::buffer(x.data(), 6),
                              gaccrt::JitArg::buffer(y.data(), 4)});
  EXPECT_FALSE(bool(error)) << llvm::toString(std::move(error));
  module->erase();
  return y;
}

// Random123's kat_vectors for philox4x32 with 10 rounds: counter, key,
// expected output.
TEST(Philox4x32, MatchesRandom123ForZeros) {
  EXPECT_EQ(runCompiled({0, 0, 0, 0}, {0, 0}),
            (Words{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
}

TEST(Philox4x32, MatchesRandom123ForOnes) {
  EXPECT_EQ(runCompiled({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
                        {0xffffffff, 0xffffffff}),
            (Words{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
}

TEST(Philox4x32, MatchesRandom123ForPiDigits) {
  EXPECT_EQ(runCompiled({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
                        {0xa4093822, 0x299f31d0}),
            (Words{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

} // namespace
