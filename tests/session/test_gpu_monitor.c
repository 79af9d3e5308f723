/* NVML monitoring degrades to "unknown" where NVML is absent (as on CI),
 * and reads plausible values where it is present. */
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "gpu_monitor.h"

int main(void)
{
    char why[128] = "";
    cutune__gpu_sample s;
    cutune__gpu_monitor_sample(NULL, getpid(), &s);
    CHECK_INT(s.sm_clock_mhz, -1);
    CHECK_INT(s.temperature_c, -1);
    CHECK_INT(s.other_processes, -1);
    cutune__gpu_monitor_close(NULL);
    /* No device has this UUID, with or without NVML. */
    cutune__gpu_monitor *m = cutune__gpu_monitor_open(
        "GPU-00000000-0000-0000-0000-000000000000", why, sizeof why);
    CHECK(m == NULL);
    CHECK(why[0] != '\0');
    return check_finish();
}
