# Precompiled headers. Nearly every translation unit of Nereid parses the same ~100,000 lines of the
# standard library, nlohmann/json and Abseil before a line of its own: with g++ -O2 that is 4-5 s of
# a 5 s compile (common/kube/retry.cc: 200 lines of its own, 4.8 s). One precompiled copy of those
# headers, built once and reused by every target (REUSE_FROM), takes that cost out of every file.
# Tests reuse a second copy that also holds Catch2 (and is built with their flags).
#
# Only headers that never change with the project go here: a project header in the PCH would
# rebuild the whole tree on every edit to it. A file that must not see the PCH (other -m flags, or
# macros that must precede an include, like catch_main.cc) sets SKIP_PRECOMPILE_HEADERS.
# -DNEREID_PCH=OFF compiles without, to check that each file includes what it uses.
option(NEREID_PCH "Precompile the standard library, nlohmann/json and Abseil headers" ON)
if(NEREID_PCH)
  # Half the files compile with -pthread (whatever links Threads::Threads), half without, and a PCH
  # fits only files that agree on _REENTRANT: all of them get it (under g++'s _GNU_SOURCE, glibc 2.36
  # ignores it).
  add_compile_options(-pthread)
endif()

set(NEREID_PCH_HEADERS
  <algorithm> <atomic> <chrono> <cstddef> <cstdint> <cstdlib> <cstring> <deque> <filesystem>
  <fstream> <functional> <map> <memory> <mutex> <optional> <set> <sstream> <string>
  <string_view> <thread> <utility> <variant> <vector>
  <nlohmann/json.hpp>
  <absl/base/thread_annotations.h> <absl/container/flat_hash_map.h> <absl/status/status.h>
  <absl/status/statusor.h> <absl/strings/ascii.h> <absl/strings/match.h> <absl/strings/numbers.h>
  <absl/strings/str_cat.h> <absl/strings/str_join.h> <absl/strings/str_split.h>
  <absl/synchronization/mutex.h> <absl/time/clock.h> <absl/time/time.h>)

# Every target defined in DIR and below.
function(_nereid_targets_below dir out)
  get_property(targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(sub ${subdirs})
    _nereid_targets_below("${sub}" sub_targets)
    list(APPEND targets ${sub_targets})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

# A library whose only job is to own one precompiled header, for others to reuse. It has no compile
# definitions of its own, so none can conflict with a user's.
function(_nereid_pch_owner name)
  set(anchor "${PROJECT_BINARY_DIR}/${name}_anchor.cc")
  file(CONFIGURE OUTPUT "${anchor}"
       CONTENT "// The ${name} precompiled header's target (scripts/cmake/precompiled_headers.cmake).\n")
  add_library(${name} STATIC "${anchor}")
  target_precompile_headers(${name} PRIVATE ${ARGN})
endfunction()

# Gives every C++ target of the project one of the shared precompiled headers. Call once, after all
# subdirectories are added (include this file before them: its -pthread must reach every target).
function(nereid_apply_precompiled_headers)
  if(NOT NEREID_PCH)
    return()
  endif()
  _nereid_targets_below("${PROJECT_SOURCE_DIR}" targets)
  _nereid_pch_owner(nereid_pch ${NEREID_PCH_HEADERS})
  if(NEREID_BUILD_TESTS)
    _nereid_pch_owner(nereid_test_pch ${NEREID_PCH_HEADERS} <catch2/catch.hpp>)
    target_compile_options(nereid_test_pch PRIVATE ${NEREID_TEST_COMPILE_OPTIONS})
  endif()
  foreach(target ${targets})
    get_target_property(type ${target} TYPE)
    if(NOT type MATCHES "^(STATIC_LIBRARY|SHARED_LIBRARY|OBJECT_LIBRARY|EXECUTABLE)$")
      continue()
    endif()
    get_target_property(sources ${target} SOURCES)
    if(NOT sources MATCHES "\\.(cc|cpp)(;|$)")
      continue()
    endif()
    get_target_property(source_dir ${target} SOURCE_DIR)
    if(NEREID_BUILD_TESTS AND source_dir MATCHES "^${PROJECT_SOURCE_DIR}/tests(/|$)"
       AND NOT source_dir MATCHES "^${PROJECT_SOURCE_DIR}/tests/fuzz")
      target_precompile_headers(${target} REUSE_FROM nereid_test_pch)
    else()
      target_precompile_headers(${target} REUSE_FROM nereid_pch)
    endif()
  endforeach()
endfunction()
