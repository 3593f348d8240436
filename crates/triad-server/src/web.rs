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
use blake2::Digest as _;
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
    "/tournaments",
    "/tournament/",
    "/match/",
    "/player/",
    "/review",
    "/review/",
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
    file_headers(out, &etag);
    if name == "index.html" {
        page_headers(out);
    }
    Ok(response)
}

/// The headers of every file the app serves: its `ETag`, revalidation on every use
/// (`no-cache`), and no content sniffing.
fn file_headers(out: &mut HeaderMap, etag: &str) {
    if let Ok(v) = HeaderValue::from_str(etag) {
        out.insert(header::ETAG, v);
    }
    out.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    out.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
}

/// The headers of the app's page: its Content-Security-Policy, no framing, no referrer.
fn page_headers(out: &mut HeaderMap) {
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

/// What a link to a page shows before it is opened (Open Graph and Twitter card tags).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Preview {
    /// The title.
    pub title: String,
    /// One or two sentences.
    pub description: String,
    /// The picture's URL (1200 × 630).
    pub image: String,
    /// The page's canonical URL.
    pub url: String,
}

impl Preview {
    /// The tags, each value escaped for an HTML attribute.
    fn tags(&self) -> String {
        let tag = |attr: &str, name: &str, value: &str| {
            format!("  <meta {attr}=\"{name}\" content=\"{}\">\n", escape(value))
        };
        [
            tag("property", "og:type", "website"),
            tag("property", "og:site_name", "Triad"),
            tag("property", "og:title", &self.title),
            tag("property", "og:description", &self.description),
            tag("property", "og:image", &self.image),
            tag("property", "og:image:width", "1200"),
            tag("property", "og:image:height", "630"),
            tag("property", "og:url", &self.url),
            tag("name", "twitter:card", "summary_large_image"),
            tag("name", "twitter:title", &self.title),
            tag("name", "twitter:description", &self.description),
            tag("name", "twitter:image", &self.image),
        ]
        .concat()
    }
}

/// `text` safe inside a double-quoted HTML attribute.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The app's page with a link preview's tags in its head (and its title), for `GET` or
/// `HEAD`; the page's script then routes on the path as usual.
///
/// # Errors
/// When the method is not `GET` or `HEAD`, or the page is missing from the build.
pub fn page_with_preview(
    method: &Method,
    headers: &HeaderMap,
    preview: &Preview,
) -> Result<Response, NotServed> {
    if method != Method::GET && method != Method::HEAD {
        return Err(NotServed::MethodNotAllowed);
    }
    let file = Assets::get("index.html").ok_or(NotServed::NoSuchFile)?;
    let page = String::from_utf8_lossy(&file.data)
        .replacen(
            "<title>Triad</title>",
            &format!("<title>{}</title>", escape(&preview.title)),
            1,
        )
        .replacen("</head>", &format!("{}</head>", preview.tags()), 1);
    let digest = blake2::Blake2b::<blake2::digest::consts::U16>::digest(page.as_bytes());
    let etag = format!("\"{}\"", hex::encode(digest));
    let mut response = if matches_etag(headers, &etag) {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let body = if method == Method::HEAD {
            Body::empty()
        } else {
            Body::from(page)
        };
        let mut response = Response::new(body);
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        );
        response
    };
    let out = response.headers_mut();
    file_headers(out, &etag);
    page_headers(out);
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
            "/tournaments",
            "/tournament/7",
        ] {
            assert!(is_page(path), "{path}");
        }
        for path in [
            "/match/",
            "/match/7/x",
            "/tournament/",
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
