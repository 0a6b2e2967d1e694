#pragma once

// A small leveled logger with the LOG(INFO) << ... call shape (absl/log is newer than our Abseil).
// Lines go to stderr as: "<time> <level> <file>:<line>] message". Put the object key in the message
// ("dataset default/ds1: ...") so every line can be traced to what it is about.

#include <sstream>
#include <string_view>

namespace nereid::log {

enum class Level { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

// Lines below this level are dropped. Default kInfo; NEREID_LOG_LEVEL=debug|info|warning|error.
void SetMinLevel(Level level);
Level MinLevel();
bool ParseLevel(std::string_view text, Level* level);

class LogMessage {
 public:
  LogMessage(Level level, const char* file, int line);
  ~LogMessage();
  LogMessage(const LogMessage&) = delete;
  LogMessage& operator=(const LogMessage&) = delete;
  std::ostream& stream() { return stream_; }

 private:
  Level level_;
  const char* file_;
  int line_;
  std::ostringstream stream_;
};

// Swallows the stream when the level is disabled, without evaluating the operands.
struct Voidify {
  void operator&(std::ostream&) {}
};

}  // namespace nereid::log

#define NEREID_LOG_LEVEL_DEBUG ::nereid::log::Level::kDebug
#define NEREID_LOG_LEVEL_INFO ::nereid::log::Level::kInfo
#define NEREID_LOG_LEVEL_WARNING ::nereid::log::Level::kWarning
#define NEREID_LOG_LEVEL_ERROR ::nereid::log::Level::kError

#define LOG(severity)                                                       \
  (NEREID_LOG_LEVEL_##severity < ::nereid::log::MinLevel())                 \
      ? (void)0                                                             \
      : ::nereid::log::Voidify() &                                          \
            ::nereid::log::LogMessage(NEREID_LOG_LEVEL_##severity, __FILE__, __LINE__).stream()
