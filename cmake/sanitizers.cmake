# Sanitizer and fuzzing builds (docs/reliability.md).
#
#   SWARMT_SANITIZE  AddressSanitizer + UndefinedBehaviorSanitizer on everything we compile (the test suite,
#                    the CLI the tests spawn). Any UB report aborts the process (-fno-sanitize-recover), so a
#                    finding fails its test instead of scrolling past. libtorch itself stays uninstrumented,
#                    which ASan supports; the few reports that originate inside libtorch are suppressed by
#                    cmake/sanitizer_defaults.cpp, scoped to libtorch's own modules and headers only.
#   SWARMT_FUZZ      additionally instruments for libFuzzer coverage and builds the harnesses in fuzz/.
#                    clang only. Implies the sanitizers.
#
# Both are meant for separate build directories (`make test-sanitize` -> build-sanitize, `make fuzz` ->
# build-fuzz) configured with CMAKE_CXX_COMPILER=clang++.
if(NOT (SWARMT_SANITIZE OR SWARMT_FUZZ))
  return()
endif()

if(SWARMT_FUZZ AND NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "SWARMT_FUZZ needs clang (libFuzzer ships with it): configure with -DCMAKE_CXX_COMPILER=clang++")
endif()

set(SWARMT_SANITIZER_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  # Header code of libtorch that UBSan cannot judge from our side (see cmake/ubsan_ignorelist.txt), and
  # line tables (cheap) so that reports point at file:line.
  list(APPEND SWARMT_SANITIZER_FLAGS -fsanitize-ignorelist=${CMAKE_CURRENT_LIST_DIR}/ubsan_ignorelist.txt
       -gline-tables-only)
endif()
add_compile_options(${SWARMT_SANITIZER_FLAGS})
add_link_options(-fsanitize=address,undefined)

if(SWARMT_FUZZ)
  # Coverage instrumentation for every object; only the harness executables link libFuzzer's main.
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

if(CMAKE_CXX_COMPILER_ID MATCHES "Clang" AND SWARMT_USE_PCH)
  # clang stamps header mtimes into a precompiled header and refuses it when they differ; ccache may hand
  # back a .pch built in another checkout, so build it without the stamp (ccache's documented setting).
  add_compile_options("SHELL:-Xclang -fno-pch-timestamp")
endif()

# Sanitizer defaults (options, libtorch-scoped suppressions) compiled into each sanitized executable, so
# that running a test binary or the CLI by hand behaves exactly like `make test-sanitize`.
set(SWARMT_SANITIZER_DEFAULTS_SOURCE ${CMAKE_CURRENT_LIST_DIR}/sanitizer_defaults.cpp)
function(swarmt_add_sanitizer_defaults target)
  target_sources(${target} PRIVATE ${SWARMT_SANITIZER_DEFAULTS_SOURCE})
  set_source_files_properties(${SWARMT_SANITIZER_DEFAULTS_SOURCE} TARGET_DIRECTORY ${target}
                              PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
endfunction()
