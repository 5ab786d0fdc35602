//! A Ballista cluster on loopback: `tessera scheduler`, two `tessera
//! executor`s, and `tessera sql --cluster` giving what the same query
//! gives run locally; then the cluster shuts down on SIGTERM.
#![cfg(feature = "sql")]

mod common;
use common::tessera;
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn fixture(case: &str) -> String {
    format!(
        "{}/../../testdata/tiledb-0.36.1/{case}/array",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// A loopback port free at the time of asking.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The cluster's processes; dropped, they are killed (a failed test
/// leaves nothing running).
struct Cluster {
    scheduler: String,
    processes: Vec<Child>,
}

impl Cluster {
    fn start() -> Cluster {
        let scheduler = format!("127.0.0.1:{}", free_port());
        let spawn = |args: &[&str]| {
            Command::new(env!("CARGO_BIN_EXE_tessera"))
                .args(args)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        };
        let mut processes = vec![spawn(&["scheduler", "--bind", &scheduler])];
        for _ in 0..2 {
            let bind = format!("127.0.0.1:{}", free_port());
            processes.push(spawn(&[
                "executor",
                "--scheduler",
                &scheduler,
                "--bind",
                &bind,
                "--concurrent-tasks",
                "2",
            ]));
        }
        let started = Instant::now();
        while TcpStream::connect(&scheduler).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "the scheduler did not listen on {scheduler}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        Cluster {
            scheduler,
            processes,
        }
    }

    /// Ends every process with SIGTERM (executors then tell the
    /// scheduler), and says whether all ended within the grace period.
    fn stop(mut self) -> bool {
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
        all
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for p in &mut self.processes {
            let _ = p.kill();
            let _ = p.wait();
        }
    }
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
        let (ok, want, err) = tessera(&local);
        assert!(ok, "{q}: {err}");
        assert!(!want.is_empty(), "{q}: no rows");
        let (ok, got, err) = tessera(&remote);
        assert!(ok, "{q} on the cluster: {err}");
        assert_eq!(got, want, "{q}");
    }
    // Planning errors come back as errors, naming what is wrong.
    let s = format!("s={}", fixture("sparse_2d"));
    let (ok, _, err) = tessera(&[
        "sql",
        "--cluster",
        &cluster.scheduler,
        "--table",
        &s,
        "SELECT nope FROM s",
    ]);
    assert!(!ok && err.contains("nope"), "{err}");
    assert!(cluster.stop(), "the cluster did not shut down on SIGTERM");
}

#[test]
fn no_scheduler_is_an_error_naming_the_address() {
    let address = format!("127.0.0.1:{}", free_port());
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
