//! A Ballista cluster on loopback: `tessera scheduler`, two `tessera
//! executor`s, and `tessera sql --cluster` giving what the same query
//! gives run locally; then the cluster shuts down on SIGTERM.
#![cfg(feature = "sql")]

mod common;
use common::tessera;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tessera_emulators::free_ports;

/// Longest a query on the cluster may take: far above what these take
/// (under a second), so that a job that never ends fails the test.
const QUERY_DEADLINE: Duration = Duration::from_secs(120);

fn fixture(case: &str) -> String {
    format!(
        "{}/../../testdata/tiledb-0.36.1/{case}/array",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// The cluster's processes, each logging (Ballista's `info` records too)
/// to a file of `logs`; dropped, they are killed (a failed test leaves
/// nothing running).
struct Cluster {
    scheduler: String,
    processes: Vec<Child>,
    logs: PathBuf,
}

impl Cluster {
    /// A scheduler and two executors, on ports outside the ephemeral range
    /// (see `free_ports`), once each listens.
    fn start() -> Cluster {
        Cluster::with_executors(2)
    }

    /// A scheduler and `executors` executors, once each listens.
    fn with_executors(executors: usize) -> Cluster {
        // The scheduler's; each executor's results and tasks ports.
        let ports = free_ports(1 + 2 * executors);
        // A folder of this cluster's own (tests run side by side).
        let logs = std::env::temp_dir().join(format!(
            "tessera-cluster-{}-{}",
            std::process::id(),
            ports[0]
        ));
        let _ = std::fs::remove_dir_all(&logs);
        std::fs::create_dir_all(&logs).unwrap();
        let address = |p: u16| format!("127.0.0.1:{p}");
        let scheduler = address(ports[0]);
        let spawn = |name: &str, args: &[&str]| {
            let log = std::fs::File::create(logs.join(format!("{name}.log"))).unwrap();
            Command::new(env!("CARGO_BIN_EXE_tessera"))
                .args(args)
                .env("TESSERA_LOG", "info")
                .stdout(Stdio::null())
                .stderr(log)
                .spawn()
                .unwrap()
        };
        let mut processes = vec![spawn("scheduler", &["scheduler", "--bind", &scheduler])];
        for (i, two) in ports[1..].chunks(2).enumerate() {
            processes.push(spawn(
                &format!("executor-{i}"),
                &[
                    "executor",
                    "--scheduler",
                    &scheduler,
                    "--bind",
                    &address(two[0]),
                    "--grpc-port",
                    &two[1].to_string(),
                    "--concurrent-tasks",
                    "2",
                ],
            ));
        }
        let mut cluster = Cluster {
            scheduler,
            processes,
            logs,
        };
        for port in ports {
            cluster.wait_for_listener(&address(port));
        }
        cluster
    }

    /// Waits until something listens on `address`, failing if a process
    /// of the cluster exits or 60 s pass.
    fn wait_for_listener(&mut self, address: &str) {
        let started = Instant::now();
        while TcpStream::connect(address).is_err() {
            self.assert_running(&format!("waiting for {address}"));
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "nothing listened on {address} in 60 s{}",
                self.said()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Fails, with what the cluster logged, if a process has exited.
    fn assert_running(&mut self, doing: &str) {
        for p in &mut self.processes {
            if let Ok(Some(status)) = p.try_wait() {
                panic!(
                    "{doing}: a process of the cluster exited ({status}){}",
                    self.said()
                );
            }
        }
    }

    /// What each process of the cluster logged.
    fn said(&self) -> String {
        let mut out = String::new();
        let mut files: Vec<_> = std::fs::read_dir(&self.logs).unwrap().flatten().collect();
        files.sort_by_key(|f| f.file_name());
        for f in files {
            let text = std::fs::read_to_string(f.path()).unwrap_or_default();
            out.push_str(&format!(
                "\n--- {}:\n{text}",
                f.file_name().to_string_lossy()
            ));
        }
        out
    }

    /// `tessera` with `args` (see `run_within`), the test failed with
    /// the cluster's logs if it has not ended by `QUERY_DEADLINE`.
    fn run(&self, args: &[&str]) -> (bool, String, String) {
        match run_within(args, &self.logs) {
            Some(answer) => answer,
            None => panic!(
                "tessera {} had not ended after {QUERY_DEADLINE:?}{}",
                args.join(" "),
                self.said()
            ),
        }
    }

    /// Ends every process with SIGTERM (executors then tell the
    /// scheduler); an error, with the cluster's logs, if one has not ended
    /// within the grace period.
    fn stop(mut self) -> Result<(), String> {
        for p in self.processes.iter().rev() {
            let _ = Command::new("kill")
                .args(["-TERM", &p.id().to_string()])
                .status();
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut all = true;
        for p in &mut self.processes {
            loop {
                if p.try_wait().unwrap().is_some() {
                    break;
                }
                if Instant::now() > deadline {
                    all = false;
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        match all {
            true => Ok(()),
            false => Err(format!("not ended 30 s after SIGTERM{}", self.said())),
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for p in &mut self.processes {
            let _ = p.kill();
            let _ = p.wait();
        }
        let _ = std::fs::remove_dir_all(&self.logs);
    }
}

/// `tessera` with `args`, its output kept in files of `scratch`:
/// (success, stdout, stderr), or `None` if it had not ended by
/// `QUERY_DEADLINE` (it is then killed).
fn run_within(args: &[&str], scratch: &Path) -> Option<(bool, String, String)> {
    let (out, err) = (scratch.join("client.out"), scratch.join("client.err"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args(args)
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > QUERY_DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let read = |p: &Path| std::fs::read_to_string(p).unwrap();
    let answer = (status.success(), read(&out), read(&err));
    let _ = std::fs::remove_file(&out);
    let _ = std::fs::remove_file(&err);
    Some(answer)
}

#[test]
fn cluster_queries_equal_local_ones() {
    let cluster = Cluster::start();
    let tables = [
        format!("s={}", fixture("sparse_2d")),
        format!("d={}", fixture("dense_2d_types")),
        format!("t={}", fixture("sparse_strings")),
        format!("e={}", fixture("enumerations")),
    ];
    let queries = [
        "SELECT count(*) AS n, sum(i) AS total FROM s",
        "SELECT x, count(*) AS n, min(f) AS lo, max(f) AS hi FROM s GROUP BY x ORDER BY x",
        "SELECT x, y, i FROM s WHERE x BETWEEN 2 AND 5 AND i > 10 ORDER BY x, y",
        "SELECT * FROM d WHERE r < 3 ORDER BY r, c",
        "SELECT name, t FROM t WHERE name >= 'b' ORDER BY name, t",
        "SELECT s.x, count(*) AS n FROM s JOIN d ON s.x = d.r GROUP BY s.x ORDER BY s.x",
        "SELECT * FROM e ORDER BY 1",
    ];
    for q in queries {
        let mut local = vec!["sql", "--format", "jsonl"];
        for t in &tables {
            local.extend(["--table", t.as_str()]);
        }
        let mut remote = local.clone();
        remote.extend(["--cluster", cluster.scheduler.as_str()]);
        local.push(q);
        remote.push(q);
        let (ok, want, err) = cluster.run(&local);
        assert!(ok, "{q}: {err}");
        assert!(!want.is_empty(), "{q}: no rows");
        let (ok, got, err) = cluster.run(&remote);
        assert!(ok, "{q} on the cluster: {err}{}", cluster.said());
        assert_eq!(got, want, "{q}");
    }
    // Planning errors come back as errors, naming what is wrong.
    let s = format!("s={}", fixture("sparse_2d"));
    let (ok, _, err) = cluster.run(&[
        "sql",
        "--cluster",
        &cluster.scheduler,
        "--table",
        &s,
        "SELECT nope FROM s",
    ]);
    assert!(!ok && err.contains("nope"), "{err}");
    if let Err(e) = cluster.stop() {
        panic!("the cluster did not shut down on SIGTERM: {e}");
    }
}

#[test]
fn a_query_no_executor_takes_ends_at_its_timeout() {
    let cluster = Cluster::with_executors(0);
    let s = format!("s={}", fixture("sparse_2d"));
    let query = |timeout: &str| {
        cluster.run(&[
            "sql",
            "--cluster",
            &cluster.scheduler,
            &format!("--timeout={timeout}"),
            "--table",
            &s,
            "SELECT count(*) FROM s",
        ])
    };
    let started = Instant::now();
    let (ok, _, err) = query("2");
    assert!(!ok, "answered with no executor");
    assert!(
        err.contains("--timeout 2s") && err.contains("is an executor"),
        "{err}"
    );
    assert!(started.elapsed() < QUERY_DEADLINE);
    for bad in ["0", "-1", "soon"] {
        let (ok, _, err) = query(bad);
        assert!(!ok && err.contains(&format!("`{bad}`")), "{bad}: {err}");
    }
    // A query that ends in time is answered as without.
    let (ok, out, err) = cluster.run(&[
        "sql",
        "--timeout",
        "60",
        "--table",
        &s,
        "SELECT count(*) AS n FROM s",
    ]);
    assert!(ok && out.starts_with("{\"n\":"), "{out}{err}");
}

#[test]
fn no_scheduler_is_an_error_naming_the_address() {
    let address = format!("127.0.0.1:{}", free_ports(1)[0]);
    let s = format!("s={}", fixture("sparse_2d"));
    let (ok, _, err) = tessera(&[
        "sql",
        "--cluster",
        &address,
        "--table",
        &s,
        "SELECT count(*) FROM s",
    ]);
    assert!(!ok && err.contains(&address), "{err}");
}

#[test]
fn an_executor_whose_port_is_taken_says_which() {
    let ports = free_ports(3);
    let scratch = std::env::temp_dir().join(format!("tessera-taken-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    for (taken, what) in [(ports[1], "results"), (ports[2], "tasks")] {
        let _held = std::net::TcpListener::bind(("127.0.0.1", taken)).unwrap();
        let args = [
            "executor",
            "--scheduler",
            &format!("127.0.0.1:{}", ports[0]),
            "--bind",
            &format!("127.0.0.1:{}", ports[1]),
            "--grpc-port",
            &ports[2].to_string(),
        ];
        let (ok, _, err) = run_within(&args, &scratch).expect("the executor ended");
        let named = format!("the executor's {what} port, 127.0.0.1:{taken}");
        assert!(!ok && err.contains(&named), "{err}");
    }
    let _ = std::fs::remove_dir_all(&scratch);
}
