"""Type checks of plot_hydro's arguments before they cross into C.

The library checks every value (ranges, names, files) in one place, so the
bindings refuse what the CLI and C refuse, with the same words. What it
cannot see is a Python value that the crossing itself would change:
``bool("False")`` is True, ``int(3.7)`` is 3, and ctypes passes the low 32
bits of ``2**40`` to a ``c_int32``, which is 0, a valid zoom. These helpers
refuse such values with an error naming the argument, and hand the rest on
unchanged for the library to judge.
"""

import numbers
import os

#: The values a ``c_int32`` parameter (zoom, stream order) carries unchanged.
INT32 = (-(2**31), 2**31 - 1)
#: The values a ``c_uint32`` parameter (map size) carries unchanged.
UINT32 = (0, 2**32 - 1)


def _is_bool(value):
    kind = type(value)
    return isinstance(value, bool) or (kind.__module__ == "numpy" and kind.__name__ in ("bool", "bool_"))


def flag(name, value):
    """``value`` as a bool when it is one (numpy's ``bool_`` too); a TypeError
    otherwise, since the truth of ``"False"``, ``"no"`` or ``None`` is not what
    the caller meant."""
    if _is_bool(value):
        return bool(value)
    raise TypeError(f"{name} must be True or False, not {value!r}")


def whole(name, value, limits=INT32):
    """``value`` as an int when it is a whole number (an integral float such as
    ``12.0`` too) that the C parameter's type holds (``limits``, inclusive); a
    TypeError or ValueError naming ``name`` otherwise."""
    integral = isinstance(value, numbers.Integral) and not _is_bool(value)
    real = isinstance(value, numbers.Real) and not _is_bool(value)
    if not (integral or (real and float(value).is_integer())):
        raise TypeError(f"{name} must be a whole number, not {value!r}")
    number = int(value)
    low, high = limits
    if not low <= number <= high:
        raise ValueError(f"{name} = {number} does not fit the library's {low}..{high}")
    return number


def holds(value, n):
    """Whether ``value`` is a sequence of ``n`` items (a tuple, list or numpy
    array; never a string, whose characters would be taken one by one)."""
    return not isinstance(value, (str, bytes)) and hasattr(value, "__len__") and len(value) == n


def size_pair(name, value):
    """A (width, height) pair of whole numbers, each fitting a ``c_uint32``."""
    if not holds(value, 2):
        raise TypeError(f"{name} must be a (width, height) pair, not {value!r}")
    return tuple(whole(f"{name}[{i}]", v, UINT32) for i, v in enumerate(value))


def path(name, value):
    """A file path as str: a str, bytes or ``os.PathLike``; a TypeError
    otherwise (a number or a list would otherwise name a file by its repr)."""
    if isinstance(value, (str, bytes, os.PathLike)):
        return os.fsdecode(value)
    raise TypeError(f"{name} must be a file path (str or os.PathLike), not {value!r}")
