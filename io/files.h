// One way to write a file and one way to read one (docs/RELIABILITY.md):
// every file raceoracle writes is complete or absent, and every input it
// reads can neither hang it (a FIFO, a device) nor exhaust its memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace raceoracle::io {

/// A file that could not be read or written; the message names the path and the reason.
struct FileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A file written whole or not at all: the bytes go to a temporary file
/// beside `path` (its own name, so concurrent writers never share one), every
/// write is checked, the file is synced and closed, then renamed over `path`.
/// A writer destroyed before commit() removes its temporary file; a process
/// killed before commit() leaves `path` as it was (and a dot-file
/// `.NAME.part-*` that the next writer of the directory does not read).
class AtomicFile {
 public:
  explicit AtomicFile(std::string path);  ///< throws FileError when the temporary file cannot be created
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();
  void write(const void* data, std::size_t bytes);  ///< throws FileError (a full disk: ENOSPC)
  void write(std::string_view text) { write(text.data(), text.size()); }
  void commit();  ///< sync, close and rename; throws FileError
  const std::string& path() const { return path_; }

 private:
  std::string path_, temp_;
  int fd_ = -1;
};

/// AtomicFile in one call.
void write_file(const std::string& path, std::string_view bytes);

/// Throws FileError unless a file can be written at `path`: its directory
/// exists, is a directory and is writable, and `path` is not a directory.
/// Creates nothing: a run checks its outputs before it starts.
void check_writable(const std::string& path);

/// Throws FileError unless `dir` is a writable directory or can be created
/// (its nearest existing parent is a writable directory). Creates nothing.
void check_writable_dir(const std::string& dir);

/// Whether `a` and `b` name one file: the same inode when both exist, else
/// the same name in the same directory, links and `..` resolved (`out.json`
/// and `./sub/../out.json` are one file; so are a file and a hard link to it).
/// What a command checks before it writes, so that no output overwrites an
/// input or another output.
bool same_file(const std::string& a, const std::string& b);

/// The size of the regular file `path`; FileError for a FIFO, a device, a
/// socket, a directory or a missing file, by name. It never opens the file
/// (opening a FIFO with no writer blocks).
std::uint64_t regular_file_size(const std::string& path);

/// The bytes of the regular file `path`, at most `max_bytes` of them
/// (FileError beyond, naming both sizes). A file that changes size while it
/// is read is an error too.
std::string read_file(const std::string& path, std::size_t max_bytes);

/// The limit on small inputs: a case, a corpus entry (a few KB in practice).
inline constexpr std::size_t kSmallFileLimit = std::size_t(16) << 20;

}  // namespace raceoracle::io
