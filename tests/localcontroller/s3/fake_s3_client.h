#pragma once

// An in-memory S3Client for unit tests of the code above the client (dataset counting, model
// verification): buckets of objects, ETag = a hash of the content, a per-call failure to inject,
// and counts of each call so tests can assert "one HEAD, no GET".

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "localcontroller/s3/s3_client.h"

namespace nereid::lc::s3::testing {

class FakeS3Client final : public S3Client {
 public:
  void PutObject(const std::string& bucket, const std::string& key, std::string body) {
    absl::MutexLock lock(&mu_);
    buckets_[bucket][key] = std::move(body);
  }
  void CreateBucket(const std::string& bucket) {
    absl::MutexLock lock(&mu_);
    buckets_[bucket];
  }
  void RemoveObject(const std::string& bucket, const std::string& key) {
    absl::MutexLock lock(&mu_);
    buckets_[bucket].erase(key);
  }
  // Every following call fails with `status` (OK clears it).
  void FailWith(absl::Status status) {
    absl::MutexLock lock(&mu_);
    failure_ = std::move(status);
  }
  // Only requests signed with this access key id succeed (empty: any).
  void RequireAccessKey(std::string id) {
    absl::MutexLock lock(&mu_);
    access_key_ = std::move(id);
  }

  absl::StatusOr<ObjectInfo> Head(const Credential& credential,
                                  const Location& location) const override {
    ++heads;
    absl::MutexLock lock(&mu_);
    absl::StatusOr<const std::string*> body = Find(credential, location);
    if (!body.ok()) return body.status();
    return Info(**body);
  }
  absl::StatusOr<ObjectInfo> Get(const Credential& credential, const Location& location,
                                 const std::atomic<bool>* cancel, BodySink sink) const override {
    ++gets;
    std::string copy;
    {
      absl::MutexLock lock(&mu_);
      absl::StatusOr<const std::string*> body = Find(credential, location);
      if (!body.ok()) return body.status();
      copy = **body;
    }
    // Delivered in small chunks, as a network would.
    for (size_t at = 0; at < copy.size(); at += 3) {
      const size_t n = std::min<size_t>(3, copy.size() - at);
      sink(reinterpret_cast<const uint8_t*>(copy.data() + at), n);
    }
    bytes_delivered += copy.size();
    return Info(copy);
  }
  absl::StatusOr<ListPage> List(const Credential& credential, const Location& prefix,
                                std::string_view token,
                                const std::atomic<bool>* cancel) const override {
    ++lists;
    absl::MutexLock lock(&mu_);
    if (!failure_.ok()) return failure_;
    if (!access_key_.empty() && credential.access_key_id != access_key_) {
      return absl::PermissionDeniedError("access denied (InvalidAccessKeyId)");
    }
    auto bucket = buckets_.find(prefix.bucket);
    if (bucket == buckets_.end()) return absl::NotFoundError("no such bucket (NoSuchBucket)");
    // Pages of two keys; the token is the last key returned.
    ListPage page;
    const auto& objects = bucket->second;
    for (auto it = objects.upper_bound(std::string(token)); it != objects.end(); ++it) {
      if (it->first.rfind(prefix.key, 0) != 0) continue;
      if (page.objects.size() == 2) {
        page.truncated = true;
        page.next_continuation_token = page.objects.back().key;
        break;
      }
      page.objects.push_back(ListedObject{it->first, it->second.size(), Info(it->second).etag});
    }
    return page;
  }
  absl::Status Put(const Credential&, const Location&, std::string_view) const override {
    return absl::UnimplementedError("use PutObject");
  }
  absl::Status Delete(const Credential&, const Location&) const override {
    return absl::UnimplementedError("use RemoveObject");
  }

  mutable std::atomic<int> heads{0};
  mutable std::atomic<int> gets{0};
  mutable std::atomic<int> lists{0};
  mutable std::atomic<uint64_t> bytes_delivered{0};

 private:
  static ObjectInfo Info(const std::string& body) {
    return ObjectInfo{body.size(), absl::StrCat("\"", std::hash<std::string>()(body), "\""), ""};
  }
  absl::StatusOr<const std::string*> Find(const Credential& credential,
                                          const Location& location) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (!failure_.ok()) return failure_;
    if (!access_key_.empty() && credential.access_key_id != access_key_) {
      return absl::PermissionDeniedError("access denied (InvalidAccessKeyId)");
    }
    auto bucket = buckets_.find(location.bucket);
    if (bucket == buckets_.end()) return absl::NotFoundError("no such bucket (NoSuchBucket)");
    auto object = bucket->second.find(location.key);
    if (object == bucket->second.end()) return absl::NotFoundError("no such key (NoSuchKey)");
    return &object->second;
  }

  mutable absl::Mutex mu_;
  std::map<std::string, std::map<std::string, std::string>> buckets_ ABSL_GUARDED_BY(mu_);
  absl::Status failure_ ABSL_GUARDED_BY(mu_);
  std::string access_key_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nereid::lc::s3::testing
