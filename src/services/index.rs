//! The linked-data index service: one feature (`GET {index_url}/linked-data/
//! {source}/{id}`) and the basin upstream of it (R1).

use crate::context::Context;
use crate::feature::{from_geojson_feature, Feature};
use crate::http::{encode_component, with_query, Service};
use crate::url::redact_url;
use crate::{Error, Result};

/// The feature `source`/`id` (e.g. `nwissite`/`USGS-05427718`): the first
/// feature of the service's answer. 404 or an empty answer is `NotFound`.
pub fn feature(ctx: &Context, source: &str, id: &str) -> Result<Feature> {
    let url = feature_url(ctx, source, id);
    let response = ctx.get(Service::Index, &url).map_err(|e| match e {
        Error::NotFound {
            http_status,
            message,
        } => Error::NotFound {
            http_status,
            message: format!("the index service has no feature {source}/{id}: {message}"),
        },
        other => other,
    })?;
    first_feature(&response.body, &url)?.ok_or_else(|| {
        Error::not_found(format!(
            "the index service has no feature {source}/{id} ({} is empty)",
            redact_url(&url)
        ))
    })
}

/// R1: the basin upstream of `source`/`id`, simplified, catchments not split.
pub fn basin(ctx: &Context, source: &str, id: &str) -> Result<Feature> {
    let url = with_query(
        &format!("{}/basin", feature_url(ctx, source, id)),
        &[("simplify", "true"), ("splitCatchment", "false")],
    );
    let response = ctx.get(Service::Index, &url)?;
    first_feature(&response.body, &url)?.ok_or_else(|| {
        Error::not_found(format!(
            "the index service has no basin for {source}/{id} ({} is empty)",
            redact_url(&url)
        ))
    })
}

fn feature_url(ctx: &Context, source: &str, id: &str) -> String {
    format!(
        "{}/linked-data/{}/{}",
        ctx.config.index_url,
        encode_component(source),
        encode_component(id)
    )
}

/// The first feature of a GeoJSON FeatureCollection or Feature document.
fn first_feature(body: &[u8], url: &str) -> Result<Option<Feature>> {
    let url = redact_url(url);
    let doc: geojson::GeoJson = serde_json::from_slice(body).map_err(|e| {
        Error::Service(format!(
            "the index service's answer to {url} is not GeoJSON: {e}"
        ))
    })?;
    let feature = match doc {
        geojson::GeoJson::FeatureCollection(fc) => fc.features.into_iter().next(),
        geojson::GeoJson::Feature(f) => Some(f),
        geojson::GeoJson::Geometry(_) => {
            return Err(Error::Service(format!(
                "the index service's answer to {url} is a bare geometry, not a feature"
            )))
        }
    };
    feature
        .map(from_geojson_feature)
        .transpose()
        .map_err(|e| e.context(&format!("index service answer to {url}")))
}
