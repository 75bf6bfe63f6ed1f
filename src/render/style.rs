//! plot_config styles: the spec's defaults, overridable per element and property.

use crate::Result;

/// The styles of every plot element.
#[derive(Debug, Clone, Default)]
pub struct PlotStyles {}

impl PlotStyles {
    /// Sets one property of one element, as R's plot_config does: `element` is
    /// `basin`, `flowline`, `network_wtbd`, `off_network_wtbd` or
    /// `outlets.<source>`; `property` is `lwd`, `col`, `border`, `pch` or `cex`.
    pub fn set(&mut self, _element: &str, _property: &str, _value: &str) -> Result<()> {
        todo!()
    }
}
