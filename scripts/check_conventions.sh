#!/usr/bin/env bash
# Conventions the code states and the build now enforces (cheap: grep and wc over the tracked
# files, no build). Fails, naming each offending file:line, on
#   - a product source file (not tests/, not bench/) over 750 lines: past ~600 a file usually holds
#     two responsibilities; 750 is the hard line;
#   - a comment citing an issue ("issue 12", "issue #12", "the issue asks"): the why belongs in the
#     comment itself, an issue number rots;
#   - a raw close() of a descriptor in product code: common/process/unique_fd.h owns descriptors.
# Usage: scripts/check_conventions.sh [REPO_ROOT]   (default: this script's repository)
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"

max_lines=750
failed=0
fail() {
  echo "check_conventions: $*" >&2
  failed=1
}

sources() { git ls-files -- '*.cc' '*.h' '*.proto' '*.cmake' 'CMakeLists.txt' '*/CMakeLists.txt' '*.sh' '*.py'; }
product_sources() {
  git ls-files -- '*.cc' '*.h' | grep -vE '^(tests|bench)/' || true
}

while read -r lines file; do
  [ "$file" = total ] && continue
  if [ "$lines" -gt "$max_lines" ]; then
    fail "$file has $lines lines (more than $max_lines): split it by responsibility"
  fi
done < <(product_sources | xargs -r wc -l)

# Comments only: a '//' or '#' comment, or a line inside a /* */ block that starts with '*'.
issue_pattern='(//|#|^[[:space:]]*\*).*(\b[Ii]ssues? #?[0-9]+|\b(the|this|that) issue\b)'
while IFS= read -r hit; do
  fail "$hit: a comment cites an issue; say the reason instead"
done < <(sources | grep -v '^scripts/check_conventions.sh$' | xargs -r grep -nE "$issue_pattern" || true)

close_pattern='(^|[^[:alnum:]_.>])(::)?close\('
while IFS= read -r hit; do
  fail "$hit: raw close(); own the descriptor with nereid::UniqueFd (common/process/unique_fd.h)"
done < <(product_sources | grep -v '^common/process/unique_fd.h$' |
           xargs -r grep -nE "$close_pattern" | grep -vE ':[0-9]+:[[:space:]]*//' || true)

if [ "$failed" -ne 0 ]; then
  echo "check_conventions: FAILED" >&2
  exit 1
fi
echo "check_conventions: ok"
