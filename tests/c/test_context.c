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
    uint64_t last_done, last_total;
    char last_stage[32];
} counts;

static void on_log(void *user, int32_t level, const char *message) {
    counts *c = (counts *)user;
    CHECK(level >= 1 && level <= 4);
    CHECK(message != NULL && message[0] != '\0');
    c->logs++;
}

static void on_progress(void *user, const char *stage, uint64_t done, uint64_t total) {
    counts *c = (counts *)user;
    CHECK(stage != NULL);
    CHECK(total == 0 || done <= total);
    snprintf(c->last_stage, sizeof c->last_stage, "%s", stage);
    c->last_done = done;
    c->last_total = total;
    c->progress++;
}

static void callbacks_register_and_unregister(void) {
    counts c;
    hydroplot_context *ctx = new_context();
    memset(&c, 0, sizeof c);
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

/* The recorded Yahara trace point, and one outside every catchment of the
 * mock's data (it answers HTTP 500 with a description, as the real service). */
static const double INSIDE[2] = {-89.2158, 42.9561}, OUTSIDE[2] = {-100.0, 40.0};

static void errors_and_callbacks_against_the_mock(void) {
    const double points[4] = {INSIDE[0], INSIDE[1], OUTSIDE[0], OUTSIDE[1]};
    mock_server mock;
    counts c;
    hydroplot_context *ctx = new_context();
    hydroplot_trace *t = NULL;
    hydroplot_trace_batch *batch = NULL;
    int64_t comid = 0;

    memset(&c, 0, sizeof c);
    mock_start(&mock);
    CHECK(strncmp(mock.base_url, "http://127.0.0.1:", 17) == 0);
    mock_configure(&mock, ctx);
    CHECK_OK(hydroplot_context_set_option(ctx, "retries", "1"));
    CHECK_OK(hydroplot_context_set_log_callback(ctx, on_log, &c));
    CHECK_OK(hydroplot_context_set_progress_callback(ctx, on_progress, &c));

    /* A failed request: status, HTTP status and the service's words. */
    CHECK_FAILS(hydroplot_raindrop_trace(ctx, OUTSIDE[0], OUTSIDE[1], NULL, "up", &t),
                HYDROPLOT_ERR_HTTP, "outside the data's domain");
    CHECK(t == NULL);
    CHECK(hydroplot_last_http_status() == 500);
    /* The 500 was retried once, and the retry was logged. */
    CHECK(c.logs >= 1);

    /* Then a good one. */
    CHECK_OK(hydroplot_raindrop_trace(ctx, INSIDE[0], INSIDE[1], NULL, "up", &t));
    CHECK(hydroplot_trace_comid(t, 0, &comid) && comid == 13297178);
    CHECK(strcmp(hydroplot_trace_gnis_name(t, 0), "Yahara River") == 0);
    hydroplot_trace_free(t);

    /* A batch: one result per point, progress reported as stage "trace". */
    CHECK_OK(hydroplot_raindrop_trace_batch(ctx, points, 2, NULL, "up", &batch));
    CHECK(hydroplot_trace_batch_len(batch) == 2);
    CHECK(hydroplot_trace_batch_status(batch, 0) == HYDROPLOT_OK);
    CHECK(hydroplot_trace_batch_status(batch, 1) == HYDROPLOT_ERR_HTTP);
    CHECK(hydroplot_trace_batch_http_status(batch, 1) == 500);
    CHECK(strstr(hydroplot_trace_batch_error(batch, 1), "outside the data's domain") != NULL);
    CHECK(c.progress >= 1 && strcmp(c.last_stage, "trace") == 0);
    CHECK(c.last_done == 2 && c.last_total == 2);
    hydroplot_trace_batch_free(batch);

    hydroplot_context_free(ctx);
    mock_stop(&mock);
}

/* Cancels the context it is given at the first progress report. */
static void cancel_at_first_progress(void *user, const char *stage, uint64_t done, uint64_t total) {
    (void)stage;
    (void)done;
    (void)total;
    hydroplot_context_cancel((const hydroplot_context *)user);
}

/* hydroplot_context_cancel from a callback (the batch reports progress
 * before its first request): the call ends HYDROPLOT_ERR_CANCELLED with no
 * result, and the next call on the same context runs. */
static void a_cancel_ends_the_call_and_the_context_serves_on(void) {
    const double points[4] = {INSIDE[0], INSIDE[1], INSIDE[0], INSIDE[1]};
    mock_server mock;
    hydroplot_context *ctx = new_context();
    hydroplot_trace_batch *batch = NULL;
    hydroplot_trace *t = NULL;

    hydroplot_context_cancel(NULL); /* a no-op */
    mock_start(&mock);
    mock_configure(&mock, ctx);
    CHECK_OK(hydroplot_context_set_progress_callback(ctx, cancel_at_first_progress, ctx));
    CHECK_FAILS(hydroplot_raindrop_trace_batch(ctx, points, 2, NULL, "up", &batch), HYDROPLOT_ERR_CANCELLED,
                "cancelled");
    CHECK(batch == NULL);
    CHECK(strcmp(hydroplot_status_str(HYDROPLOT_ERR_CANCELLED), "HYDROPLOT_ERR_CANCELLED") == 0);
    CHECK_OK(hydroplot_context_set_progress_callback(ctx, NULL, NULL));
    CHECK_OK(hydroplot_raindrop_trace(ctx, INSIDE[0], INSIDE[1], NULL, "up", &t));
    hydroplot_trace_free(t);
    hydroplot_context_free(ctx);
    mock_stop(&mock);
}

int main(void) {
    every_option_key_accepts_a_valid_value();
    invalid_options_name_the_key();
    invalid_utf8_is_an_invalid_argument();
    environment_overrides_are_validated();
    callbacks_register_and_unregister();
    errors_and_callbacks_against_the_mock();
    a_cancel_ends_the_call_and_the_context_serves_on();
    puts("test_context: ok");
    return 0;
}
