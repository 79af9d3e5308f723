"""The C library through ctypes: where it is, its structs, its functions.

The structs mirror include/cutune/cutune.h field for field; a change
there is a change here; python/tests/test_abi.py checks every size and
offset against the compiler's layout of the header.
"""

import ctypes
import glob
import os
from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    c_char,
    c_char_p,
    c_double,
    c_int,
    c_longlong,
    c_size_t,
    c_uint,
    c_uint64,
    c_ulonglong,
    c_void_p,
)

_HERE = os.path.dirname(os.path.abspath(__file__))


class CutuneError(RuntimeError):
    """A call into cutune failed; the message is the library's."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


# --------------------------------------------------------------------
# Structs


class Value(Structure):
    _fields_ = [("type", c_int), ("i", c_longlong), ("f", c_double), ("s", c_char_p)]


class Tunable(Structure):
    _fields_ = [
        ("name", c_char_p),
        ("values", POINTER(Value)),
        ("n_values", c_size_t),
        ("default_value", POINTER(Value)),
        ("compiler_option", c_int),
    ]


class ArgSpec(Structure):
    _fields_ = [
        ("name", c_char_p),
        ("memory", c_int),
        ("dtype", c_int),
        ("count", c_uint64),
        ("fill", c_int),
        ("data", c_void_p),
        ("fill_value", c_double),
        ("seed", c_uint64),
        ("output", c_int),
    ]


class AnswerSpec(Structure):
    _fields_ = [
        ("arg", c_size_t),
        ("fill", c_int),
        ("data", c_void_p),
        ("fill_value", c_double),
        ("seed", c_uint64),
        ("atol", c_double),
        ("rtol", c_double),
    ]


class ProblemSpec(Structure):
    _fields_ = [
        ("name", c_char_p),
        ("kernel_name", c_char_p),
        ("source", c_char_p),
        ("source_len", c_size_t),
        ("compiler_options", POINTER(c_char_p)),
        ("n_compiler_options", c_size_t),
        ("tune_params", POINTER(Tunable)),
        ("n_tune_params", c_size_t),
        ("restrictions", POINTER(c_char_p)),
        ("n_restrictions", c_size_t),
        ("problem_size", POINTER(c_longlong)),
        ("problem_size_expr", POINTER(c_char_p)),
        ("n_problem_size", c_size_t),
        ("block_size", c_char_p * 3),
        ("grid_div_x", POINTER(c_char_p)),
        ("n_grid_div_x", c_size_t),
        ("grid_div_y", POINTER(c_char_p)),
        ("n_grid_div_y", c_size_t),
        ("grid_div_z", POINTER(c_char_p)),
        ("n_grid_div_z", c_size_t),
        ("global_size", c_char_p * 3),
        ("global_size_in_blocks", c_int),
        ("shared_memory", c_uint),
        ("arguments", POINTER(ArgSpec)),
        ("n_arguments", c_size_t),
        ("answers", POINTER(AnswerSpec)),
        ("n_answers", c_size_t),
        ("kernel_tuner_defines", c_int),
        ("bytes_per_launch", c_char_p),
        ("flops_per_launch", c_char_p),
        ("budget_evals", c_size_t),
        ("budget_seconds", c_double),
        ("budget_fraction", c_double),
        ("strategy", c_char_p),
    ]


class ProblemOptions(Structure):
    _fields_ = [
        ("problem_size", POINTER(c_longlong)),
        ("n_problem_size", c_size_t),
        ("space_only", c_int),
        ("max_space_visits", c_ulonglong),
    ]


class Device(Structure):
    _fields_ = [
        ("name", c_char * 256),
        ("uuid", c_char * 48),
        ("cc_major", c_int),
        ("cc_minor", c_int),
        ("sm_count", c_int),
        ("l2_bytes", c_longlong),
        ("memory_bytes", c_longlong),
        ("driver_version", c_int),
        ("nvrtc_version", c_char * 16),
        ("cutune_version", c_char * 16),
        ("simulated", c_int),
    ]


class ParamValue(Structure):
    _fields_ = [("name", c_char_p), ("value", c_char_p)]


LOG_FN = CFUNCTYPE(None, c_void_p, c_int, c_char_p)


class SessionOptions(Structure):
    _fields_ = [
        ("device", c_int),
        ("strategy", c_char_p),
        ("max_evals", c_size_t),
        ("max_seconds", c_double),
        ("seed", c_uint64),
        ("cache_dir", c_char_p),
        ("write_cache", c_int),
        ("worker_path", c_char_p),
        ("compile_threads", c_int),
        ("launch_timeout_s", c_double),
        ("log", LOG_FN),
        ("log_user", c_void_p),
        ("warm_cache", c_int),
        ("no_binary_cache", c_int),
        ("max_fraction", c_double),
        ("reuse_measurements", c_int),
        ("output_check", c_int),
        ("devices", POINTER(c_int)),
        ("n_devices", c_size_t),
        ("replay_devices", c_char_p),
        ("replay_time_scale", c_double),
        ("progress", c_void_p),
        ("progress_user", c_void_p),
        ("objective", c_int),
        ("measure_energy", c_int),
    ]


class Eval(Structure):
    _fields_ = [
        ("config_index", c_size_t),
        ("outcome", c_int),
        ("time_ms", c_double),
        ("compile_ms", c_double),
        ("message", c_char_p),
        ("stopped_early", c_int),
        ("sm_clock_mhz", c_int),
        ("temperature_c", c_int),
        ("runs", c_size_t),
        ("final_runs", c_size_t),
        ("worker", c_size_t),
        ("energy_j", c_double),
        ("power_w", c_double),
        ("energy_rsd", c_double),
    ]


class TuneResult(Structure):
    _fields_ = [
        ("device", Device),
        ("memcpy_gbs", c_double),
        ("occupancy_block_size", c_int),
        ("baseline", POINTER(ParamValue)),
        ("n_params", c_size_t),
        ("baseline_ms", c_double),
        ("best", POINTER(ParamValue)),
        ("best_ms", c_double),
        ("best_min_ms", c_double),
        ("best_stddev_ms", c_double),
        ("best_runs", c_size_t),
        ("best_gbs", c_double),
        ("speedup", c_double),
        ("evaluations", c_size_t),
        ("failures", c_size_t),
        ("wall_s", c_double),
        ("strategy", c_char_p),
        ("evals", POINTER(Eval)),
        ("n_evals", c_size_t),
        ("tied", c_size_t),
        ("gpu_busy", c_double),
        ("kernel_share", c_double),
        ("best_gflops", c_double),
        ("reused", c_size_t),
        ("finalists", c_size_t),
        ("workers", c_size_t),
        ("restarts", c_size_t),
        ("objective", c_int),
        ("best_energy_j", c_double),
        ("best_power_w", c_double),
    ]


class CacheRecord(Structure):
    _fields_ = [
        ("device", Device),
        ("problem_name", c_char_p),
        ("source_hash", c_char_p),
        ("problem_size", POINTER(c_longlong)),
        ("n_problem_size", c_size_t),
        ("compiler_options", c_char_p),
        ("config", POINTER(ParamValue)),
        ("n_config", c_size_t),
        ("time_ms", c_double),
        ("time_min_ms", c_double),
        ("time_stddev_ms", c_double),
        ("runs", c_size_t),
        ("gbs", c_double),
        ("baseline", POINTER(ParamValue)),
        ("n_baseline", c_size_t),
        ("baseline_ms", c_double),
        ("strategy", c_char_p),
        ("evaluations", c_size_t),
        ("tune_seconds", c_double),
        ("timestamp", c_longlong),
        ("objective", c_int),
        ("energy_j", c_double),
    ]


ACCEPT_FN = CFUNCTYPE(c_int, c_void_p, POINTER(CacheRecord), c_char_p, c_size_t)


class CacheQuery(Structure):
    _fields_ = [
        ("problem_name", c_char_p),
        ("device_name", c_char_p),
        ("device_uuid", c_char_p),
        ("problem_size", POINTER(c_longlong)),
        ("n_problem_size", c_size_t),
        ("fallback", c_int),
        ("cc_major", c_int),
        ("cc_minor", c_int),
        ("sm_count", c_int),
        ("accept", c_void_p),
        ("accept_user", c_void_p),
        ("objective", c_int),
    ]


# --------------------------------------------------------------------
# Loading


def _find(pattern):
    found = sorted(glob.glob(os.path.join(_HERE, pattern)))
    return found[0] if found else None


def _preload_nvrtc():
    """libcutune needs libnvrtc.so.13; where the loader's path lacks the
    toolkit's folder, load NVRTC from it first so the dependency resolves."""
    root = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
    for folder in ("lib64", "lib"):
        for path in sorted(glob.glob(os.path.join(root, folder, "libnvrtc.so.*"))):
            if "builtins" in path or ".alt." in path:
                continue
            try:
                ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
                return
            except OSError:
                continue


def _load():
    path = os.environ.get("CUTUNE_LIBRARY") or _find("lib*/libcutune.so*")
    if not path:
        raise ImportError(
            "cutune: libcutune.so is not inside the package (%s); reinstall with "
            "`pip install .` from the repository root" % _HERE
        )
    try:
        return ctypes.CDLL(path)
    except OSError:
        _preload_nvrtc()
        return ctypes.CDLL(path)


lib = _load()

# The GPU worker installed beside the library; $CUTUNE_WORKER wins, as in C.
WORKER = _find("libexec/cutune/cutune-worker")


def _proto(name, restype, *argtypes):
    fn = getattr(lib, name)
    fn.restype = restype
    fn.argtypes = list(argtypes)
    return fn


version = _proto("cutune_version", c_char_p)
status_str = _proto("cutune_status_str", c_char_p, c_int)
outcome_str = _proto("cutune_outcome_str", c_char_p, c_int)
objective_str = _proto("cutune_objective_str", c_char_p, c_int)
objective_parse = _proto("cutune_objective_parse", c_int, c_char_p, POINTER(c_int))
match_str = _proto("cutune_match_str", c_char_p, c_int)

problem_spec_init = _proto("cutune_problem_spec_init", None, POINTER(ProblemSpec))
problem_options_init = _proto("cutune_problem_options_init", None, POINTER(ProblemOptions))
problem_from_spec = _proto(
    "cutune_problem_from_spec", c_int, POINTER(ProblemSpec), POINTER(ProblemOptions), POINTER(c_void_p)
)
problem_destroy = _proto("cutune_problem_destroy", None, c_void_p)
problem_errmsg = _proto("cutune_problem_errmsg", c_char_p, c_void_p)
problem_warning_count = _proto("cutune_problem_warning_count", c_size_t, c_void_p)
problem_warning = _proto("cutune_problem_warning", c_char_p, c_void_p, c_size_t)
problem_name = _proto("cutune_problem_name", c_char_p, c_void_p)
problem_source_hash = _proto("cutune_problem_source_hash", c_char_p, c_void_p)
problem_space_size = _proto("cutune_problem_space_size", c_size_t, c_void_p)
problem_param_count = _proto("cutune_problem_param_count", c_size_t, c_void_p)
problem_param_name = _proto("cutune_problem_param_name", c_char_p, c_void_p, c_size_t)
problem_value_count = _proto("cutune_problem_value_count", c_size_t, c_void_p, c_size_t)
problem_value = _proto("cutune_problem_value", c_char_p, c_void_p, c_size_t, c_size_t)
problem_config_value = _proto("cutune_problem_config_value", c_char_p, c_void_p, c_size_t, c_size_t)
problem_accepts_record = lib.cutune_problem_accepts_record

session_options_init = _proto("cutune_session_options_init", None, POINTER(SessionOptions))
session_create = _proto("cutune_session_create", c_int, POINTER(SessionOptions), POINTER(c_void_p))
session_destroy = _proto("cutune_session_destroy", None, c_void_p)
session_errmsg = _proto("cutune_session_errmsg", c_char_p, c_void_p)
session_devices = _proto(
    "cutune_session_devices", c_int, c_void_p, POINTER(POINTER(Device)), POINTER(c_size_t)
)
session_tune = _proto("cutune_session_tune", c_int, c_void_p, c_void_p, POINTER(POINTER(TuneResult)))
session_write_t4 = _proto("cutune_session_write_t4", c_int, c_void_p, c_char_p)

cache_open = _proto("cutune_cache_open", c_int, c_char_p, POINTER(c_void_p))
cache_close = _proto("cutune_cache_close", None, c_void_p)
cache_errmsg = _proto("cutune_cache_errmsg", c_char_p, c_void_p)
cache_lookup = _proto(
    "cutune_cache_lookup", c_int, c_void_p, POINTER(CacheQuery), POINTER(POINTER(CacheRecord)), POINTER(c_int)
)
cache_lookup_device = _proto(
    "cutune_cache_lookup_device",
    c_int,
    c_void_p,
    POINTER(Device),
    c_void_p,
    POINTER(POINTER(CacheRecord)),
    POINTER(c_int),
)


def text(b):
    return b.decode("utf-8", "replace") if b is not None else None
