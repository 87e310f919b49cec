// Default sanitizer options, compiled into every executable of a sanitizer build (the
// tests, the CLI, tools): the suppressions for LibTorch's own reports (the .supp files
// beside this one) then apply however a binary is started, by `ctest --test-dir`,
// `ctest --preset`, a shell script such as test_cli.sh, or by hand. The runtimes read
// these before $ASAN_OPTIONS and the others, so the environment can still override them.
// See the sanitizer block of the top-level CMakeLists.txt; SY_SANITIZER_DIR is
// tools/sanitizers/ (an absolute path).

#define SY_NO_SANITIZE __attribute__((no_sanitize("address", "undefined", "thread"), used))
#define SY_OPTIONS extern "C" __attribute__((visibility("default"))) SY_NO_SANITIZE const char*

#if defined(__SANITIZE_ADDRESS__)
// intercept_tls_get_addr=0: GCC 12's runtime takes a dynamic TLS block whose address is
// 16 bytes past a page boundary for glibc 2.19's layout and records a garbage range, and
// LeakSanitizer's tracer then dies scanning it ("Tracer caught signal 11", seen at exit of
// test_conv_plugin: oneDNN's TLS touched by OpenMP threads; google/sanitizers#1322).
// Leak checking still sees dynamic TLS: glibc mallocs those blocks, reachable from the DTV.
SY_OPTIONS __asan_default_options() {
  return "detect_leaks=1:check_initialization_order=1:detect_stack_use_after_return=1:intercept_tls_get_addr=0";
}
SY_OPTIONS __lsan_default_options() { return "suppressions=" SY_SANITIZER_DIR "/lsan.supp:print_suppressions=0"; }
SY_OPTIONS __ubsan_default_options() {
  return "suppressions=" SY_SANITIZER_DIR "/ubsan.supp:print_stacktrace=1:halt_on_error=1";
}
#endif

#if defined(__SANITIZE_THREAD__)
SY_OPTIONS __tsan_default_options() {
  return "suppressions=" SY_SANITIZER_DIR "/tsan.supp:second_deadlock_stack=1:halt_on_error=1";
}
#endif
