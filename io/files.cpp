#include "io/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace raceoracle::io {
namespace fs = std::filesystem;
namespace {

std::string why() { return std::strerror(errno); }

std::string kind_of(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

/// The directory a file at `path` would be written into.
fs::path parent_of(const std::string& path) {
  const fs::path p = fs::path(path).parent_path();
  return p.empty() ? fs::path(".") : p;
}

std::string temp_name(const std::string& path) {
  static std::atomic<unsigned> counter{0};
  const fs::path p(path);
  return (parent_of(path) / ("." + p.filename().string() + ".part-" + std::to_string(::getpid()) + "-" +
                             std::to_string(counter++)))
      .string();
}

}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  if (path_.empty()) throw FileError("an output path is empty");
  struct stat st {};
  if (::stat(path_.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) throw FileError("cannot write " + path_ + ": a directory");
  temp_ = temp_name(path_);
  fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd_ < 0) throw FileError("cannot write " + path_ + ": " + why());
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(temp_.c_str());
  }
}

void AtomicFile::write(const void* data, std::size_t bytes) {
  if (fd_ < 0) throw FileError("cannot write " + path_ + ": already committed");
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::write(fd_, p, bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw FileError("cannot write " + path_ + ": " + (n < 0 ? why() : std::string("no progress")));
    p += n;
    bytes -= std::size_t(n);
  }
}

void AtomicFile::commit() {
  if (fd_ < 0) throw FileError("cannot write " + path_ + ": already committed");
  // A full disk may show only here (delayed allocation): sync before the rename.
  if (::fsync(fd_) != 0 && errno != EINVAL && errno != EROFS)
    throw FileError("cannot write " + path_ + ": " + why());
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) {
    const std::string e = why();
    ::unlink(temp_.c_str());
    throw FileError("cannot write " + path_ + ": " + e);
  }
  if (::rename(temp_.c_str(), path_.c_str()) != 0) {
    const std::string e = why();
    ::unlink(temp_.c_str());
    throw FileError("cannot write " + path_ + ": " + e);
  }
}

void write_file(const std::string& path, std::string_view bytes) {
  AtomicFile f(path);
  f.write(bytes);
  f.commit();
}

void check_writable(const std::string& path) {
  if (path.empty()) throw FileError("an output path is empty");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) throw FileError("cannot write " + path + ": a directory");
  const fs::path dir = parent_of(path);
  if (::stat(dir.c_str(), &st) != 0) throw FileError("cannot write " + path + ": " + dir.string() + ": " + why());
  if (!S_ISDIR(st.st_mode)) throw FileError("cannot write " + path + ": " + dir.string() + " is not a directory");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw FileError("cannot write " + path + ": " + dir.string() + ": " + why());
}

void check_writable_dir(const std::string& dir) {
  if (dir.empty()) throw FileError("an output directory is empty");
  fs::path p(dir);
  struct stat st {};
  while (::stat(p.c_str(), &st) != 0) {  // the nearest existing ancestor
    if (errno != ENOENT) throw FileError("cannot write into " + dir + ": " + p.string() + ": " + why());
    const fs::path up = p.parent_path();
    if (up.empty() || up == p) {
      p = ".";
      if (::stat(p.c_str(), &st) != 0) throw FileError("cannot write into " + dir + ": " + why());
      break;
    }
    p = up;
  }
  if (!S_ISDIR(st.st_mode)) throw FileError("cannot write into " + dir + ": " + p.string() + " is not a directory");
  if (::access(p.c_str(), W_OK | X_OK) != 0) throw FileError("cannot write into " + dir + ": " + p.string() + ": " + why());
}

namespace {

/// A path as one file: its inode when it exists, else its resolved directory and name.
struct FileIdentity {
  bool exists = false;
  dev_t dev = 0;
  ino_t ino = 0;
  std::string name;
};

FileIdentity identify(const std::string& path) {
  FileIdentity id;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    id.exists = true, id.dev = st.st_dev, id.ino = st.st_ino;
    return id;
  }
  const fs::path p(path);
  std::error_code ec;
  const fs::path dir = fs::weakly_canonical(fs::absolute(parent_of(path), ec), ec);
  id.name = (dir / p.filename()).lexically_normal().string();
  return id;
}

}  // namespace

bool same_file(const std::string& a, const std::string& b) {
  const FileIdentity x = identify(a), y = identify(b);
  if (x.exists != y.exists) return false;
  return x.exists ? x.dev == y.dev && x.ino == y.ino : x.name == y.name;
}

std::uint64_t regular_file_size(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw FileError("cannot read " + path + ": " + why());
  if (!S_ISREG(st.st_mode)) throw FileError("cannot read " + path + ": " + kind_of(st.st_mode) + ", not a regular file");
  return std::uint64_t(st.st_size);
}

std::string read_file(const std::string& path, std::size_t max_bytes) {
  const std::uint64_t size = regular_file_size(path);
  if (size > max_bytes)
    throw FileError("cannot read " + path + ": " + std::to_string(size) + " bytes, more than the " +
                    std::to_string(max_bytes) + " this input may hold");
  // O_NONBLOCK: had a FIFO replaced the file since stat, open returns at once.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw FileError("cannot read " + path + ": " + why());
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw FileError("cannot read " + path + ": not a regular file");
  }
  // st_size bytes and one more: a file that shrinks or grows while read is an error.
  std::string out(std::size_t(st.st_size) + 1, '\0');
  std::size_t got = 0;
  while (got < out.size()) {
    const ssize_t n = ::read(fd, out.data() + got, out.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const std::string e = why();
      ::close(fd);
      throw FileError("cannot read " + path + ": " + e);
    }
    if (n == 0) break;
    got += std::size_t(n);
  }
  ::close(fd);
  if (got != std::size_t(st.st_size))
    throw FileError("cannot read " + path + ": it changed size while read (" + std::to_string(st.st_size) + " bytes, then " +
                    (got > std::size_t(st.st_size) ? "more" : std::to_string(got)) + ")");
  out.resize(got);
  return out;
}

}  // namespace raceoracle::io
