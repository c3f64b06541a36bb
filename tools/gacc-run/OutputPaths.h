//===- OutputPaths.h - output files, checked up front -----------*- C++ -*-===//
//
// Before any work, gacc-run checks that every file it will write can be
// written, and that no output is an input, another output or a checkpoint
// directory's file: a run that fails there has read and written nothing.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_TOOLS_GACCRUN_OUTPUTPATHS_H
#define GACC_TOOLS_GACCRUN_OUTPUTPATHS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace gaccrt {

/// A command-line flag that names a file or directory: its spelling
/// ("--metrics", "-o") and the path given ("" when the flag is absent);
/// `standardOutput` where the path is "-" and the flag writes that to
/// standard output (-o; for any other flag "-" is a file of that name).
struct PathFlag {
  llvm::StringRef flag;
  llvm::StringRef path;
  bool standardOutput = false;
};

/// The absolute path of a file, its links and dots resolved where it
/// exists (otherwise its longest existing directory's, the rest made
/// absolute as written): what tells two names of one file apart.
std::string canonicalPath(llvm::StringRef path);

/// Whether `a` and `b` name one file or directory (their canonicalPath):
/// `ck` and `./ck/` do; an empty path (a flag not given) names none.
inline bool samePath(llvm::StringRef a, llvm::StringRef b) {
  return !a.empty() && !b.empty() && canonicalPath(a) == canonicalPath(b);
}

/// The files and directories of one run, as the command line names them.
struct RunPaths {
  /// The model file ("-": standard input, which no output can be).
  llvm::StringRef model;
  /// Files the run reads (--data, --order-file, --load-params); a
  /// directory among them is skipped.
  llvm::ArrayRef<PathFlag> inputs;
  /// Files the run writes (-o, --metrics, --save-params, ...; -o - is
  /// standard output).
  llvm::ArrayRef<PathFlag> outputs;
  /// --checkpoint-dir and --resume ("" when absent).
  llvm::StringRef checkpointDir, resumeDir;
};

/// Checks every output of `paths` before any work: each can be written
/// (a stream such as a FIFO or /dev/stdout as it is; a regular file, or the
/// target of the link it names, in an existing directory where a file can
/// be created, probed with one removed at once). Errors, reported through
/// reportError and then false: a --checkpoint-dir that exists and is not a
/// directory; an output that is the model, an input (training would
/// overwrite what it reads), another output (the last writer would win), a
/// checkpoint directory or a file in one (a checkpoint would overwrite it,
/// or it the checkpoint).
bool checkOutputPaths(const RunPaths &paths);

/// Whether `output` writes this process's standard output: -o -,
/// /dev/stdout, or the file, pipe or terminal standard output is (compared
/// by device and inode).
bool isStandardOutput(const PathFlag &output);

/// Where gacc-run's progress, report and note lines go: standard output,
/// or standard error once logToStandardError was called (an output file is
/// standard output, so that `--metrics /dev/stdout | jq` reads only rows).
llvm::raw_ostream &logStream();

/// Sends logStream to standard error for the rest of the run.
void logToStandardError();

/// Whether logStream is standard error (logToStandardError was called).
bool logsToStandardError();

} // namespace gaccrt

#endif // GACC_TOOLS_GACCRUN_OUTPUTPATHS_H
