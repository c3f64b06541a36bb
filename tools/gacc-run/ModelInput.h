//===- ModelInput.h - gacc-run's model file, read and checked ---*- C++ -*-===//
//
// The model gacc-run compiles: the file read and parsed with its
// diagnostics at their locations (each naming its rank under mpirun), and
// its one gacc.train_step found at the model level.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_TOOLS_GACCRUN_MODELINPUT_H
#define GACC_TOOLS_GACCRUN_MODELINPUT_H

#include "dialect/GAccDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/SourceMgr.h"

#include <optional>
#include <string>

namespace gaccrt {

/// Under mpirun every rank reads and verifies the same model: each
/// diagnostic names its rank (as reportError's lines do), and only rank 0
/// adds the source line and the notes, so that a bad model reads once.
/// Each diagnostic is formatted apart and written in one call, so that
/// mpirun does not interleave the ranks' lines. Nothing in a single
/// process. (Constructed after the context's SourceMgrDiagnosticHandler:
/// unregistered first.)
class RankDiagnostics {
public:
  RankDiagnostics(llvm::SourceMgr &sourceMgr, mlir::MLIRContext &context);

private:
  mlir::LogicalResult print(mlir::Diagnostic &d);
  std::string text;
  llvm::raw_string_ostream stream;
  std::optional<mlir::SourceMgrDiagnosticHandler> printer;
  std::optional<mlir::ScopedDiagnosticHandler> handler;
};

/// The model file at `path` ("-": standard input), read into `sourceMgr`
/// and parsed; null after an error (an unreadable file, text nested too
/// deeply, or a parse error printed at its location by the context's
/// diagnostic handler).
mlir::OwningOpRef<mlir::ModuleOp> parseModel(llvm::StringRef path,
                                             llvm::SourceMgr &sourceMgr,
                                             mlir::MLIRContext &context);

/// The model's one gacc.train_step, at the model level; null after an
/// error. A model holds nothing else but the gacc.param and gacc.statistic
/// declarations it reads: anything else (a func.func of layer ops) would
/// never be compiled, and is an error at its location. A declaration
/// nothing names, and a trainable parameter the loss does not depend on,
/// get a warning. `path` names the model in messages.
mlir::gacc::TrainStepOp findStep(mlir::ModuleOp model, llvm::StringRef path);

} // namespace gaccrt

#endif // GACC_TOOLS_GACCRUN_MODELINPUT_H
