#include "mock.h"

#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char LISTENING[] = "listening ";

void mock_start(mock_server *m) {
    const char *bin = getenv("HYDROPLOT_TEST_MOCK_BIN");
    int to_child[2], from_child[2];
    char line[sizeof m->base_url + sizeof LISTENING];
    size_t len;

    if (bin == NULL || bin[0] == '\0') {
        fprintf(stderr, "HYDROPLOT_TEST_MOCK_BIN is not set: run the C tests with ctest, or set "
                        "it to target/debug/hydroplot-mock\n");
        exit(EXIT_FAILURE);
    }
    CHECK(pipe(to_child) == 0 && pipe(from_child) == 0);
    m->pid = fork();
    CHECK(m->pid >= 0);
    if (m->pid == 0) {
        dup2(to_child[0], STDIN_FILENO);
        dup2(from_child[1], STDOUT_FILENO);
        close(to_child[0]);
        close(to_child[1]);
        close(from_child[0]);
        close(from_child[1]);
        execl(bin, bin, (char *)NULL);
        fprintf(stderr, "cannot run the mock %s\n", bin);
        _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    m->stdin_fd = to_child[1];

    m->stdout_pipe = fdopen(from_child[0], "r");
    CHECK(m->stdout_pipe != NULL);
    if (fgets(line, sizeof line, m->stdout_pipe) == NULL || strncmp(line, LISTENING, strlen(LISTENING)) != 0) {
        fprintf(stderr, "the mock %s did not print \"listening <url>\" first\n", bin);
        exit(EXIT_FAILURE);
    }
    len = strcspn(line + strlen(LISTENING), "\r\n");
    CHECK(len > 0 && len < sizeof m->base_url);
    memcpy(m->base_url, line + strlen(LISTENING), len);
    m->base_url[len] = '\0';
    while (len > 0 && m->base_url[len - 1] == '/') m->base_url[--len] = '\0';
}

static void set_url(hydroplot_context *ctx, const char *key, const char *base, const char *path) {
    char url[512];
    CHECK(snprintf(url, sizeof url, "%s%s", base, path) < (int)sizeof url);
    CHECK_OK(hydroplot_context_set_option(ctx, key, url));
}

void mock_configure(const mock_server *m, hydroplot_context *ctx) {
    set_url(ctx, "index_url", m->base_url, "/nldi");
    set_url(ctx, "fabric_url", m->base_url, "/fabric/pygeoapi");
    set_url(ctx, "tile_url", m->base_url, "/tiles/{z}/{x}/{y}.png");
}

void mock_stop(mock_server *m) {
    int status = 0;
    close(m->stdin_fd);
    /* Drain what it still prints, so it never blocks on a full pipe. */
    while (fgetc(m->stdout_pipe) != EOF) {
    }
    fclose(m->stdout_pipe);
    CHECK(waitpid(m->pid, &status, 0) == m->pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
