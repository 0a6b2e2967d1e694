#pragma once

// Counts an open file-format dataset, incrementally when a checkpoint allows it:
//   - same device+inode, same size and mtime as the checkpoint: nothing is read;
//   - same inode, the file grew, and the last <= 4 KiB before the checkpoint's offset still hash
//     to the stored guard (line formats only): only the appended bytes are read;
//   - anything else (new inode after a rename, truncation, same size with a new mtime, guard
//     mismatch, other format or source, coco): a full count.
// The scan covers [.., st.st_size) as of the fstat the caller made; bytes appended during the scan
// are picked up by the next one.

#include <sys/stat.h>

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "localcontroller/dataset/checkpoint.h"
#include "localcontroller/dataset/file_reader.h"
#include "localcontroller/dataset/format.h"

namespace nereid::lc::dataset {

struct FileCount {
  uint64_t count = 0;
  uint64_t bytes_read = 0;   // everything read from the file, guard check included
  bool incremental = false;  // only appended bytes (or nothing) were read
  Checkpoint checkpoint;
};

absl::StatusOr<FileCount> CountFile(int fd, const struct stat& st, Format format,
                                    const std::string& source, const Checkpoint* previous,
                                    const ReadOptions& options);

}  // namespace nereid::lc::dataset
