/* Links against an installed hydroplot and makes a few calls: the header and
 * the library agree on the version, and the error API works. */
#include <hydroplot.h>

#include <stdio.h>
#include <string.h>

int main(void) {
    hydroplot_context *ctx = NULL;
    hydroplot_status status;

    if (strcmp(hydroplot_version(), HYDROPLOT_VERSION) != 0) {
        fprintf(stderr, "header %s, library %s\n", HYDROPLOT_VERSION, hydroplot_version());
        return 1;
    }
    if (hydroplot_context_new(&ctx) != HYDROPLOT_OK) {
        fprintf(stderr, "hydroplot_context_new: %s\n", hydroplot_last_error());
        return 1;
    }
    status = hydroplot_context_set_option(ctx, "colour", "blue");
    hydroplot_context_free(ctx);
    if (status != HYDROPLOT_ERR_INVALID_ARGUMENT || strstr(hydroplot_last_error(), "colour") == NULL) {
        fprintf(stderr, "unknown option gave %s: %s\n", hydroplot_status_str(status),
                hydroplot_last_error());
        return 1;
    }
    printf("hydroplot %s: %s\n", hydroplot_version(), hydroplot_last_error());
    return 0;
}
