#!/bin/sh
# Makes DIR (a copy of src/rust with real files, as `R CMD build` leaves it)
# into self-contained crate sources for the package tarball:
#   - Cargo.toml trimmed to what the R package builds: the library, no
#     binaries, no dev-dependencies (the crate names itself there), no
#     workspace members, no PROJ backend, no debug info;
#   - the dependencies vendored (cargo vendor) and packed into
#     vendor.tar.xz, which src/Makevars unpacks to build offline.
#
#   sh tools/bundle-crate.sh DIR   (./cleanup runs it)
set -eu
dir="$1"
cargo="${CARGO:-cargo}"
"$cargo" --version >/dev/null 2>&1 || cargo="$HOME/.cargo/bin/cargo"

awk '
  /^\[/ {
    section = $0
    skip = (section ~ /^\[\[bin\]\]$|^\[dev-dependencies\]$|^\[workspace\]$/)
    if (!skip) print
    if (section == "[package]") print "autobins = false\nautoexamples = false\nautotests = false\nautobenches = false"
    next
  }
  skip { next }
  section == "[package]" && /^readme *=/ { next }
  (section == "[features]" || section == "[dependencies]") && /^proj *=/ { next }
  section == "[features]" && /^# .*PROJ/ { next }
  section == "[profile.release]" && /^debug *=/ { print "debug = false"; next }
  { print }
  END {
    print "\n# The R package'"'"'s own workspace: never a member of an enclosing one."
    print "[workspace]"
    print "\n[lints.rust]"
    print "unexpected_cfgs = { level = \"warn\", check-cfg = [\"cfg(feature, values(\\\"proj\\\"))\"] }"
  }
' "$dir/Cargo.toml" >"$dir/Cargo.toml.trimmed"
mv "$dir/Cargo.toml.trimmed" "$dir/Cargo.toml"
rm -rf "$dir/src/bin"

echo "bundle-crate: vendoring the dependencies of $dir/Cargo.toml"
rm -rf "$dir/vendor"
"$cargo" vendor --quiet --manifest-path "$dir/Cargo.toml" "$dir/vendor" >/dev/null
# xz at level 3 on every core (GNU tar hands XZ_OPT to xz): 230 MB of
# sources, most of them the Windows crates, pack in seconds instead of the
# nearly two minutes of the default level on one core, for 15% more bytes.
(cd "$dir" && XZ_OPT="-3 -T0" tar -cJf vendor.tar.xz vendor)
rm -rf "$dir/vendor"
echo "bundle-crate: $dir/vendor.tar.xz ($(du -k "$dir/vendor.tar.xz" | cut -f1) kB)"
