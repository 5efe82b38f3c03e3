//! The reference scenarios inside every FMU, in the layout of the FMI layered standard for
//! reference results (FMI-LS-REF): `extra/org.fmi-standard.fmi-ls-ref/` holds
//! `fmi-ls-manifest.xml` (root `fmiReferences`, attributes `fmi-ls:fmi-ls-name`,
//! `fmi-ls-version`, `fmi-ls-description` in the `http://fmi-standard.org/fmi-ls-manifest`
//! namespace) and the files it names, as modelica/Reference-FMUs ship them
//! (`<Model>_out.csv` there, with a `Related role="result"`; here also the inputs, the options
//! and, where there is one, the parameter file, tied together by an `<Experiment>` as the
//! standard's schema has it). The default scenario's files are at the top of the folder; each
//! further scenario (`reference-fmus/<Model>/<name>/`) is one more `<Experiment name="<name>">`
//! whose files are in the subfolder `<name>/`. And the default scenario's reference plot for
//! documentation/index.html.

use crate::svg;
use model_description::{ModelDescription, VariableType};
use std::path::Path;

pub const DIR: &str = "extra/org.fmi-standard.fmi-ls-ref";
/// The version modelica/Reference-FMUs write.
const LS_VERSION: &str = "1.0.0-alpha.1";
/// Fixed by the standard's schema.
const LS_DESCRIPTION: &str = "Layered Standard providing reference stimuli and results for an FMU.";

/// One scenario of one model, read from `reference-fmus/<Model>/` (the default) or a
/// subfolder of it.
pub struct Scenario {
    pub model: String,
    /// "default", or the subfolder's name.
    pub name: String,
    /// (file name, contents): `_in.csv`, `_ref.csv`, `_ref.opt`, `_par.csv` where present.
    pub files: Vec<(String, Vec<u8>)>,
    pub start: f64,
    pub stop: f64,
    pub step: f64,
    pub tolerance: Option<f64>,
}

impl Scenario {
    pub fn read(dir: &Path, model: &str) -> Result<Self, String> {
        let mut files = Vec::new();
        for (suffix, required) in [
            ("_in.csv", false),
            ("_ref.csv", true),
            ("_ref.opt", true),
            ("_par.csv", false),
        ] {
            let name = format!("{model}{suffix}");
            let path = dir.join(&name);
            match std::fs::read(&path) {
                Ok(bytes) => files.push((name, bytes)),
                Err(e) if required || e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(format!("{}: {e}", path.display()))
                }
                Err(_) => {}
            }
        }
        let opt = String::from_utf8_lossy(&files.iter().find(|f| f.0.ends_with(".opt")).unwrap().1)
            .into_owned();
        let value = |key: &str| -> Option<f64> {
            opt.lines().find_map(|l| {
                let (k, v) = l.split_once(',')?;
                (k.trim() == key).then(|| v.trim().parse().ok())?
            })
        };
        let need = |key: &str| value(key).ok_or_else(|| format!("{model}_ref.opt: no {key}"));
        Ok(Scenario {
            model: model.into(),
            start: need("StartTime")?,
            stop: need("StopTime")?,
            step: need("StepSize")?,
            tolerance: value("RelTol"),
            name: "default".into(),
            files,
        })
    }

    /// The default scenario and every scenario in a subfolder of `dir`, in name order.
    pub fn read_all(dir: &Path, model: &str) -> Result<Vec<Self>, String> {
        let mut all = vec![Scenario::read(dir, model)?];
        let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let mut subs: Vec<_> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.join(format!("{model}_ref.opt")).is_file())
            .collect();
        subs.sort();
        for sub in subs {
            let mut s = Scenario::read(&sub, model)?;
            s.name = sub
                .file_name()
                .and_then(|n| n.to_str())
                .ok_or_else(|| format!("{}: not a UTF-8 name", sub.display()))?
                .to_string();
            all.push(s);
        }
        Ok(all)
    }

    /// Where this scenario's files are, relative to the layout's folder.
    fn folder(&self) -> String {
        if self.name == "default" {
            String::new()
        } else {
            format!("{}/", self.name)
        }
    }

    fn has(&self, suffix: &str) -> Option<String> {
        let name = format!("{}{suffix}", self.model);
        self.files.iter().any(|f| f.0 == name).then_some(name)
    }

    /// This scenario's `<Experiment>` and `<Related>` elements of the manifest.
    fn experiment(&self) -> String {
        let (m, name, at) = (&self.model, &self.name, self.folder());
        let tolerance = self
            .tolerance
            .map_or(String::new(), |t| format!(" tolerance=\"{t:e}\""));
        let mut files = String::new();
        if let Some(par) = self.has("_par.csv") {
            files += &format!("    <Parameters type=\"text/csv\" source=\"{at}{par}\"/>\n");
        }
        if let Some(inputs) = self.has("_in.csv") {
            files += &format!("    <Stimuli type=\"text/csv\" source=\"{at}{inputs}\"/>\n");
        }
        files += &format!("    <References type=\"text/csv\" source=\"{at}{m}_ref.csv\"/>\n");
        format!(
            r#"  <Experiment name="{name}" description="The {name} reference scenario of {m}: inputs, parameters and reference outputs"
    startTime="{start:?}" stopTime="{stop:?}" stepSize="{step:?}"{tolerance}>
{files}  </Experiment>
  <Related type="text/csv" source="{at}{m}_ref.csv" role="result" description="Output of the {name} experiment"/>
  <Related type="text/csv" source="{at}{m}_ref.opt" role="configuration" description="Options of the {name} experiment (StartTime, StopTime, StepSize, RelTol) in the FMI Cross-Check format"/>
"#,
            start = self.start,
            stop = self.stop,
            step = self.step,
        )
    }

    /// (path inside the FMU, contents) of this scenario's files.
    fn files_in_fmu(&self) -> impl Iterator<Item = (String, Vec<u8>)> + '_ {
        let at = self.folder();
        self.files
            .iter()
            .map(move |(name, bytes)| (format!("{DIR}/{at}{name}"), bytes.clone()))
    }
    /// The HTML section with the reference plot: every Real variable of the model that the
    /// reference CSV holds, a panel each, at most four panels per figure.
    /// `others`: the names of the further scenarios shipped beside it.
    pub fn documentation(&self, md: &ModelDescription, others: &[&str]) -> Result<String, String> {
        let m = &self.model;
        let csv = self.has("_ref.csv").expect("read() requires it");
        let bytes = &self.files.iter().find(|f| f.0 == csv).unwrap().1;
        let (names, columns) =
            svg::parse_csv(&String::from_utf8_lossy(bytes)).map_err(|e| format!("{csv}: {e}"))?;
        if names.first().map(String::as_str) != Some("time") {
            return Err(format!("{csv}: the first column is not time"));
        }
        let mut series = Vec::new();
        for (name, values) in names.iter().zip(&columns).skip(1) {
            let v = md
                .variable(name)
                .ok_or_else(|| format!("{csv}: column '{name}' is no variable of {m}"))?;
            if let VariableType::Real { unit, .. } = &v.kind {
                series.push(svg::Series {
                    name,
                    unit: unit.as_deref().unwrap_or(""),
                    values,
                });
            }
        }
        if series.is_empty() {
            return Err(format!("{csv}: no Real variable to plot"));
        }
        // Balanced figures of at most four panels.
        let figures = series.len().div_ceil(4);
        let per = series.len().div_ceil(figures);
        let plots: Vec<String> = series
            .chunks(per)
            .map(|chunk| {
                format!(
                    "<figure style=\"margin:1em 0\">{}</figure>\n",
                    svg::figure(&columns[0], chunk)
                )
            })
            .collect();
        let file = |suffix: &str, what: &str| {
            self.has(suffix)
                .map(|f| format!("<code>{f}</code> ({what}), "))
                .unwrap_or_default()
        };
        let tolerance = self
            .tolerance
            .map_or(String::new(), |t| format!(", relative tolerance {t:e}"));
        let further = if others.is_empty() {
            String::new()
        } else {
            let list: Vec<String> = others
                .iter()
                .map(|n| format!("<code>{n}/</code>"))
                .collect();
            format!(
                " Further scenarios, each an <code>&lt;Experiment&gt;</code> of the same manifest with its files in a subfolder of that name: {}.",
                list.join(", ")
            )
        };
        Ok(format!(
            r#"<h2 id="reference-result">Reference result</h2>
<p>The default reference scenario, {start} s to {stop} s with a {step} s communication step{tolerance}:
each signal of the reference on its own axes. The scenario ships inside this FMU in the layout of
the FMI layered standard for reference results (FMI-LS-REF), in
<code>{DIR}/</code>: <code>fmi-ls-manifest.xml</code>, {inputs}{params}<code>{m}_ref.csv</code>
(reference outputs) and <code>{m}_ref.opt</code> (options).{further}</p>
{plots}"#,
            start = self.start,
            stop = self.stop,
            step = self.step,
            inputs = file("_in.csv", "inputs"),
            params = file("_par.csv", "parameters"),
            plots = plots.concat(),
        ))
    }
}

/// `fmi-ls-manifest.xml` of several scenarios, the default first.
pub fn manifest(scenarios: &[Scenario]) -> String {
    let experiments: String = scenarios.iter().map(Scenario::experiment).collect();
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<fmiReferences
  xmlns:fmi-ls="http://fmi-standard.org/fmi-ls-manifest"
  fmi-ls:fmi-ls-name="org.fmi-standard.fmi-ls-ref"
  fmi-ls:fmi-ls-version="{LS_VERSION}"
  fmi-ls:fmi-ls-description="{LS_DESCRIPTION}">
{experiments}</fmiReferences>
"#
    )
}

/// (path inside the FMU, contents) of everything the scenarios add to the FMU.
pub fn fmu_files(scenarios: &[Scenario]) -> Vec<(String, Vec<u8>)> {
    let mut out = vec![(
        format!("{DIR}/fmi-ls-manifest.xml"),
        manifest(scenarios).into_bytes(),
    )];
    out.extend(scenarios.iter().flat_map(Scenario::files_in_fmu));
    out
}

/// Puts `section` into the binary's documentation page near its top, after the one-line
/// description that follows the title (so the plot is on the first screen, whatever the length
/// of the model's text); failing that, before the variable table or at the end.
pub fn insert_section(html: &str, section: &str) -> Result<String, String> {
    let after_intro = html.find("</h1>").and_then(|h| {
        let p = html[h..].find("</p>")? + h + "</p>".len();
        // The paragraph right after the title, not one further down.
        html[h + 5..p].trim_start().starts_with("<p>").then_some(p)
    });
    let at = after_intro
        .map(|p| p + usize::from(html[p..].starts_with('\n')))
        .or_else(|| html.find("<h2>Variables</h2>"))
        .or_else(|| html.rfind("</body>"))
        .ok_or("documentation/index.html has no title paragraph, Variables section nor </body>")?;
    Ok(format!("{}{section}{}", &html[..at], &html[at..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(dir: &Path, par: bool) -> Scenario {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("M_in.csv"), "\"time\",\"u\"\n0,1\n1,1\n").unwrap();
        std::fs::write(dir.join("M_ref.csv"), "\"time\",\"y\"\n0,0\n1,2\n").unwrap();
        std::fs::write(
            dir.join("M_ref.opt"),
            "StartTime,0.0\nStopTime,1.0\nStepSize,0.001\nRelTol,1e-08\n",
        )
        .unwrap();
        if par {
            std::fs::write(dir.join("M_par.csv"), "\"name\",\"value\"\n\"k\",1\n").unwrap();
        }
        Scenario::read(dir, "M").unwrap()
    }

    #[test]
    fn manifest_names_every_file_it_ships() {
        let dir = std::env::temp_dir().join(format!("xtask-ref-{}", std::process::id()));
        let s = scenario(&dir, true);
        assert_eq!(
            (s.start, s.stop, s.step, s.tolerance),
            (0.0, 1.0, 0.001, Some(1e-8))
        );
        // A further scenario in a subfolder, without inputs; a folder without options is none.
        let sub = dir.join("ramp");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(sub.join("M_ref.csv"), "\"time\",\"y\"\n0,0\n2,4\n").unwrap();
        std::fs::write(
            sub.join("M_ref.opt"),
            "StartTime,0.0\nStopTime,2.0\nStepSize,0.01\n",
        )
        .unwrap();
        std::fs::create_dir_all(dir.join("notes")).unwrap();
        let all = Scenario::read_all(&dir, "M").unwrap();
        let names: Vec<&str> = all.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["default", "ramp"]);
        let xml = manifest(&all);
        for needle in [
            r#"fmi-ls:fmi-ls-name="org.fmi-standard.fmi-ls-ref""#,
            r#"fmi-ls:fmi-ls-version="1.0.0-alpha.1""#,
            r#"fmi-ls:fmi-ls-description="Layered Standard providing reference stimuli and results for an FMU.""#,
            r#"<Experiment name="default""#,
            r#"<Parameters type="text/csv" source="M_par.csv"/>"#,
            r#"<Stimuli type="text/csv" source="M_in.csv"/>"#,
            r#"<References type="text/csv" source="M_ref.csv"/>"#,
            r#"source="M_ref.csv" role="result""#,
            r#"startTime="0.0" stopTime="1.0" stepSize="0.001" tolerance="1e-8""#,
            r#"<Experiment name="ramp""#,
            r#"startTime="0.0" stopTime="2.0" stepSize="0.01">"#,
            r#"<References type="text/csv" source="ramp/M_ref.csv"/>"#,
            r#"source="ramp/M_ref.opt" role="configuration""#,
        ] {
            assert!(xml.contains(needle), "missing {needle} in\n{xml}");
        }
        assert_eq!(xml.matches("<Experiment ").count(), 2);
        assert!(!xml.contains("ramp/M_in.csv"));
        let paths: Vec<String> = fmu_files(&all).into_iter().map(|f| f.0).collect();
        assert_eq!(
            paths,
            [
                "fmi-ls-manifest.xml",
                "M_in.csv",
                "M_ref.csv",
                "M_ref.opt",
                "M_par.csv",
                "ramp/M_ref.csv",
                "ramp/M_ref.opt"
            ]
            .map(|f| format!("{DIR}/{f}"))
        );
        // No parameter file: no <Parameters>.
        std::fs::remove_file(dir.join("M_par.csv")).unwrap();
        let s = Scenario::read(&dir, "M").unwrap();
        assert!(!manifest(&[s]).contains("<Parameters"));
        // Without its reference the scenario is refused, not skipped.
        std::fs::remove_file(sub.join("M_ref.csv")).unwrap();
        assert!(Scenario::read_all(&dir, "M").is_err());
        std::fs::remove_file(dir.join("M_ref.csv")).unwrap();
        assert!(Scenario::read(&dir, "M").is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn section_goes_after_the_description() {
        let html =
            "<body><h1>M</h1>\n<p>What M is.</p>\n<p>Long text.</p>\n<h2>Variables</h2></body>";
        let out = insert_section(html, "<h2>Reference result</h2>\n").unwrap();
        assert!(out.contains("<p>What M is.</p>\n<h2>Reference result</h2>\n<p>Long text.</p>"));
        // No description paragraph: before the variables.
        let html = "<body><h1>M</h1>\n<h2>Variables</h2><p>x</p></body>";
        let out = insert_section(html, "<h2>R</h2>").unwrap();
        assert!(out.contains("<h2>R</h2><h2>Variables</h2>"));
        assert!(insert_section("<p>nothing</p>", "x").is_err());
    }
}
