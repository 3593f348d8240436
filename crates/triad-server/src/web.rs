//! The web app: plain ES modules, CSS and icons from the repository's top-level `web/`
//! folder, embedded in the binary and served at `/` by the router's fallback, so
//! `triad serve` is the one process to start.
//!
//! [`serve`] answers every request no API route matched:
//! - a path under `/api` is the API's JSON `not_found` (an API client never gets HTML);
//! - a file of the app (`/app.css`, `/js/main.js`, …) is sent with its content type (from
//!   its extension), a strong `ETag` (its SHA-256) and `Cache-Control: no-cache`, so a
//!   browser revalidates and gets `304 Not Modified` until the binary changes. The files are
//!   not content-hashed (there is no bundler, and ES modules import each other by plain
//!   names), so revalidation is what keeps a page's modules from different versions;
//! - a page of the app ([`PAGES`]: `/`, `/online`, `/match/7`, …) is `index.html`, whose
//!   module script routes on the path;
//! - any other path a browser asks for as a page (`GET` or `HEAD` with `Accept:
//!   text/html`) is `index.html` with `404 Not Found`, so a mistyped link shows the app's
//!   own "not found" screen, with its navigation, rather than JSON;
//! - anything else is `not_found`, and a method other than GET or HEAD is
//!   `method_not_allowed`.
//!
//! Every answer carries `X-Content-Type-Options: nosniff`; the page also carries a
//! Content-Security-Policy that allows only the app's own scripts, styles and connections
//! (the WebSocket included), and no framing.
//!
//! Release builds embed the files. Debug builds read them from the source tree at run
//! time (rust-embed's default), so editing the app needs a reload, not a rebuild.

use axum::{
    body::Body,
    http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header},
    response::{IntoResponse, Response},
};
use rust_embed::Embed;

/// Why [`serve`] has nothing to send; the API answers each in its error shape.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum NotServed {
    /// A path under `/api` that no API route matched: the API's `not_found`.
    ApiPath,
    /// Neither a file nor a page of the app.
    NoSuchFile,
    /// A method other than GET or HEAD (the answer carries `Allow: GET, HEAD`).
    MethodNotAllowed,
}

/// The app's files.
#[derive(Embed)]
#[folder = "../../web/"]
struct Assets;

/// The paths that are pages of the app (served as `index.html`): exact paths, and
/// prefixes ending in `/` followed by one segment (`/match/7`, `/player/0x…`). Keep in
/// step with the router in `web/js/main.js`.
pub const PAGES: &[&str] = &[
    "/",
    "/play",
    "/online",
    "/leaderboard",
    "/wallet",
    "/puzzles",
    "/match/",
    "/player/",
];

/// The page's Content-Security-Policy. `'self'` in `connect-src` covers the same-origin
/// WebSocket (CSP Level 3).
const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; \
    connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; \
    frame-ancestors 'none'";

/// Whether `path` is a page of the app.
#[must_use]
pub fn is_page(path: &str) -> bool {
    PAGES.iter().any(|page| match page.strip_suffix('/') {
        Some(prefix) if !prefix.is_empty() => path
            .strip_prefix(page)
            .is_some_and(|rest| !rest.is_empty() && !rest.contains('/')),
        _ => path == *page,
    })
}

/// The asset name of a request path, if it can name one: no empty, `.` or `..` segment,
/// no backslash, no hidden file.
fn asset_name(path: &str) -> Option<&str> {
    let name = path.strip_prefix('/')?;
    let safe = !name.is_empty()
        && !name.contains('\\')
        && name
            .split('/')
            .all(|segment| !segment.is_empty() && !segment.starts_with('.'));
    safe.then_some(name)
}

/// The `Content-Type` of a file: its extension's type, with `charset=utf-8` for text.
fn content_type(mime: &str) -> String {
    let texty = mime.starts_with("text/")
        || mime == "application/javascript"
        || mime == "application/json"
        || mime == "application/manifest+json"
        || mime == "image/svg+xml";
    if texty {
        format!("{mime}; charset=utf-8")
    } else {
        mime.to_owned()
    }
}

/// Whether the request asks for a page: its `Accept` lists `text/html`, as a browser's
/// navigation does (a script, a stylesheet or an API client asks for something else).
fn wants_html(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|item| {
            item.split(';')
                .next()
                .is_some_and(|kind| kind.trim().eq_ignore_ascii_case("text/html"))
        })
}

/// Whether an `If-None-Match` header matches `etag` (a list, or `*`).
fn matches_etag(headers: &HeaderMap, etag: &str) -> bool {
    headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .any(|candidate| candidate == "*" || candidate.trim_start_matches("W/") == etag)
}

/// Answers a request no API route matched: a file or a page of the app, or why not.
///
/// # Errors
/// When the request names no file or page of the app, or does not read one.
pub fn serve(method: &Method, uri: &Uri, headers: &HeaderMap) -> Result<Response, NotServed> {
    let path = uri.path();
    if path == "/api" || path.starts_with("/api/") {
        return Err(NotServed::ApiPath);
    }
    let readable = method == Method::GET || method == Method::HEAD;
    let (name, file, status) = if is_page(path) {
        ("index.html", Assets::get("index.html"), StatusCode::OK)
    } else {
        match asset_name(path).and_then(|name| Some((name, Assets::get(name)?))) {
            Some((name, file)) => (name, Some(file), StatusCode::OK),
            None if readable && wants_html(headers) => (
                "index.html",
                Assets::get("index.html"),
                StatusCode::NOT_FOUND,
            ),
            None => return Err(NotServed::NoSuchFile),
        }
    };
    let Some(file) = file else {
        return Err(NotServed::NoSuchFile);
    };
    if !readable {
        return Err(NotServed::MethodNotAllowed);
    }
    let etag = format!("\"{}\"", hex::encode(&file.metadata.sha256_hash()[..16]));
    let mut response = if status == StatusCode::OK && matches_etag(headers, &etag) {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let body = if method == Method::HEAD {
            Body::empty()
        } else {
            Body::from(file.data.into_owned())
        };
        let mut response = Response::new(body);
        *response.status_mut() = status;
        if let Ok(v) = HeaderValue::from_str(&content_type(file.metadata.mimetype())) {
            response.headers_mut().insert(header::CONTENT_TYPE, v);
        }
        response
    };
    let out = response.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&etag) {
        out.insert(header::ETAG, v);
    }
    out.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    out.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    if name == "index.html" {
        out.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CSP),
        );
        out.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
        out.insert(
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        );
    }
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_the_app_routes_and_nothing_else() {
        for path in [
            "/",
            "/play",
            "/online",
            "/leaderboard",
            "/wallet",
            "/match/7",
            "/player/0xab",
        ] {
            assert!(is_page(path), "{path}");
        }
        for path in [
            "/match/",
            "/match/7/x",
            "/player",
            "/players/0xab",
            "/nowhere",
            "/healthz/x",
            "/index.html",
            "//",
        ] {
            assert!(!is_page(path), "{path}");
        }
    }

    #[test]
    fn asset_names_cannot_climb_out_or_reach_hidden_files() {
        assert_eq!(asset_name("/js/main.js"), Some("js/main.js"));
        assert_eq!(asset_name("/app.css"), Some("app.css"));
        for path in [
            "/",
            "/../Cargo.toml",
            "/js/../../src/lib.rs",
            "/./index.html",
            "/.git/config",
            "/js//main.js",
            "/js\\main.js",
            "js/main.js",
        ] {
            assert_eq!(asset_name(path), None, "{path}");
        }
    }

    #[test]
    fn text_types_say_utf_8() {
        assert_eq!(
            content_type("text/javascript"),
            "text/javascript; charset=utf-8"
        );
        assert_eq!(content_type("image/png"), "image/png");
    }

    #[test]
    fn every_page_and_module_is_embedded() {
        assert!(Assets::get("index.html").is_some());
        assert!(Assets::get("js/main.js").is_some());
        assert!(Assets::get("app.css").is_some());
    }
}
