#include "io/shard.h"

#include <charconv>
#include <stdexcept>

namespace raceoracle::io {

Shard parse_shard(const std::string& text) {
  const auto bad = [&] {
    return std::invalid_argument("--shard '" + text + "': expected I/N with 0 <= I < N (e.g. 0/4 .. 3/4)");
  };
  const std::size_t slash = text.find('/');
  if (slash == std::string::npos) throw bad();
  Shard s;
  const char* end = text.data() + text.size();
  const auto a = std::from_chars(text.data(), text.data() + slash, s.index);
  const auto b = std::from_chars(text.data() + slash + 1, end, s.count);
  if (a.ec != std::errc() || a.ptr != text.data() + slash || b.ec != std::errc() || b.ptr != end || s.count < 1 ||
      s.index < 0 || s.index >= s.count)
    throw bad();
  return s;
}

}  // namespace raceoracle::io
