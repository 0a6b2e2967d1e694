#!/usr/bin/env python3
"""Sums a heaptrack peak profile of the GM by component, per edge node.

Input: `heaptrack_print -f FILE --flamegraph-cost-type peak -F OUT` (one folded stack per line,
bytes at the heap peak last). Each stack goes to the first rule whose pattern occurs in it. Debian's
libgrpc and libssl have no symbols for their internal functions, so two rules match on what their
allocations are called from (see bench/RESULTS.md, "GM memory per connected node").

usage: heap_categories.py FOLDED NODES [-v]
"""
import collections
import re
import sys

RULES = [
    ("TLS: gRPC handshaker BIO pair", r"BIO_new_bio_pair"),
    ("TLS: gRPC secure endpoint staging buffers", r"grpc_secure_endpoint_create"),
    ("TLS: OpenSSL SSL objects, session, peer certificate",
     r"SSL_new|SSL_do_handshake|ssl3_|X509|d2i|ASN1|EVP_|grpc_ssl_peer_to_auth_context"),
    ("gRPC: call arena and call objects", r"Arena|grpc_call_create|Server::CallData"),
    ("gRPC: chttp2 transport", r"chttp2|HPack"),
    ("gRPC: TCP endpoint and read slices", r"grpc_tcp_create|MakeSlice"),
    ("gRPC: other (incl. OpenSSL record buffers, TLS frame protector)", r"grpc"),
    ("hub: sessions and registry", r"nereid::gm::EdgeHub|nereid::gm::Session|SyncReactor"),
    ("informer cache and JSON", r"nlohmann|Informer|Indexer|DecodeWatchEvent"),
    ("other GM code", r"nereid"),
]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    nodes = float(sys.argv[2])
    verbose = "-v" in sys.argv
    totals = collections.Counter()
    stacks = collections.defaultdict(collections.Counter)
    with open(sys.argv[1]) as folded:
        for line in folded:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            if not count.isdigit():
                continue
            category = next((name for name, pattern in RULES if re.search(pattern, stack)), "other")
            totals[category] += int(count)
            frames = [f for f in stack.split(";") if f and not f.startswith("0x")]
            stacks[category][";".join(frames[-3:])] += int(count)
    print("total %.1f MiB" % (sum(totals.values()) / 2**20))
    for category, size in totals.most_common():
        print("%8.1f MiB %7.1f KiB/node  %s" % (size / 2**20, size / 1024 / nodes, category))
        if verbose:
            for stack, count in stacks[category].most_common(4):
                print("          %6.1f MiB  %s" % (count / 2**20, stack[:160]))


if __name__ == "__main__":
    main()
