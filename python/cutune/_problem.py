"""A Kernel Tuner-shaped problem description made into a cutune problem
through cutune_problem_from_spec (the C library's one constructor)."""

import os
from ctypes import byref, c_char_p, c_longlong, c_void_p

import numpy as np

from . import _lib
from ._lib import CutuneError

# numpy element types and cutune's cutune_dtype values.
_DTYPES = {
    np.dtype(np.float32): 0,
    np.dtype(np.float64): 1,
    np.dtype(np.int8): 2,
    np.dtype(np.uint8): 3,
    np.dtype(np.int16): 4,
    np.dtype(np.uint16): 5,
    np.dtype(np.int32): 6,
    np.dtype(np.uint32): 7,
    np.dtype(np.int64): 8,
    np.dtype(np.uint64): 9,
    np.dtype(np.float16): 10,
    np.dtype(np.bool_): 3,
}

_VECTOR, _SCALAR = 0, 1
_FILL_DATA = 0
_VALUE_INT, _VALUE_FLOAT, _VALUE_BOOL, _VALUE_STRING = 0, 1, 2, 3


def _b(s):
    return s.encode("utf-8") if isinstance(s, str) else s


def read_source(kernel_source):
    """Kernel Tuner takes the source as a string or as a file name."""
    if isinstance(kernel_source, (list, tuple)):
        if len(kernel_source) != 1:
            raise ValueError(
                "kernel_source: a list of %d files; cutune compiles one source "
                "(#include the others from it)" % len(kernel_source)
            )
        kernel_source = kernel_source[0]
    if isinstance(kernel_source, os.PathLike):
        kernel_source = os.fspath(kernel_source)
    if not isinstance(kernel_source, str):
        raise TypeError("kernel_source: expected a string or a file name, got %s" % type(kernel_source).__name__)
    if "\n" not in kernel_source and os.path.isfile(kernel_source):
        with open(kernel_source, encoding="utf-8") as f:
            return f.read()
    return kernel_source


def _value(name, v):
    if isinstance(v, (bool, np.bool_)):
        return _lib.Value(_VALUE_BOOL, int(bool(v)), 0.0, None)
    if isinstance(v, (int, np.integer)):
        return _lib.Value(_VALUE_INT, int(v), 0.0, None)
    if isinstance(v, (float, np.floating)):
        return _lib.Value(_VALUE_FLOAT, 0, float(v), None)
    if isinstance(v, str):
        return _lib.Value(_VALUE_STRING, 0, 0.0, _b(v))
    raise TypeError("tune_params['%s']: %r is not a number, a bool or a string" % (name, v))


def _expr_list(field, entries):
    """grid_div_x and friends: names, numbers or expressions."""
    if entries is None:
        return None
    if isinstance(entries, (str, int, np.integer)):
        entries = [entries]
    out = []
    for k, e in enumerate(entries):
        if callable(e):
            raise TypeError(
                "%s[%d]: a Python function; cutune evaluates grid divisors in its "
                "own expression language: give a string such as 'block_size_x * 2'" % (field, k)
            )
        if isinstance(e, (int, np.integer)):
            e = str(int(e))
        if not isinstance(e, str):
            raise TypeError("%s[%d]: expected a parameter name or an expression, got %r" % (field, k, e))
        out.append(_b(e))
    return out


class Problem:
    """Owns the C problem and everything its spec pointed to while built."""

    def __init__(self, handle, keep):
        self.handle = handle
        self._keep = keep

    def __del__(self):
        if getattr(self, "handle", None):
            _lib.problem_destroy(self.handle)
            self.handle = None

    @property
    def space_size(self):
        return _lib.problem_space_size(self.handle)

    @property
    def source_hash(self):
        return _lib.text(_lib.problem_source_hash(self.handle))

    @property
    def name(self):
        return _lib.text(_lib.problem_name(self.handle))

    def warnings(self):
        n = _lib.problem_warning_count(self.handle)
        return [_lib.text(_lib.problem_warning(self.handle, i)) for i in range(n)]


def _arguments(arguments, keep):
    if arguments is None:
        return None, 0
    specs = (_lib.ArgSpec * max(1, len(arguments)))()
    for i, a in enumerate(arguments):
        s = specs[i]
        s.name = _b("arg%d" % i)
        s.fill = _FILL_DATA
        s.seed = i + 1
        if isinstance(a, np.ndarray):
            if a.dtype not in _DTYPES:
                raise TypeError("arguments[%d]: numpy dtype %s is not one cutune passes to a kernel" % (i, a.dtype))
            if a.size == 0:
                raise ValueError("arguments[%d]: an empty array" % i)
            a = np.ascontiguousarray(a)
            keep.append(a)
            s.memory = _VECTOR
            s.dtype = _DTYPES[a.dtype]
            s.count = a.size
            s.data = a.ctypes.data
        elif isinstance(a, np.generic):
            if a.dtype not in _DTYPES:
                raise TypeError("arguments[%d]: numpy scalar of type %s is not one cutune passes" % (i, a.dtype))
            box = np.array([a], dtype=a.dtype)
            keep.append(box)
            s.memory = _SCALAR
            s.dtype = _DTYPES[a.dtype]
            s.data = box.ctypes.data
        else:
            raise TypeError(
                "arguments[%d]: a %s; give numpy arrays and numpy scalars (np.int32(n), "
                "np.float32(x)) so that the kernel's types are known" % (i, type(a).__name__)
            )
    return specs, len(arguments)


def _answers(answer, arguments, atol, keep):
    if answer is None:
        return None, 0
    if arguments is None or len(answer) != len(arguments):
        raise ValueError(
            "answer: %d entries where arguments has %d (None where an argument is not checked)"
            % (len(answer), 0 if arguments is None else len(arguments))
        )
    chosen = []
    for i, (expected, arg) in enumerate(zip(answer, arguments)):
        if expected is None:
            continue
        if not isinstance(arg, np.ndarray):
            raise TypeError("answer[%d]: arguments[%d] is a scalar; only arrays are checked" % (i, i))
        expected = np.asarray(expected)
        if expected.size != arg.size:
            raise ValueError(
                "answer[%d]: %d elements where arguments[%d] has %d" % (i, expected.size, i, arg.size)
            )
        expected = np.ascontiguousarray(expected, dtype=arg.dtype)
        keep.append(expected)
        chosen.append((i, expected))
    specs = (_lib.AnswerSpec * max(1, len(chosen)))()
    for k, (i, expected) in enumerate(chosen):
        # numpy.allclose, as Kernel Tuner compares: atol and a relative 1e-5.
        specs[k] = _lib.AnswerSpec(i, _FILL_DATA, expected.ctypes.data, 0.0, 0, float(atol), 1e-5)
    return specs, len(chosen)


def _restrictions(restrictions):
    if restrictions is None:
        return []
    if isinstance(restrictions, str) or callable(restrictions):
        restrictions = [restrictions]
    out = []
    for k, r in enumerate(restrictions):
        if callable(r):
            raise TypeError(
                "restrictions[%d]: a Python function. cutune builds the search space in C, "
                "checking each restriction as soon as the parameters it reads are bound, and "
                "cannot call back into Python there; write it as a string in the same Python-like "
                "syntax (e.g. \"block_size_x * block_size_y <= 1024\")" % k
            )
        if not isinstance(r, str):
            raise TypeError("restrictions[%d]: expected a string, got %r" % (k, r))
        out.append(_b(r))
    return out


def build(
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
    block_size_names=None,
    compiler_options=None,
    defines=None,
    space_only=False,
):
    """The problem as cutune_problem_from_spec builds it; CutuneError with
    the library's message (naming the field) when it refuses."""
    keep = []
    spec = _lib.ProblemSpec()
    _lib.problem_spec_init(byref(spec))
    spec.kernel_name = _b(kernel_name)
    source = _b(read_source(kernel_source)) if kernel_source is not None else None
    spec.source = source
    keep.append(source)

    if not isinstance(tune_params, dict) or not tune_params:
        raise ValueError("tune_params: expected a dict of parameter name -> list of values")
    tunables = (_lib.Tunable * len(tune_params))()
    for i, (name, values) in enumerate(tune_params.items()):
        if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
            raise TypeError("tune_params['%s']: expected a list of values" % name)
        vals = (_lib.Value * max(1, len(values)))(*[_value(name, v) for v in values])
        keep.append(vals)
        tunables[i] = _lib.Tunable(_b(name), vals, len(values), None, 0)
    spec.tune_params = tunables
    spec.n_tune_params = len(tune_params)

    conds = _restrictions(restrictions)
    carr = (c_char_p * max(1, len(conds)))(*conds)
    spec.restrictions = carr
    spec.n_restrictions = len(conds)

    if isinstance(problem_size, (int, np.integer, str)):
        problem_size = [problem_size]
    problem_size = list(problem_size)
    sizes = (c_longlong * max(1, len(problem_size)))()
    exprs = (c_char_p * max(1, len(problem_size)))()
    for d, v in enumerate(problem_size):
        if isinstance(v, str):
            exprs[d] = _b(v)
        elif isinstance(v, (int, np.integer)):
            sizes[d] = int(v)
        else:
            raise TypeError("problem_size[%d]: expected an int or a parameter name, got %r" % (d, v))
    spec.problem_size = sizes
    spec.problem_size_expr = exprs
    spec.n_problem_size = len(problem_size)

    if block_size_names is not None:
        names = list(block_size_names)
        if len(names) > 3:
            raise ValueError("block_size_names: at most 3 names")
        for d, n in enumerate(names):
            spec.block_size[d] = _b(n)

    lists = []
    for field, entries in (("grid_div_x", grid_div_x), ("grid_div_y", grid_div_y), ("grid_div_z", grid_div_z)):
        items = _expr_list(field, entries)
        if items is None:
            continue
        arr = (c_char_p * max(1, len(items)))(*items)
        lists.append(arr)
        setattr(spec, field, arr)
        setattr(spec, "n_" + field, len(items))

    options = [_b(o) for o in (compiler_options or [])]
    for k, v in (defines or {}).items():
        options.append(_b("-D%s=%s" % (k, v)))
    oarr = (c_char_p * max(1, len(options)))(*options)
    spec.compiler_options = oarr
    spec.n_compiler_options = len(options)

    args, nargs = _arguments(arguments, keep)
    if args is not None:
        spec.arguments = args
        spec.n_arguments = nargs
    answers, nanswers = _answers(answer, arguments, atol, keep)
    if answers is not None:
        spec.answers = answers
        spec.n_answers = nanswers

    opt = _lib.ProblemOptions()
    _lib.problem_options_init(byref(opt))
    opt.space_only = 1 if space_only else 0
    handle = c_void_p()
    st = _lib.problem_from_spec(byref(spec), byref(opt), byref(handle))
    if st != 0:
        msg = _lib.text(_lib.problem_errmsg(handle)) if handle else "out of memory"
        if handle:
            _lib.problem_destroy(handle)
        raise CutuneError("cutune: " + msg, st)
    # The problem copied what it needs; the buffers may go.
    return Problem(handle, None)


def config_at(problem, index, values):
    """The configuration at `index` of the space as {name: value}, each
    value the tune_params entry it came from (int stays int)."""
    out = {}
    for k, (name, texts) in enumerate(values):
        text = _lib.text(_lib.problem_config_value(problem.handle, index, k))
        out[name] = texts.get(text, text)
    return out


def value_texts(problem, tune_params):
    """Per parameter, cutune's text of each value -> the caller's value."""
    out = []
    for k, (name, values) in enumerate(tune_params.items()):
        texts = {}
        for v_index, v in enumerate(values):
            texts[_lib.text(_lib.problem_value(problem.handle, k, v_index))] = v
        out.append((name, texts))
    return out

