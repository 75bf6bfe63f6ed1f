//! plot_config styles (in progress).

/// The styles of every plot element (in progress).
#[derive(Debug, Clone, Default)]
pub struct PlotStyles {}
