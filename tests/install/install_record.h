/* The record the install test's consumers write and read back
 * (tests/install/run_consumer.sh): a made-up device and problem, so that
 * no real cache is touched, and the query that finds it. */
#ifndef CUTUNE_INSTALL_RECORD_H
#define CUTUNE_INSTALL_RECORD_H

#include <stdio.h>
#include <string.h>

#include <cutune/cutune.h>

#define INSTALL_DEVICE  "GTX Installed 4242"
#define INSTALL_PROBLEM "install_check"

typedef struct install_record {
    cutune_cache_record rec;
    cutune_cache_query query;
    long long size[1];
    cutune_param_value config[1];
} install_record;

static inline void install_record_make(install_record *t, const char *block)
{
    memset(t, 0, sizeof *t);
    t->size[0] = 4096;
    t->config[0] = (cutune_param_value){"block_size_x", block};
    cutune_cache_record *r = &t->rec;
    snprintf(r->device.name, sizeof r->device.name, "%s", INSTALL_DEVICE);
    r->device.cc_major = 8;
    r->device.cc_minor = 9;
    r->device.sm_count = 142;
    r->device.driver_version = 13000;
    snprintf(r->device.nvrtc_version, sizeof r->device.nvrtc_version, "13.0");
    snprintf(r->device.cutune_version, sizeof r->device.cutune_version, "%s",
             CUTUNE_VERSION_STRING);
    r->problem_name = INSTALL_PROBLEM;
    r->source_hash = "9f86d081884c7d65";
    r->problem_size = t->size;
    r->n_problem_size = 1;
    r->compiler_options = "";
    r->config = t->config;
    r->n_config = 1;
    r->time_ms = 0.125;
    r->time_min_ms = 0.12;
    r->time_stddev_ms = 0.001;
    r->runs = 50;
    r->baseline = t->config;
    r->n_baseline = 1;
    r->baseline_ms = 0.25;
    r->strategy = "random";
    r->evaluations = 10;
    r->tune_seconds = 1.5;
    r->timestamp = 1795341600LL; /* 2026-11-22T10:00:00Z */

    t->query.problem_name = INSTALL_PROBLEM;
    t->query.device_name = INSTALL_DEVICE;
    t->query.problem_size = t->size;
    t->query.n_problem_size = 1;
}

#endif
