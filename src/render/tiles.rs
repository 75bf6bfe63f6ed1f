//! Basemap tiles (in progress).

/// The default basemap provider.
pub const DEFAULT_PROVIDER: &str = "Esri.NatGeoWorldMap";
