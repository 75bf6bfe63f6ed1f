//! Gives the shared library its SONAME, following the ABI policy in README.md:
//! before 1.0 every release may break the ABI, so the SONAME carries the exact
//! version (`libhydroplot.so.0.1.0`); from 1.0 on only the major version
//! (`libhydroplot.so.1`). Only ELF targets have SONAMEs.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let elf = matches!(
        os.as_str(),
        "linux"
            | "android"
            | "freebsd"
            | "netbsd"
            | "openbsd"
            | "dragonfly"
            | "solaris"
            | "illumos"
    );
    if elf {
        let soname = soname(
            &std::env::var("CARGO_PKG_VERSION_MAJOR").unwrap_or_default(),
            &std::env::var("CARGO_PKG_VERSION").unwrap_or_default(),
        );
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,{soname}");
    }
}

/// `libhydroplot.so.<version>` before 1.0, `libhydroplot.so.<major>` after.
fn soname(major: &str, version: &str) -> String {
    if major == "0" {
        format!("libhydroplot.so.{version}")
    } else {
        format!("libhydroplot.so.{major}")
    }
}
