//! URLs as messages show them: the host without credentials, and a URL
//! with its `user:password@` and secret query values removed. Every
//! message, warning and drawn attribution that names a URL passes here.

/// The host (and port) of a URL, without credentials.
pub fn host_of(url: &str) -> &str {
    split_url(url).1
}

/// A URL's `scheme://` (empty when none), host without credentials, and
/// the rest (path, query, fragment).
pub fn split_url(url: &str) -> (&str, &str, &str) {
    let (scheme, rest) = match url.find("://") {
        Some(i) => (&url[..i + 3], &url[i + 3..]),
        None => ("", url),
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    (scheme, host, tail)
}

/// The URL without its `user:password@`, everything else as it is: what a
/// page may hand a browser (which refuses credentials in the URLs of a
/// page's images anyway), query keys included, since tiles need them.
pub fn without_credentials(url: &str) -> String {
    let (scheme, host, tail) = split_url(url);
    format!("{scheme}{host}{tail}")
}

/// The URL without credentials: no `user:password@`, and the values of
/// key/token query parameters replaced by `***`.
pub fn redact_url(url: &str) -> String {
    let (scheme, host, tail) = split_url(url);
    let (path, query) = match tail.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (tail, None),
    };
    let mut out = format!("{scheme}{host}{path}");
    if let Some(query) = query {
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((k, _)) if is_secret_param(k) => format!("{k}=***"),
                _ => pair.to_string(),
            })
            .collect();
        out.push('?');
        out.push_str(&pairs.join("&"));
    }
    out
}

/// Whether a query parameter's value is a secret: any name that says key,
/// token, secret, signature, password, auth or credential, as tile and
/// cloud services name theirs (`apikey`, `access_token`,
/// `subscription-key`, `sig`, `X-Amz-Signature`, `client_secret`, ...).
/// Hiding a harmless value costs a message nothing; showing a key leaks it.
fn is_secret_param(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    [
        "key",
        "token",
        "secret",
        "sig",
        "pass",
        "auth",
        "credential",
    ]
    .iter()
    .any(|word| n.contains(word))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_never_reach_messages() {
        assert_eq!(
            redact_url("https://user:pw@tiles.example/a/1/2/3.png?apikey=s3cret&x=1"),
            "https://tiles.example/a/1/2/3.png?apikey=***&x=1"
        );
        let signed = "https://t.example/1/2/3.png?subscription-key=A&sig=B&X-Amz-Signature=C\
                      &client_secret=D&access_token=E&Key=F&passwd=G&z=1";
        assert_eq!(
            redact_url(signed),
            "https://t.example/1/2/3.png?subscription-key=***&sig=***&X-Amz-Signature=***\
             &client_secret=***&access_token=***&Key=***&passwd=***&z=1"
        );
        assert_eq!(
            redact_url("http://127.0.0.1:80/nldi"),
            "http://127.0.0.1:80/nldi"
        );
    }

    #[test]
    fn hosts_are_shown_without_credentials() {
        assert_eq!(
            without_credentials("https://u:p@t.example/{z}/{x}/{y}.png?key=k"),
            "https://t.example/{z}/{x}/{y}.png?key=k"
        );
        assert_eq!(
            host_of("http://agent:hunter2@127.0.0.1:8080/t/{z}.png"),
            "127.0.0.1:8080"
        );
        assert_eq!(split_url("h/x?y"), ("", "h", "/x?y"));
    }
}
