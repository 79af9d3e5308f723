/* `cutune explain` as text and as JSON (explain_model.h): the
 * configurations side by side, a bottleneck line each, the headroom. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "explain_model.h"

const char *cutune_counters_str(cutune_counters c)
{
    switch (c) {
    case CUTUNE_COUNTERS_READ: return "read";
    case CUTUNE_COUNTERS_NO_CUPTI: return "no-cupti";
    case CUTUNE_COUNTERS_REFUSED: return "refused";
    case CUTUNE_COUNTERS_UNSUPPORTED: return "unsupported";
    case CUTUNE_COUNTERS_FAILED: return "failed";
    case CUTUNE_COUNTERS_NOT_RUN: return "not-run";
    }
    return "?";
}

cutune_counters cutune_explain_counters(const cutune_explain *x,
                                        const char **why)
{
    if (why)
        *why = x ? x->why : "";
    return x ? (cutune_counters)x->counters : CUTUNE_COUNTERS_NOT_RUN;
}

void cutune_explain_destroy(cutune_explain *x)
{
    cutune__explain_free(x);
}

/* A row's figure of one configuration; NaN prints as "-". */
typedef double (*figure_fn)(const cutune__explained *e);

static double f_time(const cutune__explained *e)
{
    return e->time_ms;
}
static double f_power(const cutune__explained *e)
{
    return e->energy_j > 0 ? e->power_w : NAN;
}
static double f_energy(const cutune__explained *e)
{
    return e->energy_j > 0 ? e->energy_j : NAN;
}
static double f_profiled(const cutune__explained *e)
{
    return e->values[CUTUNE__M_TIME_NS] * 1e-6;
}
static double f_achieved(const cutune__explained *e)
{
    return 100 * cutune__achieved_occupancy(e);
}
static double f_theoretical(const cutune__explained *e)
{
    return e->has_static ? 100 * e->occ.theoretical : NAN;
}
static double f_regs(const cutune__explained *e)
{
    return e->has_static ? e->facts.regs_per_thread : NAN;
}
static double f_local(const cutune__explained *e)
{
    return e->has_static ? e->facts.local_bytes : NAN;
}
static double f_smem(const cutune__explained *e)
{
    return e->has_static ? e->facts.static_smem + e->facts.dynamic_smem : NAN;
}
static double f_dram(const cutune__explained *e)
{
    return e->values[CUTUNE__M_DRAM_PCT];
}
static double f_dram_gbs(const cutune__explained *e)
{
    return cutune__dram_gbs(e);
}
static double f_memory(const cutune__explained *e)
{
    return e->values[CUTUNE__M_MEMORY_PCT];
}
static double f_sm(const cutune__explained *e)
{
    return e->values[CUTUNE__M_SM_PCT];
}
static double f_l1(const cutune__explained *e)
{
    return e->values[CUTUNE__M_L1_HIT_PCT];
}
static double f_l2(const cutune__explained *e)
{
    return e->values[CUTUNE__M_L2_HIT_PCT];
}
static double f_passes(const cutune__explained *e)
{
    return e->counters == CUTUNE_COUNTERS_READ ? e->passes : NAN;
}

static const struct row {
    const char *label;
    const char *format; /* of one figure */
    figure_fn figure;
} rows[] = {
    {"time, timed launches (ms)", "%.4f", f_time},
    {"time, profiled launch (ms)", "%.4f", f_profiled},
    {"occupancy achieved (%)", "%.1f", f_achieved},
    {"occupancy theoretical (%)", "%.1f", f_theoretical},
    {"registers per thread", "%.0f", f_regs},
    {"local memory (B/thread)", "%.0f", f_local},
    {"shared memory (B/block)", "%.0f", f_smem},
    {"DRAM throughput (% peak)", "%.1f", f_dram},
    {"DRAM bandwidth (GB/s)", "%.0f", f_dram_gbs},
    {"memory throughput (% peak)", "%.1f", f_memory},
    {"compute throughput (% peak)", "%.1f", f_sm},
    {"load sectors per request", "%.2f", cutune__ld_sectors_per_request},
    {"store sectors per request", "%.2f", cutune__st_sectors_per_request},
    {"L1 hit rate (%)", "%.1f", f_l1},
    {"L2 hit rate (%)", "%.1f", f_l2},
    {"shared conflicts per request", "%.2f", cutune__conflicts_per_request},
    {"profiling passes", "%.0f", f_passes},
};

static const struct row energy_rows[] = {
    {"power (W)", "%.1f", f_power},
    {"energy per launch (J)", "%.4g", f_energy},
};

#define LABEL_W  30
#define COLUMN_W 14

static void print_row(FILE *f, const cutune_explain *x, const struct row *r)
{
    fprintf(f, "%-*s", LABEL_W, r->label);
    for (size_t i = 0; i < x->n; i++) {
        double v = r->figure(&x->cfg[i]);
        char cell[32];
        if (isfinite(v))
            snprintf(cell, sizeof cell, r->format, v);
        else
            snprintf(cell, sizeof cell, "-");
        fprintf(f, "%*s", COLUMN_W, cell);
    }
    fputc('\n', f);
}

static void print_table(FILE *f, const cutune_explain *x)
{
    fprintf(f, "%-*s", LABEL_W, "");
    for (size_t i = 0; i < x->n; i++)
        fprintf(f, "%*s", COLUMN_W, x->cfg[i].role);
    fputc('\n', f);
    int energy = 0;
    for (size_t i = 0; i < x->n; i++)
        energy |= isfinite(f_energy(&x->cfg[i]));
    for (size_t k = 0; k < sizeof rows / sizeof *rows; k++) {
        print_row(f, x, &rows[k]);
        /* Only an explanation that measured energy has its rows. */
        if (energy && rows[k].figure == f_time) {
            print_row(f, x, &energy_rows[0]);
            print_row(f, x, &energy_rows[1]);
        }
        if (rows[k].figure == f_theoretical) {
            fprintf(f, "%-*s", LABEL_W, "  limited by");
            for (size_t i = 0; i < x->n; i++)
                fprintf(f, "%*s", COLUMN_W,
                        x->cfg[i].has_static
                            ? cutune__limiter_str(x->cfg[i].occ.limiter)
                            : "-");
            fputc('\n', f);
        }
    }
}

char *cutune_explain_text(const cutune_explain *x)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    if (!f)
        return NULL;
    fprintf(f, "%s%s%s on %s (%s)\n", x->problem, x->size[0] ? ", size " : "",
            x->size, x->device, x->arch);
    if (x->note[0])
        fprintf(f, "note: %s\n", x->note);
    if (x->counters != CUTUNE_COUNTERS_READ)
        fprintf(f, "counters not read (%s): %s\n",
                cutune_counters_str((cutune_counters)x->counters), x->why);
    for (size_t i = 0; i < x->n; i++)
        if (x->cfg[i].range_of_ours) {
            fprintf(f, "note: CUPTI would not profile the kernel as its own "
                       "range; the profiled figures cover a range around the "
                       "launch, overhead included\n");
            break;
        }
    for (size_t i = 0; i < x->n; i++) {
        const cutune__explained *e = &x->cfg[i];
        fprintf(f, "  %-10s %s\n", e->role, e->config_text);
        if (e->outcome != CUTUNE_OUTCOME_CORRECT && e->message &&
            e->message[0])
            fprintf(f, "  %-10s %s: %s\n", "",
                    cutune_outcome_str((cutune_outcome)e->outcome),
                    e->message);
    }
    fputc('\n', f);
    print_table(f, x);
    fprintf(f, "\nbottleneck\n");
    for (size_t i = 0; i < x->n; i++)
        fprintf(f, "  %-10s %s\n", x->cfg[i].role, x->cfg[i].verdict);
    double factor;
    char line[256];
    if (x->n > 0 && cutune__headroom(&x->cfg[0], &factor, line, sizeof line))
        fprintf(f, "headroom: %s\n", line);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* A finite number, or null. */
static json_t *number(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *config_json(const cutune__explained *e)
{
    json_t *metrics = json_object();
    for (int m = 0; m < CUTUNE__METRIC_COUNT; m++)
        json_object_set_new(metrics, cutune__metric_name((cutune__metric)m),
                            number(e->values[m]));
    json_t *j = json_pack(
        "{s:s, s:s, s:I, s:s, s:o, s:s, s:s, s:I, s:o, s:o, s:o, s:o, "
        "s:o, s:o, s:o, s:o}",
        "role", e->role, "config", e->config_text ? e->config_text : "",
        "config_index", (json_int_t)e->config_index, "outcome",
        cutune_outcome_str((cutune_outcome)e->outcome), "time_ms",
        number(e->time_ms), "counters",
        cutune_counters_str((cutune_counters)e->counters), "why", e->why,
        "passes", (json_int_t)e->passes, "metrics", metrics,
        "achieved_occupancy", number(cutune__achieved_occupancy(e)),
        "load_sectors_per_request", number(cutune__ld_sectors_per_request(e)),
        "store_sectors_per_request", number(cutune__st_sectors_per_request(e)),
        "shared_conflicts_per_request",
        number(cutune__conflicts_per_request(e)), "bottleneck",
        json_string(cutune__bottleneck_str(e->bottleneck)), "verdict",
        json_string(e->verdict), "static", json_null());
    if (j)
        json_object_set_new(
            j, "range",
            json_string(e->range_of_ours ? "around-launch" : "kernel"));
    if (j)
        json_object_set_new(j, "dram_gbs", number(cutune__dram_gbs(e)));
    /* As a tune's evaluations: present only where measured. */
    if (j && isfinite(f_energy(e))) {
        json_object_set_new(j, "energy_j", json_real(e->energy_j));
        json_object_set_new(j, "power_w", number(e->power_w));
    }
    if (j && e->has_static)
        json_object_set_new(
            j, "static",
            json_pack("{s:i, s:i, s:i, s:i, s:i, s:f, s:s, s:i}",
                      "threads_per_block", e->facts.threads_per_block,
                      "registers_per_thread", e->facts.regs_per_thread,
                      "local_bytes_per_thread", e->facts.local_bytes,
                      "shared_bytes_per_block",
                      e->facts.static_smem + e->facts.dynamic_smem,
                      "blocks_per_sm", e->occ.blocks, "theoretical_occupancy",
                      e->occ.theoretical, "limited_by",
                      cutune__limiter_str(e->occ.limiter), "active_blocks_api",
                      e->facts.active_blocks));
    return j;
}

char *cutune_explain_json(const cutune_explain *x)
{
    json_t *configs = json_array();
    for (size_t i = 0; i < x->n; i++)
        json_array_append_new(configs, config_json(&x->cfg[i]));
    json_t *headroom = json_null();
    double factor;
    char line[256];
    if (x->n > 0 && cutune__headroom(&x->cfg[0], &factor, line, sizeof line))
        headroom = json_pack("{s:f, s:s}", "factor", factor, "text", line);
    json_t *j = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:o}", "problem", x->problem,
        "size", x->size, "device", x->device, "arch", x->arch, "note", x->note,
        "counters", cutune_counters_str((cutune_counters)x->counters), "why",
        x->why, "configurations", configs, "headroom", headroom);
    char *text = j ? json_dumps(j, JSON_INDENT(2)) : NULL;
    json_decref(j);
    return text;
}
