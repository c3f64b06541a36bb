//===- HostMemoryTest.cpp - container memory limits -----------------------===//
//
// gaccrt::cgroupMemoryLimit on cgroup trees made in a temporary directory:
// cgroup v2's memory.max of the process's group and of the groups above it
// (the lowest wins; "max" is none), v1's memory.limit_in_bytes under the
// memory controller's hierarchy (its "unlimited" value is none), lines of
// other controllers ignored, no files at all: no limit. And
// hostMemoryBytes is at most the machine's physical memory.
//
//===----------------------------------------------------------------------===//

#include "runtime/HostMemory.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <unistd.h>

namespace fs = std::filesystem;
using gaccrt::cgroupMemoryLimit;

namespace {

constexpr uint64_t kNone = std::numeric_limits<uint64_t>::max();

class CgroupTree : public ::testing::Test {
protected:
  void SetUp() override {
    root = fs::temp_directory_path() /
           ("gacc-cgroup-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root);
    fs::create_directories(root);
  }
  void TearDown() override { fs::remove_all(root); }
  /// Writes `text` to `relative` under the root, making its directories.
  void write(const std::string &relative, const std::string &text) {
    fs::path file = root / relative;
    fs::create_directories(file.parent_path());
    std::ofstream(file) << text << "\n";
  }
  fs::path root;
};

TEST_F(CgroupTree, V2TakesTheLowestLimitUpToTheRoot) {
  write("memory.max", "max");
  write("kube/memory.max", "8589934592");
  write("kube/pod/memory.max", "max");
  write("kube/pod/app/memory.max", "17179869184");
  EXPECT_EQ(cgroupMemoryLimit(root, "0::/kube/pod/app\n"), 8589934592u);
  EXPECT_EQ(cgroupMemoryLimit(root, "0::/kube/pod/app/\n"), 8589934592u);
  // The group's own limit where it is the lowest.
  write("kube/pod/app/memory.max", "1073741824");
  EXPECT_EQ(cgroupMemoryLimit(root, "0::/kube/pod/app"), 1073741824u);
}

TEST_F(CgroupTree, V2MaxEverywhereIsNoLimit) {
  write("memory.max", "max");
  write("a/memory.max", "max");
  EXPECT_EQ(cgroupMemoryLimit(root, "0::/a\n"), kNone);
  EXPECT_EQ(cgroupMemoryLimit(root, "0::/\n"), kNone);
}

TEST_F(CgroupTree, V1ReadsTheMemoryControllersHierarchy) {
  write("memory/memory.limit_in_bytes", "9223372036854771712");
  write("memory/docker/memory.limit_in_bytes", "4294967296");
  write("memory/docker/abc/memory.limit_in_bytes", "9223372036854771712");
  // A cpu group of the same name with a limit file is not read.
  write("cpu/docker/abc/memory.limit_in_bytes", "1");
  std::string self = "12:cpu,cpuacct:/docker/abc\n"
                     "4:memory:/docker/abc\n"
                     "0::/\n";
  EXPECT_EQ(cgroupMemoryLimit(root, self), 4294967296u);
  EXPECT_EQ(cgroupMemoryLimit(root, "4:memory:/\n"), kNone);
}

TEST_F(CgroupTree, MissingOrMalformedFilesAreNoLimit) {
  EXPECT_EQ(cgroupMemoryLimit(root, "0::/nowhere\n4:memory:/nowhere\n"), kNone);
  write("g/memory.max", "12abc");
  EXPECT_EQ(cgroupMemoryLimit(root, "0::/g"), kNone);
  EXPECT_EQ(cgroupMemoryLimit(root, ""), kNone);
  EXPECT_EQ(cgroupMemoryLimit(root, "garbage\n7\n"), kNone);
  write("g/memory.max", "0");
  EXPECT_EQ(cgroupMemoryLimit(root, "0::/g"), kNone);
}

TEST_F(CgroupTree, GroupsOutsideTheNamespaceAreNotRead) {
  // "/../other" would resolve to a file above the mount; the namespace
  // root's limit does not apply to a group outside it.
  write("memory.max", "1048576");
  EXPECT_EQ(cgroupMemoryLimit(root, "0::/../other\n"), kNone);
  EXPECT_EQ(cgroupMemoryLimit(root, "0::/gone (deleted)\n"), kNone);
  EXPECT_EQ(cgroupMemoryLimit(root, "0::/\n"), 1048576u);
}

TEST(HostMemory, AtMostThePhysicalMemory) {
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  ASSERT_GT(pages, 0);
  uint64_t bytes = gaccrt::hostMemoryBytes();
  EXPECT_GT(bytes, 0u);
  EXPECT_LE(bytes, uint64_t(pages) * uint64_t(size));
}

} // namespace
