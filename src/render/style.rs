//! plot_config styles: the spec's defaults, overridable per element and property.
//!
//! | element | properties | defaults |
//! |---|---|---|
//! | basin | lwd, col, border | lwd=1, col=NA, border="black" |
//! | flowline | lwd, col | lwd=1, col="blue" |
//! | outlets.default | col, border, pch, cex | col="black", border=NA, pch=19, cex=1 |
//! | outlets.gaugesite (= nwissite) | col, border, pch, cex | col="grey40", border=NA, pch=17, cex=1 |
//! | outlets.huc12pp | col, border, pch, cex | col="white", border="black", pch=22, cex=1 |
//! | outlets.wqp | col, border, pch, cex | col="red", border=NA, pch=20, cex=1 |
//! | network_wtbd | lwd, col, border | lwd=1, col="lightblue", border="black" |
//! | off_network_wtbd | lwd, col, border | lwd=1, col="darkblue", border="black" |
//!
//! An outlet source without a style of its own (e.g. `comid`) uses
//! `outlets.default` until the caller styles it.

use super::colors::{self, RColor};
use crate::{Error, Result};
use std::collections::BTreeMap;

/// The style of one element. Which fields apply depends on the element:
/// polygons use `lwd`, `col` (fill) and `border`; lines `lwd` and `col`;
/// outlet points `col`, `border`, `pch` and `cex`.
#[derive(Debug, Clone, PartialEq)]
pub struct Style {
    /// Line width in R units (1 = one pixel at scale 1, see [`super::symbols`]).
    pub lwd: f64,
    /// Line colour, polygon fill, or symbol colour (fill for pch 21-25).
    pub col: RColor,
    /// Polygon border, or the border of pch 21-25.
    pub border: RColor,
    /// R plotting symbol 0-25.
    pub pch: i32,
    /// Symbol size factor.
    pub cex: f64,
}

impl Style {
    fn new(lwd: f64, col: &str, border: &str, pch: i32) -> Style {
        let c = |v: &str| colors::parse(v).expect("default styles use valid R colours");
        Style {
            lwd,
            col: c(col),
            border: c(border),
            pch,
            cex: 1.0,
        }
    }
}

/// The styles of every plot element.
#[derive(Debug, Clone, PartialEq)]
pub struct PlotStyles {
    pub basin: Style,
    pub flowline: Style,
    pub network_wtbd: Style,
    pub off_network_wtbd: Style,
    /// Outlet styles by feature source (`default`, `gaugesite`, `huc12pp`, `wqp`, ...).
    outlets: BTreeMap<String, Style>,
}

impl Default for PlotStyles {
    fn default() -> Self {
        let outlets = [
            ("default", Style::new(1.0, "black", "NA", 19)),
            ("gaugesite", Style::new(1.0, "grey40", "NA", 17)),
            ("huc12pp", Style::new(1.0, "white", "black", 22)),
            ("wqp", Style::new(1.0, "red", "NA", 20)),
        ];
        PlotStyles {
            basin: Style::new(1.0, "NA", "black", 19),
            flowline: Style::new(1.0, "blue", "NA", 19),
            network_wtbd: Style::new(1.0, "lightblue", "black", 19),
            off_network_wtbd: Style::new(1.0, "darkblue", "black", 19),
            outlets: outlets
                .into_iter()
                .map(|(k, s)| (k.to_string(), s))
                .collect(),
        }
    }
}

/// `nwissite` (the real service's name) shares the spec's `gaugesite` style.
fn outlet_key(source: &str) -> String {
    match source.to_ascii_lowercase().as_str() {
        "nwissite" => "gaugesite".to_string(),
        s => s.to_string(),
    }
}

impl PlotStyles {
    /// The style of outlets whose feature source is `source` (`default` when
    /// the source has none).
    pub fn outlet(&self, source: &str) -> &Style {
        self.outlets
            .get(&outlet_key(source))
            .unwrap_or(&self.outlets["default"])
    }

    /// Sets one property of one element, as R's plot_config does: `element` is
    /// `basin`, `flowline`, `network_wtbd`, `off_network_wtbd` or
    /// `outlets.<source>`; `property` is `lwd`, `col`, `border`, `pch` or `cex`
    /// (as the table in the module documentation allows). Errors are
    /// `Error::InvalidArgument` naming what is wrong; nothing changes on error.
    pub fn set(&mut self, element: &str, property: &str, value: &str) -> Result<()> {
        let bad = |why: String| {
            Error::InvalidArgument(format!("style {element}.{property} = {value:?}: {why}"))
        };
        let source = element.strip_prefix("outlets.").filter(|s| !s.is_empty());
        let allowed: &[&str] = match (element, source) {
            ("flowline", _) => &["lwd", "col"],
            ("basin" | "network_wtbd" | "off_network_wtbd", _) => &["lwd", "col", "border"],
            (_, Some(_)) => &["col", "border", "pch", "cex"],
            _ => {
                return Err(bad(
                    "unknown element; expected basin, flowline, network_wtbd, off_network_wtbd or outlets.<source>".into(),
                ))
            }
        };
        if !allowed.contains(&property) {
            return Err(bad(format!(
                "unknown property for {element}; expected one of {}",
                allowed.join(", ")
            )));
        }
        let number = || -> Result<f64> {
            value
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| bad("expected a finite number >= 0".into()))
        };
        let colour = || colors::parse(value).map_err(|e| bad(e.to_string()));
        let apply: Box<dyn FnOnce(&mut Style)> = match property {
            "lwd" => {
                let v = number()?;
                Box::new(move |s| s.lwd = v)
            }
            "cex" => {
                let v = number()?;
                Box::new(move |s| s.cex = v)
            }
            "pch" => {
                let v = value
                    .trim()
                    .parse::<i32>()
                    .ok()
                    .filter(|p| (0..=25).contains(p))
                    .ok_or_else(|| bad("expected an R symbol number 0-25".into()))?;
                Box::new(move |s| s.pch = v)
            }
            "col" => {
                let v = colour()?;
                Box::new(move |s| s.col = v)
            }
            _ => {
                let v = colour()?;
                Box::new(move |s| s.border = v)
            }
        };
        let style = match (element, source) {
            ("basin", _) => &mut self.basin,
            ("flowline", _) => &mut self.flowline,
            ("network_wtbd", _) => &mut self.network_wtbd,
            ("off_network_wtbd", _) => &mut self.off_network_wtbd,
            (_, source) => {
                let default = self.outlets["default"].clone();
                self.outlets
                    .entry(outlet_key(source.unwrap_or("default")))
                    .or_insert(default)
            }
        };
        apply(style);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tiny_skia::ColorU8;

    #[test]
    fn defaults_follow_the_spec_table() {
        let s = PlotStyles::default();
        assert_eq!(s.basin.col, None);
        assert_eq!(s.basin.border, Some(ColorU8::from_rgba(0, 0, 0, 255)));
        assert_eq!(s.flowline.col, Some(ColorU8::from_rgba(0, 0, 255, 255)));
        assert_eq!(
            s.network_wtbd.col,
            Some(ColorU8::from_rgba(173, 216, 230, 255))
        );
        assert_eq!(
            s.off_network_wtbd.col,
            Some(ColorU8::from_rgba(0, 0, 139, 255))
        );
        assert_eq!(s.outlet("nwissite").pch, 17);
        assert_eq!(
            s.outlet("gaugesite").col,
            Some(ColorU8::from_rgba(102, 102, 102, 255))
        );
        assert_eq!(s.outlet("huc12pp").pch, 22);
        assert_eq!(s.outlet("wqp").pch, 20);
        assert_eq!(s.outlet("comid").pch, 19);
    }

    #[test]
    fn set_overrides_one_property_and_names_errors() {
        let mut s = PlotStyles::default();
        s.set("flowline", "col", "#1f78b4").unwrap();
        s.set("flowline", "lwd", "2.5").unwrap();
        s.set("outlets.comid", "pch", "15").unwrap();
        s.set("outlets.nwissite", "cex", "2").unwrap();
        assert_eq!(
            s.flowline.col,
            Some(ColorU8::from_rgba(0x1f, 0x78, 0xb4, 255))
        );
        assert_eq!(s.flowline.lwd, 2.5);
        assert_eq!(
            (s.outlet("comid").pch, s.outlet("comid").col),
            (15, s.outlet("default").col)
        );
        assert_eq!(
            (s.outlet("gaugesite").cex, s.outlet("gaugesite").pch),
            (2.0, 17)
        );
        let before = s.clone();
        for (e, p, v, named) in [
            ("rivers", "col", "red", "unknown element"),
            ("flowline", "pch", "3", "unknown property"),
            ("basin", "lwd", "-1", ">= 0"),
            ("outlets.wqp", "pch", "26", "0-25"),
            ("basin", "border", "blu", "\"blu\""),
        ] {
            let err = s.set(e, p, v).unwrap_err();
            assert!(matches!(err, Error::InvalidArgument(_)));
            assert!(err.to_string().contains(named), "{err}");
        }
        assert_eq!(s, before);
    }
}
