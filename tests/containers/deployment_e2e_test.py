#!/usr/bin/env python3
"""The deployment in deploy/, run from the images: the GlobalManager Deployment's pod and two
LocalController DaemonSet pods (nodes node-a and node-b) under podman, against devapiserver on
loopback, in a network namespace of the test's own (ctest runs it under `unshare --net`).

The pod specs are the pod templates of `kubectl kustomize deploy/` (the Deployment `gm`, the
DaemonSet `lc`), turned into Pods by kubelet_standin.py, which does what a kubelet does (mounts the
ConfigMap gm-config and the Secret nereid-gm-tls with their defaultMode and the pod's fsGroup, the
service account token, the downward-API env) and lists where one machine stands in for a cluster.
So a fault in the manifests (a probe on the wrong port, a key the GM's uid cannot read, a write
to the read-only root, a missing mount) fails this test. Where this test departs from a cluster:
  - one GM replica (two would share one network namespace's ports); HA is tested elsewhere;
  - the GM pod shares the test's network namespace with the LCs (no pod network, no Service):
    gm.sedna resolves to 127.0.0.1 through hostAliases instead of the cluster DNS;
  - node-b's LC listens on 9101 instead of 9100 (BIND_PORT and its probes moved), since both
    "nodes" are one network namespace;
  - hostPath volumes are per-node directories of the test (NODE_ROOT/etc/nereid/pki, ...);
  - devapiserver stands in for the API server (in-cluster config over HTTPS with its own CA).

Steps: install the kustomization and the GM's TLS Secret (deploy/install-gm-tls.sh); start the GM
pod and probe it as the kubelet would (liveness, readiness = it leads); install each node's PKI
(deploy/install-node-pki.sh) and start its LC pod; apply a Dataset and a Model for node-a and a
Dataset for node-b and see them counted and verified in `kubectl get`; see node-a's LC unable to
read the node's secrets (a root-owned 0600 key beside its data root, a kubelet-like
/var/lib/kubelet: only the data roots are mounted) and Datasets pointing there fail with
OutsideDataRoots; run an IncrementalLearningJob's train trigger through the LC as deployed (the
round's samples written to the outputDir on the node) and see one whose outputDir is on the
read-only mount fail with the cause in a condition and an Event; then stop the GM, restart
node-a's LC container and see its state served from its database (the hostPath), start the GM
again and see node-a's LC reconnect and report a changed dataset.

    deployment_e2e_test.py SOURCE_DIR BUILD_DIR WORK_DIR
"""

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys

from harness import (Podman, TestFailure, http_get, http_json, log, main_wrapper,
                     require_private_network_namespace, run, wait_until)
from kubelet_standin import KubeletStandin, load_all

NAMESPACE = "sedna"
NODES = {"node-a": 9100, "node-b": 9101}  # node -> the LC's REST port in the shared namespace
GM_POD = "gm-0"
WAIT = 90  # seconds for any one condition (a loaded 2-core machine)


class Cluster:
    """devapiserver with TLS, kubectl, and the rendered deploy/ manifests."""

    def __init__(self, source_dir, build_dir, work):
        self.source_dir = source_dir
        self.work = work
        self.kubeconfig = os.path.join(work, "kubeconfig")
        self.api_pki = os.path.join(work, "api-pki")
        run([os.path.join(source_dir, "scripts", "gen-certs.sh"), self.api_pki])
        self.log_file = open(os.path.join(work, "devapiserver.log"), "w")
        self.process = subprocess.Popen(
            [os.path.join(build_dir, "tools", "devapiserver", "devapiserver"),
             "--listen", "127.0.0.1:0", "--kubeconfig-out", self.kubeconfig,
             "--tls-cert", os.path.join(self.api_pki, "globalmanager.crt"),
             "--tls-key", os.path.join(self.api_pki, "globalmanager.key"),
             "--tls-ca", os.path.join(self.api_pki, "ca.crt")],
            stdout=subprocess.PIPE, stderr=self.log_file, text=True)
        line = self.process.stdout.readline().strip()
        if not line.startswith("listening on https://127.0.0.1:"):
            raise TestFailure(f"devapiserver did not start: {line!r}")
        self.port = int(line.rsplit(":", 1)[1])
        self.env = {**os.environ, "KUBECONFIG": self.kubeconfig}
        log(f"devapiserver on {line.split()[-1]}")

    def kubectl(self, args, input_text=None):
        return run(["kubectl", "--cache-dir", os.path.join(self.work, "kubectl-cache"), *args],
                   env=self.env, input_text=input_text)

    def rendered(self):
        """`kubectl kustomize deploy/`, by (kind, name)."""
        docs = load_all(self.kubectl(["kustomize", os.path.join(self.source_dir, "deploy")]))
        return {(d["kind"], d["metadata"]["name"]): d for d in docs}

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.log_file.close()


def probe_until_ok(probes, what):
    for probe in probes:
        wait_until(f"{what} {probe['kind']} {probe['url']}",
                   lambda url=probe["url"]: http_get(url)[0] == 200, WAIT)
        log(f"{what}: {probe['kind']} {probe['url']} -> 200")


def check_container_settings(podman, container, user, writable_mounts):
    """podman really applied the manifest's securityContext and read-only mounts."""
    info = podman.inspect(container)
    host = info["HostConfig"]
    problems = []
    if not host.get("ReadonlyRootfs"):
        problems.append("root filesystem writable")
    if host.get("CapAdd"):
        problems.append(f"capabilities added {host['CapAdd']}")
    # An empty bounding set: /proc/1/status of the container's process.
    pid = info["State"]["Pid"]
    with open(f"/proc/{pid}/status") as status:
        fields = dict(line.split(":", 1) for line in status if ":" in line)
    if int(fields["CapBnd"].strip(), 16) != 0 or int(fields["CapEff"].strip(), 16) != 0:
        problems.append(f"capabilities left: CapBnd {fields['CapBnd'].strip()}")
    if fields["NoNewPrivs"].strip() != "1":
        problems.append("privilege escalation allowed (NoNewPrivs 0)")
    uid = fields["Uid"].split()[0]
    if uid != str(user):
        problems.append(f"runs as uid {uid}, manifest says {user}")
    # Writable mounts beyond the manifest's (podman adds tmpfs on /tmp, /run, /var/tmp for
    # --read-only unless told not to; Kubernetes adds none, so a write there would fail there).
    with open(f"/proc/{pid}/mountinfo") as mountinfo:
        writable = sorted(line.split()[4] for line in mountinfo
                          if " rw," in f" {line.split()[5]}," and line.split()[4] != "/"
                          and not line.split()[4].startswith(("/proc", "/sys", "/dev")))
    unexpected = [m for m in writable if m not in writable_mounts
                  and m not in ("/etc/hosts", "/etc/resolv.conf", "/etc/hostname",
                                "/run/.containerenv")]
    if unexpected:
        problems.append(f"writable mounts the manifest does not declare: {unexpected}")
    if problems:
        raise TestFailure(f"{container}: " + "; ".join(problems))
    log(f"{container}: uid {uid}, read-only root, no capabilities, no privilege escalation, "
        f"writable only {writable}")


def write_node_files(node_root, node):
    """The node's dataset and model files under its host root (mounted read-only at /rootfs)."""
    data = os.path.join(node_root, "data")
    os.makedirs(data, exist_ok=True)
    samples = 7 if node == "node-a" else 3
    with open(os.path.join(data, "train.txt"), "w") as out:
        out.writelines(f"images/{node}/{i}.jpg {i % 2}\n" for i in range(samples))
    model = b"model weights for " + node.encode()
    with open(os.path.join(data, "model.pb"), "wb") as out:
        out.write(model)
    return samples, hashlib.sha256(model).hexdigest()


def sedna_objects(node, samples_sha):
    return f"""
apiVersion: sedna.io/v1alpha1
kind: Dataset
metadata: {{name: {node}-dataset, namespace: default}}
spec: {{url: /data/train.txt, format: txt, nodeName: {node}}}
---
apiVersion: sedna.io/v1alpha1
kind: Model
metadata:
  name: {node}-model
  namespace: default
  annotations: {{nereid.io/nodes: {node}}}
spec: {{url: /data/model.pb, format: pb, sha256: "{samples_sha}"}}
"""


def dataset_samples(cluster, name):
    value = cluster.kubectl(["get", "dataset", name, "-n", "default",
                             "-o", "jsonpath={.status.numberOfSamples}"]).strip()
    return int(value) if value else None


def model_verified(cluster, name):
    return cluster.kubectl(["get", "model", name, "-n", "default",
                            "-o", "jsonpath={.status.verified}"]).strip() == "true"


NODE_SECRETS = {  # host path -> content: what a compromised LC must not read
    "/secret.key": "-----BEGIN PRIVATE KEY----- node key\n",
    "/var/lib/kubelet/pki/kubelet-client-current.pem": "-----BEGIN PRIVATE KEY----- kubelet\n",
    "/var/lib/kubelet/pods/uid-1/volumes/kubernetes.io~secret/token/token": "a-pod-token\n",
}


def node_secrets_unreadable(podman, cluster, node_root):
    """Root-owned 0600 files beside the data root and under a kubelet-like /var/lib/kubelet: the
    LC counts its dataset, but neither it (the same binary, user and mounts, through podman exec)
    nor a Dataset pointing there can read them."""
    for path, content in NODE_SECRETS.items():
        host_file = os.path.join(node_root, path.lstrip("/"))
        os.makedirs(os.path.dirname(host_file), exist_ok=True)
        with open(host_file, "w") as out:
            out.write(content)
        os.chown(host_file, 0, 0)
        os.chmod(host_file, 0o600)
    container = "lc-node-a-localcontroller"

    def count(url, *extra):
        return podman.status("exec", container, "/usr/local/bin/localcontroller", "count",
                             "--format", "txt", *extra, url)

    counted = count("/data/train.txt")
    if counted.returncode != 0 or counted.stdout.strip() != "7":
        raise TestFailure(f"the LC container cannot count its dataset: {counted.stdout!r} "
                          f"{counted.stderr!r}")
    for path in NODE_SECRETS:
        # Its own view of the node: /rootfs (what the daemon uses), and its whole filesystem.
        for extra in ((), ("--host-root", "/")):
            for url in (path, "/rootfs" + path):
                result = count(url, *extra)
                if result.returncode == 0:
                    raise TestFailure(f"the LC container read {url} ({' '.join(extra)}): "
                                      f"{result.stdout.strip()}")
    log("LC node-a counts /data/train.txt (7) and cannot read " + ", ".join(NODE_SECRETS))

    manifests = "".join(f"""
---
apiVersion: sedna.io/v1alpha1
kind: Dataset
metadata: {{name: secret-{i}, namespace: default}}
spec: {{url: "{path}", format: txt, nodeName: node-a}}
""" for i, path in enumerate(NODE_SECRETS))
    cluster.kubectl(["apply", "-f", "-"], input_text=manifests)
    for i, path in enumerate(NODE_SECRETS):
        def refused(name=f"secret-{i}"):
            status = json.loads(cluster.kubectl(["get", "dataset", name, "-n", "default",
                                                 "-o", "json"])).get("status", {})
            if status.get("numberOfSamples"):
                raise TestFailure(f"Dataset {name} ({path}) was counted: {status}")
            return status.get("reason") == "OutsideDataRoots"
        wait_until(f"Dataset secret-{i} ({path}) refused with OutsideDataRoots", refused, WAIT)
    log("Datasets pointing at the node's secrets fail with OutsideDataRoots")


def incremental_learning_job(name, output_dir):
    template = """
    template:
      spec:
        nodeName: node-a
        containers: [{{name: {0}, image: example.invalid/{0}:1}}]"""
    return f"""
---
apiVersion: sedna.io/v1alpha1
kind: IncrementalLearningJob
metadata: {{name: {name}, namespace: default}}
spec:
  initialModel: {{name: node-a-model}}
  dataset: {{name: node-a-dataset, trainProb: 0.8}}
  trainSpec:{template.format("train")}
    trigger:
      checkPeriodSeconds: 5
      condition: {{operator: ">", threshold: 1, metric: num_of_samples}}
  evalSpec:{template.format("eval")}
  deploySpec:
    model: {{name: node-a-model, hotUpdateEnabled: true}}
    trigger:
      condition: {{operator: ">", threshold: 0.01, metric: precision_delta}}{template.format("infer")}
  outputDir: "{output_dir}"
"""


def job_conditions(cluster, name):
    job = json.loads(cluster.kubectl(["get", "incrementallearningjob", name, "-n", "default",
                                      "-o", "json"]))
    return job.get("status", {}).get("conditions", [])


def incremental_learning_round(cluster, node_root, samples):
    """The train trigger fires on node-a's dataset and the LC, as deployed, writes the round's
    samples into the outputDir on the node; an outputDir on the read-only data mount is a Failed
    condition and a TrainFailed Event that say why."""
    cluster.kubectl(["apply", "-f", "-"], input_text=(
        incremental_learning_job("il-writable", "/data/output/il-writable")
        + incremental_learning_job("il-read-only", "/data/il-read-only")))
    train_file = os.path.join(node_root, "data/output/il-writable/data/train/1/data.txt")
    eval_file = os.path.join(node_root, "data/output/il-writable/data/eval/1/data.txt")
    wait_until("IncrementalLearningJob il-writable's round 1 samples on the node",
               lambda: os.path.exists(eval_file), WAIT)
    train_lines = open(train_file).read().splitlines()
    eval_lines = open(eval_file).read().splitlines()
    if len(train_lines) != int(samples * 0.8) or len(train_lines) + len(eval_lines) != samples:
        raise TestFailure(f"round 1 split {len(train_lines)}/{len(eval_lines)} of {samples}")
    wait_until("il-writable: Train past Waiting (the LC's Ready(Train) reached the GM)",
               lambda: any(c.get("stage") == "Train" and c.get("type") == "Ready"
                           for c in job_conditions(cluster, "il-writable")), WAIT)
    log(f"il-writable: the LC wrote round 1 ({len(train_lines)} train, {len(eval_lines)} eval "
        "samples) to its outputDir and the GM started training")

    def failed_with_cause():
        for c in job_conditions(cluster, "il-read-only"):
            if c.get("stage") == "Train" and c.get("type") == "Failed":
                return c
        return None
    failed = wait_until("il-read-only: a Failed(Train) condition", failed_with_cause, WAIT)
    message = failed.get("message", "")
    if (failed.get("reason") != "PreparationFailed" or "Read-only file system" not in message
            or "/data/il-read-only/data/train/1/data.txt" not in message):
        raise TestFailure(f"il-read-only's failure does not say why: {failed}")
    def train_failed_event():  # the recorder writes Events after the status, asynchronously
        events = [e.get("message", "") for e in
                  json.loads(cluster.kubectl(["get", "events", "-n", "default", "-o",
                                              "json"]))["items"]
                  if e.get("involvedObject", {}).get("name") == "il-read-only"
                  and e.get("reason") == "TrainFailed"]
        return any("Read-only file system" in m for m in events)
    wait_until("il-read-only: a TrainFailed Event with the cause", train_failed_event, WAIT)
    if os.path.exists(os.path.join(node_root, "data/il-read-only")):
        raise TestFailure("the LC wrote into its read-only data mount")
    log(f"il-read-only: Failed(Train) PreparationFailed with an Event: {message}")


def test(source_dir, build_dir, work):
    require_private_network_namespace()
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    podman = Podman(source_dir)
    cluster = Cluster(source_dir, build_dir, work)
    try:
        scenario(source_dir, work, podman, cluster)
    except TestFailure:
        print("--- podman ps ---\n" + podman.status("ps", "-a", "--pod").stdout, file=sys.stderr)
        for pod in podman.pods:
            container = f"{pod}-{'globalmanager' if pod == GM_POD else 'localcontroller'}"
            state = podman.status("container", "inspect", "--format",
                                  "{{.State.Status}} exit {{.State.ExitCode}} {{.State.Error}}",
                                  container).stdout.strip()
            print(f"--- {container} ({state}) log (end) ---\n{podman.logs(container)}",
                  file=sys.stderr)
        raise
    finally:
        podman.remove_pods()
        cluster.stop()


def scenario(source_dir, work, podman, cluster):
    deploy = os.path.join(source_dir, "deploy")
    cluster.kubectl(["apply", "-k", deploy])
    cluster.kubectl(["wait", "--for=condition=Established", "crd", "--all", "--timeout=30s"])
    pki = os.path.join(work, "pki")
    run([os.path.join(source_dir, "scripts", "gen-certs.sh"), "--san",
         "DNS:gm.sedna,DNS:gm.sedna.svc,DNS:gm.sedna.svc.cluster.local", pki, *NODES])
    run([os.path.join(deploy, "install-gm-tls.sh"), pki, "--kubeconfig", cluster.kubeconfig])
    rendered = cluster.rendered()
    gm_template = rendered[("Deployment", "gm")]["spec"]["template"]
    lc_template = rendered[("DaemonSet", "lc")]["spec"]["template"]
    api_ca = os.path.join(cluster.api_pki, "ca.crt")
    gm_alias = [("127.0.0.1", ["gm.sedna"])]

    # The GM: the Deployment's pod on a cloud node.
    kubelet = KubeletStandin(cluster.kubectl, "cloud-0", os.path.join(work, "cloud-0"),
                             os.path.join(work, "volumes"), "127.0.0.1", cluster.port, api_ca)
    gm_pod, gm_probes = kubelet.pod(gm_template, GM_POD, NAMESPACE)
    gm_yaml = os.path.join(work, f"{GM_POD}.yaml")
    kubelet.write(gm_pod, gm_yaml)
    podman.play(gm_yaml, GM_POD)
    gm_container = f"{GM_POD}-globalmanager"
    probe_until_ok(gm_probes, "GM")
    check_container_settings(podman, gm_container, 65532, writable_mounts=[])
    # The leader keeps its edge address (POD_IP, the edge port) on its Lease for the standbys.
    edge_address = cluster.kubectl(["get", "lease", "nereid-gm", "-n", NAMESPACE, "-o",
                                    "jsonpath={.metadata.annotations.nereid\\.io/edge-address}"])
    if edge_address.strip() != "127.0.0.1:9000":
        raise TestFailure(f"the GM's Lease names edge address {edge_address!r}, "
                          "want 127.0.0.1:9000 (POD_IP and the edge port)")
    log(f"the GM leads and its Lease names its edge hub: {edge_address.strip()}")

    # Two edge nodes: their PKI installed by deploy/install-node-pki.sh, then the DaemonSet's pod.
    lc_probes = {}
    expected = {}
    for node, port in NODES.items():
        node_root = os.path.join(work, node)
        run([os.path.join(deploy, "install-node-pki.sh"), pki, node,
             os.path.join(node_root, "etc", "nereid", "pki")])
        expected[node] = write_node_files(node_root, node)
        kubelet = KubeletStandin(cluster.kubectl, node, node_root, os.path.join(work, "volumes"),
                                 "127.0.0.1", cluster.port, api_ca)
        pod, probes = kubelet.pod(lc_template, f"lc-{node}", NAMESPACE, host_aliases=gm_alias,
                                  env_overrides={"BIND_PORT": str(port)},
                                  port_map={9100: port})
        pod_yaml = os.path.join(work, f"lc-{node}.yaml")
        kubelet.write(pod, pod_yaml)
        podman.play(pod_yaml, f"lc-{node}")
        lc_probes[node] = probes
    for node in NODES:
        probe_until_ok(lc_probes[node], f"LC {node}")
        check_container_settings(podman, f"lc-{node}-localcontroller", 0,
                                 writable_mounts=["/var/lib/nereid", "/rootfs/data/output",
                                                  "/rootfs/var/lib/sedna/model-hot-update"])

    def lc_connected(node):
        link = http_json(f"http://127.0.0.1:{NODES[node]}/api/v1/status").get("cloudLink", {})
        return link.get("state") == "connected" and link.get("synced") is True

    for node in NODES:
        try:
            wait_until(f"LC {node} connected to the GM (gm.sedna:9000, mTLS)",
                       lambda n=node: lc_connected(n), WAIT)
        except TestFailure as failure:
            status = http_get(f"http://127.0.0.1:{NODES[node]}/api/v1/status")[1]
            raise TestFailure(f"{failure}; its /api/v1/status: {status}") from None
    log("both LCs connected to the GM over mTLS")

    # Datasets and Models for the nodes, counted and verified by the containerised LCs.
    for node, (samples, sha) in expected.items():
        cluster.kubectl(["apply", "-f", "-"], input_text=sedna_objects(node, sha))
    for node, (samples, _) in expected.items():
        wait_until(f"Dataset {node}-dataset counted ({samples} samples)",
                   lambda n=node, s=samples: dataset_samples(cluster, f"{n}-dataset") == s, WAIT)
        wait_until(f"Model {node}-model verified",
                   lambda n=node: model_verified(cluster, f"{n}-model"), WAIT)
    print(cluster.kubectl(["get", "datasets,models", "-n", "default"]), end="")
    node_secrets_unreadable(podman, cluster, os.path.join(work, "node-a"))
    incremental_learning_round(cluster, os.path.join(work, "node-a"), expected["node-a"][0])

    # Edge autonomy across a restart: the GM stopped, node-a's LC container restarted; it must
    # serve its Dataset and Model from its database on the hostPath, not from the cloud.
    podman("stop", "--time", "30", gm_container)
    # The whole pod: podman cannot restart one container of a pod whose infra process exited. Stop,
    # then start: `kube play` pods have exit policy "stop", and under `pod restart` podman 4.3's
    # delayed stop of the infra container (for the container that exited) kills the restarted pod.
    podman("pod", "stop", "--time", "30", "lc-node-a")
    wait_until("pod lc-node-a stopped", lambda: podman.status(
        "pod", "inspect", "--format", "{{.State}}", "lc-node-a").stdout.strip() == "Exited", WAIT)
    podman("pod", "start", "lc-node-a")
    probe_until_ok(lc_probes["node-a"], "LC node-a after restart")
    samples_a = expected["node-a"][0]
    lc_a = f"http://127.0.0.1:{NODES['node-a']}/api/v1"
    wait_until("restarted LC node-a to serve its Dataset from its database",
               lambda: http_json(f"{lc_a}/datasets/default/node-a-dataset")
               .get("status", {}).get("numberOfSamples") == samples_a, WAIT)
    wait_until("restarted LC node-a to serve its verified Model from its database",
               lambda: http_json(f"{lc_a}/models/default/node-a-model")
               .get("status", {}).get("verified") is True, WAIT)
    if lc_connected("node-a"):
        raise TestFailure("LC node-a reports a connection while the GM is stopped")
    log(f"LC node-a restarted with the GM down: its Dataset ({samples_a} samples) and verified "
        "Model came from its database")

    # The GM back: node-a reconnects and a change on the node reaches `kubectl get`.
    podman("start", gm_container)
    probe_until_ok(gm_probes, "GM after restart")
    wait_until("LC node-a reconnected", lambda: lc_connected("node-a"), WAIT)
    with open(os.path.join(work, "node-a", "data", "train.txt"), "a") as out:
        out.write("images/node-a/new-1.jpg 1\nimages/node-a/new-2.jpg 0\n")
    wait_until(f"Dataset node-a-dataset recounted ({samples_a + 2} samples)",
               lambda: dataset_samples(cluster, "node-a-dataset") == samples_a + 2, WAIT)
    if not os.path.exists(os.path.join(work, "node-a", "var", "lib", "nereid", "lc.db")):
        raise TestFailure("node-a's database is not on its hostPath /var/lib/nereid")
    log(f"after the restarts: node-a's Dataset recounted to {samples_a + 2} in kubectl get")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main_wrapper(lambda: test(*sys.argv[1:4]))
