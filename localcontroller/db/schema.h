#pragma once

// The LocalController database schema, as versioned migration steps (PRAGMA user_version).
// Append new steps; never edit a released one.

#include <span>

#include "common/store/sqlite_db.h"

namespace nereid::lc::db {

std::span<const store::Migration> Migrations();

}  // namespace nereid::lc::db
