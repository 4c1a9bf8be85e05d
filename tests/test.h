/* A small test framework: TEST(name) { ... } registers a test; CHECK* record failures and go
 * on; SKIP(...) marks the test skipped. tests/main.c runs them and prints the counts. */
#ifndef TSR_TEST_H
#define TSR_TEST_H

#include <stdio.h>
#include <string.h>
#include "tessera.h"

typedef void (*tsr_test_fn)(void);
void tsr_test_register(const char *name, tsr_test_fn fn, const char *file);
void tsr_test_fail(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void tsr_test_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int tsr_test_failed(void);   /* failures so far in the running test */
/* A whole file in malloc'd memory (one spare byte at the end), its size in *n; NULL if it
 * cannot be read. */
unsigned char *tsr_test_read_file(const char *path, size_t *n);
/* Deterministic random numbers for tests (xorshift), seeded per test. */
unsigned tsr_test_rand(void);

#define TEST(name)                                                                         \
    static void name(void);                                                                \
    __attribute__((constructor)) static void tsr_test_reg_##name(void)                     \
    {                                                                                      \
        tsr_test_register(#name, name, __FILE__);                                          \
    }                                                                                      \
    static void name(void)

#define CHECK(cond)                                                                        \
    do {                                                                                   \
        if (!(cond)) tsr_test_fail(__FILE__, __LINE__, "CHECK(%s)", #cond);                \
    } while (0)
#define CHECK_MSG(cond, ...)                                                               \
    do {                                                                                   \
        if (!(cond)) tsr_test_fail(__FILE__, __LINE__, __VA_ARGS__);                       \
    } while (0)
#define CHECK_EQ(a, b)                                                                     \
    do {                                                                                   \
        long long tsr_a_ = (long long)(a), tsr_b_ = (long long)(b);                        \
        if (tsr_a_ != tsr_b_)                                                              \
            tsr_test_fail(__FILE__, __LINE__, "%s == %lld, expected %s == %lld", #a, tsr_a_, #b, tsr_b_); \
    } while (0)
#define CHECK_OK(expr)                                                                     \
    do {                                                                                   \
        tsr_status tsr_s_ = (expr);                                                        \
        if (tsr_s_ != TSR_OK)                                                              \
            tsr_test_fail(__FILE__, __LINE__, "%s failed: %s (%s)", #expr, tsr_status_name(tsr_s_), \
                          tsr_last_error());                                               \
    } while (0)
#define SKIP(...)                                                                          \
    do {                                                                                   \
        tsr_test_skip(__VA_ARGS__);                                                        \
        return;                                                                            \
    } while (0)

#endif
