//===- StopSignals.cpp - SIGTERM and SIGINT as requests to stop -----------===//
//
// A sig_atomic_t set by the handler, read at micro-batch boundaries; the
// wait blocks the two signals, checks the flag and sleeps in sigsuspend,
// which unblocks them atomically.
//
//===----------------------------------------------------------------------===//

#include "tools/gacc-run/StopSignals.h"

#include <csignal>

static volatile std::sig_atomic_t received = 0;

static void record(int signal) { received = signal; }

void gaccrt::installStopSignalHandlers() {
  struct sigaction action = {};
  action.sa_handler = record;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
}

int gaccrt::stopSignalReceived() { return received; }

const char *gaccrt::stopSignalName(int signal) {
  return signal == SIGTERM  ? "SIGTERM"
         : signal == SIGINT ? "SIGINT"
                            : "a signal";
}

void gaccrt::waitForStopSignal() {
  sigset_t stops, previous;
  sigemptyset(&stops);
  sigaddset(&stops, SIGTERM);
  sigaddset(&stops, SIGINT);
  sigprocmask(SIG_BLOCK, &stops, &previous);
  while (!received) {
    sigset_t waiting = previous;
    sigdelset(&waiting, SIGTERM);
    sigdelset(&waiting, SIGINT);
    sigsuspend(&waiting);
  }
  sigprocmask(SIG_SETMASK, &previous, nullptr);
}
