//===- OutputPaths.cpp - gacc-run's output files, checked up front --------===//
//
// Resolves each output to the file it writes (links and dots resolved;
// a stream to the file it opens), probes its directory, and compares it
// with the model, the inputs, the other outputs and the checkpoint
// directories.
//
//===----------------------------------------------------------------------===//

#include "tools/gacc-run/OutputPaths.h"
#include "tools/gacc-run/Options.h"

#include "runtime/OutputFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

#include <optional>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>
#include <vector>

using namespace gaccrt;

std::string gaccrt::canonicalPath(llvm::StringRef path) {
  llvm::SmallString<256> real;
  if (!llvm::sys::fs::real_path(path, real))
    return std::string(real);
  llvm::SmallString<256> absolute(path);
  llvm::sys::fs::make_absolute(absolute);
  llvm::sys::path::remove_dots(absolute, /*remove_dot_dot=*/true);
  // A file not made yet: its directory's links resolved (a link to a
  // checkpoint directory names a file in it), the rest as written.
  llvm::StringRef parent = llvm::sys::path::parent_path(absolute);
  if (parent.empty() || parent == absolute.str())
    return std::string(absolute);
  llvm::SmallString<256> joined(canonicalPath(parent));
  llvm::sys::path::append(joined, llvm::sys::path::filename(absolute));
  return std::string(joined);
}

/// Checks before any work that `path` can be written: a stream (FIFO,
/// device, /dev/stdout) as it is; a regular file (or the target of the
/// link it names) in a directory that exists and where a file can be
/// created (probed with one, removed at once). Sets `file` to the file
/// written ("" for a stream).
static bool checkOutputPath(llvm::StringRef flag, llvm::StringRef path,
                            std::string &file) {
  auto target = resolveOutputPath(path);
  if (!target) {
    reportError(flag + " " + llvm::toString(target.takeError()));
    return false;
  }
  if (target->stream)
    return true;
  llvm::SmallString<256> dir(target->path);
  llvm::sys::path::remove_filename(dir);
  if (dir.empty())
    dir = ".";
  if (!llvm::sys::fs::is_directory(dir)) {
    reportError(flag + " " + path + ": directory " + dir + " does not exist");
    return false;
  }
  llvm::SmallString<256> probe(dir);
  llvm::sys::path::append(probe, ".gacc-run-probe-%%%%%%%%");
  int fd = -1;
  llvm::SmallString<256> probePath;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueFile(probe, fd, probePath)) {
    reportError(flag + " " + path + ": no file can be created in " + dir +
                ": " + ec.message());
    return false;
  }
  llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  llvm::sys::fs::remove(probePath);
  file = canonicalPath(target->path);
  return true;
}

/// The checkpoint directories of `paths`, each with what it is in
/// messages; false after an error: a --checkpoint-dir that exists must be a
/// directory. Their files are the checkpoints' own.
static bool
checkpointDirectories(const RunPaths &paths,
                      std::vector<std::pair<std::string, std::string>> &dirs) {
  llvm::StringRef checkpointDir = paths.checkpointDir;
  if (!checkpointDir.empty() && llvm::sys::fs::exists(checkpointDir) &&
      !llvm::sys::fs::is_directory(checkpointDir)) {
    reportError("--checkpoint-dir " + checkpointDir +
                ": not a directory (checkpoints are written into a "
                "directory)");
    return false;
  }
  if (!checkpointDir.empty())
    dirs.push_back({canonicalPath(checkpointDir),
                    ("the directory --checkpoint-dir " + checkpointDir +
                     " writes checkpoints into")
                        .str()});
  if (!paths.resumeDir.empty())
    dirs.push_back(
        {canonicalPath(paths.resumeDir),
         ("the checkpoint --resume " + paths.resumeDir + " continues").str()});
  return true;
}

/// What `output` opens (standard output for -o -), as its status; none
/// when it cannot be inspected.
static std::optional<struct stat> fileStatus(const PathFlag &output) {
  struct stat st;
  int rc = output.standardOutput ? ::fstat(STDOUT_FILENO, &st)
                                 : ::stat(output.path.str().c_str(), &st);
  if (rc != 0)
    return std::nullopt;
  return st;
}

/// What a stream output opens, as "stream <device>:<inode>"; empty when
/// it cannot be inspected, or is the null device (which any number of
/// outputs may write).
static std::string streamIdentity(const PathFlag &output) {
  std::optional<struct stat> st = fileStatus(output);
  struct stat null;
  if (!st || (S_ISCHR(st->st_mode) && ::stat("/dev/null", &null) == 0 &&
              st->st_rdev == null.st_rdev))
    return "";
  return "stream " + std::to_string(st->st_dev) + ":" +
         std::to_string(st->st_ino);
}

bool gaccrt::checkOutputPaths(const RunPaths &paths) {
  std::vector<std::pair<std::string, std::string>> checkpointDirs;
  if (!checkpointDirectories(paths, checkpointDirs))
    return false;
  std::vector<std::pair<std::string, std::string>> taken;
  if (paths.model != "-") // not standard input
    taken.push_back(
        {canonicalPath(paths.model), ("the model " + paths.model).str()});
  for (const PathFlag &input : paths.inputs)
    if (!input.path.empty() && !llvm::sys::fs::is_directory(input.path))
      taken.push_back({canonicalPath(input.path),
                       ("the input " + input.flag + " " + input.path).str()});
  for (const PathFlag &output : paths.outputs) {
    llvm::StringRef flag = output.flag, path = output.path;
    if (path.empty())
      continue;
    // A checkpoint directory's files are its own: said first, also where
    // the directory does not exist yet (--checkpoint-dir creates it).
    auto insideCheckpoints = [&](llvm::StringRef file) {
      for (const auto &[dir, owner] : checkpointDirs)
        if (file == dir ||
            file.starts_with(llvm::StringRef(dir).ends_with("/") ? dir
                                                                 : dir + "/")) {
          reportError(flag + " " + path +
                      (file == dir ? " is " : " is inside ") + owner +
                      ": give the output a file outside it");
          return true;
        }
      return false;
    };
    bool standardOutput = output.standardOutput;
    if (!standardOutput && insideCheckpoints(canonicalPath(path)))
      return false;
    std::string file;
    if (!standardOutput && !checkOutputPath(flag, path, file))
      return false;
    // A stream is told apart by the file it opens (a FIFO, a pipe,
    // a terminal): two outputs to standard output would interleave.
    if (file.empty())
      file = streamIdentity(output);
    if (file.empty())
      continue;
    for (const auto &[other, owner] : taken)
      if (other == file) {
        reportError(flag + " " + path + " is also " + owner +
                    ": give each output a file of its own");
        return false;
      }
    if (insideCheckpoints(file)) // through a link
      return false;
    taken.push_back(
        {file, standardOutput
                   ? ("standard output, which " + flag + " - writes").str()
                   : (flag + " " + path).str()});
  }
  return true;
}

bool gaccrt::isStandardOutput(const PathFlag &output) {
  if (output.path.empty())
    return false;
  std::optional<struct stat> file = fileStatus(output);
  std::optional<struct stat> out =
      fileStatus({"", "-", /*standardOutput=*/true});
  return file && out && out->st_dev == file->st_dev &&
         out->st_ino == file->st_ino;
}

static bool logToErrors = false;

llvm::raw_ostream &gaccrt::logStream() {
  return logToErrors ? llvm::errs() : llvm::outs();
}

void gaccrt::logToStandardError() {
  llvm::outs().flush();
  logToErrors = true;
}

bool gaccrt::logsToStandardError() { return logToErrors; }
