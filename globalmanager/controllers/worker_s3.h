#pragma once

// The S3 part of a worker pod (worker_template.h calls it): Sedna's `storage-initializer` init
// container for the s3:// models and datasets a worker reads, and the credential env of the
// Secret the owner names. The shapes are common/s3/storage_initializer.h's (Sedna's contract);
// what Nereid adds is where the credential values come from: valueFrom.secretKeyRef by default,
// literal values only when the GM config asks for them (`literal-s3-credentials`, for edge
// runtimes that cannot resolve Secret references; weaker: the values then sit in the Pod and
// Deployment specs).

#include <string>
#include <vector>

#include "common/kube/object.h"
#include "common/s3/credential.h"
#include "common/s3/storage_initializer.h"

namespace nereid::gm {

// What a controller knows about the S3 storage of one worker pod.
struct WorkerS3Options {
  // The Secret the pod's s3:// URLs use ("" = none: public buckets, no credential env) and its
  // credential (the endpoint is an annotation, which secretKeyRef cannot reach, so the GM reads
  // it; the keys are only copied with literal_credentials).
  std::string secret_name;
  s3::Credential credential;
  bool literal_credentials = false;
  std::string initializer_image = std::string(s3::kDefaultInitializerImage);
};

// Adds to the pod `spec`: for `downloads` (non-empty), the init container (after the user's),
// the /downloads emptyDir and its read-only mount in every container, the hostPath volume of each
// host-path indirect index (mounted into the init container only); the credential env in the
// init container, and in every worker container when `workers_need_credential` (an s3 URL the
// worker writes or reads itself). A name a container already sets keeps the user's entry.
void AddS3Storage(kube::Json* spec, const std::vector<s3::ResolvedUrl>& downloads,
                  bool workers_need_credential, const WorkerS3Options& options);

}  // namespace nereid::gm
