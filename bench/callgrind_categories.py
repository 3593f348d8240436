#!/usr/bin/env python3
"""Per-game instruction counts by category, from bench/callgrind.sh runs.

    bench/callgrind_categories.py GAMES RUN_DIR BASE_DIR [RUN_DIR BASE_DIR ...]

Each run's self (exclusive) cost per function is put into the first category whose
pattern matches the function's name (SQLite by its source file, sqlite3.c); the start-up
run (BASE_DIR, GAMES=0) is subtracted category by category, and the rest divided by
GAMES. Self costs add up to the total, so the shares sum to 100%. A second table gives
the inclusive cost of chosen functions (these overlap), start-up subtracted as well.
"""
import collections
import re
import sys

ROW = re.compile(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)$")

CATEGORIES = [
    ("auth crypto: Ed25519, SHA-512, BLAKE2b (logins, addresses, tokens)",
     r"curve25519|ed25519|sha2::|blake2|triad_identity|subtle::"),
    ("SQLite library (sqlite3.c: parse, prepare, VDBE, B-tree, WAL, commit)", r"FILE:.*sqlite3\.c"),
    ("sqlx (driver, worker thread, pool, channels, row decoding)",
     r"sqlx|flume|crossbeam|event_listener|atoi::|hashlink"),
    ("JSON (serde_json, derived Serialize/Deserialize)",
     r"serde_json|serde::|serde_core|serde_path_to_error|itoa|ryu|::_::<impl serde"),
    ("HTTP (hyper, httparse, http, axum, tower, tower-http, bytes)",
     r"hyper|httparse|\bhttp::|http_body|axum|tower|matchit|percent_encoding|form_urlencoded|mime|bytes::"),
    ("WebSocket (tungstenite)", r"tungstenite|sha1"),
    ("tracing / logging", r"tracing|nu_ansi_term|sharded_slab|thread_local"),
    ("metrics (Prometheus recorder)", r"metrics"),
    ("rate limiter (governor, quanta clock)", r"governor|quanta|dashmap"),
    ("addresses to text (hex)", r"hex::|triad_engine::address"),
    ("malloc / free / realloc",
     r"malloc|_int_free|^free|realloc|arena|tcache|__rdl_|__rust_alloc|__rust_dealloc|"
     r"__rust_no_alloc|raw_vec|RawVec|alloc::alloc|unlink_chunk|calloc|memalign"),
    ("memcpy / memset / memcmp", r"memmove|memcpy|memset|memcmp|strlen"),
    ("tokio, futures, locks, clocks",
     r"tokio|futures|mio::|parking_lot|pthread|futex|clock_gettime|Timespec|epoll|std::sync|"
     r"Instant|__lll|syscall|aker|once_cell|std::thread|std::sys"),
    ("triad engine, rules, ratings", r"triad_engine|triad_rules|triad_solver|glicko|triad_agent"),
    ("triad server code (handlers, store, hub, views)", r"triad_server|triad::"),
    ("std: fmt, strings, collections, Arc, Vec", r"core::|alloc::|hashbrown|foldhash|rapidhash|std::|String|sip"),
]
OTHER = "other (libc I/O wrappers, libm, unresolved)"

INCLUSIVE = [
    ("LoginMessage::verify (Ed25519 login check)", r"triad_identity::message::LoginMessage::verify \["),
    ("  ed25519 verify_strict", r"ed25519_dalek::verifying::VerifyingKey::verify_strict \["),
    ("  parse_public_key (3 per login)", r"triad_identity::signature::parse_public_key \["),
    ("core::run (engine actor: execute, Store::write, publish)", r"src/core.rs:triad_server::core::run::\{\{closure\}\} \["),
    ("  Store::write (one command's transaction)", r"triad_server::store::Store::write::\{\{closure\}\} \["),
    ("  Engine::execute", r"triad_engine::engine::Engine::execute \["),
    ("  Hub::publish (WebSocket fan-out)", r"src/hub.rs:triad_server::hub::Hub::publish \["),
    ("sqlite3_step (all statements)", r"sqlite3\.c:sqlite3_step \["),
    ("  sqlite3Reprepare (expired statements compiled again)", r"sqlite3\.c:sqlite3Reprepare \["),
    ("sqlite3_exec (BEGIN / COMMIT text)", r"sqlite3\.c:sqlite3_exec \["),
    ("Address Display (address to text)", r"Address as core::fmt::Display>::fmt \["),
    ("Json::into_response (HTTP response bodies)", r"axum::json::Json<T> as axum_core::response::into_response::IntoResponse>::into_response \["),
    ("  CommandResult::serialize (match view + events per command)", r"Serialize for triad_server::api::games::CommandResult>::serialize \["),
    ("  MatchView::serialize", r"views::_::<impl serde_core::ser::Serialize for triad_server::api::views::MatchView>::serialize \["),
    ("MatchView::new", r"triad_server::api::views::MatchView::new \["),
    ("Event::serialize (store, hub, response: 3 times per event)", r"crates/triad-engine/src/event.rs:triad_engine::event::_::<impl serde_core::ser::Serialize for triad_engine::event::Event>::serialize \["),
    ("request log line (tower-http DefaultOnResponse, INFO)", r"DefaultOnResponse as tower_http::trace::on_response::OnResponse<B>>::on_response \["),
    ("request log line (log_response, since issue 8: DEBUG)", r"triad_server::api::log_response \["),
    ("WebSocket connection task (upgrade to close)", r"axum::extract::ws::WebSocketUpgrade<F>::on_upgrade::\{\{closure\}\} \["),
    ("Authed extractor (bearer token to session)", r"src/api/mod.rs:<triad_server::api::Authed as axum_core::extract::FromRequestParts<triad_server::api::AppState>>::from_request_parts::\{\{closure\}\} \["),
    ("QuantaClock::default (a new rate-limiter clock)", r"QuantaClock as core::default::Default>::default \["),
    ("hyper request parsing", r"hyper::proto::h1::role::Server as hyper::proto::h1::Http1Transaction>::parse \["),
    ("malloc (inclusive)", r"malloc\.c:malloc \["),
    ("free (inclusive)", r"malloc\.c:free \["),
]


def load(path):
    total, rows = None, []
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = ROW.match(line)
            if not m:
                continue
            n = int(m.group(1).replace(",", ""))
            if "PROGRAM TOTALS" in m.group(2):
                total = n
            else:
                rows.append((n, m.group(2)))
    return total, rows


def inclusive(path):
    """The inclusive cost of each chosen function (its largest row) in an incl.txt."""
    _, rows = load(path)
    incl = {}
    for n, rest in rows:
        for label, pattern in INCLUSIVE:
            if re.search(pattern, rest):
                incl[label] = max(incl.get(label, 0), n)
    return incl


def categorize(rows):
    out = collections.Counter()
    for n, rest in rows:
        file, _, func = rest.partition(":")
        for name, pattern in CATEGORIES:
            subject = "FILE:" + file if pattern.startswith("FILE:") else func
            if re.search(pattern, subject):
                out[name] += n
                break
        else:
            out[OTHER] += n
    return out


def main():
    games = int(sys.argv[1])
    pairs = list(zip(sys.argv[2::2], sys.argv[3::2]))
    results = []
    for run, base in pairs:
        total, rows = load(f"{run}/self.txt")
        base_total, base_rows = load(f"{base}/self.txt")
        cats, base_cats = categorize(rows), categorize(base_rows)
        per_game = {k: (cats[k] - base_cats[k]) / games for k in set(cats) | set(base_cats)}
        incl = inclusive(f"{run}/incl.txt")
        base_incl = inclusive(f"{base}/incl.txt")
        # Start-up is subtracted here too (the quanta clock's one-off calibration, say,
        # would otherwise show as a per-game cost).
        incl = {k: v - base_incl.get(k, 0) for k, v in incl.items()}
        results.append(((total - base_total) / games, per_game, incl, total - base_total))
    names = sorted([n for n, _ in CATEGORIES] + [OTHER], key=lambda k: -results[0][1].get(k, 0))
    head = " | ".join(f"{run}: instructions/game | share" for run, _ in pairs)
    print(f"| category (self cost) | {head} |")
    print("|---|" + "---:|---:|" * len(pairs))
    for k in names:
        cells = " | ".join(f"{r[1].get(k, 0):,.0f} | {100 * r[1].get(k, 0) / r[0]:.1f}%" for r in results)
        print(f"| {k} | {cells} |")
    cells = " | ".join(f"**{r[0]:,.0f}** | 100%" for r in results)
    print(f"| **total** | {cells} |\n")
    head = " | ".join(f"{run}: instructions/game (share)" for run, _ in pairs)
    print(f"| function (inclusive, overlapping) | {head} |")
    print("|---|" + "---:|" * len(pairs))
    for label, _ in INCLUSIVE:
        cells = " | ".join(f"{r[2].get(label, 0) / games:,.0f} ({100 * r[2].get(label, 0) / r[3]:.1f}%)" for r in results)
        print(f"| {label} | {cells} |")


if __name__ == "__main__":
    main()
