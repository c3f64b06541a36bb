//===- ModelInput.cpp - gacc-run's model file, read and checked -----------===//
//
// Reads and parses the model file (or standard input), finds its one
// training step, and prints the ranks' diagnostics under mpirun.
//
//===----------------------------------------------------------------------===//

#include "tools/gacc-run/ModelInput.h"
#include "tools/gacc-run/Options.h"

#include "tools/InputNesting.h"

#include "runtime/Collectives.h"
#include "runtime/InputFile.h"

#include "mlir/IR/SymbolTable.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;
using namespace mlir::gacc;
using namespace gaccrt;

RankDiagnostics::RankDiagnostics(llvm::SourceMgr &sourceMgr,
                                 MLIRContext &context)
    : stream(text) {
  if (collectives::launcherSize() <= 1)
    return;
  printer.emplace(sourceMgr, &context, stream);
  handler.emplace(&context, [this](Diagnostic &d) { return print(d); });
}

LogicalResult RankDiagnostics::print(Diagnostic &d) {
  int rank = collectives::launcherRank();
  std::string prefix = "rank " + std::to_string(rank) + ": ";
  printer->emitDiagnostic(d.getLocation(), prefix + d.str(), d.getSeverity(),
                          /*displaySourceLine=*/rank == 0);
  if (rank == 0)
    for (Diagnostic &note : d.getNotes())
      printer->emitDiagnostic(note.getLocation(), prefix + note.str(),
                              note.getSeverity());
  llvm::errs() << text;
  llvm::errs().flush();
  text.clear();
  return success();
}

/// The model file's name in messages.
static std::string modelName(llvm::StringRef path) {
  return path == "-" ? "standard input" : path.str();
}

OwningOpRef<ModuleOp> gaccrt::parseModel(llvm::StringRef path,
                                         llvm::SourceMgr &sourceMgr,
                                         MLIRContext &context) {
  auto file = path == "-"
                  ? llvm::errorOrToExpected(llvm::MemoryBuffer::getSTDIN())
                  : readInputFile(path);
  if (!file) {
    reportError(modelName(path) + ": " + llvm::toString(file.takeError()));
    return nullptr;
  }
  sourceMgr.AddNewSourceBuffer(std::move(*file), llvm::SMLoc());
  if (!::gacc::checkInputText(sourceMgr))
    return nullptr;
  return parseSourceFile<ModuleOp>(sourceMgr, &context);
}

/// A trainable parameter the loss does not depend on has a gradient of 0
/// at every step: torch leaves its .grad None and its optimizer skips it,
/// while the update here still runs: weight decay, where the optimizer has
/// it and the parameter does not turn it off, moves it; nothing else does
/// (momentum and moments stay 0). Said at its declaration (a warning: the
/// step still trains).
static void warnParamsOutsideLoss(TrainStepOp step) {
  LossOpInterface loss = step.getLossOp();
  if (!loss)
    return;
  // Every value the loss reads, through the ops that produce them and the
  // values their regions use from above.
  llvm::DenseSet<Value> reached;
  llvm::SmallPtrSet<Operation *, 32> visited;
  SmallVector<Operation *> worklist = {loss.getOperation()};
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!visited.insert(op).second)
      continue;
    op->walk([&](Operation *inner) {
      for (Value v : inner->getOperands())
        if (reached.insert(v).second)
          if (Operation *def = v.getDefiningOp())
            worklist.push_back(def);
    });
  }
  bool decays =
      cast<OptimizerAttrInterface>(step.getOptimizer()).hasWeightDecay();
  for (auto [i, param] : llvm::enumerate(step.getParamOps()))
    if (!param.getFrozen() &&
        !reached.contains(step.getBodyBlock().getArgument(i)))
      param.emitWarning("@")
          << param.getSymName() << " does not reach the loss of @"
          << step.getSymName()
          << ": its gradient is 0 at every step (torch would leave its "
             "gradient None and skip it; here the update still runs, "
          << (decays && !param.getNoWeightDecay()
                  ? "and the optimizer's weight decay shrinks it"
                  : "and leaves it as it is")
          << "); freeze it ({frozen}) or use it";
}

TrainStepOp gaccrt::findStep(ModuleOp model, llvm::StringRef path) {
  for (Operation &op : model.getBody()->getOperations())
    if (!isa<TrainStepOp, ParamOp, StatisticOp>(op)) {
      op.emitError("'")
          << op.getName()
          << "' is not part of a gacc-run model: a model holds "
             "gacc.param and gacc.statistic declarations and one "
             "gacc.train_step, whose body is all that is compiled (write "
             "the layers there)";
      return nullptr;
    }
  SmallVector<TrainStepOp> steps(model.getOps<TrainStepOp>());
  if (steps.size() != 1) {
    reportError(modelName(path) +
                " must hold exactly one gacc.train_step, found " +
                llvm::Twine(steps.size()));
    return nullptr;
  }
  TrainStepOp step = steps.front();
  if (step.isDifferentiated()) {
    reportError("@" + step.getSymName() +
                " is already differentiated; gacc-run compiles model-level IR");
    return nullptr;
  }
  // A declaration nothing names is neither trained nor saved: said, since
  // a parameter left out of `params` looks like a trained one.
  for (Operation &op : model.getBody()->getOperations())
    if (isa<ParamOp, StatisticOp>(op) &&
        SymbolTable::symbolKnownUseEmpty(&op, model))
      op.emitWarning("'") << op.getName() << "' @"
                          << SymbolTable::getSymbolName(&op).getValue()
                          << " is used by nothing in @" << step.getSymName()
                          << (isa<ParamOp>(op)
                                  ? " (not among its `params`): it is neither "
                                    "trained nor saved"
                                  : " (kept by none of its ops): it is neither "
                                    "updated nor saved");
  warnParamsOutsideLoss(step);
  return step;
}
