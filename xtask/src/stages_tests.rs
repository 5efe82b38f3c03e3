//! The job runner's own tests: order, prerequisites, two workers, a panicking job.

use super::*;
use std::sync::atomic::{AtomicUsize, Ordering};

fn result_of<'a>(records: &'a [Record], name: &str) -> &'a str {
    &records
        .iter()
        .find(|r| r.name == name)
        .expect("a record")
        .result
}

#[test]
fn a_job_waits_for_its_prerequisites_and_does_not_run_after_a_failed_one() {
    let order = Mutex::new(Vec::new());
    let log = |name: &'static str| {
        let order = &order;
        move || {
            order.lock().unwrap().push(name);
            Ok(())
        }
    };
    let jobs = vec![
        job("c", &["b"], log("c")),
        job("b", &["a"], log("b")),
        job("a", &[], log("a")),
        job("broken", &[], || Err("on purpose".to_string())),
        job("after broken", &["a", "broken"], log("after broken")),
    ];
    let (records, result) = run_jobs(jobs, 2);
    let order = order.into_inner().unwrap();
    assert_eq!(order, ["a", "b", "c"]);
    assert_eq!(result_of(&records, "c"), "ok");
    assert!(result_of(&records, "broken").starts_with("FAILED: on purpose"));
    assert_eq!(
        result_of(&records, "after broken"),
        "not run (broken failed)"
    );
    assert!(result.unwrap_err().contains("broken, after broken"));
    // The table keeps the list's order.
    let names: Vec<&str> = records.iter().map(|r| r.name).collect();
    assert_eq!(names, ["c", "b", "a", "broken", "after broken"]);
}

#[test]
fn two_workers_run_two_jobs_at_once() {
    let running = AtomicUsize::new(0);
    let most = AtomicUsize::new(0);
    let work = || {
        let now = running.fetch_add(1, Ordering::SeqCst) + 1;
        most.fetch_max(now, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(200));
        running.fetch_sub(1, Ordering::SeqCst);
        Ok(())
    };
    let jobs = vec![
        job("one", &[], work),
        job("two", &[], work),
        job("three", &[], work),
    ];
    let (_, result) = run_jobs(jobs, 2);
    assert!(result.is_ok());
    assert_eq!(most.load(Ordering::SeqCst), 2);
}

#[test]
fn a_command_counts_its_cpu_time_and_what_it_compiled() {
    let log = std::env::temp_dir().join(format!("xtask-stages-{}.log", std::process::id()));
    let _ = std::fs::remove_file(&log);
    CURRENT.with(|c| {
        *c.borrow_mut() = Some(Current {
            log: log.clone(),
            cpu: Duration::ZERO,
            compiled: false,
            note: None,
        })
    });
    // Some CPU time in a grandchild, then cargo's word for a build.
    let busy = "i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done";
    let script = format!("sh -c '{busy}'; echo '   Compiling demo v0.1.0' >&2");
    let started = Instant::now();
    let status = status(Command::new("sh").args(["-c", &script])).unwrap();
    let wall = started.elapsed();
    assert!(status.success());
    let current = CURRENT.with(|c| c.borrow_mut().take()).unwrap();
    let _ = std::fs::remove_file(&log);
    assert!(
        current.cpu > Duration::from_millis(50) && current.cpu <= wall,
        "{:?} of CPU in {wall:?}",
        current.cpu
    );
    assert!(current.compiled);
}

#[test]
fn a_command_past_its_deadline_is_stopped_with_what_it_started() {
    let started = Instant::now();
    let deadline = started + Duration::from_millis(300);
    let finished = within(deadline, || {
        status(Command::new("sh").args(["-c", "sleep 30 & wait"]))
    });
    assert!(finished.is_err_and(|e| e.contains(STOPPED)));
    assert!(started.elapsed() < Duration::from_secs(12));
}

/// A job that panics fails with the panic's message, and the other jobs and the runner end.
#[test]
fn a_panicking_job_fails_with_its_message_and_ends() {
    let jobs = vec![
        job("panics", &[], || panic!("on purpose")),
        job("after", &["panics"], || Ok(())),
        job("other", &[], || Ok(())),
    ];
    let (records, result) = run_jobs(jobs, 2);
    assert!(result_of(&records, "panics").contains("panicked: on purpose"));
    assert_eq!(result_of(&records, "after"), "not run (panics failed)");
    assert_eq!(result_of(&records, "other"), "ok");
    assert!(result.is_err());
}
