#include "globalmanager/controllers/created_children.h"

#include <catch2/catch.hpp>

#include "common/kube/resource.h"
#include "common/kube/shared_informer_factory.h"
#include "common/time/fake_clock.h"
#include "tests/fakes/eventually.h"
#include "tests/fakes/fake_kube_client.h"

namespace nereid::gm {
namespace {

using kube::Json;

Json Deployment(const std::string& name, const std::string& uid, const std::string& app = "a") {
  return {{"apiVersion", "apps/v1"},
          {"kind", "Deployment"},
          {"metadata",
           {{"name", name}, {"namespace", "default"}, {"uid", uid}, {"labels", {{"app", app}}}}}};
}

struct Fixture {
  Fixture() {
    informer = factory.Informer(kube::resources::Deployments());
    created = std::make_unique<CreatedChildren>(&clock, informer);
    factory.Start();
    REQUIRE(factory.WaitForCacheSync(absl::Now() + absl::Seconds(10)));
  }
  ~Fixture() { factory.Stop(); }
  kube::ObjectPtr Get(const std::string& name) {
    return created->Get(informer->GetLister(), "default", name);
  }

  FakeClock clock;
  fakes::FakeKubeClient client{&clock};
  kube::SharedInformerFactory factory{&client, &clock};
  kube::SharedInformer* informer = nullptr;
  std::unique_ptr<CreatedChildren> created;
};

TEST_CASE("CreatedChildren answers for what the cache does not show yet, for a while") {
  Fixture f;
  f.created->Created(Deployment("d1", "ours", "a"));  // never reaches the cache here
  f.created->Created(Deployment("d2", "ours-2", "b"));
  REQUIRE(f.Get("d1") != nullptr);
  CHECK(kube::Uid(*f.Get("d1")) == "ours");
  CHECK(f.Get("other") == nullptr);
  auto names = [&](const kube::LabelSelector& selector) {
    std::set<std::string> out;
    for (const kube::ObjectPtr& d : f.created->List(f.informer->GetLister(), "default", selector)) {
      out.insert(kube::Name(*d));
    }
    return out;
  };
  CHECK(names(kube::LabelSelector::FromMap({{"app", "a"}})) == std::set<std::string>{"d1"});
  CHECK(names({}) == std::set<std::string>{"d1", "d2"});
  CHECK(f.created->List(f.informer->GetLister(), "elsewhere", {}).empty());
  f.clock.Advance(kCreatedChildrenHorizon + absl::Seconds(1));
  CHECK(f.Get("d1") == nullptr);  // not believed forever
  CHECK(names({}).empty());
}

TEST_CASE("CreatedChildren gives way to the cache, and forgets a child deleted unseen") {
  Fixture f;
  f.created->Created(Deployment("d1", "ours"));
  REQUIRE(f.client.Create(kube::resources::Deployments(), "default", Deployment("d1", "api")).ok());
  REQUIRE(fakes::Eventually([&] {
    kube::ObjectPtr d = f.Get("d1");
    return d != nullptr && kube::Uid(*d) != "ours";  // the API's copy
  }));
  // Added and deleted before anyone looked at the cache: the informer's events forget our entry,
  // so the child is missing (and will be re-created), not masked for the horizon.
  f.created->Created(Deployment("d2", "ours-2"));
  REQUIRE(f.client.Create(kube::resources::Deployments(), "default", Deployment("d2", "x")).ok());
  REQUIRE(f.client.Delete(kube::resources::Deployments(), "default", "d2").ok());
  CHECK(fakes::Eventually([&] { return f.Get("d2") == nullptr; }));
}

}  // namespace
}  // namespace nereid::gm
