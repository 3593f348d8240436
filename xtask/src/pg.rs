//! A throwaway PostgreSQL server for the tests, and the suites that run on it.

use super::*;

/// The server's test modules that run a second time on PostgreSQL (`TRIAD_TEST_BACKEND`):
/// the one test binary of the server, with its modules as filters.
/// `--workspace`, not `-p`: the same features as the first run, so nothing is rebuilt.
pub(crate) const POSTGRES_SUITES: &[&str] = &[
    "--workspace",
    "--test",
    "server",
    "--",
    "a2a::",
    "api::",
    "apps::",
    "auth::",
    "errors::",
    "mcp::",
    "profiles::",
    "security::",
    "system::",
    "tournaments::",
    "transcript::",
    "web::",
];

pub(crate) fn postgres_suites(pg: &Postgres) -> Result<(), String> {
    let mut env = pg.env();
    env.push(("TRIAD_TEST_BACKEND", "postgres".to_owned()));
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    step_with(
        "the server's tests on PostgreSQL",
        &root(),
        &env,
        "cargo",
        &[&["test"][..], POSTGRES_SUITES].concat(),
    )
}

/// `cargo xtask pg [-- CMD …]`: runs CMD with a PostgreSQL server in `TRIAD_TEST_POSTGRES`
/// (by default, every test that uses PostgreSQL).
pub(crate) fn pg(args: &[String]) -> Result<(), String> {
    let pg = Postgres::start()?;
    let args: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .skip_while(|a| *a == "--")
        .collect();
    if args.is_empty() {
        let env = pg.env();
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        step_with(
            "the server's cluster tests",
            &root(),
            &env,
            "cargo",
            &["test", "--workspace", "--test", "server", "--", "cluster::"],
        )?;
        step_with(
            "the binary's cluster tests",
            &root(),
            &env,
            "cargo",
            &[
                "test",
                "--workspace",
                "--test",
                "server_cluster",
                "--test",
                "cluster_crash",
            ],
        )?;
        return postgres_suites(&pg);
    }
    let env = pg.env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    step_with("command", &root(), &env, args[0], &args[1..])
}

/// The PostgreSQL server the tests use: the one at 127.0.0.1:5432 when it lets the
/// `postgres` user in without a password, else a throwaway cluster on a free port in a
/// temporary directory (installing Debian's postgresql package when it is missing), stopped
/// and removed when this is dropped, also on failure. Each test makes a database of its own,
/// named with this run's prefix; on a shared server they are dropped at the end.
pub(crate) struct Postgres {
    url: String,
    prefix: String,
    /// The throwaway cluster: its `bin` directory and its root directory.
    own: Option<(PathBuf, PathBuf)>,
}

impl Postgres {
    pub(crate) fn start() -> Result<Postgres, String> {
        let prefix = format!("triad_t{}", std::process::id());
        let local = "postgres://postgres@127.0.0.1:5432";
        if succeeds("psql", &[&format!("{local}/postgres"), "-qAtc", "SELECT 1"]) {
            println!("\n==> PostgreSQL: using the server at 127.0.0.1:5432");
            return Ok(Postgres {
                url: local.to_owned(),
                prefix,
                own: None,
            });
        }
        let bin = match postgres_bin() {
            Some(bin) => bin,
            None => {
                let quiet = [("DEBIAN_FRONTEND", "noninteractive")];
                step_with("apt-get update", &root(), &quiet, "apt-get", &["update"])?;
                step_with(
                    "install PostgreSQL for the tests",
                    &root(),
                    &quiet,
                    "apt-get",
                    &["install", "-y", "postgresql"],
                )?;
                postgres_bin().ok_or(
                    "no /usr/lib/postgresql/*/bin/initdb after installing Debian's postgresql package",
                )?
            }
        };
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("no free port for PostgreSQL: {e}"))?
            .port();
        let dir = env::temp_dir().join(format!("triad-pg-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let dir_s = dir.to_string_lossy().to_string();
        let own = Postgres {
            url: format!("postgres://postgres@127.0.0.1:{port}"),
            prefix,
            own: Some((bin.clone(), dir.clone())),
        };
        own.watch()?;
        step("own the cluster directory", "chown", &["postgres:", &dir_s])?;
        let data = format!("{dir_s}/data");
        let initdb = bin.join("initdb").to_string_lossy().to_string();
        step(
            "a throwaway PostgreSQL cluster",
            "runuser",
            &[
                "-u",
                "postgres",
                "--",
                &initdb,
                "-D",
                &data,
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--locale=C.UTF-8",
            ],
        )?;
        let pg_ctl = bin.join("pg_ctl").to_string_lossy().to_string();
        let options = format!(
            "-c listen_addresses=127.0.0.1 -p {port} -c unix_socket_directories={dir_s} \
             -c max_connections=400 -c fsync=off"
        );
        step(
            "start PostgreSQL",
            "runuser",
            &[
                "-u",
                "postgres",
                "--",
                &pg_ctl,
                "-D",
                &data,
                "-l",
                &format!("{dir_s}/log"),
                "-w",
                "-t",
                "30",
                "-o",
                &options,
                "start",
            ],
        )?;
        Ok(own)
    }

    /// Starts a watchdog for the throwaway cluster, in a session of its own: once this
    /// process is gone, however it ended (a signal runs no `drop`: `timeout`'s SIGTERM, a
    /// SIGKILL), it stops the cluster and removes its directory within a second. After a
    /// normal end, `drop` has done both and the watchdog's stop finds nothing to stop.
    fn watch(&self) -> Result<(), String> {
        let Some((bin, dir)) = &self.own else {
            return Ok(());
        };
        const WATCHDOG: &str = r#"while kill -0 "$1" 2>/dev/null; do sleep 1; done
[ -d "$3/data" ] && runuser -u postgres -- "$2/pg_ctl" -D "$3/data" -m immediate -w stop
rm -rf "$3""#;
        Command::new("setsid")
            .args(["sh", "-c", WATCHDOG, "triad-pg-watchdog"])
            .arg(std::process::id().to_string())
            .arg(bin)
            .arg(dir)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .map(drop)
            .map_err(|e| {
                format!("could not start the throwaway PostgreSQL's watchdog (setsid sh): {e}")
            })
    }

    /// The environment the tests read: the server, the prefix of their databases' names,
    /// and where PostgreSQL's programs are, for a test that runs a server of its own
    /// (`cluster_crash`, which kills it).
    pub(crate) fn env(&self) -> Vec<(&'static str, String)> {
        let mut env = vec![
            ("TRIAD_TEST_POSTGRES", self.url.clone()),
            ("TRIAD_TEST_DB_PREFIX", self.prefix.clone()),
        ];
        let bin = self
            .own
            .as_ref()
            .map(|(bin, _)| bin.clone())
            .or_else(postgres_bin);
        if let Some(bin) = bin {
            env.push(("TRIAD_TEST_PG_BIN", bin.to_string_lossy().into_owned()));
        }
        env
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        match &self.own {
            Some((bin, dir)) => {
                let pg_ctl = bin.join("pg_ctl");
                let data = dir.join("data");
                let _ = Command::new("runuser")
                    .args(["-u", "postgres", "--"])
                    .arg(pg_ctl)
                    .arg("-D")
                    .arg(data)
                    .args(["-m", "immediate", "-w", "stop"])
                    .output();
                let _ = std::fs::remove_dir_all(dir);
            }
            None => {
                let admin = format!("{}/postgres", self.url);
                let list = Command::new("psql")
                    .args([&admin, "-qAtc"])
                    .arg(format!(
                        "SELECT datname FROM pg_database WHERE datname LIKE '{}\\_%'",
                        self.prefix
                    ))
                    .output();
                if let Ok(list) = list {
                    for name in String::from_utf8_lossy(&list.stdout).lines() {
                        let _ = Command::new("psql")
                            .args([&admin, "-qc"])
                            .arg(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                            .output();
                    }
                }
            }
        }
    }
}

/// The newest `/usr/lib/postgresql/*/bin` that has `initdb`.
pub(crate) fn postgres_bin() -> Option<PathBuf> {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let version = e.file_name().to_string_lossy().parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").is_file().then_some((version, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, bin)| bin)
}
