# Sourced by scripts/test.sh and scripts/sanitize.sh: nereid_configure BUILD_DIR [CMAKE_ARGS...]
# configures BUILD_DIR with Ninja. Ninja keeps both cores compiling across targets, where make's
# recursive Makefiles wait for each library's dependencies before starting its files (a cold
# release build: ~1.3 cores busy on average with make). A tree made earlier with another generator
# is reconfigured from scratch (CMake refuses to switch generators in place); its objects are
# rebuilt, from ccache when it has them.
nereid_configure() {
  local dir="$1"
  shift
  local cache="$dir/CMakeCache.txt"
  if [ -f "$cache" ] && ! grep -qx 'CMAKE_GENERATOR:INTERNAL=Ninja' "$cache"; then
    echo "nereid_configure: $dir was made with another generator; reconfiguring it with Ninja" >&2
    rm -rf "$cache" "$dir/CMakeFiles"
  fi
  cmake -G Ninja -S . -B "$dir" "$@" >/dev/null
}
