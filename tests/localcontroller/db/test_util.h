#pragma once

// Helpers shared by the LC database tests.

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <memory>
#include <string>

#include "localcontroller/db/lc_database.h"

namespace nereid::lc::db::testing {

// A fresh directory under /tmp, removed with everything in it at scope exit.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = "/tmp/nereid-lcdb-test-XXXXXX";
    char* dir = mkdtemp(tmpl.data());
    REQUIRE(dir != nullptr);
    path_ = dir;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline LcDatabase::Options MakeOptions(const std::string& path, Clock* clock = Clock::Real(),
                                       const std::string& node = "node-a") {
  LcDatabase::Options options;
  options.path = path;
  options.node_name = node;
  options.clock = clock;
  return options;
}

inline std::unique_ptr<LcDatabase> OpenOrDie(const LcDatabase::Options& options) {
  absl::StatusOr<std::unique_ptr<LcDatabase>> db = LcDatabase::Open(options);
  INFO(db.status().ToString());
  REQUIRE(db.ok());
  return std::move(*db);
}

inline ObjectRef Ref(std::string kind, std::string ns, std::string name, std::string uid = "") {
  return ObjectRef{std::move(kind), std::move(ns), std::move(name), std::move(uid)};
}

inline ObjectRef DatasetRef(std::string ns, std::string name) {
  std::string uid = "uid-" + name;  // before `name` is moved: argument order is unspecified
  return Ref(kDatasetKind, std::move(ns), std::move(name), std::move(uid));
}

}  // namespace nereid::lc::db::testing
