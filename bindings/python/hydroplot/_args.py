"""Type checks of arguments before they cross into C.

The library checks every value (ranges, names, files) in one place, so the
bindings refuse what the CLI and C refuse, with the same words. What it
cannot see is a Python value that the crossing itself would change:
``bool("False")`` is True, ``int(3.7)`` is 3, and ctypes passes the low 32
bits of ``2**40`` to a ``c_int32``, which is 0, a valid zoom, and of
``2**64 + 13293970`` to a ``c_int64``, which is another comid;
``float("1e3")`` reads a string as a number. These helpers refuse such values
with an error naming the argument, and hand the rest on unchanged for the
library to judge.
"""

import collections.abc
import numbers
import os

#: The values a ``c_int32`` parameter (zoom, stream order) carries unchanged.
INT32 = (-(2**31), 2**31 - 1)
#: The values a ``c_uint32`` parameter (map size) carries unchanged.
UINT32 = (0, 2**32 - 1)
#: The values a ``c_int64`` parameter (comid) carries unchanged.
INT64 = (-(2**63), 2**63 - 1)


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
    is_real = isinstance(value, numbers.Real) and not _is_bool(value)
    if not (integral or (is_real and float(value).is_integer())):
        raise TypeError(f"{name} must be a whole number, not {value!r}")
    number = int(value)
    low, high = limits
    if not low <= number <= high:
        raise ValueError(f"{name} = {number} does not fit the library's {low}..{high}")
    return number


def real(name, value):
    """``value`` as a float when it is a real number (numpy's too); a TypeError
    naming ``name`` otherwise, since ``float("1e3")`` or ``float(True)`` would
    take a string or a flag for a coordinate or a width. NaN and infinities pass on: the
    library judges them with the same words in every binding."""
    if isinstance(value, numbers.Real) and not _is_bool(value):
        return float(value)
    raise TypeError(f"{name} must be a number, not {value!r}")


def holds(value, n):
    """Whether ``value`` is a sequence of ``n`` items (a tuple, list or numpy
    array; never a string, whose characters would be taken one by one)."""
    return not isinstance(value, (str, bytes)) and hasattr(value, "__len__") and len(value) == n


def size_pair(name, value):
    """A (width, height) pair of whole numbers, each fitting a ``c_uint32``."""
    if not holds(value, 2):
        raise TypeError(f"{name} must be a (width, height) pair, not {value!r}")
    return tuple(whole(f"{name}[{i}]", v, UINT32) for i, v in enumerate(value))


def box(name, value):
    """An (xmin, ymin, xmax, ymax) sequence as 4 floats, each checked by
    :func:`real` under its own name (``bbox xmin``)."""
    if not holds(value, 4):
        raise TypeError(f"{name} must be (xmin, ymin, xmax, ymax), not {value!r}")
    return tuple(real(f"{name} {part}", v) for part, v in zip(("xmin", "ymin", "xmax", "ymax"), value))


def point(name, value):
    """(x, y) as floats from an (x, y) pair, a GeoJSON Point (or a Feature of
    one; a third coordinate left out) or a shapely Point; a TypeError or
    ValueError naming ``name`` otherwise, where a pair of another length would
    fail to unpack and an empty shapely Point raise from GEOS, neither naming
    the argument."""
    xy = value
    if isinstance(value, dict):
        geometry = value.get("geometry", value)
        kind = geometry.get("type") if isinstance(geometry, dict) else None
        if kind != "Point":
            raise ValueError(f"{name} must be a Point, not {kind!r}")
        xy = geometry.get("coordinates")
        xy = xy[:2] if isinstance(xy, (list, tuple)) else xy
    elif getattr(value, "is_empty", False) is True:
        raise ValueError(f"{name} is an empty geometry: it has no (x, y)")
    elif hasattr(value, "x") and hasattr(value, "y"):
        xy = (value.x, value.y)
    if not holds(xy, 2):
        raise TypeError(f"{name} must be an (x, y) pair, a GeoJSON Point or a shapely Point, not {value!r}")
    return real(f"{name} x", xy[0]), real(f"{name} y", xy[1])


def mapping(name, value):
    """``value``'s items when it is a dict (any mapping); a TypeError naming
    ``name`` otherwise, where a str would fail deep inside with no argument
    named (``plot_config={"flowline": "red"}``)."""
    if isinstance(value, collections.abc.Mapping):
        return value.items()
    raise TypeError(f"{name} must be a dict, not {value!r}")


def string(name, value):
    """``value`` when it is a str or None (the library's default); a TypeError
    naming ``name`` otherwise, where ``str()`` would send a list's repr
    (``"['none', 'bogus']"``) or a number as a name."""
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"{name} must be a string, not {value!r}")


def path(name, value):
    """A file path as str: a str, bytes or ``os.PathLike``; a TypeError
    otherwise (a number or a list would otherwise name a file by its repr)."""
    if isinstance(value, (str, bytes, os.PathLike)):
        return os.fsdecode(value)
    raise TypeError(f"{name} must be a file path (str or os.PathLike), not {value!r}")
