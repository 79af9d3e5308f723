"""tune_kernel and lookup: Kernel Tuner's interface over cutune's session
(occupancy start, measuring protocol, per-device cache) and cache."""

import ctypes
import os
import sys
import warnings
from ctypes import POINTER, byref, c_longlong, c_size_t, c_void_p

from . import _lib, _problem
from ._lib import CutuneError

_NOT_FOUND = 6


class ErrorConfig(str):
    """Kernel Tuner's marker for a configuration without a time: the
    result's "time" is one of these, named by its class."""

    def __new__(cls):
        return super().__new__(cls, cls.__name__)


class InvalidConfig(ErrorConfig):
    pass


class CompilationFailedConfig(ErrorConfig):
    pass


class RuntimeFailedConfig(ErrorConfig):
    pass


# cutune_outcome -> Kernel Tuner's marker (wrong results are invalid there).
_FAILED = {1: CompilationFailedConfig, 2: RuntimeFailedConfig, 3: InvalidConfig, 4: RuntimeFailedConfig, 5: InvalidConfig}

# Kernel Tuner's strategy names and the cutune strategy that does that job;
# cutune's own names pass as they are.
_STRATEGIES = {
    "brute_force": "brute_force",
    "random_sample": "random",
    "diff_evo": "diff_evo",
    "genetic_algorithm": "genetic",
    "greedy_ils": "local",
    "greedy_mls": "local",
    "ordered_greedy_mls": "local",
    "mls": "local",
    "simulated_annealing": "annealing",
    "dual_annealing": "annealing",
    "bayes_opt": "bayes",
}
_OWN = ("default", "local", "brute_force", "random", "sobol", "annealing", "genetic", "diff_evo", "bayes")


def _strategy(name):
    if name is None:
        return None
    if name in _OWN:
        return name
    if name in _STRATEGIES:
        return _STRATEGIES[name]
    raise ValueError(
        "strategy: '%s' is not one cutune has; Kernel Tuner's %s map to cutune's, and cutune's own are %s"
        % (name, ", ".join(sorted(_STRATEGIES)), ", ".join(_OWN))
    )


def _refuse(name, value, why):
    if value is not None and value is not False:
        raise NotImplementedError("%s: %s" % (name, why))


def _cache_settings(cache):
    """Kernel Tuner's cache= is a JSON file of its own format that lets a
    rerun skip what was measured. cutune's cache is a directory: its
    per-device winners (cutune lookup, cutune.lookup) and its measurement
    log, which a rerun reuses instead of measuring again."""
    if cache is False:
        return None, 0, 0
    if cache is None:
        return None, 1, 0
    cache = os.fspath(cache)
    if cache.endswith(".json") or os.path.isfile(cache):
        raise ValueError(
            "cache: '%s' is a file; Kernel Tuner's cache files are not cutune's cache. Give a directory "
            "(cache='DIR': cutune keeps each device's winners there and reuses the measurements a rerun "
            "would repeat), and bring a Kernel Tuner cache in with `cutune import PROBLEM FILE`" % cache
        )
    return cache, 1, 1


def _log_callback(verbose, quiet):
    def log(_user, level, message):
        # ERROR 0, WARN 1, INFO 2, DEBUG 3
        if quiet or level >= 3 or (level == 2 and not verbose):
            return
        sys.stderr.write("cutune: %s\n" % _lib.text(message))

    return _lib.LOG_FN(log)


def _objective(name):
    """cutune_objective's value for a name (None: time), by the library's
    own parser; Kernel Tuner's observer name for energy is taken too."""
    key = {None: "time", "nvml_energy": "energy"}.get(name, name)
    value = ctypes.c_int(0)
    if not isinstance(key, str) or _lib.objective_parse(key.encode(), byref(value)) != 0:
        raise ValueError("objective: '%s' is not an objective (time, energy, edp)" % (name,))
    return value.value


def _session(device, strategy, max_evals, max_seconds, max_fraction, cache_dir, write_cache, reuse, replay, scale, log, seed,
             objective=0, measure_energy=False):
    o = _lib.SessionOptions()
    _lib.session_options_init(byref(o))
    o.objective = int(objective)
    o.measure_energy = 1 if measure_energy else 0
    o.device = int(device)
    o.strategy = strategy.encode() if strategy else None
    o.max_evals = int(max_evals or 0)
    o.max_seconds = float(max_seconds or 0)
    o.max_fraction = float(max_fraction or 0)
    o.cache_dir = cache_dir.encode() if cache_dir else None
    o.write_cache = write_cache
    o.reuse_measurements = reuse
    if seed is not None:
        o.seed = int(seed)
    if not os.environ.get("CUTUNE_WORKER") and _lib.WORKER:
        o.worker_path = _lib.WORKER.encode()
    if replay:
        if not isinstance(replay, str):
            replay = ",".join(os.fspath(r) for r in replay)
        o.replay_devices = replay.encode()
        o.replay_time_scale = float(scale)
    if log is not None:
        o.log = log
    handle = c_void_p()
    st = _lib.session_create(byref(o), byref(handle))
    if st != 0:
        msg = _lib.text(_lib.session_errmsg(handle)) if handle else "out of memory"
        _lib.session_destroy(handle)
        raise CutuneError("cutune: " + msg, st)
    return handle


def _device_env(d):
    return {
        "device_name": _lib.text(d.name),
        "uuid": _lib.text(d.uuid),
        "compute_capability": "%d%d" % (d.cc_major, d.cc_minor),
        "sm_count": d.sm_count,
        "driver_version": d.driver_version,
        "nvrtc_version": _lib.text(d.nvrtc_version),
        "simulated": bool(d.simulated),
    }


def _pairs(ptr, n, values):
    out = {}
    texts = dict(values)
    for i in range(n):
        name = _lib.text(ptr[i].name)
        text = _lib.text(ptr[i].value)
        out[name] = texts.get(name, {}).get(text, text)
    return out


def _results(r, problem, values, metrics):
    results = []
    for i in range(r.n_evals):
        e = r.evals[i]
        row = _problem.config_at(problem, e.config_index, values)
        if e.outcome == 0:
            row["time"] = e.time_ms
        else:
            row["time"] = _FAILED.get(e.outcome, RuntimeFailedConfig)()
            row["message"] = _lib.text(e.message) or ""
        if e.energy_j == e.energy_j:  # measured (not NaN)
            row["energy"] = e.energy_j
            row["power"] = e.power_w
        row["compile_time"] = e.compile_ms
        row["outcome"] = _lib.text(_lib.outcome_str(e.outcome))
        row["runs"] = e.runs
        row["final_runs"] = e.final_runs
        row["stopped_early"] = bool(e.stopped_early)
        row["index"] = e.config_index
        if e.outcome == 0:
            for name, fn in (metrics or {}).items():
                row[name] = fn(row)
        results.append(row)
    return results


def tune_kernel(
    kernel_name,
    kernel_source,
    problem_size,
    arguments,
    tune_params,
    grid_div_x=None,
    grid_div_y=None,
    grid_div_z=None,
    restrictions=None,
    answer=None,
    atol=1e-6,
    verify=None,
    verbose=False,
    lang=None,
    device=0,
    platform=None,
    smem_args=None,
    cmem_args=None,
    texmem_args=None,
    compiler=None,
    compiler_options=None,
    defines=None,
    log=None,
    iterations=None,
    block_size_names=None,
    quiet=False,
    strategy=None,
    strategy_options=None,
    cache=None,
    metrics=None,
    simulation_mode=False,
    observers=None,
    objective=None,
    objective_higher_is_better=None,
    *,
    replay_devices=None,
    replay_time_scale=0.0,
    seed=None,
    write_t4=None,
    measure_energy=False,
):
    """Tune a CUDA kernel as Kernel Tuner's tune_kernel does, on cutune.

    Returns (results, env): one dict per evaluated configuration (the
    tunable values, "time" in ms, the median of its timed launches, or an
    ErrorConfig when it failed; "compile_time", "outcome", "runs", ...) and
    a dict describing the tune (device, cutune version, strategy, problem
    size, the winner). See docs/python.md for what maps how.
    """
    if lang is not None and str(lang).upper() != "CUDA":
        raise ValueError("lang: '%s'; cutune compiles CUDA with NVRTC" % lang)
    _refuse("verify", verify, "a Python verification function cannot run on cutune's GPU worker; give answer= and atol=")
    _refuse("smem_args", smem_args, "not supported; declare shared memory in the kernel")
    _refuse("cmem_args", cmem_args, "constant memory arguments are not supported from Python yet")
    _refuse("texmem_args", texmem_args, "texture memory is not supported")
    _refuse("compiler", compiler, "cutune compiles with NVRTC only")
    _refuse("observers", observers, "cutune measures with its own protocol (docs/measuring.md)")
    _refuse("simulation_mode", simulation_mode, "give replay_devices= (T4 recordings) instead")
    _refuse("objective_higher_is_better", objective_higher_is_better, "cutune minimises time, energy or edp")
    objective_code = _objective(objective)
    if iterations is not None:
        warnings.warn(
            "iterations=%r ignored: cutune times each configuration until the interval of its median "
            "is narrow (docs/measuring.md)" % (iterations,),
            stacklevel=2,
        )
    options = dict(strategy_options or {})
    max_evals = options.pop("max_fevals", None)
    max_seconds = options.pop("time_limit", None)
    max_fraction = options.pop("fraction", None)
    if options:
        warnings.warn(
            "strategy_options %s ignored: cutune's strategies run with their own settings"
            % ", ".join(sorted(options)),
            stacklevel=2,
        )
    strategy = _strategy(strategy)
    cache_dir, write_cache, reuse = _cache_settings(cache)

    problem = _problem.build(
        kernel_name,
        kernel_source,
        problem_size,
        arguments,
        tune_params,
        grid_div_x=grid_div_x,
        grid_div_y=grid_div_y,
        grid_div_z=grid_div_z,
        restrictions=restrictions,
        answer=answer,
        atol=atol,
        block_size_names=block_size_names,
        compiler_options=compiler_options,
        defines=defines,
    )
    for w in problem.warnings():
        warnings.warn("cutune: " + w, stacklevel=2)
    values = _problem.value_texts(problem, tune_params)
    callback = _log_callback(verbose, quiet)
    session = _session(
        device, strategy, max_evals, max_seconds, max_fraction, cache_dir, write_cache, reuse,
        replay_devices, replay_time_scale, callback, seed, objective_code, measure_energy,
    )
    try:
        rp = POINTER(_lib.TuneResult)()
        st = _lib.session_tune(session, problem.handle, byref(rp))
        if not rp:
            # No result to return (no configuration ran correctly, no
            # device): the T4 file still has every evaluation.
            msg = _lib.text(_lib.session_errmsg(session))
            if write_t4 is not None:
                _lib.session_write_t4(session, os.fspath(write_t4).encode())
            raise CutuneError("cutune: " + msg, st)
        r = rp.contents
        if st != 0:
            warnings.warn("cutune: " + _lib.text(_lib.session_errmsg(session)), stacklevel=2)
        results = _results(r, problem, values, metrics)
        env = _device_env(r.device)
        env.update(
            {
                "cutune_version": _lib.text(_lib.version()),
                "kernel_name": kernel_name,
                "problem_size": problem_size,
                "tune_params": tune_params,
                "restrictions": restrictions,
                "block_size_names": block_size_names,
                "compiler_options": compiler_options,
                "lang": "CUDA",
                "objective": _lib.text(_lib.objective_str(r.objective)),
                "best_energy": r.best_energy_j,
                "best_power": r.best_power_w,
                "strategy": _lib.text(r.strategy),
                "source_hash": problem.source_hash,
                "space_size": problem.space_size,
                "best_config": dict(_pairs(r.best, r.n_params, values), time=r.best_ms),
                "best_time_min": r.best_min_ms,
                "best_runs": r.best_runs,
                "occupancy_block_size": r.occupancy_block_size,
                "baseline_config": _pairs(r.baseline, r.n_params, values) if r.baseline else None,
                "baseline_time": r.baseline_ms,
                "speedup": r.speedup,
                "evaluations": r.evaluations,
                "failures": r.failures,
                "tied": r.tied,
                "wall_s": r.wall_s,
                "cache_dir": cache_dir,
            }
        )
        if write_t4 is not None and _lib.session_write_t4(session, os.fspath(write_t4).encode()) != 0:
            raise CutuneError("cutune: " + _lib.text(_lib.session_errmsg(session)))
        return results, env
    finally:
        _lib.session_destroy(session)
        del callback


def lookup(
    kernel_name,
    kernel_source,
    problem_size,
    tune_params,
    restrictions=None,
    device=0,
    device_name=None,
    cache=None,
    fallback=True,
    *,
    replay_devices=None,
    objective=None,
):
    """The cached winner for this problem on a device, or None.

    The device is `device_name` when given (no GPU needed), else device
    `device` of this machine (or of replay_devices). Returns the tunable
    values with "time" (ms, as tuned), "match" (exact, nearest_size,
    architecture, default) and "device_name"; None when the cache has
    nothing for it (use the occupancy API's suggestion).
    """
    objective_code = _objective(objective)
    problem = _problem.build(
        kernel_name, kernel_source, problem_size, None, tune_params, restrictions=restrictions, space_only=True
    )
    values = _problem.value_texts(problem, tune_params)
    cache_dir = os.fspath(cache) if cache is not None else None
    handle = c_void_p()
    st = _lib.cache_open(cache_dir.encode() if cache_dir else None, byref(handle))
    if st != 0:
        msg = _lib.text(_lib.cache_errmsg(handle)) if handle else "out of memory"
        _lib.cache_close(handle)
        raise CutuneError("cutune: " + msg, st)
    record = POINTER(_lib.CacheRecord)()
    match = ctypes.c_int(0)
    try:
        dev = None
        if device_name is None:
            session = _session(device, None, 0, 0, 0, None, 0, 0, replay_devices, 0.0, None, None)
            try:
                devs = POINTER(_lib.Device)()
                n = c_size_t(0)
                st = _lib.session_devices(session, byref(devs), byref(n))
                if st != 0:
                    raise CutuneError("cutune: " + _lib.text(_lib.session_errmsg(session)), st)
                if device >= n.value:
                    raise ValueError("device: %d, but there are %d devices" % (device, n.value))
                dev = _lib.Device.from_buffer_copy(devs[device])
            finally:
                _lib.session_destroy(session)
        if dev is not None and objective_code == 0:
            st = _lib.cache_lookup_device(handle, byref(dev), problem.handle, byref(record), byref(match))
        else:
            # By name, or for an objective other than time (which only a
            # query names): the device's fingerprint in the query.
            sizes = [s for s in (problem_size if isinstance(problem_size, (list, tuple)) else [problem_size])]
            arr = (c_longlong * len(sizes))(*[int(s) for s in sizes])
            q = _lib.CacheQuery()
            q.problem_name = problem.name.encode()
            q.device_name = device_name.encode() if dev is None else dev.name
            if dev is not None:
                q.device_uuid = dev.uuid
                q.cc_major, q.cc_minor, q.sm_count = dev.cc_major, dev.cc_minor, dev.sm_count
            q.problem_size = arr
            q.n_problem_size = len(sizes)
            q.fallback = 1 if fallback else 0
            q.accept = ctypes.cast(_lib.problem_accepts_record, c_void_p).value
            q.accept_user = problem.handle
            q.objective = objective_code
            st = _lib.cache_lookup(handle, byref(q), byref(record), byref(match))
        if st == _NOT_FOUND:
            return None
        if st != 0:
            raise CutuneError("cutune: " + _lib.text(_lib.cache_errmsg(handle)), st)
        rec = record.contents
        out = _pairs(rec.config, rec.n_config, values)
        out["time"] = rec.time_ms
        if objective_code != 0:
            out["energy"] = rec.energy_j
        out["match"] = _lib.text(_lib.match_str(match.value))
        out["device_name"] = _lib.text(rec.device.name)
        return out
    finally:
        _lib.cache_close(handle)



def devices(replay_devices=None):
    """The devices cutune sees (through its worker), as env describes one;
    CutuneError (status 7, CUTUNE_ERR_NO_DEVICE) where there is no GPU."""
    session = _session(0, None, 0, 0, 0, None, 0, 0, replay_devices, 0.0, None, None)
    try:
        devs = POINTER(_lib.Device)()
        n = c_size_t(0)
        st = _lib.session_devices(session, byref(devs), byref(n))
        if st != 0:
            raise CutuneError("cutune: " + _lib.text(_lib.session_errmsg(session)), st)
        return [_device_env(devs[i]) for i in range(n.value)]
    finally:
        _lib.session_destroy(session)
