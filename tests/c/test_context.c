/* hydroplot_context: creation, every option, errors, environment, callbacks. */
#include "check.h"
#include "mock.h"

#include <stdio.h>
#include <stdlib.h>

static hydroplot_context *new_context(void) {
    hydroplot_context *ctx = NULL;
    CHECK_OK(hydroplot_context_new(&ctx));
    CHECK(ctx != NULL);
    return ctx;
}

static void every_option_key_accepts_a_valid_value(void) {
    static const char *const options[][2] = {
        {"index_url", "http://127.0.0.1:9/nldi"},
        {"process_url", "http://127.0.0.1:9/nldi/pygeoapi"},
        {"fabric_url", "http://127.0.0.1:9/fabric/pygeoapi"},
        {"names", "neutral"},
        {"names", "usgs"},
        {"tile_url", "http://127.0.0.1:9/tiles/{z}/{x}/{y}.png"},
        {"tile_cache_dir", "target/c-tests-tile-cache"},
        {"timeout_s", "2.5"},
        {"connect_timeout_s", "1"},
        {"retries", "0"},
        {"concurrency", "8"},
        {"user_agent", "hydroplot-c-tests/1"},
        {"page_size", "100"},
        {"rate_limit_per_s", "0.5"},
        {"max_features", "5000"},
    };
    hydroplot_context *ctx = new_context();
    size_t i;
    for (i = 0; i < sizeof options / sizeof options[0]; i++) {
        if (hydroplot_context_set_option(ctx, options[i][0], options[i][1]) != HYDROPLOT_OK) {
            fprintf(stderr, "option %s = %s\n", options[i][0], options[i][1]);
            CHECK(!"a valid option value was refused");
        }
    }
    hydroplot_context_free(ctx);
}

static void invalid_options_name_the_key(void) {
    static const char *const invalid[][2] = {
        {"index_url", "ftp://example.invalid"},
        {"names", "klingon"},
        {"tile_url", "http://127.0.0.1:9/tiles/no-placeholders.png"},
        {"timeout_s", "-1"},
        {"connect_timeout_s", "soon"},
        {"retries", "1000"},
        {"concurrency", "0"},
        {"page_size", "0"},
        {"rate_limit_per_s", "-3"},
        {"max_features", "0"},
    };
    hydroplot_context *ctx = new_context();
    size_t i;
    for (i = 0; i < sizeof invalid / sizeof invalid[0]; i++) {
        CHECK_FAILS(hydroplot_context_set_option(ctx, invalid[i][0], invalid[i][1]),
                    HYDROPLOT_ERR_INVALID_ARGUMENT, invalid[i][0]);
    }
    CHECK_FAILS(hydroplot_context_set_option(ctx, "colour", "blue"), HYDROPLOT_ERR_INVALID_ARGUMENT,
                "colour");
    /* The context is unchanged and still usable after a refused value. */
    CHECK_OK(hydroplot_context_set_option(ctx, "timeout_s", "30"));
    hydroplot_context_free(ctx);
}

static void invalid_utf8_is_an_invalid_argument(void) {
    hydroplot_context *ctx = new_context();
    CHECK_FAILS(hydroplot_context_set_option(ctx, "user_agent", "caf\xe9"),
                HYDROPLOT_ERR_INVALID_ARGUMENT, "value");
    CHECK_FAILS(hydroplot_context_set_option(ctx, "index\xff", "http://127.0.0.1:9"),
                HYDROPLOT_ERR_INVALID_ARGUMENT, "key");
    CHECK_ERROR_MENTIONS("UTF-8");
    hydroplot_context_free(ctx);
}

static void null_arguments_are_refused(void) {
    hydroplot_context *ctx = new_context();
    CHECK_FAILS(hydroplot_context_new(NULL), HYDROPLOT_ERR_NULL_ARGUMENT, "out");
    CHECK_FAILS(hydroplot_context_set_option(NULL, "retries", "1"), HYDROPLOT_ERR_NULL_ARGUMENT,
                "ctx");
    CHECK_FAILS(hydroplot_context_set_option(ctx, NULL, "1"), HYDROPLOT_ERR_NULL_ARGUMENT, "key");
    CHECK_FAILS(hydroplot_context_set_option(ctx, "retries", NULL), HYDROPLOT_ERR_NULL_ARGUMENT,
                "value");
    CHECK_FAILS(hydroplot_context_set_log_callback(NULL, NULL, NULL), HYDROPLOT_ERR_NULL_ARGUMENT,
                "ctx");
    CHECK_FAILS(hydroplot_context_set_progress_callback(NULL, NULL, NULL),
                HYDROPLOT_ERR_NULL_ARGUMENT, "ctx");
    hydroplot_context_free(NULL);
    hydroplot_context_free(ctx);
}

static void environment_overrides_are_validated(void) {
    hydroplot_context *ctx = (hydroplot_context *)&ctx; /* a sentinel: must stay untouched */
    hydroplot_context *const sentinel = ctx;

    CHECK(setenv("HYDROPLOT_TIMEOUT_S", "-1", 1) == 0);
    CHECK_FAILS(hydroplot_context_new(&ctx), HYDROPLOT_ERR_INVALID_ARGUMENT, "HYDROPLOT_TIMEOUT_S");
    CHECK(ctx == sentinel);
    CHECK(setenv("HYDROPLOT_TIMEOUT_S", "5", 1) == 0);
    CHECK(setenv("HYDROPLOT_INDEX_URL", "not a url", 1) == 0);
    CHECK_FAILS(hydroplot_context_new(&ctx), HYDROPLOT_ERR_INVALID_ARGUMENT, "HYDROPLOT_INDEX_URL");
    CHECK(unsetenv("HYDROPLOT_INDEX_URL") == 0);

    ctx = new_context();
    hydroplot_context_free(ctx);
    CHECK(unsetenv("HYDROPLOT_TIMEOUT_S") == 0);
}

typedef struct {
    int logs;
    int progress;
} counts;

static void on_log(void *user, int32_t level, const char *message) {
    counts *c = (counts *)user;
    CHECK(level >= 1 && level <= 4);
    CHECK(message != NULL);
    c->logs++;
}

static void on_progress(void *user, const char *stage, uint64_t done, uint64_t total) {
    counts *c = (counts *)user;
    CHECK(stage != NULL);
    CHECK(total == 0 || done <= total);
    c->progress++;
}

static void callbacks_register_and_unregister(void) {
    counts c = {0, 0};
    hydroplot_context *ctx = new_context();
    CHECK_OK(hydroplot_context_set_log_callback(ctx, on_log, &c));
    CHECK_OK(hydroplot_context_set_progress_callback(ctx, on_progress, &c));
    /* Setting an option keeps the callbacks. */
    CHECK_OK(hydroplot_context_set_option(ctx, "retries", "1"));
    CHECK_OK(hydroplot_context_set_log_callback(ctx, NULL, NULL));
    CHECK_OK(hydroplot_context_set_progress_callback(ctx, NULL, NULL));
    /* Nothing ran that reports, so no callback was called. */
    CHECK(c.logs == 0 && c.progress == 0);
    hydroplot_context_free(ctx);
}

static void a_context_points_at_the_mock(void) {
    mock_server mock;
    hydroplot_context *ctx = new_context();
    mock_start(&mock);
    CHECK(strncmp(mock.base_url, "http://127.0.0.1:", 17) == 0);
    mock_configure(&mock, ctx);
    hydroplot_context_free(ctx);
    mock_stop(&mock);
}

int main(void) {
    every_option_key_accepts_a_valid_value();
    invalid_options_name_the_key();
    invalid_utf8_is_an_invalid_argument();
    null_arguments_are_refused();
    environment_overrides_are_validated();
    callbacks_register_and_unregister();
    a_context_points_at_the_mock();
    puts("test_context: ok");
    return 0;
}
