#include "check.h"

#include <stdio.h>
#include <stdlib.h>

void check_fail(const char *file, int line, const char *expr) {
    fprintf(stderr, "%s:%d: check failed: %s\n  last error: \"%s\"\n", file, line, expr,
            hydroplot_last_error());
    exit(EXIT_FAILURE);
}

void check_fail_status(const char *file, int line, const char *expr, hydroplot_status got,
                       hydroplot_status want) {
    fprintf(stderr, "%s:%d: %s\n  returned %s, expected %s\n  last error: \"%s\"\n", file, line,
            expr, hydroplot_status_str(got), hydroplot_status_str(want), hydroplot_last_error());
    exit(EXIT_FAILURE);
}

void check_fail_error(const char *file, int line, const char *needle) {
    fprintf(stderr, "%s:%d: last error \"%s\" does not mention \"%s\"\n", file, line,
            hydroplot_last_error(), needle);
    exit(EXIT_FAILURE);
}
