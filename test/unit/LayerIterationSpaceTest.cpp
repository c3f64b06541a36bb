//===- LayerIterationSpaceTest.cpp - the layer ops' loops and maps --------===//
//
// Every layer op's shard::ShardingInterface (GAccShardingInterface.cpp),
// on one module holding each op in its variants (bias or none, grouped and
// strided convolutions, dropout keys, a batch norm sample mask): upstream's
// own check of the implementation holds, each map has one result per
// dimension of its operand, a loop that indexes plain dimensions of two
// tensors has one extent in both, and the samples of the micro-batch
// (dimension 0 of operand 0) are a parallel loop that leads every result,
// except in the losses and batch norm, which reduce over them. The
// convolution's and pooling's window maps against torch's formulas.
//
//===----------------------------------------------------------------------===//

#include "dialect/GAccDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <map>

using namespace mlir;

namespace {

constexpr const char *kModule = R"mlir(
gacc.statistic @rm : tensor<3xf32> = #gacc.zeros
gacc.statistic @rv : tensor<3xf32> = #gacc.zeros
func.func @layers(%x: tensor<4x8xf32>, %s: tensor<4x5x8xf32>, %w: tensor<3x8xf32>,
                  %b: tensor<3xf32>, %g: tensor<8xf32>, %i: tensor<4x5xi32>,
                  %t: tensor<10x8xf32>, %q: tensor<4x2x5x6xf32>, %img: tensor<4x6x9x11xf32>,
                  %k: tensor<6x3x3x2xf32>, %kb: tensor<6xf32>, %y: tensor<4xi32>,
                  %c: tensor<4x3x7x7xf32>, %c3: tensor<3xf32>, %mask: tensor<4xf32>,
                  %seed: i64) {
  %0 = gacc.linear %x, %w bias %b : tensor<4x8xf32>, tensor<3x8xf32>, tensor<3xf32> -> tensor<4x3xf32>
  %1 = gacc.linear %s, %w : tensor<4x5x8xf32>, tensor<3x8xf32> -> tensor<4x5x3xf32>
  %2 = gacc.relu %s : tensor<4x5x8xf32>
  %3 = gacc.gelu %x {approximate = "tanh"} : tensor<4x8xf32>
  %4 = gacc.softmax %s : tensor<4x5x8xf32>
  %5 = gacc.layer_norm %s, %g, %g : tensor<4x5x8xf32>, tensor<8xf32>, tensor<8xf32>
  %6 = gacc.dropout %s key(%seed, %seed, %seed) {p = 0.1 : f64} : tensor<4x5x8xf32>
  %7 = gacc.embedding %i, %t : tensor<4x5xi32>, tensor<10x8xf32> -> tensor<4x5x8xf32>
  %8 = gacc.attention %q, %q, %q {causal} : tensor<4x2x5x6xf32>, tensor<4x2x5x6xf32>, tensor<4x2x5x6xf32>
  %9:3 = gacc.attention_backward %q, %q, %q, %q, %q : tensor<4x2x5x6xf32>, tensor<4x2x5x6xf32>, tensor<4x2x5x6xf32>, tensor<4x2x5x6xf32>, tensor<4x2x5x6xf32>
  %10 = gacc.conv2d %img, %k bias %kb {groups = 2 : i64, stride = array<i64: 2, 1>, padding = array<i64: 1, 2>, dilation = array<i64: 1, 3>} : tensor<4x6x9x11xf32>, tensor<6x3x3x2xf32>, tensor<6xf32> -> tensor<4x6x5x12xf32>
  %11 = gacc.max_pool2d %c {kernel = array<i64: 3, 2>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>} : tensor<4x3x7x7xf32> -> tensor<4x3x4x4xf32>
  %12 = gacc.avg_pool2d %c {kernel = array<i64: 2, 2>} : tensor<4x3x7x7xf32> -> tensor<4x3x3x3xf32>
  %13 = gacc.global_avg_pool2d %c : tensor<4x3x7x7xf32> -> tensor<4x3xf32>
  %14 = gacc.group_norm %c, %c3, %c3 {num_groups = 3 : i64} : tensor<4x3x7x7xf32>, tensor<3xf32>, tensor<3xf32>
  %15 = gacc.batch_norm %c, %c3, %c3 mask %mask running(@rm, @rv) {batch_statistics = #gacc.batch_statistics<per_micro_batch>} : tensor<4x3x7x7xf32>, tensor<3xf32>, tensor<3xf32>, tensor<4xf32>
  %16 = gacc.cross_entropy %0, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  %17 = gacc.linear_cross_entropy %s, %w, %i bias %b : tensor<4x5x8xf32>, tensor<3x8xf32>, tensor<4x5xi32>, tensor<3xf32> -> tensor<f32>
  return
}
)mlir";

class LayerIterationSpace : public ::testing::Test {
protected:
  void SetUp() override {
    DialectRegistry registry;
    registry
        .insert<mlir::gacc::GAccDialect, func::FuncDialect, arith::ArithDialect,
                tensor::TensorDialect, linalg::LinalgDialect>();
    mlir::gacc::registerGAccExternalModels(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    module = parseSourceString<ModuleOp>(kModule, &context);
    ASSERT_TRUE(module) << "the test module does not parse";
    module->walk([&](Operation *op) {
      if (auto layer = dyn_cast<shard::ShardingInterface>(op))
        if (isa<mlir::gacc::GAccDialect>(op->getDialect()))
          layers.push_back(layer);
    });
  }

  /// The one op named `name`.
  shard::ShardingInterface find(StringRef name) {
    for (shard::ShardingInterface layer : layers)
      if (layer->getName().getStringRef() == name)
        return layer;
    return nullptr;
  }

  static std::string print(AffineMap map) {
    std::string text;
    llvm::raw_string_ostream os(text);
    map.print(os);
    return text;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  SmallVector<shard::ShardingInterface> layers;
};

/// The rank of a tensor, 0 for a scalar.
int64_t rankOf(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor ? tensor.getRank() : 0;
}

TEST_F(LayerIterationSpace, EveryLayerOpStatesItsLoops) {
  // Every op of the dialect that states its loops is in the module: a new
  // layer op must be added to it.
  for (RegisteredOperationName name : context.getRegisteredOperations())
    if (isa<mlir::gacc::GAccDialect>(name.getDialect()) &&
        name.hasInterface<shard::ShardingInterface>())
      EXPECT_TRUE(find(name.getStringRef()))
          << name.getStringRef().str() << " is not in the test module";
  for (shard::ShardingInterface layer : layers) {
    SCOPED_TRACE(layer->getName().getStringRef().str());
    EXPECT_TRUE(succeeded(layer.verifyShardingInterfaceImpl()));
    SmallVector<utils::IteratorType> loops = layer.getLoopIteratorTypes();
    SmallVector<AffineMap> maps = layer.getIndexingMaps();
    SmallVector<Type> types(layer->getOperandTypes());
    llvm::append_range(types, layer->getResultTypes());
    ASSERT_EQ(maps.size(), types.size());
    // A loop's extent: the same for every plain dimension it indexes.
    std::map<unsigned, int64_t> extent;
    for (auto [map, type] : llvm::zip_equal(maps, types)) {
      EXPECT_EQ(map.getNumDims(), loops.size());
      ASSERT_EQ(int64_t(map.getNumResults()), rankOf(type));
      for (auto [dim, expr] : llvm::enumerate(map.getResults())) {
        auto loop = dyn_cast<AffineDimExpr>(expr);
        if (!loop)
          continue;
        int64_t size = cast<RankedTensorType>(type).getDimSize(dim);
        auto [it, inserted] = extent.insert({loop.getPosition(), size});
        EXPECT_EQ(it->second, size) << "loop d" << loop.getPosition();
      }
    }
  }
}

TEST_F(LayerIterationSpace, SamplesArePerSampleLoops) {
  for (shard::ShardingInterface layer : layers) {
    SCOPED_TRACE(layer->getName().getStringRef().str());
    AffineExpr samples = layer.getIndexingMaps().front().getResult(0);
    auto loop = dyn_cast<AffineDimExpr>(samples);
    ASSERT_TRUE(loop);
    bool reduces = isa<mlir::gacc::LossOpInterface, mlir::gacc::BatchNormOp>(
        layer.getOperation());
    EXPECT_EQ(layer.getLoopIteratorTypes()[loop.getPosition()],
              reduces ? utils::IteratorType::reduction
                      : utils::IteratorType::parallel);
    if (reduces)
      continue;
    unsigned numOperands = layer->getNumOperands();
    for (AffineMap result :
         ArrayRef(layer.getIndexingMaps()).drop_front(numOperands))
      EXPECT_EQ(result.getResult(0), samples);
  }
}

TEST_F(LayerIterationSpace, WindowsFollowTorchFormulas) {
  // conv2d, groups 2 of 3 input and 3 output channels: loops
  // (n, o, y, x, c, i, j), input (n, (o floordiv 3)·3 + c, 2y + i − 1,
  // x + 3j − 2).
  SmallVector<AffineMap> conv = find("gacc.conv2d").getIndexingMaps();
  ASSERT_EQ(conv.size(), 4u);
  EXPECT_EQ(print(conv[0]), "(d0, d1, d2, d3, d4, d5, d6) -> (d0, (d1 floordiv "
                            "3) * 3 + d4, d2 * 2 + d5 - 1, d3 + d6 * 3 - 2)");
  EXPECT_EQ(print(conv[1]), "(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)");
  EXPECT_EQ(print(conv[2]), "(d0, d1, d2, d3, d4, d5, d6) -> (d1)");
  EXPECT_EQ(print(conv[3]), "(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)");
  SmallVector<AffineMap> pool = find("gacc.max_pool2d").getIndexingMaps();
  EXPECT_EQ(print(pool[0]), "(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 * 2 + "
                            "d4 - 1, d3 * 2 + d5 - 1)");
  SmallVector<AffineMap> avg = find("gacc.avg_pool2d").getIndexingMaps();
  EXPECT_EQ(print(avg[0]), "(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 * 2 + "
                           "d4, d3 * 2 + d5)");
  // The embedding's row is the index's value.
  SmallVector<AffineMap> lookup = find("gacc.embedding").getIndexingMaps();
  EXPECT_EQ(print(lookup[1]), "(d0, d1, d2)[s0] -> (s0, d2)");
}

} // namespace
