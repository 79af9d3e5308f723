/* The layout of the public structs that python/cutune/_lib.py mirrors with
 * ctypes, and the enum values the package hard-codes, as JSON on stdout:
 *   {"structs": {"cutune_value": {"size": 32, "fields": [["type", 0], ...]},
 *    ...}, "enums": {"CUTUNE_OK": 0, ...}}
 * python/tests/test_abi.py compares it with the mirror, so a field added to
 * the header and not to _lib.py fails there by name instead of corrupting
 * memory. It includes the header only: the layout is the compiler's view
 * of cutune.h, whatever the library was built with. */
#include <cutune/cutune.h>
#include <stddef.h>
#include <stdio.h>

static const char *sep;

static void begin(const char *name, size_t size)
{
    printf("%s\n  \"%s\": {\"size\": %zu, \"fields\": [", sep, name, size);
    sep = "";
}

static void field(const char *name, size_t offset)
{
    printf("%s[\"%s\", %zu]", sep, name, offset);
    sep = ", ";
}

static void end(void)
{
    printf("]}");
    sep = ",";
}

static void value(const char *name, long v)
{
    printf("%s\n  \"%s\": %ld", sep, name, v);
    sep = ",";
}

#define S(T)    begin(#T, sizeof(T))
#define F(T, f) field(#f, offsetof(T, f))
#define E(name) value(#name, (long)(name))

static void small_structs(void)
{
    S(cutune_value);
    F(cutune_value, type), F(cutune_value, i), F(cutune_value, f);
    F(cutune_value, s), end();

    S(cutune_tunable);
    F(cutune_tunable, name), F(cutune_tunable, values);
    F(cutune_tunable, n_values), F(cutune_tunable, default_value);
    F(cutune_tunable, compiler_option), end();

    S(cutune_arg_spec);
    F(cutune_arg_spec, name), F(cutune_arg_spec, memory);
    F(cutune_arg_spec, dtype), F(cutune_arg_spec, count);
    F(cutune_arg_spec, fill), F(cutune_arg_spec, data);
    F(cutune_arg_spec, fill_value), F(cutune_arg_spec, seed);
    F(cutune_arg_spec, output), end();

    S(cutune_answer_spec);
    F(cutune_answer_spec, arg), F(cutune_answer_spec, fill);
    F(cutune_answer_spec, data), F(cutune_answer_spec, fill_value);
    F(cutune_answer_spec, seed), F(cutune_answer_spec, atol);
    F(cutune_answer_spec, rtol), end();

    S(cutune_problem_options);
    F(cutune_problem_options, problem_size);
    F(cutune_problem_options, n_problem_size);
    F(cutune_problem_options, space_only);
    F(cutune_problem_options, max_space_visits), end();

    S(cutune_param_value);
    F(cutune_param_value, name), F(cutune_param_value, value), end();

    S(cutune_device);
    F(cutune_device, name), F(cutune_device, uuid);
    F(cutune_device, cc_major), F(cutune_device, cc_minor);
    F(cutune_device, sm_count), F(cutune_device, l2_bytes);
    F(cutune_device, memory_bytes), F(cutune_device, driver_version);
    F(cutune_device, nvrtc_version), F(cutune_device, cutune_version);
    F(cutune_device, simulated), end();
}

static void problem_spec(void)
{
#define P(f) F(cutune_problem_spec, f)
    S(cutune_problem_spec);
    P(name), P(kernel_name), P(source), P(source_len);
    P(compiler_options), P(n_compiler_options);
    P(tune_params), P(n_tune_params), P(restrictions), P(n_restrictions);
    P(problem_size), P(problem_size_expr), P(n_problem_size);
    P(block_size), P(grid_div_x), P(n_grid_div_x), P(grid_div_y);
    P(n_grid_div_y), P(grid_div_z), P(n_grid_div_z);
    P(global_size), P(global_size_in_blocks), P(shared_memory);
    P(arguments), P(n_arguments), P(answers), P(n_answers);
    P(kernel_tuner_defines), P(bytes_per_launch), P(flops_per_launch);
    P(budget_evals), P(budget_seconds), P(budget_fraction), P(strategy);
    end();
#undef P
}

static void session_structs(void)
{
#define O(f) F(cutune_session_options, f)
    S(cutune_session_options);
    O(device), O(strategy), O(max_evals), O(max_seconds), O(seed);
    O(cache_dir), O(write_cache), O(worker_path), O(compile_threads);
    O(launch_timeout_s), O(log), O(log_user), O(warm_cache);
    O(no_binary_cache), O(max_fraction), O(reuse_measurements);
    O(output_check), O(devices), O(n_devices), O(replay_devices);
    O(replay_time_scale), O(progress), O(progress_user), O(objective);
    O(measure_energy), end();
#undef O

#define V(f) F(cutune_eval, f)
    S(cutune_eval);
    V(config_index), V(outcome), V(time_ms), V(compile_ms), V(message);
    V(stopped_early), V(sm_clock_mhz), V(temperature_c), V(runs);
    V(final_runs), V(worker), V(energy_j), V(power_w), V(energy_rsd);
    end();
#undef V

#define R(f) F(cutune_tune_result, f)
    S(cutune_tune_result);
    R(device), R(memcpy_gbs), R(occupancy_block_size), R(baseline);
    R(n_params), R(baseline_ms), R(best), R(best_ms), R(best_min_ms);
    R(best_stddev_ms), R(best_runs), R(best_gbs), R(speedup);
    R(evaluations), R(failures), R(wall_s), R(strategy), R(evals);
    R(n_evals), R(tied), R(gpu_busy), R(kernel_share), R(best_gflops);
    R(reused), R(finalists), R(workers), R(restarts), R(objective);
    R(best_energy_j), R(best_power_w), end();
#undef R
}

static void cache_structs(void)
{
#define C(f) F(cutune_cache_record, f)
    S(cutune_cache_record);
    C(device), C(problem_name), C(source_hash), C(problem_size);
    C(n_problem_size), C(compiler_options), C(config), C(n_config);
    C(time_ms), C(time_min_ms), C(time_stddev_ms), C(runs), C(gbs);
    C(baseline), C(n_baseline), C(baseline_ms), C(strategy);
    C(evaluations), C(tune_seconds), C(timestamp), C(objective);
    C(energy_j), end();
#undef C

#define Q(f) F(cutune_cache_query, f)
    S(cutune_cache_query);
    Q(problem_name), Q(device_name), Q(device_uuid), Q(problem_size);
    Q(n_problem_size), Q(fallback), Q(cc_major), Q(cc_minor);
    Q(sm_count), Q(accept), Q(accept_user), Q(objective), end();
#undef Q
}

/* Only the values python/cutune/ writes as numbers. */
static void enums(void)
{
    E(CUTUNE_ERR_NOT_FOUND);
    E(CUTUNE_OUTCOME_CORRECT), E(CUTUNE_OUTCOME_COMPILE);
    E(CUTUNE_OUTCOME_RUNTIME), E(CUTUNE_OUTCOME_CORRECTNESS);
    E(CUTUNE_OUTCOME_TIMEOUT), E(CUTUNE_OUTCOME_RESOURCES);
    E(CUTUNE_OBJECTIVE_TIME), E(CUTUNE_OBJECTIVE_ENERGY);
    E(CUTUNE_OBJECTIVE_EDP);
    E(CUTUNE_LOG_INFO), E(CUTUNE_LOG_DEBUG);
    E(CUTUNE_VALUE_INT), E(CUTUNE_VALUE_FLOAT), E(CUTUNE_VALUE_BOOL);
    E(CUTUNE_VALUE_STRING);
    E(CUTUNE_ARG_VECTOR), E(CUTUNE_ARG_SCALAR), E(CUTUNE_FILL_DATA);
    E(CUTUNE_DTYPE_FLOAT), E(CUTUNE_DTYPE_DOUBLE), E(CUTUNE_DTYPE_INT8);
    E(CUTUNE_DTYPE_UINT8), E(CUTUNE_DTYPE_INT16), E(CUTUNE_DTYPE_UINT16);
    E(CUTUNE_DTYPE_INT32), E(CUTUNE_DTYPE_UINT32), E(CUTUNE_DTYPE_INT64);
    E(CUTUNE_DTYPE_UINT64), E(CUTUNE_DTYPE_HALF);
}

int main(void)
{
    sep = "";
    printf("{\"structs\": {");
    small_structs();
    problem_spec();
    session_structs();
    cache_structs();
    printf("\n},\n\"enums\": {");
    sep = "";
    enums();
    printf("\n}}\n");
    return 0;
}
