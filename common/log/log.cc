#include "common/log/log.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>

#include "absl/strings/ascii.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace nereid::log {
namespace {

Level InitialLevel() {
  Level level = Level::kInfo;
  if (const char* env = std::getenv("NEREID_LOG_LEVEL"); env != nullptr) ParseLevel(env, &level);
  return level;
}

std::atomic<Level>& MinLevelStorage() {
  static std::atomic<Level> level{InitialLevel()};
  return level;
}

const char* LevelName(Level level) {
  switch (level) {
    case Level::kDebug: return "D";
    case Level::kInfo: return "I";
    case Level::kWarning: return "W";
    case Level::kError: return "E";
  }
  return "?";
}

const char* Basename(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash == nullptr ? path : slash + 1;
}

}  // namespace

void SetMinLevel(Level level) { MinLevelStorage().store(level); }
Level MinLevel() { return MinLevelStorage().load(std::memory_order_relaxed); }

bool ParseLevel(std::string_view text, Level* level) {
  std::string lower = absl::AsciiStrToLower(std::string(text));
  if (lower == "debug") *level = Level::kDebug;
  else if (lower == "info") *level = Level::kInfo;
  else if (lower == "warning" || lower == "warn") *level = Level::kWarning;
  else if (lower == "error") *level = Level::kError;
  else return false;
  return true;
}

LogMessage::LogMessage(Level level, const char* file, int line)
    : level_(level), file_(file), line_(line) {}

LogMessage::~LogMessage() {
  std::string line = absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(), absl::UTCTimeZone());
  line += ' ';
  line += LevelName(level_);
  line += ' ';
  line += Basename(file_);
  line += ':';
  line += std::to_string(line_);
  line += "] ";
  line += stream_.str();
  line += '\n';
  // One write per line so lines from different threads never interleave.
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  std::cerr.write(line.data(), static_cast<std::streamsize>(line.size()));
  std::cerr.flush();
}

}  // namespace nereid::log
