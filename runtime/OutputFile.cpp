//===- OutputFile.cpp - writing gacc-run's output files -------------------===//
//
// Path resolution (lstat/readlink), the atomic replacement of regular files
// and direct writes to streams, with POSIX calls: LLVM's file utilities
// neither fsync nor tell a FIFO from a file behind a link.
//
//===----------------------------------------------------------------------===//

#include "runtime/OutputFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace gaccrt;

static llvm::Error fail(llvm::StringRef path, const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 path + ": " + msg);
}

static llvm::Error failErrno(llvm::StringRef path, llvm::StringRef what) {
  return fail(path, what + ": " + std::strerror(errno));
}

/// Writes all of `data` to `fd`, retrying short writes and EINTR.
static bool writeAll(int fd, llvm::StringRef data) {
  const char *p = data.data();
  size_t left = data.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    p += n;
    left -= size_t(n);
  }
  return true;
}

llvm::Expected<OutputTarget> gaccrt::resolveOutputPath(llvm::StringRef path) {
  std::string p = path.str();
  for (int hop = 0; hop < 40; ++hop) {
    // /proc/self/fd/N and its aliases (/dev/stdout, /dev/fd/N) are the
    // process's open files: a stream, whatever they point to. No file can
    // be made in /proc: a name there that does not exist is an error now,
    // not after the work.
    // A name in a directory that leads into /proc (/dev/fd/N, whose last
    // link names no file: "pipe:[...]") is one too.
    llvm::SmallString<256> dir;
    llvm::StringRef ref(p);
    if (!ref.starts_with("/proc/") &&
        !llvm::sys::fs::real_path(llvm::sys::path::parent_path(p), dir) &&
        llvm::StringRef(dir).starts_with("/proc/")) {
      llvm::sys::path::append(dir, llvm::sys::path::filename(p));
      p = std::string(dir.str());
      ref = p;
    }
    if (ref.starts_with("/proc/")) {
      struct stat st;
      if (::stat(p.c_str(), &st) != 0)
        return errno == ENOENT
                   ? fail(path, "no file can be created in /proc (" + p +
                                    " does not exist)")
                   : failErrno(path, "cannot inspect " + p);
      // This process's own descriptors: /proc/self/fd/N or what
      // /proc/self resolves to (/proc/<pid>/fd/N, the pid as this /proc
      // numbers it, which in another PID namespace is not getpid()'s).
      llvm::SmallString<64> self;
      std::string own = llvm::sys::fs::real_path("/proc/self", self)
                            ? std::string("/proc/self/fd/")
                            : (self + "/fd/").str();
      int fd = -1;
      if (!(ref.consume_front("/proc/self/fd/") || ref.consume_front(own)) ||
          ref.getAsInteger(10, fd))
        fd = -1;
      return OutputTarget{path.str(), true, fd};
    }
    struct stat st;
    if (::lstat(p.c_str(), &st) != 0) {
      if (errno == ENOENT)
        return OutputTarget{p, false}; // a new regular file
      return failErrno(path, "cannot inspect " + p);
    }
    if (S_ISDIR(st.st_mode))
      return fail(path, "is a directory");
    if (S_ISREG(st.st_mode))
      return OutputTarget{p, false};
    if (!S_ISLNK(st.st_mode))
      return OutputTarget{path.str(), true}; // FIFO, device, socket
    llvm::SmallString<256> target;
    target.resize(4096);
    ssize_t n = ::readlink(p.c_str(), target.data(), target.size());
    if (n < 0)
      return failErrno(path, "cannot read the link " + p);
    target.resize(size_t(n));
    if (llvm::sys::path::is_relative(target)) {
      llvm::SmallString<256> joined(llvm::sys::path::parent_path(p));
      llvm::sys::path::append(joined, target);
      target = joined;
    }
    p = std::string(target.str());
  }
  return fail(path, "too many levels of symbolic links");
}

llvm::Error gaccrt::syncDirectory(llvm::StringRef dir) {
  std::string d = dir.empty() ? "." : dir.str();
  int fd = ::open(d.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0)
    return failErrno(dir, "cannot open the directory");
  int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0 && errno != EINVAL) // some file systems cannot sync directories
    return failErrno(dir, "cannot sync the directory");
  return llvm::Error::success();
}

/// Opens a stream for writing: a duplicate of the process's descriptor,
/// or the path opened for appending.
static int openStream(llvm::StringRef path, const OutputTarget &target) {
  if (target.processFd >= 0)
    return ::fcntl(target.processFd, F_DUPFD_CLOEXEC, 0);
  return ::open(path.str().c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
}

/// Writes every piece to `fd` in order.
static bool writePieces(int fd, llvm::ArrayRef<llvm::StringRef> pieces) {
  for (llvm::StringRef piece : pieces)
    if (!writeAll(fd, piece))
      return false;
  return true;
}

/// Writes `pieces` to a stream in place.
static llvm::Error writeStream(llvm::StringRef path, const OutputTarget &target,
                               llvm::ArrayRef<llvm::StringRef> pieces) {
  int fd = openStream(path, target);
  if (fd < 0)
    return failErrno(path, "cannot open for writing");
  bool ok = writePieces(fd, pieces);
  int savedErrno = errno;
  ::close(fd);
  errno = savedErrno;
  return ok ? llvm::Error::success() : failErrno(path, "write failed");
}

/// Replaces the regular file `target` (reported as `path`) atomically.
static llvm::Error replaceAtomically(llvm::StringRef path,
                                     llvm::StringRef target,
                                     llvm::ArrayRef<llvm::StringRef> pieces) {
  llvm::SmallString<256> model(target);
  model += ".tmp-%%%%%%";
  llvm::SmallString<256> tmp;
  int fd;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(model, fd, tmp))
    return fail(path, "cannot create a temporary file: " + ec.message());
  bool ok = writePieces(fd, pieces) && ::fsync(fd) == 0;
  int savedErrno = errno;
  ::close(fd);
  if (!ok) {
    llvm::sys::fs::remove(tmp);
    errno = savedErrno;
    return failErrno(path, "write failed");
  }
  if (::rename(tmp.c_str(), target.str().c_str()) != 0) {
    savedErrno = errno;
    llvm::sys::fs::remove(tmp);
    errno = savedErrno;
    return failErrno(path, "cannot rename the temporary file");
  }
  return syncDirectory(llvm::sys::path::parent_path(target));
}

llvm::Error gaccrt::writeOutputFile(llvm::StringRef path,
                                    llvm::ArrayRef<llvm::StringRef> pieces) {
  auto target = resolveOutputPath(path);
  if (!target)
    return target.takeError();
  if (target->stream)
    return writeStream(path, *target, pieces);
  return replaceAtomically(path, target->path, pieces);
}

OutputStream::~OutputStream() {
  if (fd >= 0)
    ::close(fd);
}

llvm::Error OutputStream::open(llvm::StringRef p, bool append) {
  auto target = resolveOutputPath(p);
  if (!target)
    return target.takeError();
  path = p.str();
  if (target->stream) {
    fd = openStream(p, *target);
    if (fd < 0)
      return failErrno(path, "cannot open for writing");
    return llvm::Error::success();
  }
  // Locked before it is truncated: a second process writing the same file
  // would interleave its lines with this one's (and truncate them).
  fd = ::open(target->path.c_str(), O_WRONLY | O_CLOEXEC | O_CREAT | O_APPEND,
              0666);
  if (fd < 0)
    return failErrno(path, "cannot open for writing");
  // A file system without locks (ENOLCK, EOPNOTSUPP) writes unlocked.
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
    ::close(fd);
    fd = -1; // not open: isOpen() is false after a failed open
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        path + ": another process is writing it (it holds the file's lock); "
               "give this run a file of its own");
  }
  if (!append && ::ftruncate(fd, 0) != 0) {
    llvm::Error error = failErrno(path, "cannot truncate");
    ::close(fd);
    fd = -1;
    return error;
  }
  return llvm::Error::success();
}

llvm::Error OutputStream::writeLine(llvm::StringRef line) {
  std::string text = line.str() + "\n";
  if (!writeAll(fd, text))
    return failErrno(path, "write failed");
  return llvm::Error::success();
}
