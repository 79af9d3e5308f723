#include "cutune/cutune.h"

const char *cutune_status_str(cutune_status status)
{
    switch (status) {
    case CUTUNE_OK: return "success";
    case CUTUNE_ERR_INVALID_ARGUMENT: return "invalid argument";
    case CUTUNE_ERR_NO_MEMORY: return "out of memory";
    case CUTUNE_ERR_IO: return "input/output error";
    case CUTUNE_ERR_PARSE: return "malformed input";
    case CUTUNE_ERR_UNSUPPORTED: return "unsupported feature";
    case CUTUNE_ERR_NOT_FOUND: return "not found";
    case CUTUNE_ERR_NO_DEVICE: return "no CUDA device";
    case CUTUNE_ERR_CUDA: return "CUDA error";
    case CUTUNE_ERR_NVRTC: return "NVRTC error";
    case CUTUNE_ERR_WORKER: return "GPU worker failure";
    case CUTUNE_ERR_EMPTY_SPACE: return "empty search space";
    case CUTUNE_ERR_NO_VALID_RESULT: return "no configuration ran correctly";
    case CUTUNE_ERR_LIMIT: return "size limit exceeded";
    }
    return "unknown status";
}

const char *cutune_outcome_str(cutune_outcome outcome)
{
    switch (outcome) {
    case CUTUNE_OUTCOME_CORRECT: return "correct";
    case CUTUNE_OUTCOME_COMPILE: return "compile";
    case CUTUNE_OUTCOME_RUNTIME: return "runtime";
    case CUTUNE_OUTCOME_CORRECTNESS: return "correctness";
    case CUTUNE_OUTCOME_TIMEOUT: return "timeout";
    case CUTUNE_OUTCOME_RESOURCES: return "resources";
    }
    return "unknown";
}

const char *cutune_version(void)
{
    return CUTUNE_VERSION_STRING;
}
