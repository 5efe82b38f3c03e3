//! `cargo xtask new <Name>`: a new component that packages and passes `cargo xtask validate` as
//! it stands, for its author to fill in. A placeholder model with one state (an inertia on a
//! viscous bearing driven by a torque, `J dw/dt = tau - d w`), its documentation, an in-process
//! test, its reference scenario from the closed form, its row in the README's table of FMUs, its
//! section in docs/variables.md and its workspace entry.
//!
//! `cargo xtask scaffold-check` proves it: it scaffolds a component into a copy of the
//! workspace (under `target/scaffold/`), packages it for every platform (linux64, win64,
//! aarch64-linux, macOS) and validates it.

use crate::{build_dir, root, run, venv, ROOT};
use std::path::Path;
use std::process::Command;

/// The model identifier `Name` as a crate directory and module: `MyGear` -> `my_gear`.
fn snake(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

fn check_name(name: &str) -> Result<(), String> {
    let ok = name.starts_with(|c: char| c.is_ascii_uppercase())
        && name.chars().all(|c| c.is_ascii_alphanumeric());
    if ok {
        Ok(())
    } else {
        Err(format!(
            "new: '{name}' is not a model identifier: CamelCase letters and digits, starting \
             with a capital (it names the .fmu, the binary and the model)"
        ))
    }
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    eprintln!("xtask: wrote {}", path.display());
    Ok(())
}

/// Inserts `text` into the file at `path` before the first line that starts with `before`.
fn insert_before(path: &Path, before: &str, text: &str) -> Result<(), String> {
    let content = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let at = content
        .match_indices(before)
        .map(|(i, _)| i)
        .find(|&i| i == 0 || content.as_bytes()[i - 1] == b'\n')
        .ok_or_else(|| format!("{}: no line starting with {before:?}", path.display()))?;
    let updated = format!("{}{text}{}", &content[..at], &content[at..]);
    std::fs::write(path, updated).map_err(|e| format!("{}: {e}", path.display()))?;
    eprintln!("xtask: updated {}", path.display());
    Ok(())
}

/// `cargo xtask new <Name>` in the workspace at `root`.
pub fn new(root: &Path, name: &str) -> Result<(), String> {
    check_name(name)?;
    let module = snake(name);
    let krate = module.replace('_', "-");
    let dir = root.join("fmu").join(&module);
    if dir.exists() || root.join("reference-fmus").join(name).exists() {
        return Err(format!("new: {name} exists already ({})", dir.display()));
    }
    let fill = |template: &str| {
        template
            .replace("{Name}", name)
            .replace("{module}", &module)
            .replace("{crate}", &krate)
    };
    write(&dir.join("Cargo.toml"), &fill(CARGO_TOML))?;
    write(&dir.join("src/lib.rs"), &fill(LIB_RS))?;
    write(&dir.join("documentation.html"), &fill(DOCUMENTATION))?;
    write(&dir.join("tests/in_process.rs"), &fill(IN_PROCESS))?;
    let manifest = root.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).map_err(|e| e.to_string())?;
    let entry = format!("\"fmu/{module}\", \"xtask\"");
    if !text.contains("\"xtask\"") {
        return Err("Cargo.toml: no \"xtask\" in the workspace members".into());
    }
    std::fs::write(&manifest, text.replacen("\"xtask\"", &entry, 1)).map_err(|e| e.to_string())?;
    let generate = root.join("reference-fmus/generate.py");
    insert_before(&generate, "if __name__ == \"__main__\":", &fill(GENERATOR))?;
    insert_before(
        &generate,
        "    print(\"reference-fmus: written\")",
        &format!("    {module}()\n"),
    )?;
    // The coverage-guided fuzzer links every model.
    insert_before(
        &root.join("fuzz/Cargo.toml"),
        "# Not a member of the main workspace",
        &fill("{crate} = { path = \"../fmu/{module}\" }\n"),
    )?;
    insert_before(
        &root.join("fuzz/src/lib.rs"),
        "            // cargo xtask new adds a component above this line.",
        &fill("            load::<{module}::{Name}>(),\n"),
    )?;
    insert_after_table(&root.join("README.md"), &fill(README_ROW))?;
    append_section(&root.join("docs/variables.md"), &fill(VARIABLES))?;
    // The reference from the closed form, by the generator just added.
    let python = venv()?;
    run(Command::new(python)
        .args(["-c", &format!("import generate; generate.{module}()")])
        .current_dir(root.join("reference-fmus")))?;
    eprintln!(
        "xtask: {name} scaffolded: fmu/{module}/ (model, documentation, test), \
         reference-fmus/{name}/ (from generate.py's {module}()), README row, docs/variables.md, \
         workspace member"
    );
    Ok(())
}

/// Appends `section` to the Markdown page at `path`, after one blank line.
fn append_section(path: &Path, section: &str) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let updated = format!("{}\n\n{}\n", text.trim_end(), section.trim_end());
    std::fs::write(path, updated).map_err(|e| format!("{}: {e}", path.display()))?;
    eprintln!("xtask: updated {}", path.display());
    Ok(())
}

/// Appends a row to the README's table of FMUs (the first table of the file).
fn insert_after_table(readme: &Path, row: &str) -> Result<(), String> {
    let text = std::fs::read_to_string(readme).map_err(|e| e.to_string())?;
    let start = text
        .find("\n| FMU |")
        .ok_or("README.md: no table of FMUs (a line starting with '| FMU |')")?;
    let end = text[start + 1..]
        .find("\n\n")
        .map(|i| start + 1 + i + 1)
        .ok_or("README.md: the table of FMUs does not end")?;
    let updated = format!("{}{row}{}", &text[..end], &text[end..]);
    std::fs::write(readme, updated).map_err(|e| e.to_string())
}

/// Copies the workspace's tracked files to `target/scaffold/workspace` (its own `target/` kept
/// between runs, the Python tools shared), scaffolds a component there and runs `cargo xtask
/// dev` on it: its tests, its FMUs packaged for linux64 and validated against its reference.
pub fn check() -> Result<(), String> {
    let root = root();
    let copy = root.join("target/scaffold/workspace");
    let listed = Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(&root)
        .output()
        .map_err(|e| format!("git ls-files: {e}"))?;
    if !listed.status.success() {
        return Err("git ls-files failed".into());
    }
    let tracked: std::collections::BTreeSet<String> = listed
        .stdout
        .split(|b| *b == 0)
        .filter(|f| !f.is_empty())
        .map(|f| String::from_utf8_lossy(f).into_owned())
        .filter(|f| root.join(f).is_file())
        .collect();
    // What `new` made last time goes, and so does every file the workspace no longer has.
    for made in ["fmu/scaffolded", "reference-fmus/Scaffolded"] {
        let _ = std::fs::remove_dir_all(copy.join(made));
    }
    remove_untracked(&copy, &copy, &tracked)?;
    // Only the files that differ are written: the others keep their times, so cargo rebuilds
    // none of the crates the copy shares with the workspace unless they changed.
    for relative in &tracked {
        let (from, to) = (root.join(relative), copy.join(relative));
        let content = std::fs::read(&from).map_err(|e| format!("{}: {e}", from.display()))?;
        if std::fs::read(&to).ok().as_ref() == Some(&content) {
            continue;
        }
        if let Some(dir) = to.parent() {
            std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        }
        std::fs::write(&to, &content).map_err(|e| format!("{}: {e}", to.display()))?;
        // A vendored crate is a dependency the copy shares with the workspace at the same
        // relative path, so the same build: with its files' times its build stays fresh.
        if relative.starts_with("vendor/") {
            keep_time(&from, &to)?;
        }
    }
    venv()?;
    std::fs::create_dir_all(copy.join("target")).map_err(|e| e.to_string())?;
    for shared in [".venv", "target/tools"] {
        let link = copy.join(shared);
        if !link.exists() {
            std::os::unix::fs::symlink(root.join(shared), &link)
                .map_err(|e| format!("{}: {e}", link.display()))?;
        }
    }
    let name = "Scaffolded";
    new(&copy, name)?;
    separate_versions(&copy)?;
    // The copy builds into this workspace's build directories: its own crates are compiled
    // apart (`separate_versions`), every dependency is reused. Its Cargo.lock takes the new
    // crate and the copy's versions first (`dev` builds with --locked).
    run(Command::new(env!("CARGO"))
        .args(["update", "--workspace", "--offline"])
        .current_dir(&copy))?;
    // Then this xtask on the copy (its sources are these: building them again there would only
    // cost time) runs what a developer runs on a new component, `cargo xtask dev`: its tests,
    // its FMI 2.0 and FMI 3.0 FMUs packaged for linux64 and validated against its reference
    // (fmpy validate, FMPy, the C harness). The other platforms' builds and the other
    // importers run the same code for every component, and the eight real ones go through
    // them in this suite.
    // The fuzz crate is not built here: `new` adds the component to it at anchors it checks,
    // and the fuzz stage builds it with every real component (a build of the copy's would cost
    // three minutes of the test command for one line of a template).
    run(
        Command::new(std::env::current_exe().map_err(|e| e.to_string())?)
            .args(["dev", name])
            .env(ROOT, &copy)
            .env("XTASK_BUILD_DIR", build_dir())
            .current_dir(&copy),
    )
}

/// `to` takes `from`'s modification time.
fn keep_time(from: &Path, to: &Path) -> Result<(), String> {
    let time = std::fs::metadata(from)
        .and_then(|m| m.modified())
        .map_err(|e| format!("{}: {e}", from.display()))?;
    std::fs::File::options()
        .write(true)
        .open(to)
        .and_then(|f| f.set_modified(time))
        .map_err(|e| format!("{}: {e}", to.display()))
}

/// Cargo names a workspace crate's build by its name, version and path relative to the
/// workspace: the copy's crates would take the names of this workspace's in the shared build
/// directories, and each run would rebuild the other's (or link one's crate against the
/// other's). Another version in the copy's `[workspace.package]` gives them names of their own.
fn separate_versions(copy: &Path) -> Result<(), String> {
    let manifest = copy.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).map_err(|e| e.to_string())?;
    let (head, tail) = text
        .split_once("[workspace.package]")
        .ok_or("Cargo.toml: no [workspace.package]")?;
    let (line, rest) = tail
        .split_once("\nversion = \"")
        .ok_or("Cargo.toml: no version in [workspace.package]")?;
    let (version, rest) = rest
        .split_once('"')
        .ok_or("Cargo.toml: an open version string")?;
    let separate = format!("{version}-scaffold");
    let updated = format!("{head}[workspace.package]{line}\nversion = \"{separate}\"{rest}");
    std::fs::write(&manifest, updated).map_err(|e| e.to_string())
}

/// Removes the files under `dir` (in the copy at `copy`) that are not in `tracked`, except its
/// own `target/` and the shared links.
fn remove_untracked(
    copy: &Path,
    dir: &Path,
    tracked: &std::collections::BTreeSet<String>,
) -> Result<(), String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries {
        let path = entry.map_err(|e| e.to_string())?.path();
        let relative = path
            .strip_prefix(copy)
            .expect("under the copy")
            .to_string_lossy()
            .into_owned();
        if relative == "target" || relative == ".venv" || path.is_symlink() {
            continue;
        }
        if path.is_dir() {
            remove_untracked(copy, &path, tracked)?;
        } else if !tracked.contains(&relative) {
            std::fs::remove_file(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    Ok(())
}

const README_ROW: &str = "| `{Name}` | Placeholder written by `cargo xtask new`: an inertia on a viscous bearing driven by a torque | scaffolded |\n";

/// The component's section of docs/variables.md, appended at its end.
const VARIABLES: &str = "## {Name}

| Name | Causality | Unit | Start | Description |
|---|---|---|---|---|
| `J` | parameter | kg.m2 | 0.5 | Inertia (> 0) |
| `d` | parameter | N.m.s/rad | 0.1 | Viscous friction of the bearing (>= 0) |
| `w_start` | parameter | rad/s | 0 | Initial speed |
| `tau` | input | N.m | 0 | Torque on the inertia |
| `w` | output | rad/s | | Speed (the state) |
| `a` | output | rad/s2 | | Acceleration, (tau - d w)/J |

";

const CARGO_TOML: &str = r#"[package]
name = "{crate}"
description = "{Name}, as an FMI 2.0 FMU for Co-Simulation and Model Exchange"
version.workspace = true
edition.workspace = true
license.workspace = true

# The model identifier of the FMU this crate packages: target/fmu/{Name}.fmu.
[package.metadata.fmu]
model = "{Name}"

[lib]
crate-type = ["cdylib", "rlib"]

[dependencies]
fmu-runtime.workspace = true
"#;

const LIB_RS: &str = r#"//! {Name}: an inertia J on a bearing with viscous friction d, driven by a torque,
//! `J dw/dt = tau - d w`. A placeholder written by `cargo xtask new`: replace the equations,
//! the declarations and `documentation.html` with the component's.

use fmu_runtime::{
    export_fmu, Equations, Experiment, Invalid, Jet, Model, Param, Scalar, Variables,
};

/// Written once over the number type `S`: as f64 the simulation, over jets its exact
/// derivatives. The parameters are `Param<S>`: plain f64 among the jets after initialization,
/// where they do not move with the knowns.
#[derive(Debug, Clone, Variables)]
pub struct {Name}<S: Scalar = f64> {
    #[parameter(
        name = "J",
        start = 0.5,
        unit = "kg.m2",
        min = 0.0,
        describe = "Inertia (> 0)"
    )]
    j: Param<S>,
    #[parameter(
        start = 0.1,
        unit = "N.m.s/rad",
        min = 0.0,
        describe = "Viscous friction of the bearing (>= 0)"
    )]
    d: Param<S>,
    #[parameter(unit = "rad/s", describe = "Initial speed")]
    w_start: Param<S>,
    #[input(unit = "N.m", describe = "Torque on the inertia")]
    tau: S,
    #[output(unit = "rad/s", depends_on = ["w"], state, from = w_start, derivative = "a", describe = "Speed (state)")]
    w: S,
    #[output(unit = "rad/s2", depends_on = ["w", "tau"], describe = "Acceleration, (tau - d w)/J")]
    a: S,
}

impl<S: Scalar> {Name}<S> {
    fn acceleration(&self) -> S {
        (self.tau - self.d * self.w) / self.j
    }
}

impl<S: Scalar> Equations<S> for {Name}<S> {
    fn derivatives(&self, _t: f64, dx: &mut [S]) {
        dx[{Name}::STATE.w] = self.acceleration();
    }

    fn outputs(&mut self, _t: f64) {
        self.a = self.acceleration();
    }
}

impl Model for {Name} {
    const NAME: &'static str = "{Name}";
    const DESCRIPTION: &'static str = "An inertia on a viscous bearing driven by a torque";
    const DOCUMENTATION: &'static str = include_str!("../documentation.html");
    const DEFAULT_EXPERIMENT: Experiment = Experiment::until(1.0);

    fn initialize(&mut self, _t: f64) -> Result<(), Invalid> {
        if !(self.j.is_finite() && self.j > 0.0) {
            return Err(Invalid::new("J", self.j, "must be positive"));
        }
        if !(self.d.is_finite() && self.d >= 0.0) {
            return Err(Invalid::new("d", self.d, "must be >= 0"));
        }
        Ok(())
    }

    /// One lane for each state (the inputs' columns are swept apart).
    type Jets = {Name}<Jet<1>>;
}

export_fmu!({Name});
"#;

const DOCUMENTATION: &str = r#"<h2>Model</h2>
<p>An inertia <code>J</code> on a bearing with viscous friction <code>d</code>, driven by the
torque <code>tau</code>: <code>J dw/dt = tau - d w</code>, from <code>w(0) = w_start</code>. For a
constant torque the speed approaches <code>tau/d</code> as
<code>w(t) = tau/d + (w_start - tau/d) exp(-d t/J)</code>, the closed form the reference scenario
comes from.</p>
<p>A placeholder written by <code>cargo xtask new</code>: the component's equations, their
derivation, its event indicators and its validity limits go here.</p>
"#;

const IN_PROCESS: &str = r#"//! {Name} in its own process, without packaging: from rest under a constant torque the speed
//! follows w(t) = (tau/d) (1 - exp(-d t/J)).

use fmu_runtime::testing::Run;
use {module}::{Name};

#[test]
fn a_constant_torque_gives_the_closed_form_speed() -> Result<(), String> {
    let (j, d, tau) = (0.5, 0.1, 1.0);
    let mut run = Run::<{Name}>::co_simulation(&[("J", j), ("d", d)])?;
    run.set("tau", tau)?;
    for _ in 0..1000 {
        run.step(1e-3)?;
    }
    let exact = tau / d * (1.0 - (-d * run.time() / j).exp());
    let w = run.get("w")?;
    assert!((w - exact).abs() < 1e-9, "w = {w}, exactly {exact}");
    Ok(())
}

/// The exact Jacobian (the same equations over jets) against differences of the equations.
#[test]
fn the_exact_jacobian_agrees_with_differences() -> Result<(), String> {
    let mut run = Run::<{Name}>::co_simulation(&[("J", 0.5), ("d", 0.1)])?;
    run.set("tau", 1.0)?;
    run.step(1e-3)?;
    let disagreements = run.jacobian_disagreements(1e-8)?;
    assert!(disagreements.is_empty(), "{disagreements:?}");
    Ok(())
}
"#;

const GENERATOR: &str = r#"def {module}():
    """{Name}: J dw/dt = tau - d w from rest under tau = 1 N.m, w = (tau/d) (1 - exp(-d t/J))."""
    J, d, tau = 0.5, 0.1, 1.0
    stop, step = 1.0, 1e-3
    rows = []
    for k in range(101):  # every 10 ms
        t = round(k * 0.01, 10)
        w = tau / d * (1.0 - math.exp(-d * t / J))
        rows.append((t, w, (tau - d * w) / J))
    write_scenario(os.path.join(HERE, "{Name}"), "{Name}", ["time", "tau"],
                   [(0.0, tau), (stop, tau)], ["time", "w", "a"], rows, stop, step, 1e-8)


"#;

#[cfg(test)]
mod tests {
    use super::*;

    /// `cargo xtask new`'s edits apply to this workspace's pages: its row ends the README's table
    /// of FMUs, and its section, naming every variable of the placeholder in backticks (what the
    /// validation asks), ends docs/variables.md under a heading of its own.
    #[test]
    fn the_scaffolds_rows_fit_this_workspaces_pages() {
        let dir = std::env::temp_dir().join(format!("xtask-scaffold-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("docs")).unwrap();
        let (readme, variables) = (dir.join("README.md"), dir.join("docs/variables.md"));
        std::fs::copy(root().join("README.md"), &readme).unwrap();
        std::fs::copy(root().join("docs/variables.md"), &variables).unwrap();
        let fill = |template: &str| template.replace("{Name}", "Scaffolded");
        insert_after_table(&readme, &fill(README_ROW)).unwrap();
        append_section(&variables, &fill(VARIABLES)).unwrap();
        let (readme, page) = (
            std::fs::read_to_string(&readme).unwrap(),
            std::fs::read_to_string(&variables).unwrap(),
        );
        std::fs::remove_dir_all(&dir).unwrap();

        let table = readme.split("\n| FMU |").nth(1).unwrap();
        let table = table.split("\n\n").next().unwrap();
        assert!(table.ends_with(fill(README_ROW).trim_end()), "{table}");
        let before = std::fs::read_to_string(root().join("docs/variables.md")).unwrap();
        assert!(page.starts_with(before.trim_end()));
        let section = page.split("\n## Scaffolded\n").nth(1).expect("its section");
        assert!(!section.contains("\n#"), "the section ends the page");
        for name in ["J", "d", "w_start", "tau", "w", "a"] {
            assert!(section.contains(&format!("`{name}`")), "{name}");
        }
        assert!(crate::links::anchors(&page).contains("scaffolded"));
    }
}
