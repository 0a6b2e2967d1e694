"""Shared helpers of the container tests: podman with the project's settings, bounded waits,
HTTP probes, and process cleanup.

The tests run podman as scripts/build-images.sh configured it (the containers.conf it wrote under
SOURCE/build-images/), and fail loudly when podman cannot run here: a
container test never passes without having run a container.
"""

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request


class TestFailure(Exception):
    """A check failed; the message says which and why."""


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def run(args, *, check=True, env=None, input_text=None, timeout=300):
    """Runs a command, returns its stdout; raises TestFailure with stderr when it fails."""
    result = subprocess.run(args, capture_output=True, text=True, env=env, input=input_text,
                            timeout=timeout, check=False)
    if check and result.returncode != 0:
        raise TestFailure(f"{' '.join(map(str, args))} exited {result.returncode}:\n"
                          f"{result.stderr.strip()}\n{result.stdout.strip()}")
    return result.stdout


def wait_until(what, predicate, timeout, interval=0.5):
    """Polls predicate() until it returns a truthy value or `timeout` seconds pass."""
    deadline = time.monotonic() + timeout
    last_error = None
    while time.monotonic() < deadline:
        try:
            value = predicate()
            if value:
                return value
        except (TestFailure, OSError, ValueError, KeyError) as error:
            last_error = error
        time.sleep(interval)
    raise TestFailure(f"timed out after {timeout}s waiting for {what}"
                      + (f" (last error: {last_error})" if last_error else ""))


def http_get(url, timeout=3):
    """Returns (status, body) of a GET; status 0 when nothing answered."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return 0, ""


def http_json(url):
    status, body = http_get(url)
    if status != 200:
        raise TestFailure(f"GET {url}: status {status} {body[:200]}")
    return json.loads(body)


class Podman:
    """podman with the build tree's project-local containers.conf."""

    def __init__(self, source_dir):
        self.binary = shutil.which("podman")
        if self.binary is None:
            raise TestFailure("podman is not installed: scripts/install-deps.sh --containers")
        conf = os.path.join(source_dir, "build-images", "containers.conf")
        self.env = dict(os.environ)
        if "CONTAINERS_CONF" not in self.env:
            if not os.path.exists(conf):
                raise TestFailure(f"{conf} is missing: run scripts/build-images.sh --from-build "
                                  "BUILD first (ctest -L containers does)")
            self.env["CONTAINERS_CONF"] = conf
        self.pods = []

    def __call__(self, *args, check=True, timeout=300):
        return run([self.binary, *args], check=check, env=self.env, timeout=timeout)

    def status(self, *args, timeout=120):
        """Runs podman and returns the CompletedProcess, whatever its exit code."""
        return subprocess.run([self.binary, *args], capture_output=True, text=True, env=self.env,
                              timeout=timeout, check=False)

    def play(self, pod_yaml_path, pod_name):
        self("kube", "play", "--replace", pod_yaml_path)
        self.pods.append(pod_name)

    def inspect(self, container):
        return json.loads(self("container", "inspect", container))[0]

    def logs(self, container, lines=40):
        return self("logs", "--tail", str(lines), container, check=False)

    def container_state(self, container):
        return self.inspect(container)["State"]

    def remove_pods(self):
        for pod in reversed(self.pods):
            self("pod", "rm", "--force", "--time", "10", pod, check=False, timeout=60)
        self.pods.clear()


def require_private_network_namespace():
    """The tests run in a network namespace of their own (ctest starts them under
    `unshare --net`): only loopback exists, so nothing they start is reachable from outside and
    fixed ports cannot collide with other processes on the machine. Brings loopback up."""
    run(["ip", "link", "set", "lo", "up"])
    links = run(["ip", "-o", "link", "show"]).strip().splitlines()
    if len(links) != 1 or ": lo:" not in links[0]:
        raise TestFailure("not in a private network namespace (run under `unshare --net`): "
                          + "; ".join(links))


def main_wrapper(body):
    """Runs body(), prints PASSED/FAILED, exits 0/1."""
    try:
        body()
    except TestFailure as failure:
        log(f"FAILED: {failure}")
        sys.exit(1)
    log("PASSED")
