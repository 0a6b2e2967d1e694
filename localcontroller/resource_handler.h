#pragma once

// The daemon's per-kind seam: what the LC does with an object of one kind once it is committed to
// the database (Dataset -> dataset monitor, Model -> model keeper; the trigger evaluator of
// incremental/lifelong learning jobs plugs in here later). Kinds without a handler are stored and
// ACKed only (their worker reports are still relayed).

#include "nereid/edge/v1/resources.pb.h"

namespace nereid::lc {

class ResourceHandler {
 public:
  virtual ~ResourceHandler() = default;

  // The object was committed (live change), or read back from the database at start. Runs on the
  // cloud-link thread (or the starting thread); must not block on I/O.
  virtual void Apply(const edge::v1::Resource& resource) = 0;
  // The object was deleted from the database.
  virtual void Forget(const edge::v1::ObjectRef& ref) = 0;
};

}  // namespace nereid::lc
