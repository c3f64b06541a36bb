//===- Symbols.h - function pointers from dlopen'd libraries ----*- C++ -*-===//
//
// The one way the runtime binds an entry point of a library it opened at
// run time (the CUDA driver, cuBLAS, NCCL).
//
//===----------------------------------------------------------------------===//

#ifndef GACC_RUNTIME_SYMBOLS_H
#define GACC_RUNTIME_SYMBOLS_H

#include <dlfcn.h>

namespace gaccrt {

/// Sets `fn` to the entry point `name` of the dlopen'd `lib`; false (and
/// `fn` null) when the library does not export it.
template <typename F> bool loadSymbol(void *lib, F &fn, const char *name) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  return fn != nullptr;
}

} // namespace gaccrt

#endif // GACC_RUNTIME_SYMBOLS_H
