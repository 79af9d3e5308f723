/* The worker's CUPTI loader (tuner/worker/cupti_profile.cpp) without a
 * GPU: CUTUNE_CUPTI naming a file that does not exist is the only place
 * looked, and the refusal is one sentence naming the path; a file that is
 * a library but not CUPTI is refused for the function it lacks. Whether
 * the toolkit's own libcupti loads is left to the GPU test: this machine
 * may have none. */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "cupti_profile.h"

int main(void)
{
    char why[512] = "";
    setenv("CUTUNE_CUPTI", "/nonexistent/libcupti.so.13", 1);
    CHECK(cutune__cupti_open(why, sizeof why) == NULL);
    CHECK_CONTAINS(why, "CUPTI could not be loaded from "
                        "CUTUNE_CUPTI=/nonexistent/libcupti.so.13");
    CHECK(strchr(why, '\n') == NULL);
    /* libm is a library, not CUPTI. */
    why[0] = '\0';
    setenv("CUTUNE_CUPTI", "libm.so.6", 1);
    CHECK(cutune__cupti_open(why, sizeof why) == NULL);
    CHECK_CONTAINS(why, "the CUPTI found lacks cuptiGetResultString");
    return check_finish();
}
