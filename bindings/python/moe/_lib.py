"""The C library through ctypes: where it is found, the prototypes of the functions used,
and statuses turned into exceptions. Only the installed public API (libmoe.so.1)."""
import ctypes
import os
import re
import subprocess

# The ABI this package was written for: libmoe.so.1, 0.1 or later.
SONAME = "libmoe.so.1"
MIN_VERSION = 10000  # moe_version_number() of 1.0.0, the first with the option listing


class MoeError(Exception):
    """A libmoe status other than MOE_OK; `status` is its number, the message libmoe's."""

    def __init__(self, status, message):
        """The error of libmoe status `status`, with its message."""
        super().__init__(message)
        self.status = status


class MoeNumericalError(MoeError, ArithmeticError):
    """MOE_ERR_NUMERICAL: the computation failed numerically (e.g. a covariance that is not
    positive definite)."""


class MoeValueError(MoeError, ValueError):
    """A value libmoe (or this package, before the call) refuses: a ValueError."""


_VALUE_STATUSES = {1, 2, 3, 4, 5, 6, 7, 14, 16}  # invalid argument .. not found, invalid label
MOE_ERR_NUMERICAL = 9
MOE_ERR_CANCELLED = 13
MOE_ERR_BUFFER_TOO_SMALL = 15


def _pkg_config_libdir():
    """libdir of moe.pc, for a prefix the loader does not search (such as /usr/local/lib
    without ldconfig, or a PKG_CONFIG_PATH prefix)."""
    try:
        result = subprocess.run(["pkg-config", "--variable=libdir", "moe"], capture_output=True,
                                text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return result.stdout.strip() if result.returncode == 0 and result.stdout.strip() else None


# The copy a wheel carries (setup.py builds it into the package): the library the package was
# built and tested with, found by path so that no loader setting is needed.
BUNDLED = os.path.join(os.path.dirname(os.path.abspath(__file__)), SONAME)


def _candidates():
    """MOE_LIBRARY alone when set (the way to prefer an installed libmoe over the wheel's);
    else the copy inside the package when the wheel carries one; else the SONAME through the
    loader's search path, then in pkg-config's libdir. Never libmoe.so or another SONAME: a
    binding written for ABI 1 must not load ABI 2."""
    path = os.environ.get("MOE_LIBRARY")
    if path:
        yield path
        return
    if os.path.exists(BUNDLED):
        yield BUNDLED
    yield SONAME
    # pkg-config is a process: asked only when the copies above did not load.
    libdir = _pkg_config_libdir()
    if libdir:
        yield os.path.join(libdir, SONAME)


def _load():
    errors = []
    for path in _candidates():
        try:
            lib = ctypes.CDLL(path)
            break
        except OSError as error:
            errors.append(f"{path}: {error}")
    else:
        raise ImportError("cannot load libmoe: install the moe wheel built from the libmoe source "
                          "tree (pip install bindings/python), install libmoe, or set "
                          f"MOE_LIBRARY to the path of {SONAME} ({'; '.join(errors)})")
    lib.moe_version_number.restype = ctypes.c_int
    lib.moe_version_string.restype = ctypes.c_char_p
    if lib.moe_version_number() < MIN_VERSION:
        raise ImportError(f"libmoe {lib.moe_version_string().decode()} is older than 1.0, "
                          "which this package needs")
    return lib, path


lib, LIBRARY_PATH = _load()

c_double_p = ctypes.POINTER(ctypes.c_double)
c_size_t_p = ctypes.POINTER(ctypes.c_size_t)


class ModelSpec(ctypes.Structure):
    """moe_model_spec (moe/model.h), version 3: version 1's fields, then (libmoe 1.1) the
    features the gate and the experts see (n_features bytes each, NULL: every one), their
    intercept flags and the experts' offset feature (-1: none), then (libmoe 1.2) the
    binomial experts' trials feature (-1: none)."""
    _fields_ = [("version", ctypes.c_uint), ("family", ctypes.c_int),
                ("n_experts", ctypes.c_size_t), ("n_features", ctypes.c_size_t),
                ("intercept", ctypes.c_int), ("n_classes", ctypes.c_size_t),
                ("link", ctypes.c_int), ("gate_features", ctypes.POINTER(ctypes.c_ubyte)),
                ("expert_features", ctypes.POINTER(ctypes.c_ubyte)),
                ("gate_intercept", ctypes.c_int), ("expert_intercept", ctypes.c_int),
                ("offset_feature", ctypes.c_long), ("trials_feature", ctypes.c_long)]


MODEL_SPEC_VERSION = 3  # the layout ModelSpec describes: MOE_MODEL_SPEC_VERSION


class Criteria(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint), ("loglik", ctypes.c_double),
                ("n_params", ctypes.c_double), ("n_obs", ctypes.c_double),
                ("aic", ctypes.c_double), ("bic", ctypes.c_double), ("icl", ctypes.c_double),
                ("entropy", ctypes.c_double)]


class Progress(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint), ("restart", ctypes.c_size_t),
                ("n_restarts", ctypes.c_size_t), ("iteration", ctypes.c_size_t),
                ("loglik", ctypes.c_double)]


class OptionInfo(ctypes.Structure):
    """moe_option_info (moe/fitter.h), version 1."""
    _fields_ = [("version", ctypes.c_uint), ("name", ctypes.c_char_p), ("type", ctypes.c_int),
                ("flags", ctypes.c_uint), ("lower", ctypes.c_double), ("upper", ctypes.c_double),
                ("default_value", ctypes.c_double),
                ("keywords", ctypes.POINTER(ctypes.c_char_p)),
                ("description", ctypes.c_char_p), ("number", ctypes.c_int)]


PROGRESS_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(Progress), ctypes.c_void_p)

_prototypes = {
    "moe_strerror": (ctypes.c_char_p, [ctypes.c_int]),
    "moe_option_name": (ctypes.c_char_p, [ctypes.c_int]),
    "moe_option_info_init": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_uint]),
    "moe_fitter_option_count": (ctypes.c_size_t, [ctypes.c_void_p]),
    "moe_fitter_option_info": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t,
                                              ctypes.c_void_p]),
    "moe_fitter_get_option": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, c_double_p]),
    "moe_last_error": (ctypes.c_char_p, []),
    "moe_model_spec_init": (ctypes.c_int, [ctypes.POINTER(ModelSpec), ctypes.c_uint]),
    "moe_model_create": (ctypes.c_int, [ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ModelSpec)]),
    "moe_model_get_spec": (ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(ModelSpec)]),
    "moe_model_free": (None, [ctypes.c_void_p]),
    "moe_model_clone": (ctypes.c_int, [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p]),
    "moe_model_last_error": (ctypes.c_char_p, [ctypes.c_void_p]),
    "moe_model_n_experts": (ctypes.c_size_t, [ctypes.c_void_p]),
    "moe_model_n_features": (ctypes.c_size_t, [ctypes.c_void_p]),
    "moe_model_n_classes": (ctypes.c_size_t, [ctypes.c_void_p]),
    "moe_model_n_inputs": (ctypes.c_size_t, [ctypes.c_void_p]),
    "moe_model_expert_rows": (ctypes.c_size_t, [ctypes.c_void_p]),
    "moe_model_n_free_params": (ctypes.c_size_t, [ctypes.c_void_p]),
    "moe_model_family": (ctypes.c_int, [ctypes.c_void_p]),
    "moe_model_scale_kind": (ctypes.c_int, [ctypes.c_void_p]),
    "moe_model_link": (ctypes.c_int, [ctypes.c_void_p]),
    "moe_model_prediction_width": (ctypes.c_size_t, [ctypes.c_void_p]),
    "moe_family_name": (ctypes.c_char_p, [ctypes.c_int]),
    "moe_family_from_name": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]),
    "moe_link_name": (ctypes.c_char_p, [ctypes.c_int]),
    "moe_link_from_name": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]),
    "moe_criteria_init": (ctypes.c_int, [ctypes.POINTER(Criteria), ctypes.c_uint]),
    "moe_model_has_intercept": (ctypes.c_int, [ctypes.c_void_p]),
    "moe_model_get_gate": (ctypes.c_int, [ctypes.c_void_p, c_double_p, ctypes.c_size_t]),
    "moe_model_get_experts": (ctypes.c_int, [ctypes.c_void_p, c_double_p, ctypes.c_size_t]),
    "moe_model_get_variances": (ctypes.c_int, [ctypes.c_void_p, c_double_p, ctypes.c_size_t]),
    "moe_model_get_degrees": (ctypes.c_int, [ctypes.c_void_p, c_double_p, ctypes.c_size_t]),
    "moe_model_set_degrees": (ctypes.c_int, [ctypes.c_void_p, c_double_p, ctypes.c_size_t]),
    "moe_model_predict": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t, c_double_p,
                                         ctypes.c_size_t, c_double_p, ctypes.c_size_t]),
    "moe_model_gate_proba": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t, c_double_p,
                                            ctypes.c_size_t, c_double_p, ctypes.c_size_t]),
    "moe_model_posterior": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t, c_double_p,
                                           ctypes.c_size_t, c_double_p, c_double_p,
                                           ctypes.c_size_t]),
    "moe_model_classify": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t, c_double_p,
                                          ctypes.c_size_t, c_size_t_p, ctypes.c_size_t]),
    "moe_model_cluster": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t, c_double_p,
                                         ctypes.c_size_t, c_double_p, c_size_t_p,
                                         ctypes.c_size_t]),
    "moe_model_loglik": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t, c_double_p,
                                        ctypes.c_size_t, c_double_p, c_double_p, c_double_p]),
    "moe_model_criteria": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t, c_double_p,
                                          ctypes.c_size_t, c_double_p, c_double_p,
                                          ctypes.POINTER(Criteria)]),
    "moe_model_accuracy": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t, c_double_p,
                                          ctypes.c_size_t, c_double_p, c_double_p, c_double_p]),
    "moe_model_vcov": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t, c_double_p,
                                      ctypes.c_size_t, c_double_p, c_double_p, c_double_p,
                                      ctypes.c_size_t]),
    "moe_model_vcov_penalized": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t, c_double_p,
                                                ctypes.c_size_t, c_double_p, c_double_p,
                                                ctypes.c_double, ctypes.c_double, c_double_p,
                                                ctypes.c_size_t]),
    "moe_model_save_buffer": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                                             c_size_t_p]),
    "moe_model_load_buffer": (ctypes.c_int, [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p,
                                             ctypes.c_size_t]),
    "moe_model_save": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p]),
    "moe_model_load": (ctypes.c_int, [ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p]),
    "moe_fitter_create": (ctypes.c_int, [ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p]),
    "moe_fitter_free": (None, [ctypes.c_void_p]),
    "moe_fitter_set_option": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]),
    "moe_fitter_last_error": (ctypes.c_char_p, [ctypes.c_void_p]),
    "moe_fitter_set_progress": (ctypes.c_int, [ctypes.c_void_p, PROGRESS_FN, ctypes.c_void_p]),
    "moe_fitter_fit": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                                      c_double_p, ctypes.c_size_t, c_double_p, c_double_p]),
    "moe_fitter_partial_fit": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                                              c_double_p, ctypes.c_size_t, c_double_p,
                                              c_double_p]),
    "moe_fitter_estimator_name": (ctypes.c_char_p, [ctypes.c_void_p]),
    "moe_fitter_get_double": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, c_double_p]),
    "moe_estimator_count": (ctypes.c_size_t, []),
    "moe_estimator_name": (ctypes.c_char_p, [ctypes.c_size_t]),
    "moe_estimator_description": (ctypes.c_char_p, [ctypes.c_size_t]),
    "moe_fitter_save_state_buffer": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p,
                                                    ctypes.c_size_t, c_size_t_p]),
    "moe_fitter_load_state_buffer": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p,
                                                    ctypes.c_size_t]),
}
_missing = [name for name in _prototypes if not hasattr(lib, name)]
if _missing:
    # A libmoe.so.1 from before these functions were added: say so at import rather than with
    # an AttributeError in the middle of a fit.
    raise ImportError(f"the loaded libmoe ({lib.moe_version_string().decode()}, {LIBRARY_PATH}) "
                      f"lacks {', '.join(_missing)}: this package needs a newer libmoe.so.1")
for _name, (_restype, _argtypes) in _prototypes.items():
    _function = getattr(lib, _name)
    _function.restype = _restype
    _function.argtypes = _argtypes


# The prefix of every library message about one row of the data (moe/common.h): "row I: ",
# "row I, column J: ", "row I, response: " or "row I, weight: ", I and J counting from 0.
_ROW_PREFIX = re.compile(r"^row (\d+)(, column (\d+))?(?=[,:])")


def _counted_rows(text):
    """A library message that names a row, saying how it counts: numpy's indices count from 0
    too, but a reader should not have to guess (R counts the same rows from 1)."""
    match = _ROW_PREFIX.match(text)
    if match is None:
        # a message about the whole response column: fit's argument is y
        if text.startswith("the response is constant"):
            return "the response y" + text[len("the response"):]
        return text
    if match.group(2) is not None:
        named = f"row {match.group(1)}, column {match.group(3)} (both counting from 0)"
    else:
        named = f"row {match.group(1)} (counting from 0)"
    return named + text[match.end():]


def check(status, message_source=None):
    """Raise the exception of a status, with the library's message."""
    if status == 0:
        return
    message = message_source() if message_source is not None else lib.moe_last_error()
    text = (message or b"").decode("utf-8", "replace") or lib.moe_strerror(status).decode()
    text = _counted_rows(text)
    if status == MOE_ERR_CANCELLED:
        raise KeyboardInterrupt(text)
    if status == MOE_ERR_NUMERICAL:
        raise MoeNumericalError(status, text)
    if status in _VALUE_STATUSES:
        raise MoeValueError(status, text)
    raise MoeError(status, text)
