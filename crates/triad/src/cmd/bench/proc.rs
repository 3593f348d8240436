//! What Linux's `/proc` says of the server, of this process and of the machine: CPU time
//! and resident memory. Each reading is `None` where `/proc` cannot be read.

/// Clock ticks per second of `/proc/*/stat` (USER_HZ, 100 on Linux).
const CLK_TCK: f64 = 100.0;

/// A process's CPU time (user + system) in seconds; `pid` may be `"self"`.
pub(super) fn cpu_s(pid: &str) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / CLK_TCK)
}

/// A line of a process's `/proc/PID/status` (`VmRSS`, `VmHWM`), in MB.
pub(super) fn status_mb(pid: u32, key: &str) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(&format!("{key}:")))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// Busy seconds of the whole system (every CPU), from `/proc/stat`.
pub(super) fn system_busy_s() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let fields: Vec<f64> = stat
        .lines()
        .next()?
        .split_whitespace()
        .skip(1)
        .take(8)
        .filter_map(|f| f.parse().ok())
        .collect();
    if fields.len() < 8 {
        return None;
    }
    let total: f64 = fields.iter().sum();
    Some((total - fields[3] - fields[4]) / CLK_TCK)
}
