"""Arguments checked before they reach libmoe. The C library takes sizes as size_t, strings
up to their first NUL and arrays by pointer alone: a negative count would wrap, a NUL would
cut a name short, and an array shorter than X would be read past its end. So every such
argument is refused here, with a message naming it, as the MoeValueError (a ValueError)
the library raises for the values it refuses itself."""
import ctypes
import functools
import math
import numbers
import os

import numpy as np

from ._lib import MoeValueError, OptionInfo, lib

SIZE_MAX = 2**63 - 1  # the largest count any size argument is given (and a Python int holds)
MOE_ERR_INVALID_ARGUMENT = 1
MOE_ERR_DIMENSION = 4


def invalid(message, status=MOE_ERR_INVALID_ARGUMENT):
    """The exception libmoe's own refusal would raise (a ValueError), for one refused here."""
    return MoeValueError(status, message)


def text(name, value):
    """A string argument as the bytes libmoe reads, refusing a NUL (C would stop there)."""
    if isinstance(value, bytes):
        value = value.decode("utf-8")
    if not isinstance(value, str):
        raise invalid(f"{name} must be a string, got {value!r}")
    if "\0" in value:
        raise invalid(f"{name} holds a NUL character, which libmoe would cut it at: {value!r}")
    return value.encode("utf-8")


def file_name(name, value):
    """A file name as bytes, refusing a NUL."""
    value = os.fspath(value)
    if isinstance(value, bytes):
        if b"\0" in value:
            raise invalid(f"{name} holds a NUL character: {value!r}")
        return value
    text(name, value)
    return os.fsencode(value)


def _one_value(name, value):
    if np.ndim(value) != 0:
        raise invalid(f"{name} takes one value, got {value!r}")
    return value.item() if isinstance(value, np.ndarray) else value


def whole_number(name, value, lower, upper=SIZE_MAX):
    """value as an int: one whole number in [lower, upper] (an int or an integral float of
    any numpy type; not a bool, a string or NaN)."""
    value = _one_value(name, value)
    problem = invalid(f"{name} must be a whole number in [{lower}, {upper}], got {value!r}")
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise problem
    if isinstance(value, numbers.Integral):
        number = int(value)
    else:
        real = float(value)
        if not math.isfinite(real) or not real.is_integer():
            raise problem
        number = int(real)
    if not lower <= number <= upper:
        raise problem
    return number


OPTION_TYPES = ("integer", "real", "keyword")
LOWER_OPEN, UPPER_OPEN = 0x1, 0x2


@functools.lru_cache(maxsize=None)
def _option_table(estimator):
    """name -> description of every option the estimator's fitter takes, as the library
    lists them (moe_fitter_option_info): pinned options first, then the estimator's own."""
    handle = ctypes.c_void_p()
    status = lib.moe_fitter_create(ctypes.byref(handle), text("estimator", estimator))
    if status != 0:
        raise invalid(f"no estimator named {estimator!r}: "
                      f"{lib.moe_last_error().decode()}", status)
    try:
        table = {}
        for index in range(lib.moe_fitter_option_count(handle)):
            info = OptionInfo()
            lib.moe_option_info_init(ctypes.byref(info), 1)
            if lib.moe_fitter_option_info(handle, index, ctypes.byref(info)) != 0:
                raise invalid(lib.moe_last_error().decode())
            keywords = None
            if info.keywords:
                keywords = []
                while info.keywords[len(keywords)] is not None:
                    keywords.append(info.keywords[len(keywords)].decode())
            kind = OPTION_TYPES[info.type]
            default = info.default_value
            table[info.name.decode()] = {
                "type": kind, "default": keywords[int(default)] if keywords else
                (int(default) if kind == "integer" else default),
                "lower": info.lower, "upper": info.upper,
                "lower_open": bool(info.flags & LOWER_OPEN),
                "upper_open": bool(info.flags & UPPER_OPEN), "keywords": keywords,
                "description": info.description.decode(), "pinned": info.number != 0}
        return table
    finally:
        lib.moe_fitter_free(handle)


@functools.lru_cache(maxsize=None)
def _estimator_names():
    return tuple(lib.moe_estimator_name(index).decode()
                 for index in range(lib.moe_estimator_count()))


def option_table(estimator):
    """A copy of the estimator's option descriptions (see moe.estimator_options)."""
    return {name: dict(entry) for name, entry in _option_table(estimator).items()}


def _decimal(real):
    """Text libmoe parses as the same number: integral values without a fraction."""
    return str(int(real)) if real.is_integer() and abs(real) < 2**53 else repr(real)


def _in_bounds(entry, real):
    above_lower = real > entry["lower"] if entry["lower_open"] else real >= entry["lower"]
    below_upper = real < entry["upper"] if entry["upper_open"] else real <= entry["upper"]
    return math.isfinite(real) and above_lower and below_upper


def option_text(estimator, name, value):
    """The text of one option's value, checked against the library's description of it:
    one value, a whole number for integer options, within the bounds, a keyword (or its
    index) for keyword options. An option the estimator does not take is left to the
    library, whose message names it."""
    value = _one_value(name, value)
    entry = _option_table(estimator).get(name)
    if entry is None:
        # An option of another estimator (batch_size given to em, say): its value is still
        # checked, so that a bad one is a ValueError before the library says it is unused.
        entry = next((_option_table(other)[name] for other in _estimator_names()
                      if name in _option_table(other)), None)
    if isinstance(value, (str, bytes)):
        return text(f"the value of option {name}", value)
    if isinstance(value, (bool, np.bool_)):
        value = int(value)
    if not isinstance(value, numbers.Real):
        raise invalid(f"option {name} takes a number, a bool or a string, got {value!r}")
    if entry is None:
        real = float(value)
        if not math.isfinite(real):
            raise invalid(f"{name} must be a finite number, got {value!r}")
        return (str(int(value)) if isinstance(value, numbers.Integral) else _decimal(real)).encode()
    if entry["type"] != "real":
        return str(whole_number(name, value, int(entry["lower"]), int(entry["upper"]))).encode()
    real = float(value)
    if not _in_bounds(entry, real):
        brackets = ("(" if entry["lower_open"] else "[", ")" if entry["upper_open"] else "]")
        raise invalid(f"{name} must be a number in {brackets[0]}{entry['lower']:g}, "
                      f"{entry['upper']:g}{brackets[1]}, got {value!r}")
    return repr(real).encode()


def _describe(array):
    if array.ndim == 0:
        return "1 value"
    if array.ndim == 1:
        return f"{array.shape[0]} value{'' if array.shape[0] == 1 else 's'}"
    return f"shape {array.shape}"


def one_per_row(name, array, n):
    """array (numpy's, or any with ndim, shape and indexing: a dask array) as a vector of one
    value for each of n rows (a column vector counts); ValueError naming the array when it
    has another length or shape. Reads only the shape: a dask array is not computed."""
    if array.ndim == 2 and array.shape[1] == 1:
        array = array[:, 0]
    if array.ndim != 1 or array.shape[0] != n:
        raise invalid(f"{name} has {_describe(array)} for {n} rows of X: it needs one value "
                      "per row", MOE_ERR_DIMENSION)
    return array


def per_row(name, values, n):
    """values as n contiguous doubles, one for each of n rows (a column vector counts);
    ValueError naming the array when it has another length or shape."""
    return np.ascontiguousarray(one_per_row(name, np.asarray(values, dtype=np.float64), n))
