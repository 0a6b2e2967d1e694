"""Turns a workload's pod template from deploy/ into a Pod that `podman kube play` runs, doing
what the kubelet would do for it on one node, and nothing that would hide a fault of the
manifest.

Kept from the template unchanged: containers (image, args, env values, ports, securityContext,
resources, volumeMounts with their readOnly flags), the pod securityContext, hostNetwork.

Done here as the kubelet does it:
  - configMap and secret volumes: the object is read from the API server and its keys written as
    files with the volume's defaultMode (0644 when unset) and, when the pod sets fsGroup, group
    fsGroup; mounted as a hostPath of that directory.
  - the service account token volume (unless automountServiceAccountToken is false): token,
    ca.crt and namespace at /var/run/secrets/kubernetes.io/serviceaccount, plus
    KUBERNETES_SERVICE_HOST/PORT in the environment, as for every pod.
  - env valueFrom.fieldRef (metadata.name, metadata.namespace, spec.nodeName) resolved.
  - httpGet probes: returned to the caller, who probes them (podman runs no readiness probes and
    runs liveness probes only through systemd timers, which this machine lacks).

Stand-ins for what one machine has no equivalent of (say so where a test relies on them):
  - hostPath paths are resolved under a per-node directory (NODE_ROOT + path), since every node
    is this one machine; the type check (Directory, DirectoryOrCreate) is podman's.
  - dnsPolicy: the cluster DNS is replaced by host aliases the caller passes (gm.sedna), written
    to the pod's /etc/hosts as the kubelet writes hostAliases.
  - the pod network: the test's network namespace, shared by all pods (a pod without hostNetwork
    gets hostNetwork here; its ports are then the namespace's ports).
Not honoured by podman 4.3 (left in the spec, without effect): mountPropagation (podman binds
privately), seccompProfile RuntimeDefault (podman applies its own default profile, the same idea),
and the DaemonSet's tolerations/affinity (no scheduler).
"""

import base64
import copy
import os

import yaml

SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"


class _Loader(yaml.SafeLoader):  # pylint: disable=too-many-ancestors
    """YAML 1.1's `=` (the "value" tag) is a plain string in Kubernetes' YAML 1.2 (CRD enums)."""


_Loader.add_constructor("tag:yaml.org,2002:value", _Loader.construct_yaml_str)


def load_all(text):
    """The documents of a multi-document YAML stream (kubectl output), empty ones dropped."""
    return [doc for doc in yaml.load_all(text, Loader=_Loader) if doc]


class KubeletStandin:
    """Builds pods for one node. `kubectl(args) -> str` reads objects from the API server."""

    def __init__(self, kubectl, node_name, node_root, volumes_dir, api_host, api_port, api_ca):
        self.kubectl = kubectl
        self.node_name = node_name
        self.node_root = node_root
        self.volumes_dir = volumes_dir
        self.api_host = api_host
        self.api_port = api_port
        self.api_ca = api_ca

    def pod(self, template, name, namespace, host_aliases=(), env_overrides=None, port_map=None):
        """Returns (pod dict for podman, probes) for `template` (a pod template dict).
        env_overrides replaces env values by name; port_map {template port: port} moves the
        probes with a port the overrides moved (two "nodes" sharing one network namespace)."""
        spec = copy.deepcopy(template["spec"])
        security = spec.get("securityContext", {})
        fs_group = security.get("fsGroup")
        pod_volumes_dir = os.path.join(self.volumes_dir, name)
        os.makedirs(pod_volumes_dir, exist_ok=True)

        volumes = []
        for volume in spec.get("volumes", []):
            volumes.append(self._volume(volume, namespace, pod_volumes_dir, fs_group))
        automount = spec.get("automountServiceAccountToken", True)
        # The pod runs on the host network of a stand-in node whose address is loopback: that is
        # its status.podIP, as a kubelet reports the node's IP for a hostNetwork pod.
        field_values = {"metadata.name": name, "metadata.namespace": namespace,
                        "spec.nodeName": self.node_name, "status.podIP": "127.0.0.1"}
        probes = []
        for container in spec["containers"]:
            container["env"] = self._env(container.get("env", []), field_values,
                                         env_overrides or {}, automount)
            run_as = container.get("securityContext", {}).get("runAsUser",
                                                              security.get("runAsUser", 0))
            probes += self._probes(container, port_map or {})
            # In the shared network namespace a container port is the namespace's port: there is
            # nothing to map (podman refuses port mappings there), so the ports only name the
            # probes' targets.
            container.pop("ports", None)
            if automount:
                volumes.append(self._service_account_volume(namespace, pod_volumes_dir, run_as,
                                                            fs_group))
                container.setdefault("volumeMounts", []).append(
                    {"name": "kube-api-access", "mountPath": SERVICE_ACCOUNT_DIR, "readOnly": True})
        if host_aliases:
            # The kubelet writes a pod's /etc/hosts with its hostAliases; podman 4.3 ignores
            # hostAliases in a pod on the host network, so the file is mounted as the kubelet's is.
            volumes.append(self._hosts_volume(host_aliases, pod_volumes_dir))
            for container in spec["containers"]:
                container.setdefault("volumeMounts", []).append(
                    {"name": "etc-hosts", "mountPath": "/etc/hosts", "readOnly": True})
        spec["volumes"] = volumes
        spec["hostNetwork"] = True
        spec["restartPolicy"] = "Never"
        # No scheduler: the node is chosen by the caller (spec.nodeName above).
        for field in ("affinity", "tolerations", "nodeSelector", "dnsPolicy"):
            spec.pop(field, None)
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": name, "namespace": namespace,
                            "labels": template.get("metadata", {}).get("labels", {})},
               "spec": spec}
        return pod, probes

    def write(self, pod, path):
        with open(path, "w") as out:
            yaml.safe_dump(pod, out, sort_keys=False)

    # --- volumes --------------------------------------------------------------------------------

    def _volume(self, volume, namespace, pod_volumes_dir, fs_group):
        name = volume["name"]
        if "hostPath" in volume:
            host_path = volume["hostPath"]
            mapped = os.path.join(self.node_root, host_path["path"].lstrip("/"))
            return {"name": name, "hostPath": {**host_path, "path": mapped.rstrip("/") or "/"}}
        if "configMap" in volume:
            source = volume["configMap"]
            data = self._object("configmap", source["name"], namespace).get("data", {})
            files = {key: value.encode() for key, value in data.items()}
        elif "secret" in volume:
            source = volume["secret"]
            data = self._object("secret", source["secretName"], namespace).get("data", {})
            files = {key: base64.b64decode(value) for key, value in data.items()}
        else:
            raise ValueError(f"volume {name}: kind {sorted(volume)} not supported by the stand-in")
        directory = os.path.join(pod_volumes_dir, name)
        self._write_files(directory, files, source.get("defaultMode", 0o644), 0, fs_group)
        return {"name": name, "hostPath": {"path": directory, "type": "Directory"}}

    def _service_account_volume(self, namespace, pod_volumes_dir, run_as, fs_group):
        directory = os.path.join(pod_volumes_dir, "kube-api-access")
        with open(self.api_ca, "rb") as ca:
            ca_pem = ca.read()
        self._write_files(directory, {"ca.crt": ca_pem, "namespace": namespace.encode()},
                          0o644, 0, fs_group)
        # The token is readable by the pod's user only (the kubelet's projected token file).
        self._write_files(directory, {"token": b"container-test-token"}, 0o600, run_as, None)
        return {"name": "kube-api-access", "hostPath": {"path": directory, "type": "Directory"}}

    @staticmethod
    def _hosts_volume(host_aliases, pod_volumes_dir):
        path = os.path.join(pod_volumes_dir, "hosts")
        with open(path, "w") as hosts:
            hosts.write("127.0.0.1 localhost\n::1 localhost\n")
            hosts.writelines(f"{ip} {' '.join(names)}\n" for ip, names in host_aliases)
        os.chmod(path, 0o644)
        return {"name": "etc-hosts", "hostPath": {"path": path, "type": "File"}}

    @staticmethod
    def _write_files(directory, files, mode, owner, fs_group):
        os.makedirs(directory, exist_ok=True)
        group = fs_group if fs_group is not None else 0
        os.chown(directory, 0, group)
        os.chmod(directory, 0o755 if fs_group is None else 0o2755)
        for key, content in files.items():
            path = os.path.join(directory, key)
            with open(path, "wb") as out:
                out.write(content)
            os.chown(path, owner, group)
            os.chmod(path, mode)

    def _object(self, kind, name, namespace):
        return load_all(self.kubectl(["get", kind, name, "-n", namespace, "-o", "json"]))[0]

    # --- environment and probes -----------------------------------------------------------------

    def _env(self, env, field_values, overrides, automount):
        resolved = []
        for variable in env:
            field = variable.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
            if field is not None:
                if field not in field_values:
                    raise ValueError(f"env {variable['name']}: fieldRef {field} not supported")
                variable = {"name": variable["name"], "value": field_values[field]}
            if variable["name"] in overrides:
                variable = {"name": variable["name"], "value": overrides[variable["name"]]}
            resolved.append(variable)
        if automount:
            resolved += [{"name": "KUBERNETES_SERVICE_HOST", "value": self.api_host},
                         {"name": "KUBERNETES_SERVICE_PORT", "value": str(self.api_port)}]
        return resolved

    @staticmethod
    def _probes(container, port_map):
        ports = {port["name"]: port["containerPort"]
                 for port in container.get("ports", []) if "name" in port}
        probes = []
        for kind in ("livenessProbe", "readinessProbe"):
            probe = container.get(kind)
            if probe is None:
                continue
            http = probe["httpGet"]
            port = http["port"]
            if isinstance(port, str):
                if port not in ports:
                    raise ValueError(f"{container['name']} {kind}: no container port named {port}")
                port = ports[port]
            port = port_map.get(port, port)
            host = http.get("host", "127.0.0.1")  # the pod IP: loopback in the test's namespace
            probes.append({"container": container["name"], "kind": kind,
                           "url": f"http://{host}:{port}{http['path']}"})
        return probes
