/* Progress of a tune on standard error. On a terminal: one line, drawn
 * again in place ("\r", then cleared to the end of the line) for every
 * message, never wider than the terminal (a line that wraps cannot be
 * drawn over: every update would leave one behind), the useful part
 * first so that a narrow terminal cuts the configuration, not the time:
 *   [37/100] best 0.2894 ms (2.09x) · last 0.61 ms · ETA 9 s · TILE=4 ...
 * Elsewhere (a pipe, CI's log) and with --verbose: the library's log
 * lines, one per line, as they come. */
#define _POSIX_C_SOURCE 200809L

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli.h"

void cli_progress_init(cli_progress *pr, int quiet)
{
    pr->tty = isatty(STDERR_FILENO);
    pr->quiet = quiet;
    pr->verbose = 0;
    pr->dirty = 0;
    pr->problem = NULL;
}

/* The terminal's width: the terminal's own word, else $COLUMNS, else 80. */
static size_t terminal_columns(void)
{
    struct winsize ws;
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    const char *env = getenv("COLUMNS");
    char *end;
    long c = env ? strtol(env, &end, 10) : 0;
    if (env && *end == '\0' && c > 0 && c < 10000)
        return (size_t)c;
    return 80;
}

/* "·" where the terminal reads UTF-8, else "-". */
static const char *separator(void)
{
    const char *vars[] = {"LC_ALL", "LC_CTYPE", "LANG"};
    for (size_t i = 0; i < 3; i++) {
        const char *v = getenv(vars[i]);
        if (!v || !*v)
            continue;
        char lower[128];
        size_t n = 0;
        for (; v[n] && n + 1 < sizeof lower; n++)
            lower[n] = (char)tolower((unsigned char)v[n]);
        lower[n] = '\0';
        return strstr(lower, "utf-8") || strstr(lower, "utf8") ? "\xc2\xb7"
                                                               : "-";
    }
    return "-";
}

/* Cuts `s` after `columns` columns (UTF-8 continuation bytes take none). */
static void fit(char *s, size_t columns)
{
    size_t used = 0;
    for (char *c = s; *c; c++) {
        if (((unsigned char)*c & 0xc0) == 0x80)
            continue;
        if (used++ == columns) {
            *c = '\0';
            return;
        }
    }
}

/* Appends to buf as snprintf would, never past its end. */
static void add(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void add(char *buf, size_t len, const char *fmt, ...)
{
    size_t used = strlen(buf);
    if (used + 1 >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, len - used, fmt, ap);
    va_end(ap);
}

/* A time in ms with four significant digits or so. */
static void add_ms(char *buf, size_t len, double ms)
{
    add(buf, len, ms >= 100 ? "%.1f ms" : ms >= 1 ? "%.3f ms" : "%.4f ms", ms);
}

static void add_eta(char *buf, size_t len, double s)
{
    if (s < 60)
        add(buf, len, "ETA %.0f s", s);
    else if (s < 3600)
        add(buf, len, "ETA %.0f min %02.0f s", floor(s / 60),
            fmod(floor(s), 60));
    else
        add(buf, len, "ETA %.0f h %02.0f min", floor(s / 3600),
            fmod(floor(s / 60), 60));
}

void cli_progress_format(const cli_progress *pr, const cutune_progress *g,
                         const char *dot, size_t columns, char *buf,
                         size_t len)
{
    buf[0] = '\0';
    if (g->budget)
        add(buf, len, "[%zu/%zu] best ", g->evaluations, g->budget);
    else
        add(buf, len, "[%zu] best ", g->evaluations);
    if (isnan(g->best_ms))
        add(buf, len, "none yet");
    else
        add_ms(buf, len, g->best_ms);
    if (!isnan(g->best_ms) && g->baseline_ms > 0)
        add(buf, len, " (%.2fx)", g->baseline_ms / g->best_ms);
    add(buf, len, " %s last ", dot);
    if (isnan(g->last_ms))
        add(buf, len, "%s", cutune_outcome_str(g->last_outcome));
    else
        add_ms(buf, len, g->last_ms);
    if (g->last_reused)
        add(buf, len, " (measured before)");
    if (!isnan(g->eta_s)) {
        add(buf, len, " %s ", dot);
        add_eta(buf, len, g->eta_s);
    }
    const char *sep = dot;
    for (size_t k = 0; k < g->n_params; k++) {
        if (pr->problem && cutune_problem_value_count(pr->problem, k) < 2)
            continue;
        add(buf, len, " %s%s%s=%s", sep, *sep ? " " : "", g->config[k].name,
            g->config[k].value);
        sep = "";
    }
    fit(buf, columns);
}

/* Draws `text` over the line in place, cut to the terminal's width less
 * one column (a line filling the last column wraps on some terminals). */
static void draw(cli_progress *pr, const char *text)
{
    char line[1024];
    snprintf(line, sizeof line, "%s", text);
    size_t columns = terminal_columns();
    fit(line, columns > 1 ? columns - 1 : 1);
    fprintf(stderr, "\r%s\033[K", line);
    fflush(stderr);
    pr->dirty = 1;
}

static void on_progress(void *user, const cutune_progress *g)
{
    cli_progress *pr = user;
    char text[1024];
    size_t columns = terminal_columns();
    cli_progress_format(pr, g, separator(), columns > 1 ? columns - 1 : 1,
                        text, sizeof text);
    draw(pr, text);
}

void cli_on_log(void *user, cutune_log_level level, const char *msg)
{
    cli_progress *pr = user;
    if (level <= CUTUNE_LOG_WARN) {
        cli_progress_end(pr);
        fprintf(stderr, "cutune: %s%s\n",
                level == CUTUNE_LOG_ERROR ? "error: " : "warning: ", msg);
        return;
    }
    if (pr->quiet || (level > CUTUNE_LOG_INFO && !pr->verbose))
        return;
    if (pr->tty && !pr->verbose) {
        /* The first line of a message: the rest would wrap. */
        char first[1024];
        snprintf(first, sizeof first, "%.*s", (int)strcspn(msg, "\n"), msg);
        draw(pr, first);
    } else {
        fprintf(stderr, "%s\n", msg);
        fflush(stderr);
    }
}

void cli_progress_attach(cli_progress *pr, const cutune_problem *p,
                         cutune_session_options *o)
{
    pr->problem = p;
    o->log = cli_on_log;
    o->log_user = pr;
    if (pr->tty && !pr->verbose && !pr->quiet) {
        o->progress = on_progress;
        o->progress_user = pr;
    }
}

void cli_progress_end(cli_progress *pr)
{
    if (pr->dirty)
        fputs("\r\033[K", stderr);
    fflush(stderr);
    pr->dirty = 0;
}
