/* Library-wide functions: version, status names, last error, buffers. */
#include "check.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

static void version_matches_the_macros(void) {
    char expected[32];
    snprintf(expected, sizeof expected, "%d.%d.%d", HYDROPLOT_VERSION_MAJOR,
             HYDROPLOT_VERSION_MINOR, HYDROPLOT_VERSION_PATCH);
    CHECK(strcmp(HYDROPLOT_VERSION, expected) == 0);
    CHECK(hydroplot_version() != NULL);
    CHECK(strcmp(hydroplot_version(), HYDROPLOT_VERSION) == 0);
}

static void every_status_has_its_name(void) {
    static const struct {
        hydroplot_status status;
        int number;
        const char *name;
    } table[] = {
        {HYDROPLOT_OK, 0, "HYDROPLOT_OK"},
        {HYDROPLOT_ERR_NULL_ARGUMENT, 1, "HYDROPLOT_ERR_NULL_ARGUMENT"},
        {HYDROPLOT_ERR_INVALID_ARGUMENT, 2, "HYDROPLOT_ERR_INVALID_ARGUMENT"},
        {HYDROPLOT_ERR_CRS, 3, "HYDROPLOT_ERR_CRS"},
        {HYDROPLOT_ERR_NETWORK, 100, "HYDROPLOT_ERR_NETWORK"},
        {HYDROPLOT_ERR_HTTP, 101, "HYDROPLOT_ERR_HTTP"},
        {HYDROPLOT_ERR_NOT_FOUND, 102, "HYDROPLOT_ERR_NOT_FOUND"},
        {HYDROPLOT_ERR_SERVICE, 103, "HYDROPLOT_ERR_SERVICE"},
        {HYDROPLOT_ERR_IO, 200, "HYDROPLOT_ERR_IO"},
        {HYDROPLOT_ERR_GPKG, 201, "HYDROPLOT_ERR_GPKG"},
        {HYDROPLOT_ERR_EXISTS, 202, "HYDROPLOT_ERR_EXISTS"},
        {HYDROPLOT_ERR_LIMIT, 300, "HYDROPLOT_ERR_LIMIT"},
        {HYDROPLOT_ERR_RENDER, 400, "HYDROPLOT_ERR_RENDER"},
        {HYDROPLOT_ERR_CANCELLED, 500, "HYDROPLOT_ERR_CANCELLED"},
        {HYDROPLOT_ERR_INTERNAL, 999, "HYDROPLOT_ERR_INTERNAL"},
    };
    size_t i;
    for (i = 0; i < sizeof table / sizeof table[0]; i++) {
        CHECK((int)table[i].status == table[i].number);
        CHECK(strcmp(hydroplot_status_str(table[i].status), table[i].name) == 0);
    }
}

/* hydroplot_status_str takes an int: any number from C is safe, and one
 * that no status has gets a static "unknown status". */
static void unknown_statuses_have_a_safe_name(void) {
    static const int unknown[] = {12345, -7, -1, 4, 99, 998, 1000, INT_MIN, INT_MAX};
    size_t i;
    for (i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        const char *name = hydroplot_status_str(unknown[i]);
        CHECK(name != NULL);
        CHECK(strcmp(name, "unknown status") == 0);
        /* Static: the same pointer every time, and never freed. */
        CHECK(hydroplot_status_str(unknown[i]) == name);
    }
    CHECK(strcmp(hydroplot_status_str(101), "HYDROPLOT_ERR_HTTP") == 0);
}

static void last_error_is_empty_until_a_failure(void) {
    CHECK(hydroplot_last_error() != NULL);
    CHECK(strcmp(hydroplot_last_error(), "") == 0);
    CHECK(hydroplot_last_http_status() == 0);

    CHECK_FAILS(hydroplot_context_new(NULL), HYDROPLOT_ERR_NULL_ARGUMENT, "out");
    CHECK(strcmp(hydroplot_last_error(), "argument out is NULL") == 0);
    CHECK(hydroplot_last_http_status() == 0);
}

static void null_buffers_are_empty(void) {
    CHECK(hydroplot_buffer_data(NULL) == NULL);
    CHECK(hydroplot_buffer_len(NULL) == 0);
    hydroplot_buffer_free(NULL);
}

int main(void) {
    /* First, before any call can fail. */
    last_error_is_empty_until_a_failure();
    version_matches_the_macros();
    every_status_has_its_name();
    unknown_statuses_have_a_safe_name();
    null_buffers_are_empty();
    puts("test_library: ok");
    return 0;
}
