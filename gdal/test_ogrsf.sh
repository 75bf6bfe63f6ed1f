#!/usr/bin/env bash
# Gets GDAL's own driver test program, test_ogrsf, for the installed GDAL the
# way a GDAL developer would, and prints its path:
#
#   gdal/test_ogrsf.sh      # -> $CARGO_TARGET_DIR/test_ogrsf/<version>/test_ogrsf
#
# Debian does not package test_ogrsf. This script downloads the source
# package of the installed libgdal-dev (`apt-get source`, through a deb-src
# entry made from the system's own apt sources, in a private apt state under
# $CARGO_TARGET_DIR: the system's apt configuration is untouched and no root
# is needed), and compiles apps/test_ogrsf.cpp and apps/commonutils.cpp,
# unchanged, against libgdal-dev. The binary is kept per GDAL source version,
# so later runs reuse it; nothing of GDAL's code enters the repository.
# Needs apt-get, dpkg-dev (dpkg-source), g++ and gdal-config.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"

package="$(dpkg-query -W -f='${source:Package}' libgdal-dev)"
version="$(dpkg-query -W -f='${source:Version}' libgdal-dev)"
home="$target/test_ogrsf"
bin="$home/$version/test_ogrsf"
if [ -x "$bin" ]; then
    echo "$bin"
    exit 0
fi

# A private apt state: lists, cache and sources all under $home/apt.
apt_dir="$home/apt"
rm -rf "$apt_dir"
mkdir -p "$apt_dir/sources.list.d" "$apt_dir/state/lists/partial" "$apt_dir/cache/archives/partial"
# Every active source of the system, as deb-src.
for f in /etc/apt/sources.list.d/*.sources; do
    [ -e "$f" ] || continue
    sed 's/^Types:.*/Types: deb-src/' "$f" >"$apt_dir/sources.list.d/$(basename "$f")"
done
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -e "$f" ] || continue
    sed -n 's/^deb\([[:space:]]\)/deb-src\1/p' "$f" >"$apt_dir/sources.list.d/$(basename "$f")"
done
apt_private=(
    -o "Dir::Etc::SourceList=$apt_dir/sources.list"
    -o "Dir::Etc::SourceParts=$apt_dir/sources.list.d"
    -o "Dir::State=$apt_dir/state"
    -o "Dir::Cache=$apt_dir/cache"
    # Nothing shared is written, so no lock: not even the system's dpkg lock,
    # which a concurrent apt-get install holds.
    -o "Debug::NoLocking=1"
    # Not root: apt cannot hand the downloads to its _apt user.
    -o "APT::Sandbox::User=$(id -un)"
)
: >"$apt_dir/sources.list"
echo "test_ogrsf.sh: apt-get source $package=$version (private apt state in $apt_dir)" >&2
apt-get "${apt_private[@]}" -qq update >&2
src="$home/$version/src"
rm -rf "$src"
mkdir -p "$src"
(cd "$src" && apt-get "${apt_private[@]}" -qq source "$package=$version" >&2)
tree="$(find "$src" -mindepth 1 -maxdepth 1 -type d -name "$package-*" | head -n 1)"
[ -f "$tree/apps/test_ogrsf.cpp" ] || {
    echo "test_ogrsf.sh: no apps/test_ogrsf.cpp in the source package" >&2
    exit 1
}

# test_ogrsf uses headers libgdal-dev does not install (commonutils.h,
# ogr_p.h, ...): the source tree's own folders come after the installed ones.
echo "test_ogrsf.sh: compiling test_ogrsf (GDAL $version)" >&2
# shellcheck disable=SC2046 # gdal-config's flags are words
nice -n 10 g++ -std=c++17 -O1 -w $(gdal-config --cflags) \
    -idirafter "$tree/apps" -idirafter "$tree/port" -idirafter "$tree/gcore" \
    -idirafter "$tree/ogr" -idirafter "$tree/ogr/ogrsf_frmts" \
    -o "$bin.tmp" "$tree/apps/test_ogrsf.cpp" "$tree/apps/commonutils.cpp" \
    $(gdal-config --libs) >&2
mv "$bin.tmp" "$bin"
rm -rf "$tree" "$apt_dir"
echo "$bin"
