#!/usr/bin/env python3
"""Builds the plugin's installable zip, the layout QGIS's "Install from ZIP"
and the plugin repository take: the folder hydroplot_qgis/ at the top, its
sources, metadata, icon and licence, no bytecode.

    python3 qgis/package.py [--out DIR]

writes DIR/hydroplot_qgis-<version>.zip (DIR: target/qgis, under
CARGO_TARGET_DIR when set) and prints its path. No make, no QGIS needed.
"""

import argparse
import configparser
import os
import pathlib
import zipfile

HERE = pathlib.Path(__file__).resolve().parent
PLUGIN = HERE / "hydroplot_qgis"
#: What goes in: the plugin's own files, never caches or editor droppings.
INCLUDED_SUFFIXES = {".py", ".txt", ".png", ""}


def version():
    """The version metadata.txt declares."""
    metadata = configparser.ConfigParser()
    metadata.read(PLUGIN / "metadata.txt", encoding="utf-8")
    return metadata["general"]["version"]


def plugin_files():
    """The plugin's files, relative to its folder, sorted."""
    return sorted(
        p.relative_to(PLUGIN) for p in PLUGIN.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix in INCLUDED_SUFFIXES
    )


def build(out_dir):
    """Writes the zip into ``out_dir`` (made if missing); returns its path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{PLUGIN.name}-{version()}.zip"
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in plugin_files():
            archive.write(PLUGIN / name, f"{PLUGIN.name}/{name.as_posix()}")
    partial.replace(path)
    return path


def main():
    default = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", HERE.parent / "target")) / "qgis"
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=pathlib.Path, default=default, help=f"the folder (default {default})")
    print(build(parser.parse_args().out))


if __name__ == "__main__":
    main()
