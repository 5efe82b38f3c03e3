//! `cargo xtask docs-check`: the links of the Markdown pages (`links.rs`), then every FMU's
//! documentation/index.html in a real browser.
//!
//! Each FMU is extracted to `target/docs-check/<Model>/` and its page opened in headless
//! Chromium (Debian's `chromium`, installed with apt if missing), which in one run writes a
//! screenshot (`--screenshot`), prints the DOM it parsed (`--dump-dom`) and logs every console
//! message to stderr (`--enable-logging=stderr`, as `...:INFO:CONSOLE:<line>] "<message>"`,
//! whatever the message's level). A page passes when:
//! - Chromium exits with success within a minute;
//! - it logged no console message at all: the pages have no script, so any message (an uncaught
//!   exception, `console.error`, a blocked resource) means something went wrong;
//! - the parsed DOM holds the reference plot (`<svg`, `<polyline`, the section's heading);
//! - the screenshot is not blank (the most common colour covers less than 99.9 % of it) and
//!   shows the plot's first curve colour, i.e. the SVG was painted, not only parsed.
//!
//! Before judging the FMUs the check runs itself on deliberately broken pages (empty, throwing
//! script, no plot) and fails unless it rejects each of them; and it fails when there are fewer
//! FMUs in `target/fmu` than components.

use crate::{root, run, svg};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const WINDOW: (u32, u32) = (1280, 2400);

/// Installs Debian's chromium if it is missing; returns the command.
pub fn chromium() -> Result<&'static str, String> {
    let present = |cmd| {
        Command::new(cmd)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !present("chromium") {
        let t = Instant::now();
        run(Command::new("apt-get").arg("update"))?;
        run(Command::new("apt-get").args(["install", "-y", "chromium"]))?;
        eprintln!(
            "xtask: chromium installed in {:.1} s",
            t.elapsed().as_secs_f64()
        );
        if !present("chromium") {
            return Err("chromium is installed but does not run".into());
        }
    }
    Ok("chromium")
}

/// What Chromium made of a page.
struct Render {
    stderr: String,
    dom: String,
    png: Vec<u8>,
}

fn render(page: &Path, work: &Path) -> Result<Render, String> {
    let shot = work.join("screenshot.png");
    let _ = std::fs::remove_file(&shot);
    let page = page
        .canonicalize()
        .map_err(|e| format!("{}: {e}", page.display()))?;
    let mut command = Command::new("timeout");
    let out = command
        .args(["60", chromium()?])
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
            "--dump-dom",
        ])
        .arg(format!(
            "--user-data-dir={}",
            work.join("profile").display()
        ))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("--window-size={},{}", WINDOW.0, WINDOW.1))
        .arg(format!("file://{}", page.display()));
    let out = crate::stages::output(out).map_err(|e| format!("chromium: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{}: chromium failed with {} (124: timed out)",
            page.display(),
            out.status
        ));
    }
    let png =
        std::fs::read(&shot).map_err(|e| format!("{}: no screenshot: {e}", page.display()))?;
    Ok(Render {
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        dom: String::from_utf8_lossy(&out.stdout).into_owned(),
        png,
    })
}

/// Console messages in Chromium's stderr log (its own dbus/GPU noise is not one).
fn console_messages(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught"))
        .collect()
}

/// Decodes a PNG (what Chromium writes) to RGB pixels.
fn decode_png(bytes: &[u8]) -> Result<(usize, usize, Vec<[u8; 3]>), String> {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    // Palettes and low bit depths to 8-bit samples, 16-bit ones to 8.
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().map_err(|e| format!("PNG: {e}"))?;
    let mut buf = vec![0; reader.output_buffer_size().ok_or("PNG too large")?];
    let info = reader
        .next_frame(&mut buf)
        .map_err(|e| format!("PNG: {e}"))?;
    let channels = info.color_type.samples();
    let pixels = buf[..info.buffer_size()]
        .chunks_exact(channels)
        .map(|p| match channels {
            1 | 2 => [p[0]; 3],
            _ => [p[0], p[1], p[2]],
        })
        .collect();
    Ok((info.width as usize, info.height as usize, pixels))
}

fn hex(color: &str) -> [u8; 3] {
    let v = u32::from_str_radix(color.trim_start_matches('#'), 16).expect("#rrggbb");
    [(v >> 16) as u8, (v >> 8) as u8, v as u8]
}

/// Share of the most common colour, and how many pixels are within a small distance of `color`.
fn analyse(pixels: &[[u8; 3]], color: [u8; 3]) -> (f64, usize) {
    let mut counts = std::collections::HashMap::new();
    for p in pixels {
        *counts.entry(*p).or_insert(0usize) += 1;
    }
    let dominant = counts.values().copied().max().unwrap_or(0);
    let near = pixels
        .iter()
        .filter(|p| p.iter().zip(color).all(|(a, b)| a.abs_diff(b) <= 24))
        .count();
    (dominant as f64 / pixels.len().max(1) as f64, near)
}

/// Judges one page; `Err` says why it fails.
fn check_page(page: &Path, work: &Path) -> Result<String, String> {
    let name = page.display();
    let r = render(page, work)?;
    let console = console_messages(&r.stderr);
    if !console.is_empty() {
        return Err(format!(
            "{name}: console messages:\n  {}",
            console.join("\n  ")
        ));
    }
    for needle in ["<svg", "<polyline", "Reference result"] {
        if !r.dom.contains(needle) {
            return Err(format!("{name}: the parsed page has no {needle}"));
        }
    }
    let (w, h, pixels) = decode_png(&r.png).map_err(|e| format!("{name}: screenshot: {e}"))?;
    let (dominant, curve) = analyse(&pixels, hex(svg::COLORS[0]));
    if dominant >= 0.999 {
        return Err(format!(
            "{name}: the screenshot is blank ({:.2} % one colour)",
            dominant * 100.0
        ));
    }
    if curve < 50 {
        return Err(format!(
            "{name}: the screenshot shows no plot ({curve} pixels of {})",
            svg::COLORS[0]
        ));
    }
    Ok(format!(
        "{w}x{h}, {:.1} % background, {curve} curve pixels, {} KiB PNG",
        dominant * 100.0,
        r.png.len() / 1024
    ))
}

/// The check on pages that must fail, each for its own reason.
fn self_test(work: &Path) -> Result<(), String> {
    let plot = svg::figure(
        &[0.0, 1.0, 2.0],
        &[svg::Series {
            name: "y",
            unit: "m",
            values: &[0.0, 1.0, 0.5],
        }],
    );
    let cases = [
        ("blank", "<!DOCTYPE html><html><body><h2>Reference result</h2><svg><polyline points=\"\"/></svg></body></html>".to_string(), "blank"),
        (
            "script-error",
            format!("<!DOCTYPE html><html><body><h2>Reference result</h2>{plot}<script>throw new Error('deliberately broken')</script></body></html>"),
            "console",
        ),
        ("no-plot", "<!DOCTYPE html><html><body><h1>Text only</h1><p>No figure here.</p></body></html>".to_string(), "no <svg"),
        (
            "unpainted-plot",
            format!("<!DOCTYPE html><html><body><h2>Reference result</h2><p>Text. Text. Text.</p><p>{}</p><div style=\"display:none\">{plot}</div></body></html>", "x ".repeat(4000)),
            "no plot",
        ),
    ];
    for (name, html, reason) in cases {
        let page = work.join(format!("{name}.html"));
        std::fs::write(&page, html).map_err(|e| e.to_string())?;
        match check_page(&page, work) {
            Ok(_) => {
                return Err(format!(
                    "docs check: the broken page {} passed",
                    page.display()
                ))
            }
            Err(e) if e.contains(reason) => {
                eprintln!("xtask: docs check rejects {name}.html as it should")
            }
            Err(e) => {
                return Err(format!(
                    "docs check: {name}.html failed for the wrong reason: {e}"
                ))
            }
        }
    }
    // And a good page passes, so the rejections above are not the check failing on everything.
    let page = work.join("good.html");
    std::fs::write(
        &page,
        format!("<!DOCTYPE html><html><body><h2>Reference result</h2>{plot}</body></html>"),
    )
    .map_err(|e| e.to_string())?;
    check_page(&page, work).map_err(|e| format!("docs check: a good page fails: {e}"))?;
    Ok(())
}

pub fn docs_check() -> Result<(), String> {
    let started = Instant::now();
    // The Markdown pages first: milliseconds, and no browser needed.
    crate::links::links()?;
    chromium()?;
    let root = root();
    let work = root.join("target/docs-check");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).map_err(|e| e.to_string())?;
    self_test(&work)?;

    let fmu_dir = root.join("target/fmu");
    let mut fmus: Vec<PathBuf> = std::fs::read_dir(&fmu_dir)
        .map_err(|e| format!("{}: {e}", fmu_dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "fmu"))
        .collect();
    fmus.sort();
    let components = crate::components::components()?.len();
    if fmus.is_empty() || fmus.len() < components {
        return Err(format!(
            "docs check: {} FMUs in {}, {components} components",
            fmus.len(),
            fmu_dir.display()
        ));
    }
    let mut failures = Vec::new();
    for fmu in &fmus {
        let model = fmu.file_stem().unwrap().to_string_lossy().into_owned();
        let dir = work.join(&model);
        let file = std::fs::File::open(fmu).map_err(|e| format!("{}: {e}", fmu.display()))?;
        zip::ZipArchive::new(file)
            .and_then(|mut z| z.extract(&dir))
            .map_err(|e| format!("{}: {e}", fmu.display()))?;
        match check_page(&dir.join("documentation/index.html"), &work) {
            Ok(summary) => eprintln!("xtask: docs check {model}: ok ({summary})"),
            Err(e) => failures.push(e),
        }
    }
    eprintln!(
        "xtask: docs check: {} FMUs in {:.1} s",
        fmus.len(),
        started.elapsed().as_secs_f64()
    );
    if failures.is_empty() {
        Ok(())
    } else {
        Err(format!("docs check failed:\n{}", failures.join("\n")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A PNG of `rows` (RGBA), written by the `png` crate with the given row filter.
    fn encode(width: usize, rows: &[Vec<[u8; 4]>], filter: png::Filter) -> Vec<u8> {
        let mut png = Vec::new();
        let mut encoder = png::Encoder::new(&mut png, width as u32, rows.len() as u32);
        encoder.set_color(png::ColorType::Rgba);
        encoder.set_depth(png::BitDepth::Eight);
        encoder.set_filter(filter);
        let mut writer = encoder.write_header().unwrap();
        let data: Vec<u8> = rows.iter().flatten().flatten().copied().collect();
        writer.write_image_data(&data).unwrap();
        writer.finish().unwrap();
        png
    }

    #[test]
    fn a_white_screenshot_is_blank_and_a_plotted_one_is_not() {
        let white = [255, 255, 255, 255];
        let blue = [0x1f, 0x77, 0xb4, 255];
        let blank: Vec<Vec<[u8; 4]>> = vec![vec![white; 20]; 10];
        let (w, h, pixels) = decode_png(&encode(20, &blank, png::Filter::NoFilter)).unwrap();
        assert_eq!((w, h, pixels.len()), (20, 10, 200));
        let (dominant, curve) = analyse(&pixels, hex(svg::COLORS[0]));
        assert_eq!((dominant, curve), (1.0, 0));

        let mut plotted = blank.clone();
        for (i, row) in plotted.iter_mut().enumerate() {
            row[i] = blue;
            row[i + 5] = [(i * 20) as u8, 3, 200, 255];
        }
        let (_, _, pixels) = decode_png(&encode(20, &plotted, png::Filter::Paeth)).unwrap();
        let back: Vec<[u8; 3]> = plotted
            .iter()
            .flatten()
            .map(|p| [p[0], p[1], p[2]])
            .collect();
        assert_eq!(pixels, back);
        let (dominant, curve) = analyse(&pixels, hex(svg::COLORS[0]));
        assert_eq!((dominant, curve), (0.9, 10));
        assert!(decode_png(b"GIF89a").is_err());
    }

    #[test]
    fn console_messages_are_found_and_chromium_noise_is_not() {
        let log = "[1:2:1124/035105.502779:ERROR:dbus/bus.cc:405] Failed to connect to the bus\n\
                   [1:2:1124/035105.546379:WARNING:media/gpu/vaapi/vaapi_wrapper.cc:1655] drmGetDevices2()\n\
                   [1:1:1124/035105.792567:INFO:CONSOLE:1] \"boom\", source: file:///tmp/bad.html (1)\n\
                   [1:1:1124/035105.793384:INFO:CONSOLE:1] \"Uncaught Error: broken\", source: file:///tmp/bad.html (1)\n";
        let found = console_messages(log);
        assert_eq!(found.len(), 2);
        assert!(found[1].contains("Uncaught Error: broken"));
        assert!(console_messages("[1:2:x:ERROR:dbus/bus.cc:405] Failed\n").is_empty());
    }
}
