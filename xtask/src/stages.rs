//! The test command's stages: a few jobs with the jobs they wait for, run on two workers (the
//! two cores CI has), each timed (wall and CPU time of everything it ran) and marked if it
//! compiled anything. Each job writes what its commands print to `target/test-logs/<job>.log`,
//! printed whole when the job ends, so that two jobs' output never interleaves. The table of
//! every job goes to `target/test-stages.md`.

use std::cell::RefCell;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// A job of the test command.
pub struct Job<'a> {
    pub name: &'static str,
    /// The jobs that must have passed before this one starts.
    pub after: &'static [&'static str],
    pub work: Box<dyn FnOnce() -> Result<(), String> + Send + 'a>,
}

pub fn job<'a>(
    name: &'static str,
    after: &'static [&'static str],
    work: impl FnOnce() -> Result<(), String> + Send + 'a,
) -> Job<'a> {
    Job {
        name,
        after,
        work: Box::new(work),
    }
}

/// What a job took.
#[derive(Clone)]
pub struct Record {
    pub name: &'static str,
    pub start: Duration,
    pub wall: Duration,
    pub cpu: Duration,
    pub compiled: bool,
    pub result: String,
    pub note: Option<String>,
}

/// The job this thread is running: where its commands write and what they cost.
struct Current {
    log: PathBuf,
    cpu: Duration,
    compiled: bool,
    /// Said by the job, shown beside its result (what a budget left out, say).
    note: Option<String>,
}

thread_local! {
    static CURRENT: RefCell<Option<Current>> = const { RefCell::new(None) };
    /// Past this instant, a command this thread runs is stopped ([`within`]).
    static DEADLINE: std::cell::Cell<Option<Instant>> = const { std::cell::Cell::new(None) };
}

/// Says `text` beside the current job's result in the table.
pub fn note(text: String) {
    CURRENT.with(|c| {
        if let Some(c) = c.borrow_mut().as_mut() {
            c.note = Some(text);
        }
    });
}

/// Runs `f` with every command it starts stopped at `deadline` (an error that contains
/// `STOPPED`).
pub fn within<T>(deadline: Instant, f: impl FnOnce() -> T) -> T {
    let before = DEADLINE.with(|d| d.replace(Some(deadline)));
    let result = f();
    DEADLINE.with(|d| d.set(before));
    result
}

/// The deadline commands run under now ([`within`]), if any.
pub fn deadline() -> Option<Instant> {
    DEADLINE.with(|d| d.get())
}

/// What a command stopped at its deadline fails with.
pub const STOPPED: &str = "stopped: the time budget is spent";

/// Runs `cmd` as [`status`] does (its output in the job's log, the deadline kept) and returns
/// its output too: what it appended to the job's log, or outside a job what it printed.
pub fn status_and_output(cmd: &mut Command) -> Result<(ExitStatus, String), String> {
    let log = CURRENT.with(|c| c.borrow().as_ref().map(|c| c.log.clone()));
    let (log, own) = match log {
        Some(log) => (log, false),
        None => {
            let path =
                std::env::temp_dir().join(format!("xtask-output-{}.log", std::process::id()));
            let file =
                std::fs::File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let err = file.try_clone().map_err(|e| e.to_string())?;
            cmd.stdout(Stdio::from(file)).stderr(Stdio::from(err));
            (path, true)
        }
    };
    let from = std::fs::metadata(&log).map_or(0, |m| m.len());
    let result = status(cmd);
    let bytes = std::fs::read(&log).map_err(|e| format!("{}: {e}", log.display()))?;
    let text = String::from_utf8_lossy(bytes.get(from as usize..).unwrap_or_default()).into_owned();
    if own {
        eprint!("{text}");
        let _ = std::fs::remove_file(&log);
    }
    Ok((result?, text))
}

/// Runs `cmd` to its end: in a job, with its output appended to the job's log and its CPU time
/// and compilations counted; elsewhere with the terminal's output.
pub fn status(cmd: &mut Command) -> Result<ExitStatus, String> {
    let log = CURRENT.with(|c| c.borrow().as_ref().map(|c| c.log.clone()));
    let deadline = DEADLINE.with(|d| d.get());
    if deadline.is_some() {
        // Its own process group, so that a stop reaches every process it started.
        std::os::unix::process::CommandExt::process_group(cmd, 0);
    }
    let Some(log) = log else {
        eprintln!("xtask: running {cmd:?}");
        let mut child = cmd.spawn().map_err(|e| format!("{cmd:?}: {e}"))?;
        let (status, _) = wait(&mut child, deadline)?;
        return Ok(status);
    };
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)
        .map_err(|e| format!("{}: {e}", log.display()))?;
    writeln!(file, "xtask: running {cmd:?}").map_err(|e| e.to_string())?;
    let from = file.metadata().map_err(|e| e.to_string())?.len();
    let out = file.try_clone().map_err(|e| e.to_string())?;
    let mut child = cmd
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(file))
        .spawn()
        .map_err(|e| format!("{cmd:?}: {e}"))?;
    let waited = wait(&mut child, deadline);
    let compiled = printed_compiling(&log, from);
    let (status, cpu) = waited?;
    CURRENT.with(|c| {
        if let Some(c) = c.borrow_mut().as_mut() {
            c.cpu += cpu;
            c.compiled |= compiled;
        }
    });
    Ok(status)
}

/// `cmd.output()`, its CPU time counted in the current job.
pub fn output(cmd: &mut Command) -> Result<std::process::Output, String> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{cmd:?}: {e}"))?;
    let read = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let stdout = read(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = read(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let (status, cpu) = wait(&mut child, DEADLINE.with(|d| d.get()))?;
    CURRENT.with(|c| {
        if let Some(c) = c.borrow_mut().as_mut() {
            c.cpu += cpu;
        }
    });
    Ok(std::process::Output {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    })
}

/// What `cmd` printed on stdout; an error naming `what` with its stderr if it failed.
pub fn stdout_of(cmd: &mut Command, what: &str) -> Result<Vec<u8>, String> {
    let out = output(cmd).map_err(|e| format!("{what}: {e}"))?;
    if out.status.success() {
        Ok(out.stdout)
    } else {
        Err(format!("{what}: {}", String::from_utf8_lossy(&out.stderr)))
    }
}

/// Runs `commands`, `workers` at a time, each as `run` would, within the current job (its log,
/// its CPU time); fails if any fails.
pub fn run_pool(commands: Vec<Command>, workers: usize) -> Result<(), String> {
    let log = CURRENT.with(|c| c.borrow().as_ref().map(|c| c.log.clone()));
    let queue = Mutex::new(commands.into_iter());
    let outcomes = Mutex::new((Duration::ZERO, false, Vec::<String>::new()));
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                CURRENT.with(|c| {
                    *c.borrow_mut() = log.clone().map(|log| Current {
                        log,
                        cpu: Duration::ZERO,
                        compiled: false,
                        note: None,
                    })
                });
                loop {
                    let next = queue.lock().expect("no panic holding the queue").next();
                    let Some(mut cmd) = next else { break };
                    let error = match status(&mut cmd) {
                        Ok(s) if s.success() => continue,
                        Ok(s) => format!("{cmd:?} failed with {s}"),
                        Err(e) => e,
                    };
                    outcomes
                        .lock()
                        .expect("no panic holding the outcomes")
                        .2
                        .push(error);
                }
                let mine = CURRENT.with(|c| c.borrow_mut().take());
                if let Some(mine) = mine {
                    let mut all = outcomes.lock().expect("no panic holding the outcomes");
                    all.0 += mine.cpu;
                    all.1 |= mine.compiled;
                }
            });
        }
    });
    let (cpu, compiled, errors) = outcomes.into_inner().expect("every worker ended");
    CURRENT.with(|c| {
        if let Some(c) = c.borrow_mut().as_mut() {
            c.cpu += cpu;
            c.compiled |= compiled;
        }
    });
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("\n"))
    }
}

/// Whether cargo said `Compiling` in the log past `from` (it does so for every crate it builds,
/// also when its output is not a terminal).
fn printed_compiling(log: &PathBuf, from: u64) -> bool {
    let mut text = String::new();
    let read = std::fs::File::open(log).and_then(|mut f| {
        f.seek(SeekFrom::Start(from))?;
        f.read_to_string(&mut text)
    });
    read.is_ok()
        && text
            .lines()
            .any(|l| l.trim_start().starts_with("Compiling "))
}

/// Waits for `child` with `wait4`, which also gives the CPU time of the child and of every
/// descendant it waited for. Past `deadline`, stops its process group (SIGTERM, then SIGKILL)
/// and fails with `STOPPED`.
fn wait(
    child: &mut std::process::Child,
    deadline: Option<Instant>,
) -> Result<(ExitStatus, Duration), String> {
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: rusage is plain data; wait4 writes it and the status for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let mut stopped: Option<Instant> = None;
    loop {
        let flags = if deadline.is_some() { libc::WNOHANG } else { 0 };
        let r = unsafe { libc::wait4(pid, &mut status, flags, &mut usage) };
        if r == pid {
            break;
        }
        if r == -1 {
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(format!("wait for process {pid}: {e}"));
            }
            continue;
        }
        // Still running, with a deadline.
        let now = Instant::now();
        if deadline.is_some_and(|d| now >= d) {
            let signal = match stopped {
                None => {
                    stopped = Some(now);
                    libc::SIGTERM
                }
                Some(at) if now - at > Duration::from_secs(10) => libc::SIGKILL,
                Some(_) => 0,
            };
            if signal != 0 {
                // SAFETY: signals the process group made for this child alone.
                unsafe { libc::kill(-pid, signal) };
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    if stopped.is_some() {
        return Err(format!("process {pid} {STOPPED}"));
    }
    let seconds = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    Ok((
        ExitStatus::from_raw(status),
        seconds(usage.ru_utime) + seconds(usage.ru_stime),
    ))
}

#[derive(PartialEq)]
enum State {
    Waiting,
    Running,
    Passed,
    Failed,
}

/// Runs `jobs` on `workers` threads, each taking the first job in the list whose prerequisites
/// have passed; a job after a failed one does not run. Returns the table, and an error naming
/// the failed jobs.
pub fn run_jobs(jobs: Vec<Job<'_>>, workers: usize) -> (Vec<Record>, Result<(), String>) {
    let logs = crate::root().join("target/test-logs");
    let _ = std::fs::remove_dir_all(&logs);
    if let Err(e) = std::fs::create_dir_all(&logs) {
        return (Vec::new(), Err(format!("{}: {e}", logs.display())));
    }
    let names: Vec<&'static str> = jobs.iter().map(|j| j.name).collect();
    for job in &jobs {
        if let Some(missing) = job.after.iter().find(|a| !names.contains(a)) {
            return (Vec::new(), Err(format!("{}: no job {missing}", job.name)));
        }
    }
    let states = Mutex::new((
        jobs.iter().map(|_| State::Waiting).collect::<Vec<_>>(),
        jobs.into_iter().map(Some).collect::<Vec<_>>(),
        Vec::<Record>::new(),
    ));
    let changed = Condvar::new();
    let started = Instant::now();
    let index = |name: &str| names.iter().position(|n| *n == name).expect("checked");
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let mut guard = states.lock().expect("no job panics holding the lock");
                let (index, job) = loop {
                    let (state, jobs, records) = &mut *guard;
                    // A job whose prerequisite failed is recorded as not run.
                    for i in 0..jobs.len() {
                        let blocked = jobs[i].as_ref().and_then(|j| {
                            j.after.iter().find(|a| state[index(a)] == State::Failed)
                        });
                        if let Some(a) = blocked {
                            let job = jobs[i].take().expect("waiting");
                            state[i] = State::Failed;
                            records.push(Record {
                                name: job.name,
                                start: started.elapsed(),
                                wall: Duration::ZERO,
                                cpu: Duration::ZERO,
                                compiled: false,
                                result: format!("not run ({a} failed)"),
                                note: None,
                            });
                        }
                    }
                    let ready = (0..jobs.len()).find(|&i| {
                        jobs[i].as_ref().is_some_and(|j| {
                            j.after.iter().all(|a| state[index(a)] == State::Passed)
                        })
                    });
                    if let Some(i) = ready {
                        state[i] = State::Running;
                        break (i, jobs[i].take().expect("ready"));
                    }
                    if jobs.iter().all(Option::is_none) {
                        changed.notify_all();
                        return;
                    }
                    guard = changed.wait(guard).expect("no job panics holding the lock");
                };
                drop(guard);
                let record = run_one(job, &logs, started);
                let mut guard = states.lock().expect("no job panics holding the lock");
                guard.0[index] = if record.result == "ok" {
                    State::Passed
                } else {
                    State::Failed
                };
                guard.2.push(record);
                changed.notify_all();
            });
        }
    });
    let (_, _, mut records) = states.into_inner().expect("every worker ended");
    records.sort_by_key(|r| names.iter().position(|n| *n == r.name));
    let failed: Vec<&str> = records
        .iter()
        .filter(|r| r.result != "ok")
        .map(|r| r.name)
        .collect();
    let result = if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("failed or not run: {}", failed.join(", ")))
    };
    (records, result)
}

fn run_one(job: Job<'_>, logs: &std::path::Path, started: Instant) -> Record {
    let log = logs.join(format!("{}.log", job.name.replace([' ', '/', ':'], "-")));
    let start = started.elapsed();
    eprintln!(
        "xtask: [{:>5.0} s] {} starts",
        start.as_secs_f64(),
        job.name
    );
    CURRENT.with(|c| {
        *c.borrow_mut() = Some(Current {
            log: log.clone(),
            cpu: Duration::ZERO,
            compiled: false,
            note: None,
        })
    });
    // A panic fails the job with its message; the runner and the other worker go on.
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (job.work)()))
        .unwrap_or_else(|panic| {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            Err(format!("panicked: {message}"))
        });
    let current = CURRENT.with(|c| c.borrow_mut().take()).expect("set above");
    let wall = started.elapsed() - start;
    let result = match &outcome {
        Ok(()) => "ok".to_string(),
        Err(e) => format!("FAILED: {e}"),
    };
    let note = current.note.clone();
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    // One write, so that the other worker's report cannot cut through it.
    let mut report = format!(
        "\n==== {} ({:.0} s, {}) ====\n{text}",
        job.name,
        wall.as_secs_f64(),
        if outcome.is_ok() { "ok" } else { "FAILED" }
    );
    if let Err(e) = &outcome {
        report += &format!("xtask: {}: {e}\n", job.name);
    }
    let _ = std::io::stdout().lock().write_all(report.as_bytes());
    Record {
        name: job.name,
        start,
        wall,
        cpu: current.cpu,
        compiled: current.compiled,
        result,
        note,
    }
}

/// The table as Markdown: every job, when it started, its wall and CPU time.
pub fn table(records: &[Record], total: Duration) -> String {
    let mut text = String::from(
        "| stage | starts at (s) | wall (s) | CPU (s) | compiled | result |\n|---|---|---|---|---|---|\n",
    );
    let mut cpu = Duration::ZERO;
    for r in records {
        cpu += r.cpu;
        let mut result = r.result.lines().next().unwrap_or_default().to_string();
        if let Some(note) = &r.note {
            result += &format!(" ({note})");
        }
        text += &format!(
            "| {} | {:.0} | {:.0} | {:.0} | {} | {} |\n",
            r.name,
            r.start.as_secs_f64(),
            r.wall.as_secs_f64(),
            r.cpu.as_secs_f64(),
            if r.compiled { "yes" } else { "no" },
            result
        );
    }
    text += &format!(
        "| **total** | | **{:.0}** | **{:.0}** | | |\n",
        total.as_secs_f64(),
        cpu.as_secs_f64()
    );
    text
}

#[cfg(test)]
#[path = "stages_tests.rs"]
mod tests;
