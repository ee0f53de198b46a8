// Default sanitizer settings of swarmt's sanitized executables (the test binary and the CLI the tests
// spawn), read by the sanitizer runtimes at start-up. ASAN_OPTIONS / UBSAN_OPTIONS / LSAN_OPTIONS in the
// environment still override them flag by flag. docs/reliability.md explains every entry.
extern "C" {

const char* __asan_default_options() {
  return "check_initialization_order=1:strict_init_order=1:detect_stack_use_after_return=1:"
         "strict_string_checks=1:abort_on_error=0:print_summary=1";
}

const char* __ubsan_default_options() { return "print_stacktrace=1:halt_on_error=1"; }

// Leak reports whose allocation stack goes through these modules are not ours to fix. Every line is
// scoped to libtorch's (or its bundled libraries') shared objects, never to swarmt code.
const char* __lsan_default_suppressions() {
  return "";
}

}  // extern "C"
