#pragma once

// The wire messages and LC database contents of release 0.1.0, frozen: golden/0.1.0/ holds them as
// that release encoded them (write_goldens), and the compat tests check that the current code
// still decodes every one to the same values. Never edit these builders when the protocol grows:
// a new release gets builders and goldens of its own (README.md).

#include <string>
#include <utility>
#include <vector>

#include "nereid/edge/v1/sync.pb.h"

namespace nereid::compat::release_0_1_0 {

// The node the golden messages and database belong to.
inline constexpr char kNode[] = "edge-golden";

// One LC -> GM message per kind of request and report payload, by golden file name.
std::vector<std::pair<std::string, edge::v1::SyncRequest>> Requests();
// One GM -> LC message per kind of response and of Resource spec, by golden file name.
std::vector<std::pair<std::string, edge::v1::SyncResponse>> Responses();

// The desired objects of the golden database: every upsert of Responses().
std::vector<edge::v1::Resource> DesiredObjects();
// The undelivered reports of the golden database (without seq, which the outbox assigns): every
// report of Requests().
std::vector<edge::v1::StatusReport> UndeliveredReports();

// The dataset scan state of the golden database: the dataset of DesiredObjects() counted.
inline constexpr char kDatasetNamespace[] = "default";
inline constexpr char kDatasetName[] = "golden-dataset";
inline constexpr char kDatasetFile[] = "/data/golden/index.txt";
inline constexpr int64_t kDatasetSamples = 1234;

}  // namespace nereid::compat::release_0_1_0
