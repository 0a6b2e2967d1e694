#!/usr/bin/env bash
# Clang's thread-safety analysis, as errors, over every product file that takes or annotates a lock.
# ABSL_GUARDED_BY and the ABSL_*_LOCKS_* annotations are checked only by clang, and the release build
# is g++: without this step an unguarded read of a guarded member compiles and lands.
#
#   scripts/check_thread_safety.sh BUILD_DIR
#
# Reads BUILD_DIR/compile_commands.json (any configured tree; generated sources must exist, so run
# it after the build) and runs `clang++ -fsyntax-only -Werror=thread-safety` on each .cc under
# common/, globalmanager/, localcontroller/ and tools/ that names a mutex or a lock annotation, or
# includes a project header that does (about 80 files, two at a time: about 3 minutes). A file that
# reaches a lock only through other headers is not checked here; the sanitizer tree
# (scripts/sanitize.sh) builds everything with clang and the same flag.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:?usage: check_thread_safety.sh BUILD_DIR}"
db="$build/compile_commands.json"
[ -f "$db" ] || { echo "check_thread_safety: no $db (configure the tree first)" >&2; exit 2; }
command -v clang++ >/dev/null ||
  { echo "check_thread_safety: clang++ not found (scripts/install-deps.sh --fuzz installs it)" >&2; exit 2; }

# A file is checked when it or a project header it includes names a mutex or an annotation: a
# class's methods may live in several files (devapiserver's Store: storage.cc, garbage_collection.cc).
files=()
while IFS= read -r f; do
  headers=()
  while IFS= read -r h; do [ -f "$h" ] && headers+=("$h"); done \
    < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
  if grep -qE 'GUARDED_BY|LOCKS_REQUIRED|LOCKS_EXCLUDED|absl::Mutex|MutexLock' "$f" "${headers[@]}"; then
    files+=("$PWD/$f")
  fi
done < <(git ls-files 'common/*.cc' 'globalmanager/*.cc' 'localcontroller/*.cc' 'tools/*.cc')

# One line per file: its directory, then its g++ command turned into a clang syntax check (no
# launcher, no object file, no g++ precompiled header, no dependency files).
commands=$(python3 - "$db" "${files[@]}" <<'EOF'
import json, shlex, sys
wanted = set(sys.argv[2:])
for entry in json.load(open(sys.argv[1])):
    if entry["file"] not in wanted:
        continue
    args = shlex.split(entry["command"])
    while args and not args[0].startswith("-") and not args[0].endswith(("c++", "g++")):
        args = args[1:]  # launchers (ccache, env VAR=...)
    kept, skip = [], False
    for a in args[1:]:
        if skip:
            skip = False
        elif a in ("-o", "-MF", "-MT", "-include"):
            skip = True
        elif a not in ("-c", "-MD", "-Winvalid-pch") and not a.startswith(("-g", "-O")):
            kept.append(a)
    print(shlex.quote(entry["directory"]), " ".join(shlex.quote(a) for a in kept))
EOF
)
count=$(printf '%s\n' "$commands" | grep -c . || true)
[ "$count" -gt 0 ] || { echo "check_thread_safety: no matching files in $db" >&2; exit 2; }

failed=0
printf '%s\n' "$commands" | xargs -P "${JOBS:-2}" -L 1 sh -c \
  'dir=$0; cd "$dir" && clang++ -fsyntax-only -Wno-everything -Wthread-safety -Werror=thread-safety "$@"' ||
  failed=1
if [ "$failed" -ne 0 ]; then
  echo "check_thread_safety: FAILED: a guarded member touched without its lock (above)" >&2
  exit 1
fi
echo "check_thread_safety: $count files pass clang -Werror=thread-safety"
