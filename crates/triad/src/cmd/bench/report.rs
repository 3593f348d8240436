//! What `triad bench` reports: the figures of each point, their JSON form (which
//! `bench/compare.js` and the peer's load generator share), and the table row printed as a
//! point ends.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Percentiles of a sample, in ms, the peer's way (nearest rank).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(super) struct Summary {
    pub(super) n: usize,
    pub(super) mean: Option<f64>,
    pub(super) p50: Option<f64>,
    pub(super) p95: Option<f64>,
    pub(super) p99: Option<f64>,
    pub(super) max: Option<f64>,
}

/// `x` rounded to `places` decimals.
pub(super) fn round(x: f64, places: i32) -> f64 {
    let f = 10f64.powi(places);
    (x * f).round() / f
}

/// The summary of a sample of durations in ms.
pub(super) fn summary(mut sample: Vec<f64>) -> Summary {
    sample.sort_by(f64::total_cmp);
    let n = sample.len();
    let pct = |p: f64| -> Option<f64> {
        if n == 0 {
            return None;
        }
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss
        )]
        let rank = ((p / 100.0) * n as f64).ceil() as usize;
        Some(round(sample[rank.clamp(1, n) - 1], 3))
    };
    #[allow(clippy::cast_precision_loss)]
    let mean = (n > 0).then(|| round(sample.iter().sum::<f64>() / n as f64, 3));
    Summary {
        n,
        mean,
        p50: pct(50.0),
        p95: pct(95.0),
        p99: pct(99.0),
        max: sample.last().map(|&x| round(x, 3)),
    }
}

/// The server's figures over a measured phase.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct ServerFigures {
    pub(super) cpu_s: f64,
    pub(super) cpu_util: f64,
    pub(super) cpu_ms_per_game: Option<f64>,
    pub(super) rss_start_mb: f64,
    pub(super) rss_peak_measured_mb: f64,
    /// VmHWM: the peak over the process's life, warmup included.
    pub(super) vmhwm_mb: f64,
    /// With --hold: the resident memory once every game was set up, before any move.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) rss_held_mb: Option<f64>,
}

/// One point: a concurrency level's measured phase.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub(super) struct Point {
    pub(super) concurrency: usize,
    #[serde(default)]
    pub(super) repeat: Option<u32>,
    pub(super) games: u64,
    pub(super) warmup_ok: u64,
    pub(super) warmup_failed: u64,
    pub(super) games_ok: u64,
    pub(super) games_failed: u64,
    pub(super) errors: BTreeMap<String, u64>,
    #[serde(default)]
    pub(super) error_samples: Vec<String>,
    pub(super) moves: u64,
    pub(super) wall_s: f64,
    pub(super) games_per_s: f64,
    pub(super) moves_per_s: f64,
    pub(super) move_latency_ms: Summary,
    pub(super) setup_ms: Summary,
    pub(super) game_ms: Summary,
    pub(super) server: Option<ServerFigures>,
    /// CPU of other processes during the phase, in cores (system busy minus the server
    /// minus this load generator): if not about 0, the run was contended.
    pub(super) other_cores: Option<f64>,
    pub(super) loadgen_cpu_s: Option<f64>,
}

/// A series of points.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct Series {
    pub(super) label: String,
    pub(super) points: Vec<Point>,
}

/// What `triad bench` writes.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct Report {
    pub(super) tool: String,
    pub(super) params: Value,
    pub(super) series: Vec<Series>,
}

/// The header of the table of [`row`]s.
pub(super) const TABLE_HEADER: &str = "| concurrency | games ok | games/s | moves/s | p50 ms | p95 ms | p99 ms | failed | server CPU ms/game | server peak RSS MB | other cores |\n|---|---|---|---|---|---|---|---|---|---|---|";

/// The point's row of the table printed as it ends (the header is [`TABLE_HEADER`]).
pub(super) fn row(p: &Point) -> String {
    let l = &p.move_latency_ms;
    let ms = |x: Option<f64>| x.map_or("-".to_owned(), |v| format!("{v:.2}"));
    let (cpu, rss) = p.server.as_ref().map_or(("-".into(), "-".into()), |s| {
        (
            s.cpu_ms_per_game
                .map_or("-".to_owned(), |c| format!("{c:.3}")),
            format!("{:.1}", s.vmhwm_mb),
        )
    });
    format!(
        "| {} | {}/{} | {:.1} | {:.1} | {} | {} | {} | {} | {} | {} | {} |",
        p.concurrency,
        p.games_ok,
        p.games,
        p.games_per_s,
        p.moves_per_s,
        ms(l.p50),
        ms(l.p95),
        ms(l.p99),
        p.games_failed,
        cpu,
        rss,
        p.other_cores.map_or("-".to_owned(), |x| format!("{x:.2}")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        let s = summary((1..=100).map(f64::from).collect());
        assert_eq!(
            (s.p50, s.p95, s.p99, s.max),
            (Some(50.0), Some(95.0), Some(99.0), Some(100.0))
        );
        assert!(summary(Vec::new()).p50.is_none());
    }
}
