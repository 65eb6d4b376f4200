//! What the verifiers fetch from the authorization server (its metadata, its keys, its
//! introspection answers): over HTTPS, or plain HTTP on loopback only; from the issuer's own
//! origin unless configured otherwise; within a time limit and a size limit; never following a
//! redirect. The identity provider may sit on a private network, where they usually do: the
//! address is the operator's configuration, never a caller's.

use std::time::Duration;

use serde_json::Value;

/// The longest a metadata document, a key set or an introspection answer may be.
const MAX_DOCUMENT: usize = 256 * 1024;
/// The time a fetch may take, connection included.
const FETCH_TIME: Duration = Duration::from_secs(5);

/// Why a fetch failed: for the log only (it names the server's address).
pub(crate) type FetchError = String;

/// The HTTP client of the verifiers.
pub(crate) fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(FETCH_TIME)
        .connect_timeout(FETCH_TIME)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap_or_default()
}

/// Whether `url` may be fetched: `https`, or `http` to a loopback host.
pub(crate) fn allowed(url: &url::Url) -> Result<(), String> {
    match url.scheme() {
        "https" => Ok(()),
        "http" if is_loopback(url) => Ok(()),
        "http" => Err(format!(
            "{url}: plain http is allowed for a loopback address only; use https"
        )),
        other => Err(format!("{url}: the scheme must be https, not {other}")),
    }
}

fn is_loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// `url` parsed and checked by [`allowed`].
pub(crate) fn parse(url: &str, what: &str) -> Result<url::Url, String> {
    let parsed = url::Url::parse(url).map_err(|e| format!("{what} `{url}`: {e}"))?;
    allowed(&parsed).map_err(|e| format!("{what} {e}"))?;
    Ok(parsed)
}

/// Whether `url` is on the origin (scheme, host, port) of `issuer`.
pub(crate) fn same_origin(url: &url::Url, issuer: &url::Url) -> bool {
    url.origin() == issuer.origin()
}

/// The JSON object answered at `url` to a GET.
pub(crate) async fn get_json(
    client: &reqwest::Client,
    url: &url::Url,
) -> Result<Value, FetchError> {
    let response = client
        .get(url.clone())
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| format!("GET {url}: {e}"))?;
    read_json(response, url).await
}

/// The JSON object answered at `url` to a form POST of `form` with HTTP Basic `credentials`.
pub(crate) async fn post_form(
    client: &reqwest::Client,
    url: &url::Url,
    credentials: (&str, &str),
    form: &[(&str, &str)],
) -> Result<Value, FetchError> {
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form)
        .finish();
    // RFC 6749, section 2.3.1: the client id and secret form-encoded, then Basic.
    let encode = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
    let response = client
        .post(url.clone())
        .basic_auth(encode(credentials.0), Some(encode(credentials.1)))
        .header(
            reqwest::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded",
        )
        .header(reqwest::header::ACCEPT, "application/json")
        .body(body)
        .send()
        .await
        .map_err(|e| format!("POST {url}: {e}"))?;
    read_json(response, url).await
}

async fn read_json(mut response: reqwest::Response, url: &url::Url) -> Result<Value, FetchError> {
    let status = response.status();
    if !status.is_success() {
        return Err(format!("{url} answered {status}"));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| format!("{url}: {e}"))? {
        if body.len() + chunk.len() > MAX_DOCUMENT {
            return Err(format!(
                "{url}: the answer is longer than {MAX_DOCUMENT} bytes"
            ));
        }
        body.extend_from_slice(&chunk);
    }
    match serde_json::from_slice::<Value>(&body) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(_) => Err(format!("{url}: the answer is not a JSON object")),
        Err(e) => Err(format!("{url}: the answer is not JSON: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_http_is_for_loopback_only() {
        for ok in [
            "https://idp.example/realms/a",
            "http://127.0.0.1:8080/",
            "http://localhost/",
            "http://[::1]:9/",
        ] {
            assert!(parse(ok, "issuer").is_ok(), "{ok}");
        }
        for refused in [
            "http://idp.example/",
            "http://10.0.0.1/",
            "ftp://idp.example/",
        ] {
            assert!(parse(refused, "issuer").is_err(), "{refused}");
        }
    }
}
