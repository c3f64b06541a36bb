//===- ApproximateMathTest.cpp - accuracy of the CPU path's math ----------===//
//
// Compiles elementwise math.tanh, exp, expm1, log, log1p and erf through
// gacc-lower-to-cpu-pipeline (where gacc-approximate-math replaces them by
// upstream MLIR's polynomial approximations), runs them with CpuJit over a
// grid of inputs and compares with the C library's double-precision
// functions: the error bound, and the limits (infinities, NaN, zero).
//
//===----------------------------------------------------------------------===//

#include "passes/Pipelines.h"
#include "runtime/CpuJit.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

/// `op` applied elementwise to `inputs` by code compiled through the CPU
/// pipeline.
std::vector<float> runCompiled(const std::string &op,
                               const std::vector<float> &inputs) {
  std::string n = std::to_string(inputs.size());
  std::string source =
      "#map = affine_map<(d0) -> (d0)>\n"
      "func.func @apply(%x: memref<" + n + "xf32>, %y: memref<" + n +
      "xf32>) {\n"
      "  linalg.generic {indexing_maps = [#map, #map], iterator_types = "
      "[\"parallel\"]} ins(%x : memref<" + n + "xf32>) outs(%y : memref<" +
      n + "xf32>) {\n"
      "  ^bb0(%a: f32, %b: f32):\n"
      "    %r = math." + op + " %a : f32\n"
      "    linalg.yield %r : f32\n"
      "  }\n"
      "  return\n"
      "}\n";
  mlir::DialectRegistry registry;
  mlir::gacc::registerGAccDialectsAndInterfaces(registry);
  mlir::MLIRContext context(registry);
  auto module = mlir::parseSourceString<mlir::ModuleOp>(source, &context);
  EXPECT_TRUE(module) << source;
  mlir::PassManager pm(&context);
  mlir::gacc::buildLowerToCPUPipeline(pm, mlir::gacc::CPUPipelineOptions());
  EXPECT_TRUE(mlir::succeeded(pm.run(*module)));
  auto jit = gaccrt::CpuJit::create(*module);
  EXPECT_TRUE(bool(jit)) << llvm::toString(jit.takeError());
  std::vector<float> x = inputs, y(inputs.size(), 0.0f);
  llvm::Error error = (*jit)->call(
      "apply", {gaccrt::JitArg::buffer(x.data(), int64_t(x.size())),
                gaccrt::JitArg::buffer(y.data(), int64_t(y.size()))});
  EXPECT_FALSE(bool(error)) << llvm::toString(std::move(error));
  return y;
}

std::vector<float> linspace(double lo, double hi, int n) {
  std::vector<float> v;
  for (int i = 0; i < n; ++i)
    v.push_back(float(lo + (hi - lo) * i / (n - 1)));
  return v;
}

/// The largest error of `op` over `inputs` against `reference` (evaluated
/// in double on the float input), relative to max(|reference|, floor).
double maxError(const std::string &op, const std::vector<float> &inputs,
                const std::function<double(double)> &reference,
                double floor) {
  std::vector<float> y = runCompiled(op, inputs);
  double worst = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    double want = reference(inputs[i]);
    double err = std::fabs(double(y[i]) - want) /
                 std::max(std::fabs(want), floor);
    worst = std::max(worst, std::isnan(err) ? 1e30 : err);
  }
  return worst;
}

// float's machine epsilon is 1.19e-7: the bound is about 3 ulp. Measured
// on 2026-12-01: tanh 2.6e-7, exp 8.0e-8, expm1 1.5e-7, log 7.1e-8, log1p
// 1.7e-7, erf 2.1e-7 (the C library's float functions: within 1 ulp).
TEST(ApproximateMath, TanhIsWithinAFewUlp) {
  EXPECT_LT(maxError("tanh", linspace(-12, 12, 20001),
                     [](double x) { return std::tanh(x); }, 1e-3),
            4e-7);
}

TEST(ApproximateMath, ExpIsWithinAFewUlp) {
  EXPECT_LT(maxError("exp", linspace(-87, 88, 20001),
                     [](double x) { return std::exp(x); }, 0),
            4e-7);
}

TEST(ApproximateMath, Expm1IsWithinAFewUlp) {
  EXPECT_LT(maxError("expm1", linspace(-20, 20, 20001),
                     [](double x) { return std::expm1(x); }, 1e-30),
            4e-7);
}

TEST(ApproximateMath, LogIsWithinAFewUlp) {
  std::vector<float> x;
  for (int i = 0; i <= 20000; ++i)
    x.push_back(float(std::pow(10.0, -30 + 60.0 * i / 20000)));
  EXPECT_LT(maxError("log", x, [](double v) { return std::log(v); }, 1e-3),
            4e-7);
}

TEST(ApproximateMath, Log1pIsWithinAFewUlp) {
  EXPECT_LT(maxError("log1p", linspace(-0.999, 100, 20001),
                     [](double x) { return std::log1p(x); }, 1e-30),
            4e-7);
}

TEST(ApproximateMath, ErfIsWithinAFewUlp) {
  EXPECT_LT(maxError("erf", linspace(-6, 6, 20001),
                     [](double x) { return std::erf(x); }, 1e-3),
            4e-7);
}

TEST(ApproximateMath, LimitsAreTheLibrarys) {
  std::vector<float> special = {-kInf, kInf, kNaN, 0.0f};
  std::vector<float> tanh = runCompiled("tanh", special);
  EXPECT_EQ(tanh[0], -1.0f);
  EXPECT_EQ(tanh[1], 1.0f);
  EXPECT_TRUE(std::isnan(tanh[2]));
  EXPECT_EQ(tanh[3], 0.0f);
  std::vector<float> exp = runCompiled("exp", special);
  EXPECT_EQ(exp[0], 0.0f);
  EXPECT_EQ(exp[1], kInf);
  EXPECT_TRUE(std::isnan(exp[2]));
  EXPECT_EQ(exp[3], 1.0f);
  std::vector<float> log = runCompiled("log", {0.0f, kInf, kNaN, -1.0f});
  EXPECT_EQ(log[0], -kInf);
  EXPECT_EQ(log[1], kInf);
  EXPECT_TRUE(std::isnan(log[2]));
  EXPECT_TRUE(std::isnan(log[3]));
}

} // namespace
