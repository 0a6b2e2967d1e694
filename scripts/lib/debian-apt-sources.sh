#!/usr/bin/env bash
# Prints this machine's configured apt sources for Debian itself as deb822 stanzas, so project
# scripts fetch from the user's mirror (and through the user's apt proxy settings) instead of a URL
# written into the repository.
#
#   scripts/lib/debian-apt-sources.sh [deb|deb-src]
#
# Reads /etc/apt/sources.list and /etc/apt/sources.list.d/*.{list,sources} (one-line and deb822
# formats). Keeps the entries whose suites name the running release (e.g. bookworm,
# bookworm-updates, bookworm-security) and rewrites their type to the one asked for; other
# repositories (vendors' archives) are left out, since they carry no Debian source packages and
# their keys are not Debian's. Exits 1 when nothing matched.
set -euo pipefail

type="${1:-deb}"
case "$type" in deb|deb-src) ;; *) echo "usage: $0 [deb|deb-src]" >&2; exit 2 ;; esac
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
[ -n "$codename" ] || { echo "debian-apt-sources: no VERSION_CODENAME in /etc/os-release" >&2; exit 1; }
etc="${NEREID_APT_ETC:-/etc/apt}"

files=()
[ -f "$etc/sources.list" ] && files+=("$etc/sources.list")
for f in "$etc"/sources.list.d/*.list "$etc"/sources.list.d/*.sources; do
  [ -f "$f" ] && files+=("$f")
done
[ ${#files[@]} -gt 0 ] || { echo "debian-apt-sources: no apt sources in $etc" >&2; exit 1; }

out=$(awk -v type="$type" -v codename="$codename" '
  function flush() {
    if (!skip && uris != "" && suites != "" && match(" " suites " ", " " codename "(-[a-z]+)? ")) {
      printf "Types: %s\nURIs: %s\nSuites: %s\nComponents: %s\n", type, uris, suites, comps
      if (signed != "") printf "Signed-By: %s\n", signed
      printf "\n"
    }
    uris = suites = comps = signed = ""; skip = 0
  }
  FNR == 1 { flush() }
  /^[ \t]*#/ { next }
  FILENAME ~ /\.sources$/ {
    if ($0 ~ /^[ \t]*$/) { flush(); next }
    key = $1; sub(/:$/, "", key); $1 = ""; sub(/^[ \t]+/, "")
    if (key == "Types" && $0 !~ /(^| )deb( |$)/) { skip = 1 }
    if (key == "URIs") uris = $0
    else if (key == "Suites") suites = $0
    else if (key == "Components") comps = $0
    else if (key == "Signed-By") signed = $0
    else if (key == "Enabled" && tolower($0) == "no") uris = ""
    next
  }
  $1 == "deb" {
    i = 2; signed = ""
    if ($2 ~ /^\[/) {
      for (; i <= NF; i++) {
        if ($i ~ /^\[?signed-by=/) { s = $i; sub(/^\[?signed-by=/, "", s); sub(/\]$/, "", s); signed = s }
        if ($i ~ /\]$/) { i++; break }
      }
    }
    uris = $i; suites = $(i + 1); comps = ""
    for (j = i + 2; j <= NF; j++) comps = comps (comps == "" ? "" : " ") $j
    flush()
  }
  END { flush() }
' "${files[@]}")
[ -n "$out" ] || { echo "debian-apt-sources: no '$codename' entries in ${files[*]}" >&2; exit 1; }
printf '%s\n' "$out"
