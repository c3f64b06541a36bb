//===- KernelParameters.cpp - what a kernel's launch passes ---------------===//
//
// kernelParameterBytes: the kernel parameters that ops lowered to one
// kernel take; kernelArgumentBytes: those of an outlined kernel.
//
//===----------------------------------------------------------------------===//

#include "passes/analysis/KernelParameters.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;

/// Bytes of a memref of `rank` as the LLVM lowering passes it: two
/// pointers, the offset, and a size and a stride per dimension.
static uint64_t descriptorBytes(int64_t rank) {
  return (3 + 2 * uint64_t(rank)) * 8;
}

uint64_t mlir::gacc::kernelParameterBytes(ArrayRef<Operation *> ops,
                                          ArrayRef<Value> more) {
  llvm::SetVector<Value> taken;
  for (Value v : more)
    if (v)
      taken.insert(v);
  for (Operation *op : ops) {
    taken.insert(op->operand_begin(), op->operand_end());
    for (Region &region : op->getRegions())
      getUsedValuesDefinedAbove(region, taken);
  }
  uint64_t bytes = 0;
  for (Value v : taken) {
    Operation *def = v.getDefiningOp();
    if (matchPattern(v, m_Constant()) || (def && llvm::is_contained(ops, def)))
      continue;
    // A scalar may become a rank-0 buffer (gacc-device-resident-scalars).
    auto memref = dyn_cast<MemRefType>(v.getType());
    bytes += descriptorBytes(memref ? memref.getRank() : 0);
  }
  return bytes;
}

uint64_t mlir::gacc::kernelArgumentBytes(TypeRange types,
                                         const DataLayout &layout) {
  uint64_t offset = 0;
  auto place = [&](uint64_t size, uint64_t align) {
    offset = llvm::alignTo(offset, align) + size;
  };
  // PTX passes a scalar or a fixed vector of B bytes in the next power of
  // two at or above B, aligned to that (NVPTX: i1 as .u8, i64 as .u64,
  // <3 x float> as `.align 16 .b8 [16]`): MLIR's default layout aligns
  // an i64 to 4.
  auto placePtx = [&](uint64_t bits) {
    uint64_t bytes =
        llvm::PowerOf2Ceil(std::max<uint64_t>(llvm::divideCeil(bits, 8), 1));
    place(bytes, bytes);
  };
  for (Type t : types) {
    auto vector = dyn_cast<VectorType>(t);
    if (auto memref = dyn_cast<MemRefType>(t))
      place(descriptorBytes(memref.getRank()), 8); // 8-byte fields
    else if (t.isIntOrIndexOrFloat())
      placePtx(layout.getTypeSizeInBits(t));
    else if (vector && !vector.isScalable()) {
      // A vector of rank > 1 lowers to an array of its innermost vectors
      // (vector<3x3xf32>: [3 x <3 x float>], `.align 16 .b8 [48]`): each
      // padded as one, aligned as one.
      uint64_t inner = llvm::PowerOf2Ceil(std::max<uint64_t>(
          llvm::divideCeil(layout.getTypeSizeInBits(vector.getElementType()) *
                               uint64_t(vector.getShape().back()),
                           8),
          1));
      place(inner * uint64_t(vector.getNumElements() /
                             std::max<int64_t>(vector.getShape().back(), 1)),
            inner);
    } else if (isa<DataLayoutTypeInterface>(t) && !vector)
      place(std::max<uint64_t>(layout.getTypeSize(t), 1),
            std::max<uint64_t>(layout.getTypeABIAlignment(t), 1));
    else
      place(8, 8); // a pointer (a scalable vector, which PTX has not)
  }
  return offset;
}

bool mlir::gacc::fitsKernelParameters(ArrayRef<Operation *> ops,
                                      int64_t maxBytes, ArrayRef<Value> more) {
  return int64_t(kernelParameterBytes(ops, more) + kReservedParameterBytes) <=
         maxBytes;
}
