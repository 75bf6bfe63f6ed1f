//! Gauge site ids: the agency prefix the linked-data service wants, and the
//! site number a local `Gage` layer holds. Below both the request (which
//! checks a site id) and the outlets (which resolve it).

/// `05428500` -> `USGS-05428500`; ids that carry an agency prefix stay.
pub fn site_id(id: &str) -> String {
    let id = id.trim();
    if id.contains('-') {
        id.to_string()
    } else {
        format!("USGS-{id}")
    }
}

/// The site number of a gauge id (`USGS-05428500` -> `05428500`).
pub fn site_number(id: &str) -> &str {
    id.rsplit_once('-').map_or(id, |(_, n)| n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_site_ids_get_the_agency_prefix() {
        assert_eq!(site_id("05428500"), "USGS-05428500");
        assert_eq!(site_id("USGS-05428500"), "USGS-05428500");
        assert_eq!(site_number("USGS-05428500"), "05428500");
    }
}
