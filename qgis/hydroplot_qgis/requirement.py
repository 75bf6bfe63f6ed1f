"""Whether the hydroplot Python package can be imported into QGIS's Python,
and the words that tell a user how to install it."""

import os
import sys

#: Where the package's sources and install instructions are.
DOCS = "https://example.invalid/hydroplot/blob/main/docs/qgis.md"


def missing_package():
    """None when ``import hydroplot`` works; else the message saying why
    not and how to install it into QGIS's Python."""
    try:
        import hydroplot  # noqa: F401
    except ImportError as e:
        return (
            f"The hydroplot plugin needs the hydroplot Python package in QGIS's Python ({e}). "
            f"Install it with `{python_command()} -m pip install --user <hydroplot clone>/bindings/python` "
            "(pip builds it with Rust's cargo; Debian 12 and later want --break-system-packages too), "
            f"then restart QGIS. See {DOCS}."
        )
    return None


def python_command():
    """The command that runs QGIS's own Python: ``sys.executable`` when it is
    a Python (Windows' OSGeo4W, macOS), else ``python3`` (on Linux QGIS
    embeds the system's Python and ``sys.executable`` is QGIS itself)."""
    name = os.path.basename(sys.executable or "").lower()
    return sys.executable if name.startswith("python") else "python3"
