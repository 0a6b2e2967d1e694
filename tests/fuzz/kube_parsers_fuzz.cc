// The small grammars that take text from manifests and flags: resource quantities, label and
// field selectors (also as a metav1.LabelSelector document), the kubeconfig server address and the
// LC's listen address. The first byte picks the parser, the rest is its input.
//
// Properties: errors are InvalidArgument, never a crash or throw; what parses prints back to text
// that parses to the same value (quantity, label selector), and matching runs on what parsed.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "common/job/quantity.h"
#include "common/kube/config.h"
#include "common/kube/selector.h"
#include "common/net/host_port.h"
#include "tests/fuzz/fuzz_input.h"

namespace nereid {
namespace {

void Quantity(std::string_view text) {
  absl::StatusOr<int64_t> milli = job::ParseQuantityMilli(text);
  if (!milli.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(milli.status()));
    return;
  }
  const std::string printed = job::FormatQuantityMilli(*milli);
  absl::StatusOr<int64_t> again = job::ParseQuantityMilli(printed);
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(*again == *milli);
}

const std::map<std::string, std::string>& SomeLabels() {
  static const std::map<std::string, std::string> labels = {
      {"app", "web"}, {"sedna.io/worker-type", "train"}, {"tier", ""}};
  return labels;
}

void CheckLabelSelector(const kube::LabelSelector& selector) {
  const std::string printed = selector.ToString();
  absl::StatusOr<kube::LabelSelector> again = kube::LabelSelector::Parse(printed);
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(again->ToString() == printed);
  FUZZ_CHECK(again->Matches(SomeLabels()) == selector.Matches(SomeLabels()));
  FUZZ_CHECK(again->Matches({}) == selector.Matches({}));
}

void LabelSelectorText(std::string_view text) {
  absl::StatusOr<kube::LabelSelector> selector = kube::LabelSelector::Parse(text);
  if (!selector.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(selector.status()));
    return;
  }
  CheckLabelSelector(*selector);
}

void LabelSelectorJson(std::string_view text) {
  const kube::Json doc = kube::Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return;
  absl::StatusOr<kube::LabelSelector> selector = kube::LabelSelector::FromJson(doc);
  if (!selector.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(selector.status()));
    return;
  }
  CheckLabelSelector(*selector);
}

void FieldSelectorText(std::string_view text) {
  absl::StatusOr<kube::FieldSelector> selector = kube::FieldSelector::Parse(text);
  if (!selector.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(selector.status()));
    return;
  }
  const kube::Json pod = {{"metadata", {{"name", "p"}, {"namespace", "default"}}}};
  if (selector->Validate(pod, kube::DefaultFieldGetter).ok()) {
    (void)selector->Matches(pod, kube::DefaultFieldGetter);
  }
}

void ServerAddress(std::string_view text) {
  absl::StatusOr<kube::ServerAddress> address = kube::ParseServerAddress(text);
  if (!address.ok()) return;
  FUZZ_CHECK(address->port > 0 && address->port < 65536);
}

void ListenAddress(std::string_view text) {
  absl::StatusOr<net::HostPort> address = net::ParseHostPort(text, net::kAllInterfaces);
  if (!address.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(address.status()));
    return;
  }
  absl::StatusOr<net::HostPort> again =
      net::ParseHostPort(address->ToString(), net::kAllInterfaces);
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(again->ToString() == address->ToString());
}

}  // namespace
}  // namespace nereid

NEREID_FUZZ_QUIET_INITIALIZE()

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nereid;
  if (size < 1) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 6) {
    case 0: Quantity(text); break;
    case 1: LabelSelectorText(text); break;
    case 2: LabelSelectorJson(text); break;
    case 3: FieldSelectorText(text); break;
    case 4: ServerAddress(text); break;
    default: ListenAddress(text); break;
  }
  return 0;
}
