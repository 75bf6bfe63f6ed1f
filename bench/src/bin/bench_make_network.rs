//! Generates a large, realistic NHDPlusV2 GeoPackage for the benchmarks
//! (`hydroplot_bench::make_network`, whose doc says what it holds).
//!
//! Usage: `bench_make_network --cols C --rows R --out FILE.gpkg [--topology-index] [--seamless]`

use hydroplot_bench::make_network::{generate, Options};

fn main() {
    generate(&Options::from_args(std::env::args().skip(1)));
}
