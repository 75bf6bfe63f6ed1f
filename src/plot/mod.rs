//! plot_hydro: requests, the plot data they produce, and the pipelines that
//! produce it from the services or from a local GeoPackage.

pub mod data;
pub mod request;

pub use data::{Layer, PlotData};
pub use request::{CacheSetting, Outlet, PlotRequest};
