//===- StopSignals.h - SIGTERM and SIGINT as requests to stop ---*- C++ -*-===//
//
// With checkpoints on, SIGTERM and SIGINT do not end gacc-run: they are
// recorded, and the training loop stops at the next micro-batch boundary
// after writing a checkpoint.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_TOOLS_GACCRUN_STOPSIGNALS_H
#define GACC_TOOLS_GACCRUN_STOPSIGNALS_H

namespace gaccrt {

/// Records SIGTERM and SIGINT from now on instead of ending the process.
void installStopSignalHandlers();

/// The signal received (SIGTERM or SIGINT), or 0.
int stopSignalReceived();

/// "SIGTERM", "SIGINT" or "a signal".
const char *stopSignalName(int signal);

/// Blocks until SIGTERM or SIGINT has been received (at once if it has),
/// without missing one that arrives while it starts waiting.
void waitForStopSignal();

} // namespace gaccrt

#endif // GACC_TOOLS_GACCRUN_STOPSIGNALS_H
