"""Arguments checked before they reach libmoe. The C library takes sizes as size_t, strings
up to their first NUL and arrays by pointer alone: a negative count would wrap, a NUL would
cut a name short, and an array shorter than X would be read past its end. So every such
argument is refused here, with a message naming it, as the MoeValueError (a ValueError)
the library raises for the values it refuses itself."""
import ctypes
import math
import numbers
import os

import numpy as np

from ._lib import MoeValueError, lib

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


def _pinned_bounds():
    """name -> (lower, upper, is_integer) of every option the library pins."""
    bounds = {}
    lower, upper, is_integer = ctypes.c_double(), ctypes.c_double(), ctypes.c_int()
    for number in range(1, 64):
        name = lib.moe_option_name(number)
        if name is None:
            continue
        if lib.moe_option_bounds(number, ctypes.byref(lower), ctypes.byref(upper),
                                 ctypes.byref(is_integer)) == 0:
            bounds[name.decode()] = (lower.value, upper.value, bool(is_integer.value))
    return bounds


PINNED_BOUNDS = _pinned_bounds()


def _decimal(real):
    """Text libmoe parses as the same number: integral values without a fraction, so that an
    option of an estimator's own that takes integers accepts 50.0."""
    return str(int(real)) if real.is_integer() and abs(real) < 2**53 else repr(real)


def option_text(name, value):
    """The text of one option's value, checked against the library's bounds when the option
    is pinned: one value, a whole number for integer options, finite."""
    value = _one_value(name, value)
    if isinstance(value, (str, bytes)):
        return text(f"the value of option {name}", value)
    if isinstance(value, (bool, np.bool_)):
        return b"1" if value else b"0"
    if not isinstance(value, numbers.Real):
        raise invalid(f"option {name} takes a number, a bool or a string, got {value!r}")
    bounds = PINNED_BOUNDS.get(name)
    if bounds is None:
        real = float(value)
        if not math.isfinite(real):
            raise invalid(f"{name} must be a finite number, got {value!r}")
        return (str(int(value)) if isinstance(value, numbers.Integral) else _decimal(real)).encode()
    lower, upper, is_integer = bounds
    if is_integer:
        return str(whole_number(name, value, int(lower), int(upper))).encode()
    real = float(value)
    if not (math.isfinite(real) and lower <= real <= upper):
        raise invalid(f"{name} must be a number in [{lower:g}, {upper:g}], got {value!r}")
    return repr(real).encode()


def _describe(array):
    if array.ndim == 0:
        return "1 value"
    if array.ndim == 1:
        return f"{array.shape[0]} value{'' if array.shape[0] == 1 else 's'}"
    return f"shape {array.shape}"


def per_row(name, values, n):
    """values as n contiguous doubles, one for each of n rows (a column vector counts);
    ValueError naming the array when it has another length or shape."""
    array = np.asarray(values, dtype=np.float64)
    if array.ndim == 2 and array.shape[1] == 1:
        array = array[:, 0]
    if array.ndim != 1 or array.shape[0] != n:
        raise invalid(f"{name} has {_describe(array)} for {n} rows of X: it needs one value "
                      "per row", MOE_ERR_DIMENSION)
    return np.ascontiguousarray(array)
