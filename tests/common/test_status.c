/* The library's version and status strings. */
#include <stdio.h>
#include <string.h>

#include "../check.h"
#include "cutune/cutune.h"

int main(void)
{
    /* The library, the header and the CMake project agree. */
    CHECK_STR(cutune_version(), CUTUNE_VERSION_STRING);
    CHECK_STR(cutune_version(), CUTUNE_PROJECT_VERSION);
    char macro[32];
    snprintf(macro, sizeof macro, "%d.%d.%d", CUTUNE_VERSION_MAJOR,
             CUTUNE_VERSION_MINOR, CUTUNE_VERSION_PATCH);
    CHECK_STR(macro, CUTUNE_VERSION_STRING);
    /* Every status has its own fixed text. */
    for (int st = CUTUNE_OK; st <= CUTUNE_ERR_LIMIT; st++) {
        const char *text = cutune_status_str((cutune_status)st);
        CHECK(text != NULL && text[0] != '\0');
        for (int other = CUTUNE_OK; other < st; other++)
            CHECK(strcmp(text, cutune_status_str((cutune_status)other)) != 0);
    }
    /* Options start from their defaults. */
    cutune_problem_options po;
    memset(&po, 0xff, sizeof po);
    cutune_problem_options_init(&po);
    CHECK(po.problem_size == NULL && po.n_problem_size == 0 &&
          po.space_only == 0 && po.max_space_visits == 0);
    return check_finish();
}
