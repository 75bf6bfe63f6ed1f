/* Assertions for the C tests: on failure they print file:line, the failed
 * expression and hydroplot_last_error(), then end the program with status 1. */
#ifndef HYDROPLOT_TEST_CHECK_H
#define HYDROPLOT_TEST_CHECK_H

#include "hydroplot.h"

#include <string.h>

void check_fail(const char *file, int line, const char *expr);
void check_fail_status(const char *file, int line, const char *expr, hydroplot_status got,
                       hydroplot_status want);
void check_fail_error(const char *file, int line, const char *needle);

/* `cond` must hold. */
#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) check_fail(__FILE__, __LINE__, #cond);                                        \
    } while (0)

/* `call` must return the status `want`. */
#define CHECK_STATUS(call, want)                                                                   \
    do {                                                                                           \
        hydroplot_status got_ = (call);                                                            \
        if (got_ != (want)) check_fail_status(__FILE__, __LINE__, #call, got_, (want));            \
    } while (0)

#define CHECK_OK(call) CHECK_STATUS(call, HYDROPLOT_OK)

/* hydroplot_last_error() must contain `needle`. */
#define CHECK_ERROR_MENTIONS(needle)                                                               \
    do {                                                                                           \
        if (strstr(hydroplot_last_error(), (needle)) == NULL)                                      \
            check_fail_error(__FILE__, __LINE__, (needle));                                        \
    } while (0)

/* `call` must fail with `want`, and the message must name `needle`. */
#define CHECK_FAILS(call, want, needle)                                                            \
    do {                                                                                           \
        CHECK_STATUS(call, want);                                                                  \
        CHECK_ERROR_MENTIONS(needle);                                                              \
    } while (0)

#endif
