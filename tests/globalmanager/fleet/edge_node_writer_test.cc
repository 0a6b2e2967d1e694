// EdgeNodeWriter against the fake Kubernetes client: objects created on first connect and owned by
// the Node, status written on change only and coalesced per node, stale streams' news ignored,
// retries, adoption of a previous leader's objects, Events on transitions.

#include "globalmanager/fleet/edge_node_writer.h"

#include <catch2/catch.hpp>
#include <memory>
#include <set>
#include <string>

#include "common/api/edge_node.h"
#include "common/kube/event_recorder.h"
#include "tests/fakes/eventually.h"
#include "tests/fakes/fake_kube_client.h"

namespace nereid::gm {
namespace {

using fakes::Eventually;
using fakes::FakeKubeClient;
using fakes::Verb;
using kube::Json;

const std::string kEdgeNodes = api::EdgeNodesResource().QualifiedName();

EdgeNodeWriter::Options WriterOptions(FakeKubeClient& client) {
  EdgeNodeWriter::Options options;
  options.client = &client;
  options.status.replica = "gm-0";
  options.initial_backoff = absl::Milliseconds(5);
  options.max_backoff = absl::Milliseconds(20);
  return options;
}

void AddNode(FakeKubeClient& client, const std::string& name) {
  REQUIRE(client
              .Create(kube::resources::Nodes(), "",
                      {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", name}}}})
              .ok());
}

NodeConnection Connection(std::string_view node, uint64_t stream) {
  return NodeConnection{.node = node,
                        .stream = stream,
                        .relayed = false,
                        .lc_version = "0.4.0",
                        .lc_commit = "0123456789ab",
                        .at = absl::Now()};
}

// The EdgeNode's status, or null when there is none.
Json StoredStatus(FakeKubeClient& client, const std::string& node) {
  absl::StatusOr<Json> object = client.Get(api::EdgeNodesResource(), "", node);
  if (!object.ok() || !object->contains("status")) return Json::object();  // not written yet
  return (*object)["status"];
}

bool ShowsConnected(FakeKubeClient& client, const std::string& node, bool connected) {
  const Json status = StoredStatus(client, node);
  return status.is_object() && status.value("connected", !connected) == connected;
}

const Json* FindCondition(const Json& status, std::string_view type) {
  for (const Json& condition : status["conditions"]) {
    if (condition["type"] == type) return &condition;
  }
  return nullptr;
}

edge::v1::NodeSummary Summary(uint32_t datasets, uint32_t failing) {
  edge::v1::NodeSummary summary;
  summary.set_datasets(datasets);
  summary.set_models(1);
  summary.set_workers(2);
  summary.set_failing(failing);
  if (failing > 0) {
    edge::v1::FailingObject* first = summary.mutable_first_failing();
    first->mutable_ref()->set_kind("Dataset");
    first->mutable_ref()->set_namespace_("default");
    first->mutable_ref()->set_name("d1");
    first->set_reason("PathNotFound");
    first->set_message("/data/d1.txt does not exist");
  }
  return summary;
}

TEST_CASE("edge nodes: the first connect creates the EdgeNode, owned by the Node") {
  FakeKubeClient client;
  AddNode(client, "edge-1");
  EdgeNodeWriter writer(WriterOptions(client));
  REQUIRE(writer.Start().ok());
  writer.OnNodeConnected(Connection("edge-1", 1));
  REQUIRE(Eventually([&] { return ShowsConnected(client, "edge-1", true); }));

  const Json object = *client.Get(api::EdgeNodesResource(), "", "edge-1");
  const Json node = *client.Get(kube::resources::Nodes(), "", "edge-1");
  REQUIRE(object["metadata"]["ownerReferences"].size() == 1);
  CHECK(object["metadata"]["ownerReferences"][0]["kind"] == "Node");
  CHECK(object["metadata"]["ownerReferences"][0]["uid"] == node["metadata"]["uid"]);
  const Json status = object["status"];
  CHECK(status["lcVersion"] == "0.4.0");
  CHECK(status["lcCommit"] == "0123456789ab");
  CHECK(status["servedBy"] == "gm-0");
  CHECK_FALSE(status.contains("datasets"));  // no summary yet
  CHECK((*FindCondition(status, "Connected"))["status"] == "True");
  CHECK((*FindCondition(status, "DatabaseWritable"))["status"] == "Unknown");

  SECTION("a summary shows counts, the first failing object and database health") {
    edge::v1::NodeSummary summary = Summary(2, 1);
    summary.set_outbox_depth(150);
    summary.set_database_failing(true);
    summary.set_database_error("database or disk is full");
    writer.OnNodeSummary("edge-1", 1, summary);
    REQUIRE(Eventually([&] { return StoredStatus(client, "edge-1").value("failing", 0) == 1; }));
    const Json now = StoredStatus(client, "edge-1");
    CHECK(now["datasets"] == 2);
    CHECK(now["models"] == 1);
    CHECK(now["workers"] == 2);
    CHECK(now["firstFailing"]["name"] == "d1");
    CHECK(now["firstFailing"]["reason"] == "PathNotFound");
    CHECK(now["outboxDepth"] == 150);
    CHECK(now["databaseWritable"] == false);
    CHECK((*FindCondition(now, "ObjectsHealthy"))["reason"] == "ObjectsFailing");
    CHECK((*FindCondition(now, "DatabaseWritable"))["reason"] == "WritesFailing");

    // Healthy again: what the earlier write set and no longer holds is removed.
    writer.OnNodeSummary("edge-1", 1, Summary(2, 0));
    REQUIRE(Eventually([&] { return StoredStatus(client, "edge-1").value("failing", 1) == 0; }));
    const Json healed = StoredStatus(client, "edge-1");
    CHECK_FALSE(healed.contains("firstFailing"));
    CHECK_FALSE(healed.contains("outboxDepth"));  // below the threshold
    CHECK(healed["databaseWritable"] == true);

    SECTION("a disconnect keeps the last known counts") {
      writer.OnNodeDisconnected("edge-1", 1, absl::Now());
      REQUIRE(Eventually([&] { return ShowsConnected(client, "edge-1", false); }));
      const Json gone = StoredStatus(client, "edge-1");
      CHECK(gone["datasets"] == 2);
      CHECK_FALSE(gone.contains("servedBy"));
      CHECK((*FindCondition(gone, "Connected"))["reason"] == "StreamEnded");
    }
  }
}

TEST_CASE("edge nodes: a burst of changes is one write, a repeat none") {
  FakeKubeClient client;
  AddNode(client, "edge-1");
  AddNode(client, "edge-2");
  EdgeNodeWriter writer(WriterOptions(client));
  // Before Start: all of it waits in one queue entry.
  writer.OnNodeConnected(Connection("edge-1", 1));
  for (uint32_t i = 0; i < 10; ++i) writer.OnNodeSummary("edge-1", 1, Summary(i, 0));
  writer.OnNodeDisconnected("edge-1", 1, absl::Now());
  writer.OnNodeConnected(Connection("edge-1", 2));
  writer.OnNodeSummary("edge-1", 2, Summary(7, 0));
  CHECK(writer.queued() == 1);
  REQUIRE(writer.Start().ok());
  REQUIRE(Eventually([&] { return StoredStatus(client, "edge-1").value("datasets", 0) == 7; }));
  CHECK(client.CountActions(Verb::kPatch, kEdgeNodes) == 1);

  // The same summary again changes nothing: no write. (The writer is FIFO: once edge-2 is
  // written, edge-1's turn has passed.)
  writer.OnNodeSummary("edge-1", 2, Summary(7, 0));
  writer.OnNodeConnected(Connection("edge-2", 3));
  REQUIRE(Eventually([&] { return ShowsConnected(client, "edge-2", true); }));
  CHECK(client.CountActions(Verb::kPatch, kEdgeNodes) == 2);
}

TEST_CASE("edge nodes: the news of a replaced stream is ignored") {
  FakeKubeClient client;
  AddNode(client, "edge-1");
  EdgeNodeWriter writer(WriterOptions(client));
  writer.OnNodeConnected(Connection("edge-1", 1));
  writer.OnNodeConnected(Connection("edge-1", 2));
  writer.OnNodeDisconnected("edge-1", 1, absl::Now());  // the replaced stream ends
  writer.OnNodeSummary("edge-1", 1, Summary(5, 0));      // late, from the old stream
  writer.OnNodeConnected(Connection("edge-1", 1));       // late too
  REQUIRE(writer.Start().ok());
  REQUIRE(Eventually([&] { return ShowsConnected(client, "edge-1", true); }));
  CHECK_FALSE(StoredStatus(client, "edge-1").contains("datasets"));
}

TEST_CASE("edge nodes: a node without a Node object gets an EdgeNode without owner") {
  FakeKubeClient client;
  EdgeNodeWriter writer(WriterOptions(client));
  REQUIRE(writer.Start().ok());
  writer.OnNodeConnected(Connection("edge-9", 1));
  REQUIRE(Eventually([&] { return ShowsConnected(client, "edge-9", true); }));
  const Json object = *client.Get(api::EdgeNodesResource(), "", "edge-9");
  CHECK_FALSE(object["metadata"].contains("ownerReferences"));
}

TEST_CASE("edge nodes: an EdgeNode removed with its Node is not re-created for that stream") {
  FakeKubeClient client;
  AddNode(client, "edge-1");
  AddNode(client, "edge-2");
  EdgeNodeWriter writer(WriterOptions(client));
  REQUIRE(writer.Start().ok());
  writer.OnNodeConnected(Connection("edge-1", 1));
  REQUIRE(Eventually([&] { return ShowsConnected(client, "edge-1", true); }));
  // The garbage collector's part, by hand: the Node goes, its EdgeNode with it.
  REQUIRE(client.Delete(kube::resources::Nodes(), "", "edge-1").ok());
  REQUIRE(client.Delete(api::EdgeNodesResource(), "", "edge-1").ok());
  writer.OnNodeSummary("edge-1", 1, Summary(3, 0));
  writer.OnNodeConnected(Connection("edge-2", 2));  // FIFO: written after edge-1's turn
  REQUIRE(Eventually([&] { return ShowsConnected(client, "edge-2", true); }));
  CHECK_FALSE(client.Get(api::EdgeNodesResource(), "", "edge-1").ok());

  SECTION("it is made again when the node reconnects with its Node back") {
    AddNode(client, "edge-1");
    writer.OnNodeConnected(Connection("edge-1", 3));
    REQUIRE(Eventually([&] { return ShowsConnected(client, "edge-1", true); }));
    const Json object = *client.Get(api::EdgeNodesResource(), "", "edge-1");
    CHECK(object["metadata"]["ownerReferences"].size() == 1);
  }
  SECTION("not while the Node is missing") {
    AddNode(client, "edge-3");
    writer.OnNodeConnected(Connection("edge-1", 3));
    writer.OnNodeConnected(Connection("edge-3", 4));  // written after edge-1's turn
    REQUIRE(Eventually([&] { return ShowsConnected(client, "edge-3", true); }));
    CHECK_FALSE(client.Get(api::EdgeNodesResource(), "", "edge-1").ok());
    CHECK(client.CountActions(Verb::kCreate, kEdgeNodes) == 3);  // edge-1, -2, -3 once each
  }
}

TEST_CASE("edge nodes: failed writes are retried") {
  FakeKubeClient client;
  AddNode(client, "edge-1");
  client.FailNext(Verb::kPatch, 3, absl::UnavailableError("apiserver down"), kEdgeNodes);
  EdgeNodeWriter writer(WriterOptions(client));
  REQUIRE(writer.Start().ok());
  writer.OnNodeConnected(Connection("edge-1", 1));
  REQUIRE(Eventually([&] { return ShowsConnected(client, "edge-1", true); }));
  CHECK(client.CountActions(Verb::kPatch, kEdgeNodes) == 4);
  CHECK(client.CountActions(Verb::kCreate, kEdgeNodes) == 1);  // the object is made once
}

TEST_CASE("edge nodes: a previous leader's connected nodes that do not come back turn disconnected") {
  FakeKubeClient client;
  for (const char* name : {"edge-a", "edge-b"}) {
    REQUIRE(client
                .Create(api::EdgeNodesResource(), "",
                        {{"apiVersion", "sedna.io/v1alpha1"},
                         {"kind", "EdgeNode"},
                         {"metadata", {{"name", name}}}})
                .ok());
    REQUIRE(client
                .Patch(api::EdgeNodesResource(), "", name, kube::PatchType::kMerge,
                       Json::parse(R"({"status": {"connected": true, "lcVersion": "0.3.0",
                         "datasets": 3, "servedBy": "gm-old", "since": "2026-01-01T00:00:00Z",
                         "conditions": [{"type": "Connected", "status": "True",
                                         "reason": "StreamOpen"}]}})"),
                       "status")
                .ok());
  }
  EdgeNodeWriter::Options options = WriterOptions(client);
  options.adopt_grace = absl::Milliseconds(300);
  EdgeNodeWriter writer(std::move(options));
  REQUIRE(writer.Start().ok());
  writer.OnNodeConnected(Connection("edge-b", 1));
  REQUIRE(Eventually([&] { return ShowsConnected(client, "edge-a", false); }));
  const Json a = StoredStatus(client, "edge-a");
  CHECK(a["lcVersion"] == "0.3.0");  // the last known state stays
  CHECK(a["datasets"] == 3);
  CHECK_FALSE(a.contains("servedBy"));
  CHECK((*FindCondition(a, "Connected"))["status"] == "False");
  CHECK(ShowsConnected(client, "edge-b", true));
  CHECK(StoredStatus(client, "edge-b")["servedBy"] == "gm-0");
  CHECK(client.CountActions(Verb::kCreate, kEdgeNodes) == 2);  // adopted: none made again
}

TEST_CASE("edge nodes: Events on connect and disconnect") {
  FakeKubeClient client;
  AddNode(client, "edge-1");
  kube::EventRecorderOptions recorder_options;
  recorder_options.component = "nereid-gm";
  kube::EventRecorder recorder(&client, recorder_options);
  recorder.Start();
  EdgeNodeWriter::Options options = WriterOptions(client);
  options.events = &recorder;
  EdgeNodeWriter writer(std::move(options));
  REQUIRE(writer.Start().ok());
  writer.OnNodeConnected(Connection("edge-1", 1));
  REQUIRE(Eventually([&] { return ShowsConnected(client, "edge-1", true); }));
  writer.OnNodeDisconnected("edge-1", 1, absl::Now());
  REQUIRE(Eventually([&] { return ShowsConnected(client, "edge-1", false); }));

  const std::string uid = kube::Uid(*client.Get(api::EdgeNodesResource(), "", "edge-1"));
  auto reasons = [&] {
    std::set<std::string> seen;
    for (const Json& event : client.Objects(kube::resources::Events())) {
      if (event["involvedObject"]["kind"] == "EdgeNode" && event["involvedObject"]["uid"] == uid) {
        seen.insert(event["reason"].get<std::string>());
      }
    }
    return seen;
  };
  REQUIRE(Eventually([&] { return reasons().size() == 2; }));
  CHECK(reasons() == std::set<std::string>{"Connected", "Disconnected"});
}

TEST_CASE("edge nodes: a previous leader's node that comes back gets no Reconnected Event") {
  FakeKubeClient client;
  AddNode(client, "edge-1");
  REQUIRE(client
              .Create(api::EdgeNodesResource(), "",
                      {{"apiVersion", "sedna.io/v1alpha1"},
                       {"kind", "EdgeNode"},
                       {"metadata", {{"name", "edge-1"}}}})
              .ok());
  REQUIRE(client
              .Patch(api::EdgeNodesResource(), "", "edge-1", kube::PatchType::kMerge,
                     Json::parse(R"({"status": {"connected": true, "servedBy": "gm-old",
                                                "since": "2026-01-01T00:00:00Z"}})"),
                     "status")
              .ok());
  kube::EventRecorder recorder(&client, kube::EventRecorderOptions{.component = "nereid-gm"});
  recorder.Start();
  EdgeNodeWriter::Options options = WriterOptions(client);
  options.events = &recorder;
  EdgeNodeWriter writer(std::move(options));
  REQUIRE(writer.Start().ok());
  auto reasons = [&] {  // of the EdgeNode's Events stored so far
    std::set<std::string> seen;
    for (const Json& event : client.Objects(kube::resources::Events())) {
      if (event["involvedObject"]["kind"] == "EdgeNode") seen.insert(event.value("reason", ""));
    }
    return seen;
  };

  // The previous leader's session ended with it: the node's first session here is news of the GM.
  writer.OnNodeConnected(Connection("edge-1", 1));
  REQUIRE(Eventually([&] { return StoredStatus(client, "edge-1").value("servedBy", "") == "gm-0"; }));
  writer.OnNodeDisconnected("edge-1", 1, absl::Now());
  // The recorder sends in order: once Disconnected is stored, an Event of the first session would be.
  REQUIRE(Eventually([&] { return reasons().count("Disconnected") == 1; }));
  CHECK(reasons() == std::set<std::string>{"Disconnected"});

  // A new session that replaces one this leader wrote is the node's own reconnect.
  writer.OnNodeConnected(Connection("edge-1", 2));
  REQUIRE(Eventually([&] { return reasons().count("Connected") == 1; }));
  NodeConnection replacing = Connection("edge-1", 3);
  replacing.at += absl::Seconds(2);  // a later `since`, to the second the status shows
  writer.OnNodeConnected(replacing);
  REQUIRE(Eventually([&] { return reasons().count("Reconnected") == 1; }));
}

TEST_CASE("edge nodes: without the CRD nothing is written") {
  FakeKubeClient client;
  client.SetServed(api::EdgeNodesResource(), false);
  EdgeNodeWriter writer(WriterOptions(client));
  REQUIRE(writer.Start().ok());
  writer.OnNodeConnected(Connection("edge-1", 1));
  CHECK(writer.queued() == 0);
  CHECK(client.CountActions(Verb::kCreate, kEdgeNodes) == 0);
  CHECK(client.CountActions(Verb::kList, kEdgeNodes) == 0);
}

}  // namespace
}  // namespace nereid::gm
