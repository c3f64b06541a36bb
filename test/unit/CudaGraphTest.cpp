//===- CudaGraphTest.cpp - CUDA graph capture against a fake driver -------===//
//
// The driver-call sequence of gaccrt::cuda::CapturedWork (stream capture,
// instantiation, replay, destruction) and its failures, against a fake
// driver that logs each call: no device needed. Where the toolkit's
// cuda.h is installed, the capture mode gacc restates is checked against
// it.
//
//===----------------------------------------------------------------------===//

#include "runtime/CudaGraph.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using gaccrt::cuda::CapturedWork;
using gaccrt::cuda::capturing;
using gaccrt::cuda::Driver;
using Stream = gaccrt::cuda::CUstream;
using Graph = gaccrt::cuda::CUgraph;
using GraphExec = gaccrt::cuda::CUgraphExec;

std::vector<std::string> calls;
/// Error codes the fake returns per entry point (0: success).
int beginResult, endResult, instantiateResult, launchResult;
bool endGivesGraph;

Stream const kStream = reinterpret_cast<Stream>(0x51);
Graph const kGraph = reinterpret_cast<Graph>(0x61);
GraphExec const kExec = reinterpret_cast<GraphExec>(0x71);

std::string hex(const void *p) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%p", p);
  return buffer;
}

Driver fakeDriver() {
  Driver d{};
  d.cuGetErrorName = [](int r, const char **name) {
    *name = r == 901 ? "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"
                     : "CUDA_ERROR_FAKE";
    return 0;
  };
  d.cuStreamBeginCapture = [](Stream s, int mode) {
    calls.push_back("begin " + hex(s) + " mode " + std::to_string(mode));
    return beginResult;
  };
  d.cuStreamEndCapture = [](Stream s, Graph *g) {
    calls.push_back("end " + hex(s));
    *g = endGivesGraph ? kGraph : nullptr;
    return endResult;
  };
  d.cuGraphInstantiateWithFlags = [](GraphExec *e, Graph g,
                                     unsigned long long flags) {
    calls.push_back("instantiate " + hex(g) + " flags " +
                    std::to_string(flags));
    *e = instantiateResult ? nullptr : kExec;
    return instantiateResult;
  };
  d.cuGraphLaunch = [](GraphExec e, Stream s) {
    calls.push_back("launch " + hex(e) + " " + hex(s));
    return launchResult;
  };
  d.cuGraphExecDestroy = [](GraphExec e) {
    calls.push_back("destroy exec " + hex(e));
    return 0;
  };
  d.cuGraphDestroy = [](Graph g) {
    calls.push_back("destroy graph " + hex(g));
    return 0;
  };
  return d;
}

struct CudaGraph : ::testing::Test {
  void SetUp() override {
    calls.clear();
    beginResult = endResult = instantiateResult = launchResult = 0;
    endGivesGraph = true;
  }
  Driver d = fakeDriver();
};

std::vector<std::string> sequence(std::initializer_list<std::string> l) {
  return l;
}

} // namespace

TEST_F(CudaGraph, CapturesOnceAndReplays) {
  {
    CapturedWork work(d);
    bool sawCapturing = false;
    EXPECT_EQ(work.capture(kStream,
                           [&] {
                             sawCapturing = capturing();
                             calls.push_back("enqueue");
                             return std::string();
                           }),
              "");
    EXPECT_TRUE(sawCapturing);
    EXPECT_FALSE(capturing());
    EXPECT_TRUE(work.ready());
    EXPECT_EQ(work.launch(kStream), "");
    EXPECT_EQ(work.launch(kStream), "");
  }
  EXPECT_EQ(calls, sequence({"begin " + hex(kStream) + " mode 1", "enqueue",
                             "end " + hex(kStream),
                             "instantiate " + hex(kGraph) + " flags 0",
                             "launch " + hex(kExec) + " " + hex(kStream),
                             "launch " + hex(kExec) + " " + hex(kStream),
                             "destroy exec " + hex(kExec),
                             "destroy graph " + hex(kGraph)}));
}

TEST_F(CudaGraph, FailedEnqueueEndsTheCaptureAndKeepsNothing) {
  CapturedWork work(d);
  EXPECT_EQ(work.capture(kStream, [] { return std::string("kernel refused"); }),
            "kernel refused");
  EXPECT_FALSE(work.ready());
  EXPECT_FALSE(capturing());
  EXPECT_EQ(calls, sequence({"begin " + hex(kStream) + " mode 1",
                             "end " + hex(kStream),
                             "destroy graph " + hex(kGraph)}));
  EXPECT_EQ(work.launch(kStream), "no captured graph to launch");
}

TEST_F(CudaGraph, InvalidatedCaptureIsNamed) {
  endResult = 901;
  endGivesGraph = false;
  CapturedWork work(d);
  EXPECT_EQ(work.capture(kStream, [] { return std::string(); }),
            "cuStreamEndCapture: CUDA_ERROR_STREAM_CAPTURE_INVALIDATED");
  EXPECT_FALSE(work.ready());
  EXPECT_EQ(calls.size(), 2u); // begin, end: nothing instantiated
}

TEST_F(CudaGraph, FailedInstantiationDestroysTheGraph) {
  instantiateResult = 1;
  CapturedWork work(d);
  EXPECT_EQ(work.capture(kStream, [] { return std::string(); }),
            "cuGraphInstantiateWithFlags: CUDA_ERROR_FAKE");
  EXPECT_FALSE(work.ready());
  EXPECT_EQ(calls.back(), "destroy graph " + hex(kGraph));
}

TEST_F(CudaGraph, FailedBeginCapturesNothing) {
  beginResult = 1;
  CapturedWork work(d);
  bool ran = false;
  EXPECT_EQ(work.capture(kStream,
                         [&] {
                           ran = true;
                           return std::string();
                         }),
            "cuStreamBeginCapture_v2: CUDA_ERROR_FAKE");
  EXPECT_FALSE(ran);
  EXPECT_EQ(calls.size(), 1u);
}

TEST_F(CudaGraph, RecaptureReplacesTheGraphOnlyOnSuccess) {
  CapturedWork work(d);
  ASSERT_EQ(work.capture(kStream, [] { return std::string(); }), "");
  calls.clear();
  // A failed second capture keeps the first graph.
  EXPECT_NE(work.capture(kStream, [] { return std::string("no"); }), "");
  EXPECT_TRUE(work.ready());
  EXPECT_EQ(calls.back(), "destroy graph " + hex(kGraph)); // the new one
  calls.clear();
  ASSERT_EQ(work.capture(kStream, [] { return std::string(); }), "");
  // The first one is destroyed when the second replaces it.
  EXPECT_EQ(calls, sequence({"begin " + hex(kStream) + " mode 1",
                             "end " + hex(kStream),
                             "instantiate " + hex(kGraph) + " flags 0",
                             "destroy exec " + hex(kExec),
                             "destroy graph " + hex(kGraph)}));
  launchResult = 1;
  EXPECT_EQ(work.launch(kStream), "cuGraphLaunch: CUDA_ERROR_FAKE");
}

TEST_F(CudaGraph, DriverWithoutGraphsIsOneMessage) {
  Driver old{};
  CapturedWork work(old);
  EXPECT_NE(work.capture(kStream, [] { return std::string(); })
                .find("no graph entry points"),
            std::string::npos);
  EXPECT_TRUE(calls.empty());
}

// Last, so that cuda.h's macros (cuStreamBeginCapture names the _v2
// symbol gacc binds) and types stay out of the code above.
#ifdef GACC_HAVE_CUBLASLT_HEADER
#include <cuda.h>
static_assert(gaccrt::cuda::kCaptureModeThreadLocal ==
              CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
#endif
