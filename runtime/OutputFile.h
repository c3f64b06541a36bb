//===- OutputFile.h - writing gacc-run's output files -----------*- C++ -*-===//
//
// Where an output path really leads, and writing there without losing data:
// a regular file (or a symbolic link to one) is replaced atomically (a
// temporary file in the target's directory, fsync, rename, fsync of the
// directory), so a reader never sees half a file and a crash leaves the old
// one; a stream (a FIFO, a device, standard output through /dev/stdout or
// /proc/self/fd/N) is written directly, never replaced. Lines that must
// survive a crash (metrics) go through OutputStream, one write per line.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_RUNTIME_OUTPUTFILE_H
#define GACC_RUNTIME_OUTPUTFILE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace gaccrt {

/// What an output path leads to once its symbolic links are followed.
struct OutputTarget {
  /// The file written: the last link's target for a regular file (or the
  /// path itself when it does not exist yet), the path as given for a
  /// stream.
  std::string path;
  /// A FIFO, a device, a socket or a /proc file-descriptor link: written
  /// in place, never replaced.
  bool stream = false;
  /// For /proc/self/fd/N (what /dev/stdout and /dev/fd/N lead to): N, this
  /// process's own open file, written through that descriptor so that its
  /// offset is shared with everything else the process writes there.
  int processFd = -1;
};

/// Follows `path`'s symbolic links (at most 40). Errors: a directory, a
/// link loop, a component that cannot be read.
llvm::Expected<OutputTarget> resolveOutputPath(llvm::StringRef path);

/// Writes the concatenation of `pieces` to `path`: atomically for a
/// regular file (the target of its links), directly for a stream. The
/// pieces are written where they lie, never joined into one copy. Errors
/// name the path.
llvm::Error writeOutputFile(llvm::StringRef path,
                            llvm::ArrayRef<llvm::StringRef> pieces);

/// Writes `contents` to `path` (as above, one piece).
inline llvm::Error writeOutputFile(llvm::StringRef path,
                                   llvm::StringRef contents) {
  return writeOutputFile(path, llvm::ArrayRef<llvm::StringRef>(contents));
}

/// fsync of a directory, after a rename into it.
llvm::Error syncDirectory(llvm::StringRef dir);

/// A file written line by line, each line one write(2) as it happens (so a
/// crash loses at most the line being written): a regular file is created
/// or truncated (or appended to, to continue it), a stream is appended to.
/// A regular file is locked (flock) while open: opening one another
/// process holds is an error, before anything in it changes.
class OutputStream {
public:
  OutputStream() = default;
  OutputStream(const OutputStream &) = delete;
  OutputStream &operator=(const OutputStream &) = delete;
  ~OutputStream();

  llvm::Error open(llvm::StringRef path, bool append);
  bool isOpen() const { return fd >= 0; }
  /// Writes `line` and a newline.
  llvm::Error writeLine(llvm::StringRef line);

private:
  int fd = -1;
  std::string path;
};

} // namespace gaccrt

#endif // GACC_RUNTIME_OUTPUTFILE_H
