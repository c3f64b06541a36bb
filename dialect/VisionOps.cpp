//===- VisionOps.cpp - verifiers and shapes of the vision layer ops -------===//
//
// gacc.conv2d, gacc.max_pool2d, gacc.avg_pool2d, gacc.global_avg_pool2d and
// gacc.group_norm: their verifiers and result-type inference (the spatial
// output sizes follow torch's formulas, rounded down).
//
//===----------------------------------------------------------------------===//

#include "dialect/GAccDialect.h"

using namespace mlir;
using namespace mlir::gacc;

/// torch's output size of a window sliding over `in` (+ 2·pad) positions:
/// (in + 2·pad − dilation·(kernel − 1) − 1) / stride + 1, or 0 when the
/// window does not fit.
static int64_t windowOutputSize(int64_t in, int64_t kernel, int64_t stride,
                                int64_t pad, int64_t dilation) {
  int64_t span = in + 2 * pad - dilation * (kernel - 1) - 1;
  return span < 0 ? 0 : span / stride + 1;
}

/// Checks `values` (stride, dilation, kernel: ≥ 1; padding: ≥ 0).
static LogicalResult checkAtLeast(Operation *op, StringRef name,
                                  ArrayRef<int64_t> values, int64_t least) {
  for (int64_t v : values)
    if (v < least)
      return op->emitOpError() << name << " must be at least " << least
                               << " in each dimension, got [" << values
                               << "]";
  return success();
}

/// Every dimension of `t` at least 1 (a window over nothing has no value).
static LogicalResult checkNonEmpty(Operation *op, StringRef name,
                                   RankedTensorType t) {
  if (llvm::is_contained(t.getShape(), 0))
    return op->emitOpError() << name << " must not have an empty dimension, "
                             << "got " << t;
  return success();
}

static LogicalResult checkResultType(Operation *op, Type expected) {
  if (op->getResult(0).getType() != expected)
    return op->emitOpError("result must be ")
           << expected << ", got " << op->getResult(0).getType();
  return success();
}

//===----------------------------------------------------------------------===//
// Conv2DOp
//===----------------------------------------------------------------------===//

static std::optional<RankedTensorType>
conv2dResultType(Type input, Type weight, ArrayRef<int64_t> stride,
                 ArrayRef<int64_t> padding, ArrayRef<int64_t> dilation) {
  auto x = dyn_cast<RankedTensorType>(input);
  auto w = dyn_cast<RankedTensorType>(weight);
  if (!x || !w || x.getRank() != 4 || w.getRank() != 4 ||
      stride.size() != 2 || padding.size() != 2 || dilation.size() != 2 ||
      stride[0] < 1 || stride[1] < 1 || dilation[0] < 1 || dilation[1] < 1)
    return std::nullopt;
  int64_t oh = windowOutputSize(x.getDimSize(2), w.getDimSize(2), stride[0],
                                padding[0], dilation[0]);
  int64_t ow = windowOutputSize(x.getDimSize(3), w.getDimSize(3), stride[1],
                                padding[1], dilation[1]);
  return RankedTensorType::get({x.getDimSize(0), w.getDimSize(0), oh, ow},
                               x.getElementType());
}

LogicalResult Conv2DOp::verify() {
  auto x = getInput().getType();
  auto w = getWeight().getType();
  if (x.getRank() != 4)
    return emitOpError("input must be rank 4 [N, C, H, W], got ") << x;
  if (w.getRank() != 4)
    return emitOpError("weight must be rank 4 [O, C / groups, KH, KW], got ")
           << w;
  if (failed(checkNonEmpty(*this, "input", x)) ||
      failed(checkNonEmpty(*this, "weight", w)))
    return failure();
  int64_t groups = getGroups();
  if (groups < 1 || x.getDimSize(1) % groups || w.getDimSize(0) % groups)
    return emitOpError("groups (")
           << groups << ") must be at least 1 and divide the "
           << x.getDimSize(1) << " input and " << w.getDimSize(0)
           << " output channels";
  if (x.getDimSize(1) != w.getDimSize(1) * groups)
    return emitOpError("input has ")
           << x.getDimSize(1) << " channels but the weight expects "
           << w.getDimSize(1) << " × " << groups
           << " groups (weight layout is [O, C / groups, KH, KW])";
  if (getBias()) {
    auto b = getBias().getType();
    if (b.getRank() != 1 || b.getDimSize(0) != w.getDimSize(0))
      return emitOpError("bias must be [") << w.getDimSize(0) << "], got "
                                           << b;
  }
  if (failed(checkAtLeast(*this, "stride", getStride(), 1)) ||
      failed(checkAtLeast(*this, "dilation", getDilation(), 1)) ||
      failed(checkAtLeast(*this, "padding", getPadding(), 0)))
    return failure();
  RankedTensorType expected = *conv2dResultType(x, w, getStride(),
                                                getPadding(), getDilation());
  if (expected.getDimSize(2) == 0 || expected.getDimSize(3) == 0)
    return emitOpError("the ")
           << w.getDimSize(2) << "×" << w.getDimSize(3)
           << " kernel (dilated) does not fit the padded " << x.getDimSize(2)
           << "×" << x.getDimSize(3) << " input";
  return checkResultType(*this, expected);
}

LogicalResult Conv2DOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, ValueRange operands,
    DictionaryAttr attributes, OpaqueProperties properties,
    RegionRange regions, SmallVectorImpl<Type> &inferred) {
  Conv2DOp::Adaptor adaptor(operands, attributes, properties, regions);
  auto type = conv2dResultType(operands[0].getType(), operands[1].getType(),
                               adaptor.getStride(), adaptor.getPadding(),
                               adaptor.getDilation());
  if (!type)
    return failure();
  inferred.push_back(*type);
  return success();
}

//===----------------------------------------------------------------------===//
// MaxPool2DOp, AvgPool2DOp
//===----------------------------------------------------------------------===//

static std::optional<RankedTensorType>
pool2dResultType(Type input, ArrayRef<int64_t> kernel,
                 ArrayRef<int64_t> stride, ArrayRef<int64_t> padding) {
  auto x = dyn_cast<RankedTensorType>(input);
  if (!x || x.getRank() != 4 || kernel.size() != 2 || stride.size() != 2 ||
      padding.size() != 2 || stride[0] < 1 || stride[1] < 1)
    return std::nullopt;
  int64_t oh =
      windowOutputSize(x.getDimSize(2), kernel[0], stride[0], padding[0], 1);
  int64_t ow =
      windowOutputSize(x.getDimSize(3), kernel[1], stride[1], padding[1], 1);
  return RankedTensorType::get({x.getDimSize(0), x.getDimSize(1), oh, ow},
                               x.getElementType());
}

template <typename PoolOp>
static LogicalResult verifyPool2D(PoolOp op) {
  auto x = op.getInput().getType();
  if (x.getRank() != 4)
    return op.emitOpError("input must be rank 4 [N, C, H, W], got ") << x;
  if (failed(checkNonEmpty(op, "input", x)))
    return failure();
  ArrayRef<int64_t> kernel = op.getKernel(), padding = op.getPadding();
  if (failed(checkAtLeast(op, "kernel", kernel, 1)) ||
      failed(checkAtLeast(op, "stride", op.getStrideOrKernel(), 1)) ||
      failed(checkAtLeast(op, "padding", padding, 0)))
    return failure();
  for (int d = 0; d < 2; ++d)
    if (2 * padding[d] > kernel[d])
      return op.emitOpError("padding must be at most half the kernel, got [")
             << padding << "] for a kernel of [" << kernel << "]";
  RankedTensorType expected =
      *pool2dResultType(x, kernel, op.getStrideOrKernel(), padding);
  if (expected.getDimSize(2) == 0 || expected.getDimSize(3) == 0)
    return op.emitOpError("the kernel [")
           << kernel << "] does not fit the padded " << x.getDimSize(2)
           << "×" << x.getDimSize(3) << " input";
  return checkResultType(op, expected);
}

template <typename PoolOp>
static LogicalResult inferPool2D(ValueRange operands,
                                 DictionaryAttr attributes,
                                 OpaqueProperties properties,
                                 RegionRange regions,
                                 SmallVectorImpl<Type> &inferred) {
  typename PoolOp::Adaptor adaptor(operands, attributes, properties, regions);
  ArrayRef<int64_t> kernel = adaptor.getKernel();
  ArrayRef<int64_t> stride =
      adaptor.getStride() ? *adaptor.getStride() : kernel;
  auto type = pool2dResultType(operands[0].getType(), kernel, stride,
                               adaptor.getPadding());
  if (!type)
    return failure();
  inferred.push_back(*type);
  return success();
}

LogicalResult MaxPool2DOp::verify() { return verifyPool2D(*this); }
LogicalResult AvgPool2DOp::verify() { return verifyPool2D(*this); }

LogicalResult MaxPool2DOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, ValueRange operands,
    DictionaryAttr attributes, OpaqueProperties properties,
    RegionRange regions, SmallVectorImpl<Type> &inferred) {
  return inferPool2D<MaxPool2DOp>(operands, attributes, properties, regions,
                                  inferred);
}

LogicalResult AvgPool2DOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, ValueRange operands,
    DictionaryAttr attributes, OpaqueProperties properties,
    RegionRange regions, SmallVectorImpl<Type> &inferred) {
  return inferPool2D<AvgPool2DOp>(operands, attributes, properties, regions,
                                  inferred);
}

//===----------------------------------------------------------------------===//
// GlobalAvgPool2DOp
//===----------------------------------------------------------------------===//

LogicalResult GlobalAvgPool2DOp::verify() {
  auto x = getInput().getType();
  if (x.getRank() != 4)
    return emitOpError("input must be rank 4 [N, C, H, W], got ") << x;
  if (failed(checkNonEmpty(*this, "input", x)))
    return failure();
  return checkResultType(
      *this, RankedTensorType::get({x.getDimSize(0), x.getDimSize(1)},
                                   x.getElementType()));
}

LogicalResult GlobalAvgPool2DOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &inferred) {
  auto x = dyn_cast<RankedTensorType>(operands[0].getType());
  if (!x || x.getRank() != 4)
    return failure();
  inferred.push_back(RankedTensorType::get(
      {x.getDimSize(0), x.getDimSize(1)}, x.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// GroupNormOp
//===----------------------------------------------------------------------===//

LogicalResult GroupNormOp::verify() {
  auto x = getInput().getType();
  if (x.getRank() < 2)
    return emitOpError("input must have rank >= 2 [N, C, ...], got ") << x;
  if (failed(checkNonEmpty(*this, "input", x)))
    return failure();
  int64_t channels = x.getDimSize(1), groups = getNumGroups();
  if (groups < 1 || channels % groups)
    return emitOpError("num_groups (")
           << groups << ") must be at least 1 and divide the " << channels
           << " channels";
  for (auto [name, v] : {std::pair<StringRef, Value>{"weight", getWeight()},
                         {"bias", getBias()}}) {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getRank() != 1 || t.getDimSize(0) != channels)
      return emitOpError() << name << " must be [" << channels << "], got "
                           << t;
  }
  if (!(getEps().convertToDouble() > 0.0))
    return emitOpError("eps must be positive");
  return checkResultType(*this, x);
}

LogicalResult GroupNormOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &inferred) {
  inferred.push_back(operands[0].getType());
  return success();
}
