#pragma once

// RETURN_IF_ERROR / ASSIGN_OR_RETURN: the Abseil status macros (first released in Abseil
// 20260526, newer than Debian's 20220623), in the shape every Google codebase uses.

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define NEREID_STATUS_CONCAT_INNER(a, b) a##b
#define NEREID_STATUS_CONCAT(a, b) NEREID_STATUS_CONCAT_INNER(a, b)

#define RETURN_IF_ERROR(expr)                             \
  do {                                                    \
    if (::absl::Status _nereid_status = (expr); !_nereid_status.ok()) { \
      return _nereid_status;                              \
    }                                                     \
  } while (false)

#define ASSIGN_OR_RETURN(lhs, expr) \
  NEREID_ASSIGN_OR_RETURN_IMPL(NEREID_STATUS_CONCAT(_nereid_statusor_, __LINE__), lhs, expr)

#define NEREID_ASSIGN_OR_RETURN_IMPL(statusor, lhs, expr) \
  auto statusor = (expr);                                 \
  if (!statusor.ok()) return std::move(statusor).status(); \
  lhs = std::move(statusor).value()
