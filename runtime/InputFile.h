//===- InputFile.h - reading an input file whole ----------------*- C++ -*-===//
//
// Every file gacc reads whole (a model, --load-params, a tensors or text
// data set, --order-file, a checkpoint's files) comes through
// readInputFile: a device such as /dev/zero or /dev/urandom, which has no
// end, is refused by its type instead of being read until memory runs
// out. Header-only (LLVM Support alone), for gacc-opt too.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_RUNTIME_INPUTFILE_H
#define GACC_RUNTIME_INPUTFILE_H

#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <string>

namespace gaccrt {

/// Why a file of `status` cannot be an input read whole ("" when it can):
/// a directory, or a device or socket (a regular file or a FIFO, such as a
/// shell's process substitution, can).
inline std::string inputFileProblem(const llvm::sys::fs::file_status &status) {
  namespace fs = llvm::sys::fs;
  switch (status.type()) {
  case fs::file_type::directory_file:
    return "a directory, not a file";
  case fs::file_type::character_file:
  case fs::file_type::block_file:
    return "a device, not a file (an input is read whole, and a device "
           "such as /dev/zero has no end)";
  case fs::file_type::socket_file:
    return "a socket, not a file";
  default:
    return "";
  }
}

/// The whole contents of the input file `path` (inputFileProblem, then
/// the system's error when it cannot be read); the error's message is the
/// reason alone, for the caller to put after the path. A regular file of
/// size 0 is read until its end, as a stream: /proc files report size 0
/// whatever they hold (and one that cannot be read, such as
/// /proc/self/mem, gives its read error instead of an empty input); that
/// buffer is always null-terminated, whatever `requiresNullTerminator`.
inline llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readInputFile(const llvm::Twine &path, bool isText = false,
              bool requiresNullTerminator = true) {
  // A path that cannot be inspected (it does not exist) is for opening it
  // to report.
  llvm::sys::fs::file_status status;
  bool inspected = !llvm::sys::fs::status(path, status);
  if (std::string problem = inspected ? inputFileProblem(status) : "";
      !problem.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(), problem);
  bool sizeless = inspected &&
                  status.type() == llvm::sys::fs::file_type::regular_file &&
                  status.getSize() == 0;
  auto buffer = sizeless ? llvm::MemoryBuffer::getFileAsStream(path)
                         : llvm::MemoryBuffer::getFile(path, isText,
                                                       requiresNullTerminator);
  if (!buffer)
    return llvm::createStringError(buffer.getError(),
                                   buffer.getError().message());
  return std::move(*buffer);
}

} // namespace gaccrt

#endif // GACC_RUNTIME_INPUTFILE_H
