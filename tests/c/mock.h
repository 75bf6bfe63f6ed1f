/* The loopback mock services for the C tests: the `hydroplot-mock` binary
 * named by the environment variable HYDROPLOT_TEST_MOCK_BIN (ctest sets it).
 * It prints `listening <base_url>` as its first line and exits when its
 * standard input closes. */
#ifndef HYDROPLOT_TEST_MOCK_H
#define HYDROPLOT_TEST_MOCK_H

#include "hydroplot.h"

#include <stdio.h>
#include <sys/types.h>

typedef struct {
    pid_t pid;
    int stdin_fd;        /* our end of the mock's standard input */
    FILE *stdout_pipe;   /* our end of its standard output, kept open until it stops */
    char base_url[256];  /* e.g. "http://127.0.0.1:40123", no trailing slash */
} mock_server;

/* Starts the mock and reads its base URL; ends the test when that fails. */
void mock_start(mock_server *m);

/* Points the index, fabric and tile URLs of `ctx` at the mock. */
void mock_configure(const mock_server *m, hydroplot_context *ctx);

/* Closes the mock's standard input and waits for it to exit. */
void mock_stop(mock_server *m);

#endif
