// io/files: a file written is complete or absent, whatever stops the writer
// (a full disk, an exception, a concurrent writer); a file read is a regular
// file within its size limit, and nothing else blocks or exhausts the reader.
#include "io/files.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/support/temp_dir.h"

namespace raceoracle::io {
namespace {
namespace fs = std::filesystem;

using raceoracle::test_support::TempDir;

std::string slurp(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(WriteFile, WritesTheWholeTextAndReplacesAnOldFile) {
  TempDir d;
  write_file(d / "a.json", "old");
  write_file(d / "a.json", "new text\n");
  EXPECT_EQ(slurp(d / "a.json"), "new text\n");
  EXPECT_EQ(d.entries(), 1u);  // no temporary file left
}

TEST(WriteFile, AWriterThatNeverCommitsLeavesTheOldFileAndNoTemporary) {
  TempDir d;
  write_file(d / "a.json", "kept");
  {
    AtomicFile f(d / "a.json");
    f.write("half of a ");
  }  // destroyed before commit, as when an exception unwinds
  EXPECT_EQ(slurp(d / "a.json"), "kept");
  EXPECT_EQ(d.entries(), 1u);
}

TEST(WriteFile, AFullDiskIsAnErrorNamingThePathAndLeavesNothing) {
  // The file-size limit makes write(2) fail with EFBIG past 4 KiB, as a full
  // disk fails with ENOSPC: the same path through AtomicFile::write.
  TempDir d;
  rlimit old{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  const auto old_handler = ::signal(SIGXFSZ, SIG_IGN);
  rlimit small = old;
  small.rlim_cur = 4096;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string message;
  try {
    write_file(d / "report.json", std::string(100000, 'x'));
  } catch (const FileError& e) {
    message = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &old);
  ::signal(SIGXFSZ, old_handler);
  EXPECT_NE(message.find("cannot write " + (d / "report.json")), std::string::npos) << message;
  EXPECT_NE(message.find("too large"), std::string::npos) << message;
  EXPECT_FALSE(fs::exists(d / "report.json"));
  EXPECT_EQ(d.entries(), 0u);
}

TEST(WriteFile, AMissingDirectoryOrADirectoryPathIsAnError) {
  TempDir d;
  EXPECT_THROW(write_file(d / "no-such-dir/a.json", "x"), FileError);
  fs::create_directory(d / "sub");
  EXPECT_THROW(write_file(d / "sub", "x"), FileError);
  EXPECT_THROW(write_file("", "x"), FileError);
}

TEST(WriteFile, ConcurrentWritersOfOnePathLeaveOneCompleteFile) {
  // 8 processes write the same path 100 times each, each its own text; a
  // reader beside them only ever sees one writer's whole text.
  TempDir d;
  const std::string path = d / "report.json";
  auto text_of = [](int w) { return "writer " + std::to_string(w) + ": " + std::string(20000 + w * 1000, char('a' + w)); };
  std::vector<pid_t> kids;
  for (int w = 0; w < 8; ++w) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int rc = 0;
      for (int i = 0; i < 100; ++i) try {
          write_file(path, text_of(w));
        } catch (...) {
          rc = 1;
        }
      ::_exit(rc);
    }
    kids.push_back(pid);
  }
  int torn = 0, reads = 0;
  for (bool running = true; running;) {
    running = false;
    for (pid_t k : kids) running |= ::waitpid(k, nullptr, WNOHANG) == 0;
    if (!fs::exists(path)) continue;
    const std::string got = slurp(path);
    ++reads;
    bool whole = false;
    for (int w = 0; w < 8; ++w) whole |= got == text_of(w);
    torn += !whole;
  }
  EXPECT_EQ(torn, 0) << "of " << reads << " reads";
  bool whole = false;
  for (int w = 0; w < 8; ++w) whole |= slurp(path) == text_of(w);
  EXPECT_TRUE(whole);
  EXPECT_EQ(d.entries(), 1u);
}

TEST(CheckWritable, RefusesAMissingDirectoryAndCreatesNothing) {
  TempDir d;
  EXPECT_NO_THROW(check_writable(d / "a.json"));
  EXPECT_FALSE(fs::exists(d / "a.json"));
  EXPECT_THROW(check_writable(d / "missing/a.json"), FileError);
  write_file(d / "file", "x");
  EXPECT_THROW(check_writable(d / "file/a.json"), FileError);
  EXPECT_NO_THROW(check_writable_dir(d / "new/deeper"));
  EXPECT_FALSE(fs::exists(d / "new"));
  EXPECT_THROW(check_writable_dir(d / "file/sub"), FileError);
}

// What a command checks before it writes: no output onto an input or onto
// another output, by whatever name the user gave each.
TEST(SameFile, OneFileByAnyNameIsOneFile) {
  TempDir d;
  fs::create_directory(d / "sub");
  write_file(d / "a.json", "{}");
  fs::create_hard_link(d / "a.json", d / "hard.json");
  fs::create_symlink(d / "a.json", d / "soft.json");
  EXPECT_TRUE(same_file(d / "a.json", d / "a.json"));
  EXPECT_TRUE(same_file(d / "a.json", d / "sub/../a.json"));
  EXPECT_TRUE(same_file(d / "a.json", d / "hard.json"));
  EXPECT_TRUE(same_file(d / "a.json", d / "soft.json"));
  // Not yet written: one name in one directory is one file.
  EXPECT_TRUE(same_file(d / "out.xml", d / "sub/../out.xml"));
  EXPECT_FALSE(same_file(d / "out.xml", d / "out.html"));
  EXPECT_FALSE(same_file(d / "a.json", d / "sub/a.json"));
  EXPECT_FALSE(same_file(d / "a.json", d / "missing.json"));
}

TEST(ReadFile, RefusesWhatIsNotARegularFileWithoutOpeningIt) {
  TempDir d;
  ASSERT_EQ(::mkfifo((d / "fifo").c_str(), 0600), 0);  // no writer: opening it would block
  auto message = [](const std::string& p) {
    try {
      read_file(p, kSmallFileLimit);
    } catch (const FileError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(d / "fifo").find("a FIFO, not a regular file"), std::string::npos) << message(d / "fifo");
  EXPECT_NE(message("/dev/zero").find("a character device"), std::string::npos) << message("/dev/zero");
  EXPECT_NE(message(d.path.string()).find("a directory"), std::string::npos);
  EXPECT_NE(message(d / "missing").find("No such file"), std::string::npos);
}

TEST(ReadFile, ReadsWithinItsLimitAndRefusesBeyond) {
  TempDir d;
  write_file(d / "case.json", "{\"rows\": []}");
  EXPECT_EQ(read_file(d / "case.json", 100), "{\"rows\": []}");
  write_file(d / "big", std::string(1000, 'x'));
  try {
    read_file(d / "big", 999);
    ADD_FAILURE() << "read past its limit";
  } catch (const FileError& e) {
    EXPECT_NE(std::string(e.what()).find("1000 bytes, more than the 999"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_file(d / "big", 1000).size(), 1000u);
}

}  // namespace
}  // namespace raceoracle::io
