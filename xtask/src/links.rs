//! `cargo xtask links`: every relative link in the project's Markdown files points to a file or
//! directory of the project, and every `#anchor` to a heading of the page it names. Part of the
//! docs check; it reads the files only (milliseconds).
//!
//! The files are those git lists (tracked, or new and not ignored): what GitHub will show. A
//! link is `[text](target)`, `![alt](target)` or a definition `[label]: target`, outside code
//! (fenced blocks and code spans). Targets with a scheme (`https:`, `mailto:`, ...) are not
//! fetched: CI may be offline. A target is resolved against the page's directory (a leading `/`
//! against the project's root); an anchor is checked only in Markdown pages, against the slugs
//! GitHub gives their ATX headings (`## Title`): lower case, spaces to `-`, every other
//! character that is not a letter, a digit, `-` or `_` dropped, `-1`, `-2`, ... for repeats.
//! Setext headings and HTML anchors are not read: a link to one fails, it never passes wrongly.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::process::Command;
use std::time::Instant;

/// `cargo xtask links`: checks the Markdown files of the workspace at `root()`.
pub fn links() -> Result<(), String> {
    let started = Instant::now();
    let root = crate::root();
    let files: BTreeSet<String> = project_files(&root)?
        .into_iter()
        .filter(|f| root.join(f).is_file())
        .collect();
    if !files.contains("README.md") {
        return Err(format!(
            "links: git lists no README.md in {}",
            root.display()
        ));
    }
    let mut pages = BTreeMap::new();
    for file in files.iter().filter(|f| f.ends_with(".md")) {
        let path = root.join(file);
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        pages.insert(file.clone(), text);
    }
    let (count, problems) = check(&pages, &files);
    if !problems.is_empty() {
        return Err(format!(
            "links: {} broken of {count} in {} Markdown files:\n{}",
            problems.len(),
            pages.len(),
            problems.join("\n")
        ));
    }
    eprintln!(
        "xtask: links: {count} relative links in {} Markdown files resolve ({:.0} ms)",
        pages.len(),
        started.elapsed().as_secs_f64() * 1e3
    );
    Ok(())
}

/// The project's files, relative to `root` with `/`: tracked (deleted ones included), or new
/// and not ignored. The link check and the mutants' tree copy both read the project so.
pub fn project_files(root: &Path) -> Result<Vec<String>, String> {
    let out = Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .current_dir(root)
        .output()
        .map_err(|e| format!("git ls-files: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "git ls-files in {}: {}",
            root.display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(out
        .stdout
        .split(|b| *b == 0)
        .filter(|f| !f.is_empty())
        .map(|f| String::from_utf8_lossy(f).into_owned())
        .collect())
}

/// Checks the links of every page (path relative to the root -> text) against the project's
/// `files`; returns the number of relative links and one line per broken one.
pub fn check(pages: &BTreeMap<String, String>, files: &BTreeSet<String>) -> (usize, Vec<String>) {
    let anchors: HashMap<&str, BTreeSet<String>> = pages
        .iter()
        .map(|(path, text)| (path.as_str(), anchors(text)))
        .collect();
    let (mut count, mut problems) = (0, Vec::new());
    for (page, text) in pages {
        for (line, target) in targets(text) {
            if has_scheme(&target) {
                continue;
            }
            count += 1;
            let (path, fragment) = match target.split_once('#') {
                Some((p, f)) => (p, Some(f)),
                None => (target.as_str(), None),
            };
            let path = decode(path.split('?').next().unwrap_or(""));
            let resolved = if path.is_empty() {
                Some(page.clone())
            } else {
                resolve(page, &path)
            };
            let Some(resolved) = resolved else {
                problems.push(format!("{page}:{line}: {target}: leaves the project"));
                continue;
            };
            let prefix = format!("{resolved}/");
            let exists = resolved.is_empty()
                || files.contains(&resolved)
                || files
                    .range(prefix.clone()..)
                    .next()
                    .is_some_and(|f| f.starts_with(&prefix));
            if !exists {
                problems.push(format!(
                    "{page}:{line}: {target}: no such file or directory"
                ));
                continue;
            }
            let Some(fragment) = fragment.filter(|f| !f.is_empty()) else {
                continue;
            };
            if !resolved.ends_with(".md") {
                continue; // a line of a source file, an anchor of an HTML page: not ours to read
            }
            let fragment = decode(fragment);
            match anchors.get(resolved.as_str()) {
                Some(known) if known.contains(&fragment) => {}
                Some(_) => problems.push(format!(
                    "{page}:{line}: {target}: {resolved} has no heading with the anchor #{fragment}"
                )),
                None => problems.push(format!(
                    "{page}:{line}: {target}: {resolved} is not among the Markdown pages read"
                )),
            }
        }
    }
    (count, problems)
}

/// `https:`, `mailto:`, ...: a scheme of two or more characters (so not a Windows drive).
fn has_scheme(target: &str) -> bool {
    match target.split_once(':') {
        Some((scheme, _)) => {
            scheme.len() > 1
                && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c))
        }
        None => false,
    }
}

/// `path` as seen from the page `page`, relative to the root; None when it leaves the root.
fn resolve(page: &str, path: &str) -> Option<String> {
    let mut parts: Vec<&str> = if path.starts_with('/') {
        Vec::new()
    } else {
        page.split('/').collect()
    };
    if !path.starts_with('/') {
        parts.pop(); // the page's own name
    }
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            _ => parts.push(part),
        }
    }
    Some(parts.join("/"))
}

/// `%20` and the like, decoded; anything else kept as it is.
fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The lines of `text` outside fenced code blocks, with their numbers (from 1).
fn prose(text: &str) -> Vec<(usize, &str)> {
    let mut fence: Option<(char, usize)> = None;
    let mut lines = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let marker = trimmed.chars().next().filter(|c| *c == '`' || *c == '~');
        let run = marker.map_or(0, |m| trimmed.chars().take_while(|c| *c == m).count());
        match (fence, marker) {
            // A backtick fence's info string has no backtick (else it is a code span).
            (None, Some(m))
                if run >= 3 && indent < 4 && !(m == '`' && trimmed[run..].contains('`')) =>
            {
                fence = Some((m, run))
            }
            (Some((m, n)), Some(c)) if c == m && run >= n && trimmed[run..].trim().is_empty() => {
                fence = None
            }
            (None, _) => lines.push((i + 1, line)),
            _ => {}
        }
    }
    lines
}

/// The anchors GitHub gives the ATX headings of `text`.
pub fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut anchors = BTreeSet::new();
    for (_, line) in prose(text) {
        let Some(title) = heading(line) else {
            continue;
        };
        let base = slug(&title);
        let n = seen.entry(base.clone()).or_insert(0);
        anchors.insert(if *n == 0 {
            base.clone()
        } else {
            format!("{base}-{n}")
        });
        *n += 1;
    }
    anchors
}

/// The text of an ATX heading (`## Title ##`), links replaced by their text.
fn heading(line: &str) -> Option<String> {
    let trimmed = line.trim_start();
    if line.len() - trimmed.len() > 3 {
        return None;
    }
    let level = trimmed.chars().take_while(|c| *c == '#').count();
    let rest = &trimmed[level..];
    if !(1..=6).contains(&level) || !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return None;
    }
    let mut title = rest.trim();
    let closed = title.trim_end_matches('#');
    if closed.is_empty() || closed.ends_with([' ', '\t']) {
        title = closed.trim_end();
    }
    // [text](target) -> text
    let mut out = String::new();
    let mut rest = title;
    while let Some(open) = rest.find('[') {
        match rest[open..].find("](").map(|i| open + i) {
            Some(close) if rest[close..].contains(')') => {
                out.push_str(&rest[..open]);
                out.push_str(&rest[open + 1..close]);
                rest = &rest[close + rest[close..].find(')').unwrap() + 1..];
            }
            _ => break,
        }
    }
    out.push_str(rest);
    Some(out)
}

/// GitHub's anchor for a heading's text.
pub fn slug(title: &str) -> String {
    title
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            '-' | '_' => Some(c),
            c if c.is_alphanumeric() => Some(c),
            _ => None,
        })
        .collect()
}

/// Every link target of `text` outside code, with its line number.
fn targets(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    // Paragraphs (runs of prose lines without a blank one), so that a code span may wrap.
    let mut paragraph: Vec<(usize, &str)> = Vec::new();
    let mut lines = prose(text).into_iter().peekable();
    while let Some((number, line)) = lines.next() {
        if !line.trim().is_empty() {
            paragraph.push((number, line));
        }
        let next_is_same = lines
            .peek()
            .is_some_and(|(n, l)| *n == number + 1 && !l.trim().is_empty());
        if paragraph.is_empty() || next_is_same {
            continue;
        }
        let first = paragraph[0].0;
        let joined: Vec<&str> = paragraph.iter().map(|(_, l)| *l).collect();
        let masked = without_code_spans(&joined.join("\n"));
        paragraph.clear();
        let line_of = |at: usize| first + masked[..at].matches('\n').count();
        for (at, _) in masked.match_indices("](") {
            if let Some(target) = destination(&masked[at + 2..]) {
                found.push((line_of(at), target));
            }
        }
        // Definitions: `[label]: target` at the start of a line.
        let mut offset = 0;
        for line in masked.split('\n') {
            let trimmed = line.trim_start();
            // Not a footnote (`[^1]: text`), and the label is one.
            let definition = trimmed
                .strip_prefix('[')
                .and_then(|r| r.split_once("]:"))
                .filter(|(label, _)| !label.starts_with('^') && !label.contains(['[', ']']))
                .map(|(_, r)| r.trim_start());
            if let Some(rest) = definition {
                if let Some(target) = rest.split_whitespace().next() {
                    let target = target.trim_start_matches('<').trim_end_matches('>');
                    found.push((line_of(offset), target.to_string()));
                }
            }
            offset += line.len() + 1;
        }
    }
    found
}

/// `text` with every code span (a run of backticks to the next run of the same length)
/// replaced by spaces, line breaks kept.
fn without_code_spans(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let run_at = |i: usize| bytes[i..].iter().take_while(|b| **b == b'`').count();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'`' {
            i += 1;
            continue;
        }
        let n = run_at(i);
        let mut j = i + n;
        let mut close = None;
        while j < bytes.len() {
            if bytes[j] == b'`' {
                let m = run_at(j);
                if m == n {
                    close = Some(j + m);
                    break;
                }
                j += m;
            } else {
                j += 1;
            }
        }
        match close {
            Some(end) => {
                for b in &mut out[i..end] {
                    if *b != b'\n' {
                        *b = b' ';
                    }
                }
                i = end;
            }
            None => i += n,
        }
    }
    String::from_utf8(out).expect("whole characters replaced by spaces")
}

/// The destination at the start of `rest` (what follows `](`): `<...>` or up to a space or the
/// `)` that closes the link (parentheses inside balanced).
fn destination(rest: &str) -> Option<String> {
    let rest = rest.trim_start();
    if let Some(inner) = rest.strip_prefix('<') {
        return inner.split_once('>').map(|(t, _)| t.to_string());
    }
    let mut depth = 0;
    for (i, c) in rest.char_indices() {
        match c {
            '(' => depth += 1,
            ')' if depth == 0 => return Some(rest[..i].to_string()),
            ')' => depth -= 1,
            c if c.is_whitespace() => return Some(rest[..i].to_string()),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page_map(list: &[(&str, &str)]) -> BTreeMap<String, String> {
        list.iter()
            .map(|(p, t)| (p.to_string(), t.to_string()))
            .collect()
    }

    fn file_set(list: &[&str]) -> BTreeSet<String> {
        list.iter().map(|f| f.to_string()).collect()
    }

    const README: &str = "# Project

See [the importers](docs/importers.md#fmi-20-or-fmi-30-which-fmu-for-which-importer), the
[examples](examples/), ![a plot](docs/plot.png \"title\"), [here](#two-commands),
[a source line](src/lib.rs#L10), [the web](https://example.com/nothere#x) and
<https://example.com>.

## Two commands

`[not a link](nowhere.md)` and ``a ` [span](nowhere.md) `` and a span that wraps: `one
[two](nowhere.md)`.

```sh
# A comment, no heading
cat [x](nowhere.md)
```

[defined]: docs/importers.md#importer-notes
";

    const IMPORTERS: &str = "# Importers

## FMI 2.0 or FMI 3.0: which FMU for which importer

Back to the [README](../README.md#project) and [itself](importers.md).

## Importer notes
";

    fn project() -> (BTreeMap<String, String>, BTreeSet<String>) {
        let pages = page_map(&[("README.md", README), ("docs/importers.md", IMPORTERS)]);
        let files = file_set(&[
            "README.md",
            "docs/importers.md",
            "docs/plot.png",
            "examples/drivetrain/README.md",
            "src/lib.rs",
        ]);
        (pages, files)
    }

    #[test]
    fn slugs_are_githubs() {
        assert_eq!(
            slug("FMI 2.0 or FMI 3.0: which FMU for which importer"),
            "fmi-20-or-fmi-30-which-fmu-for-which-importer"
        );
        assert_eq!(
            slug("The test command's stages"),
            "the-test-commands-stages"
        );
        assert_eq!(
            slug("A change to one component: `cargo xtask dev <Model>`"),
            "a-change-to-one-component-cargo-xtask-dev-model"
        );
        assert_eq!(
            slug("snake_case and -dash- 1→2"),
            "snake_case-and--dash--12"
        );
        let found = anchors("# A\n## Notes\n### Notes ###\n```\n# not a heading\n```\n#nope\n");
        assert_eq!(found, file_set(&["a", "notes", "notes-1"]));
        assert_eq!(
            heading("## See [the page](x.md) #").as_deref(),
            Some("See the page")
        );
    }

    #[test]
    fn good_links_pass_and_code_is_not_read() {
        let (pages, files) = project();
        let (count, problems) = check(&pages, &files);
        assert_eq!(problems, Vec::<String>::new());
        // docs/importers.md#..., examples/, docs/plot.png, #two-commands, src/lib.rs#L10,
        // [defined], ../README.md#project, importers.md
        assert_eq!(count, 8);
    }

    #[test]
    fn a_broken_link_fails() {
        let (mut pages, files) = project();
        pages.insert(
            "docs/importers.md".into(),
            IMPORTERS.replace("importers.md)", "importer.md)"),
        );
        let (_, problems) = check(&pages, &files);
        assert_eq!(
            problems,
            ["docs/importers.md:5: importer.md: no such file or directory"]
        );
        let (_, problems) = check(&page_map(&[("a.md", "[up](../../x.md)")]), &files);
        assert_eq!(problems, ["a.md:1: ../../x.md: leaves the project"]);
    }

    #[test]
    fn a_broken_anchor_fails() {
        let (mut pages, files) = project();
        pages.insert(
            "README.md".into(),
            README
                .replace("#two-commands", "#two-command")
                .replace("#importer-notes", "#importers-notes"),
        );
        let (_, problems) = check(&pages, &files);
        assert_eq!(
            problems,
            [
                "README.md:4: #two-command: README.md has no heading with the anchor #two-command",
                "README.md:18: docs/importers.md#importers-notes: docs/importers.md has no \
                 heading with the anchor #importers-notes",
            ]
        );
    }

    #[test]
    fn this_projects_links_resolve() {
        links().unwrap();
    }
}
