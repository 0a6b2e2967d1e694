#!/usr/bin/env python3
"""Builds both images from the build tree (scripts/build-images.sh --from-build BUILD) and checks
what they are: their size against the goals (edge nodes pull over thin links), their user, that
they carry no shell or package manager, and that each binary starts in its image and answers
--help. The other container tests use these images.

    images_test.py SOURCE_DIR BUILD_DIR
"""

import json
import os
import sys

from harness import Podman, TestFailure, log, main_wrapper, run

# Uncompressed image size goals, in bytes (deploy/README.md, "Images").
SIZE_GOALS = {"globalmanager": 96_000_000, "localcontroller": 64_000_000}
# deploy/gm/deployment.yaml runs the GM as 65532; the LC runs as root (deploy/lc/daemonset.yaml).
USERS = {"globalmanager": "65532:65532", "localcontroller": "0:0"}


def image_tag(source_dir):
    """The tag deploy/kustomization.yaml pins, so the manifests' images are the ones built."""
    with open(os.path.join(source_dir, "deploy", "kustomization.yaml")) as kustomization:
        lines = kustomization.read().splitlines()
    for i, line in enumerate(lines):
        if line.strip() == "- name: nereid/globalmanager":
            return lines[i + 1].split("newTag:")[1].strip()
    raise TestFailure("deploy/kustomization.yaml pins no nereid/globalmanager tag")


def test(source_dir, build_dir):
    before = sorted(os.listdir(build_dir))
    out = run([os.path.join(source_dir, "scripts", "build-images.sh"), "--tool", "podman",
               "--from-build", build_dir], timeout=600)
    print(out, end="")
    if sorted(os.listdir(build_dir)) != before:
        raise TestFailure("build-images.sh --from-build changed the build tree: "
                          f"{sorted(set(os.listdir(build_dir)) ^ set(before))}")
    podman = Podman(source_dir)
    tag = image_tag(source_dir)
    for component, goal in SIZE_GOALS.items():
        image = f"nereid/{component}:{tag}"
        info = json.loads(podman("image", "inspect", image))[0]
        size = info["Size"]
        log(f"{image}: {size / 1e6:.1f} MB (goal <= {goal / 1e6:.0f} MB)")
        if size > goal:
            raise TestFailure(f"{image} is {size / 1e6:.1f} MB, over its {goal / 1e6:.0f} MB goal")
        user = info["Config"].get("User", "")
        if user != USERS[component]:
            raise TestFailure(f"{image} runs as '{user}', want {USERS[component]}")
        entrypoint = info["Config"].get("Entrypoint") or []
        if entrypoint != [f"/usr/local/bin/{component}"]:
            raise TestFailure(f"{image} entrypoint {entrypoint}")
        # Nothing but the binary, its libraries and a few files in /etc: no shell, no apt/dpkg.
        root = podman("image", "mount", image).strip()
        try:
            files = sorted(os.path.relpath(os.path.join(d, f), root)
                           for d, _, names in os.walk(root) for f in names)
        finally:
            podman("image", "unmount", image)
        unexpected = [f for f in files if not f.startswith(("usr/local/bin/", "lib", "usr/lib",
                                                            "etc/"))]
        shells = [f for f in files if os.path.basename(f) in ("sh", "bash", "dash", "apt-get",
                                                              "dpkg")]
        if unexpected or shells:
            raise TestFailure(f"{image} has more than its binary and libraries: "
                              f"{unexpected + shells}")
        log(f"{image}: {len(files)} files: " + " ".join(files))
        # The binary starts in its image (every library resolved) and answers --help.
        help_text = podman("run", "--rm", "--network", "none", "--read-only", "--cap-drop", "ALL",
                           image, "--help", timeout=60)
        if "--" not in help_text:
            raise TestFailure(f"{image} --help printed no flags: {help_text[:300]}")
        log(f"{image}: user {user}, entrypoint {entrypoint[0]}, --help answers "
            f"({len(help_text.splitlines())} lines)")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main_wrapper(lambda: test(sys.argv[1], sys.argv[2]))
