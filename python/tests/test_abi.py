"""The ctypes mirror in cutune/_lib.py against the C compiler's layout of
include/cutune/cutune.h, printed by tests/python/abi_layout.c (CTest passes
its path in CUTUNE_ABI_LAYOUT). A field added to a header struct and not to
its mirror makes the library write past the Python object; here it fails
naming the struct and the field instead."""

import ctypes
import json
import os
import subprocess

import numpy as np
import pytest

from cutune import _lib, _problem, tune

MIRRORS = {
    "cutune_value": _lib.Value,
    "cutune_tunable": _lib.Tunable,
    "cutune_arg_spec": _lib.ArgSpec,
    "cutune_answer_spec": _lib.AnswerSpec,
    "cutune_problem_options": _lib.ProblemOptions,
    "cutune_param_value": _lib.ParamValue,
    "cutune_device": _lib.Device,
    "cutune_problem_spec": _lib.ProblemSpec,
    "cutune_session_options": _lib.SessionOptions,
    "cutune_eval": _lib.Eval,
    "cutune_tune_result": _lib.TuneResult,
    "cutune_cache_record": _lib.CacheRecord,
    "cutune_cache_query": _lib.CacheQuery,
}


@pytest.fixture(scope="module")
def layout():
    path = os.environ.get("CUTUNE_ABI_LAYOUT")
    if not path:
        pytest.fail(
            "CUTUNE_ABI_LAYOUT is unset: run through CTest (ctest -R python_pytest), "
            "or set it to the abi_layout program built in BUILD/tests/"
        )
    out = subprocess.run([path], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def ctypes_fields(mirror):
    return [(name, getattr(mirror, name).offset) for name, *_ in mirror._fields_]


def test_every_mirror_is_laid_out(layout):
    assert sorted(layout["structs"]) == sorted(MIRRORS), "abi_layout.c and MIRRORS list different structs"


@pytest.mark.parametrize("struct", sorted(MIRRORS))
def test_mirror_matches_header(layout, struct):
    mirror = MIRRORS[struct]
    c = layout["structs"][struct]
    c_fields = [tuple(f) for f in c["fields"]]
    py_fields = ctypes_fields(mirror)
    c_names = [n for n, _ in c_fields]
    py_names = [n for n, _ in py_fields]
    missing = [n for n in c_names if n not in py_names]
    extra = [n for n in py_names if n not in c_names]
    assert not missing, "%s: _lib.%s lacks the header's field(s) %s" % (struct, mirror.__name__, ", ".join(missing))
    assert not extra, "%s: _lib.%s has field(s) %s the header has not" % (struct, mirror.__name__, ", ".join(extra))
    for (cn, co), (pn, po) in zip(c_fields, py_fields):
        assert cn == pn, "%s: field %s of the header is %s in _lib.%s (order differs)" % (
            struct,
            cn,
            pn,
            mirror.__name__,
        )
        assert co == po, "%s.%s: offset %d in C, %d in _lib.%s" % (struct, cn, co, po, mirror.__name__)
    assert ctypes.sizeof(mirror) == c["size"], "%s: sizeof %d in C, %d in _lib.%s" % (
        struct,
        c["size"],
        ctypes.sizeof(mirror),
        mirror.__name__,
    )


def python_enums():
    """The numbers python/cutune/ writes for C enum values, by C name."""
    d = _problem._DTYPES
    values = {
        "CUTUNE_ERR_NOT_FOUND": tune._NOT_FOUND,
        "CUTUNE_OBJECTIVE_TIME": tune._objective("time"),
        "CUTUNE_OBJECTIVE_ENERGY": tune._objective("energy"),
        "CUTUNE_OBJECTIVE_EDP": tune._objective("edp"),
        "CUTUNE_VALUE_INT": _problem._VALUE_INT,
        "CUTUNE_VALUE_FLOAT": _problem._VALUE_FLOAT,
        "CUTUNE_VALUE_BOOL": _problem._VALUE_BOOL,
        "CUTUNE_VALUE_STRING": _problem._VALUE_STRING,
        "CUTUNE_ARG_VECTOR": _problem._VECTOR,
        "CUTUNE_ARG_SCALAR": _problem._SCALAR,
        "CUTUNE_FILL_DATA": _problem._FILL_DATA,
    }
    for c, np_type in [
        ("FLOAT", np.float32),
        ("DOUBLE", np.float64),
        ("INT8", np.int8),
        ("UINT8", np.uint8),
        ("INT16", np.int16),
        ("UINT16", np.uint16),
        ("INT32", np.int32),
        ("UINT32", np.uint32),
        ("INT64", np.int64),
        ("UINT64", np.uint64),
        ("HALF", np.float16),
    ]:
        values["CUTUNE_DTYPE_" + c] = d[np.dtype(np_type)]
    return values


def test_enum_values_match_header(layout):
    c = layout["enums"]
    for name, value in python_enums().items():
        assert name in c, "%s: python/cutune/ uses it; add it to tests/python/abi_layout.c" % name
        assert value == c[name], "%s is %d in cutune.h, %d in python/cutune/" % (name, c[name], value)


def test_outcome_numbers_match_header(layout):
    """tune.py reads outcomes as numbers: 0 is a correct run, the rest map
    to Kernel Tuner's failure markers."""
    c = layout["enums"]
    assert c["CUTUNE_OUTCOME_CORRECT"] == 0, "tune.py takes outcome 0 as CUTUNE_OUTCOME_CORRECT"
    failures = {v for k, v in c.items() if k.startswith("CUTUNE_OUTCOME_") and k != "CUTUNE_OUTCOME_CORRECT"}
    assert failures == set(tune._FAILED), "tune._FAILED keys %s, header's failing outcomes %s" % (
        sorted(tune._FAILED),
        sorted(failures),
    )


def test_log_levels_match_header(layout):
    """tune.py's log callback drops messages above level 2 unless verbose."""
    c = layout["enums"]
    assert (c["CUTUNE_LOG_INFO"], c["CUTUNE_LOG_DEBUG"]) == (2, 3), "tune.py's log filter assumes INFO 2, DEBUG 3"
