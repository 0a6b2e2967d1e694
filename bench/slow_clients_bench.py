#!/usr/bin/env python3
"""Slow HTTP clients (slowloris) against LocalController binaries, side by side in one run.

    bench/slow_clients_bench.py [--clients N] [--probes K] LC_BINARY [BASELINE_LC_BINARY ...]

For each binary: starts it on 127.0.0.1:0 (--insecure, a GM address that refuses, a temporary
host root and database), opens N connections that each send a request line and one header and
then one more header line every 2 s (so no idle timeout closes them), and meanwhile sends K
worker reports (Sedna's POST /sedna/workers/{name}/info) and K GET /healthz, one per second,
each with a 5 s timeout. Prints the latencies (a timeout counts as 5000 ms), how many slow
connections the LC still holds, and its resident memory before and with the slow clients.
Everything binds to 127.0.0.1; every loop is bounded.
"""

import argparse
import json
import os
import re
import resource
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request

TIMEOUT_S = 5.0
REPORT = {
    "name": "edgeworker-x1", "namespace": "default", "ownerName": "helmet",
    "ownerKind": "jointinferenceservice", "kind": "inference", "status": "running",
    "ownerInfo": {"inferenceNumber": 3}, "results": [],
}


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def start_lc(binary, work):
    out = open(os.path.join(work, "stdout"), "w+")
    err = open(os.path.join(work, "stderr"), "w")
    os.makedirs(os.path.join(work, "root"), exist_ok=True)
    process = subprocess.Popen(
        [binary, "--node", "slow-bench", "--gm", "127.0.0.1:1", "--insecure",
         "--db", os.path.join(work, "lc.db"), "--host-root", os.path.join(work, "root"),
         "--listen", "127.0.0.1:0"], stdout=out, stderr=err)
    deadline = time.time() + 10
    while time.time() < deadline:
        out.seek(0)
        match = re.search(r"listening on http://127\.0\.0\.1:(\d+)", out.read())
        if match:
            return process, int(match.group(1))
        if process.poll() is not None:
            break
        time.sleep(0.05)
    process.kill()
    raise RuntimeError(f"{binary} did not start listening within 10 s")


def timed(request):
    start = time.time()
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as answer:
            answer.read()
            ok = answer.status == 200
    except (urllib.error.URLError, socket.timeout, ConnectionError):
        ok = False
    return (time.time() - start) * 1000 if ok else TIMEOUT_S * 1000


def measure(binary, clients, probes):
    work = tempfile.mkdtemp(prefix="slow-clients-")
    process, port = start_lc(binary, work)
    slow = []
    stop = threading.Event()
    try:
        idle_rss = rss_kib(process.pid)
        for _ in range(clients):
            connection = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT_S)
            connection.sendall(b"GET /healthz HTTP/1.1\r\nHost: lc\r\n")
            slow.append(connection)

        def trickle():
            while not stop.wait(2.0):
                for connection in slow:
                    try:
                        connection.sendall(b"X-Slow: 1\r\n")
                    except OSError:
                        pass

        trickler = threading.Thread(target=trickle)
        trickler.start()
        body = json.dumps(REPORT).encode()
        reports, healths = [], []
        for _ in range(probes):
            reports.append(timed(urllib.request.Request(
                f"http://127.0.0.1:{port}/sedna/workers/edgeworker-x1/info", data=body,
                headers={"Content-Type": "application/json"})))
            healths.append(timed(f"http://127.0.0.1:{port}/healthz"))
            time.sleep(1.0)
        loaded_rss = rss_kib(process.pid)
        stop.set()
        trickler.join()
        held = 0
        for connection in slow:
            try:
                connection.sendall(b"X-Slow: 1\r\n")
                held += 1
            except OSError:
                pass
        return {"reports": sorted(reports), "healths": sorted(healths), "held": held,
                "idle_rss": idle_rss, "loaded_rss": loaded_rss}
    finally:
        stop.set()
        for connection in slow:
            connection.close()
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
        shutil.rmtree(work, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=1000)
    parser.add_argument("--probes", type=int, default=10)
    parser.add_argument("binaries", nargs="+")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    print(f"{args.clients} slow clients, {args.probes} probes each; load average "
          f"{os.getloadavg()[0]:.2f}")
    print(f"{'binary':<48} {'report p50/max ms':>18} {'healthz p50/max ms':>19} "
          f"{'held':>5} {'RSS idle→loaded MiB':>20}")
    for binary in args.binaries:
        r = measure(binary, args.clients, args.probes)
        p50 = lambda xs: xs[len(xs) // 2]
        print(f"{binary[-48:]:<48} {p50(r['reports']):>8.1f}/{max(r['reports']):<9.1f} "
              f"{p50(r['healths']):>9.1f}/{max(r['healths']):<9.1f} {r['held']:>5} "
              f"{r['idle_rss'] / 1024:>9.1f}→{r['loaded_rss'] / 1024:<9.1f}")


if __name__ == "__main__":
    main()
