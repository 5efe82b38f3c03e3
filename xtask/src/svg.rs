//! Line charts as inline SVG, drawn at packaging time from a reference CSV: one small panel per
//! signal (its own y-axis, so signals of different size stay readable), a shared time axis,
//! ticks, tick labels, axis labels and a legend entry per panel.

/// Colours of the panels, in order (matplotlib's first four); the docs check looks for them.
pub const COLORS: [&str; 4] = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728"];

/// One signal to plot.
pub struct Series<'a> {
    pub name: &'a str,
    pub unit: &'a str,
    pub values: &'a [f64],
}

/// A CSV of numbers with a header line (names optionally in double quotes), as columns.
pub fn parse_csv(text: &str) -> Result<(Vec<String>, Vec<Vec<f64>>), String> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header: Vec<String> = lines
        .next()
        .ok_or("empty CSV")?
        .split(',')
        .map(|h| h.trim().trim_matches('"').to_string())
        .collect();
    let mut columns = vec![Vec::new(); header.len()];
    for (row, line) in lines.enumerate() {
        let cells: Vec<&str> = line.split(',').collect();
        if cells.len() != header.len() {
            return Err(format!(
                "CSV row {}: {} cells, the header has {}",
                row + 2,
                cells.len(),
                header.len()
            ));
        }
        for (column, cell) in columns.iter_mut().zip(cells) {
            let cell = cell.trim();
            column.push(
                cell.parse::<f64>()
                    .map_err(|_| format!("CSV row {}: '{cell}' is not a number", row + 2))?,
            );
        }
    }
    Ok((header, columns))
}

/// Ticks at 1, 2 or 5 times a power of ten, about `target` of them, and the axis range they
/// span (which contains `lo..hi`).
pub fn ticks(lo: f64, hi: f64, target: usize) -> (f64, f64, Vec<f64>) {
    let (mut lo, mut hi) = (lo.min(hi), lo.max(hi));
    if !(lo.is_finite() && hi.is_finite()) {
        (lo, hi) = (0.0, 1.0);
    }
    // A constant signal still gets an axis around its value.
    let span = hi - lo;
    if span <= 1e-12 * lo.abs().max(hi.abs()) || span == 0.0 {
        let pad = if lo == 0.0 { 1.0 } else { 0.1 * lo.abs() };
        (lo, hi) = (lo - pad, hi + pad);
    }
    let raw = (hi - lo) / target.max(1) as f64;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= raw * 0.999)
        .unwrap_or(10.0 * magnitude);
    let first = (lo / step + 1e-9).floor();
    let last = (hi / step - 1e-9).ceil();
    let ticks: Vec<f64> = (0..=(last - first) as i64)
        .map(|i| (first + i as f64) * step)
        .map(|t| if t.abs() < step * 1e-9 { 0.0 } else { t })
        .collect();
    (first * step, last * step, ticks)
}

/// A tick label with as many decimals as the tick step needs.
fn label(value: f64, step: f64) -> String {
    if value == 0.0 {
        return "0".into();
    }
    if !(1e-3..1e5).contains(&step) {
        let digits = ((value.abs().log10().floor() - step.log10().floor()).max(0.0)) as usize;
        return format!("{value:.digits$e}");
    }
    let decimals = (-step.log10().floor()).max(0.0) as usize;
    format!("{value:.decimals$}")
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const PANEL_W: f64 = 330.0;
const PANEL_H: f64 = 200.0;
// Plot area inside a panel.
const LEFT: f64 = 62.0;
const RIGHT: f64 = 12.0;
const TOP: f64 = 26.0;
const BOTTOM: f64 = 38.0;

/// One `<svg>` with a panel per series (two columns), `time` on every x-axis.
pub fn figure(time: &[f64], series: &[Series]) -> String {
    figure_over(time, "time [s]", series)
}

/// [`figure`] over any `x`, labelled `x_label`.
pub fn figure_over(time: &[f64], x_label: &str, series: &[Series]) -> String {
    let columns = series.len().clamp(1, 2);
    let rows = series.len().div_ceil(2).max(1);
    let (width, height) = (PANEL_W * columns as f64, PANEL_H * rows as f64);
    let mut svg = format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" style="max-width:100%;height:auto" font-family="sans-serif" font-size="11" role="img">
<rect width="{width}" height="{height}" fill="#fff"/>
"##
    );
    let (t_lo, t_hi) = time
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &t| {
            (a.min(t), b.max(t))
        });
    let (x_lo, x_hi, x_ticks) = ticks(t_lo, t_hi, 5);
    for (k, s) in series.iter().enumerate() {
        let color = COLORS[k % COLORS.len()];
        let (ox, oy) = ((k % 2) as f64 * PANEL_W, (k / 2) as f64 * PANEL_H);
        let (x0, x1) = (ox + LEFT, ox + PANEL_W - RIGHT);
        let (y0, y1) = (oy + TOP, oy + PANEL_H - BOTTOM);
        let finite = s.values.iter().copied().filter(|v| v.is_finite());
        let (v_lo, v_hi) = finite.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
        let (y_lo, y_hi, y_ticks) = ticks(v_lo, v_hi, 4);
        let sx = |t: f64| x0 + (t - x_lo) / (x_hi - x_lo) * (x1 - x0);
        let sy = |v: f64| y1 - (v - y_lo) / (y_hi - y_lo) * (y1 - y0);
        svg += "<g>\n";
        // Grid, ticks and tick labels.
        let x_step = x_ticks.get(1).map_or(1.0, |t| t - x_ticks[0]);
        for &t in &x_ticks {
            let x = sx(t);
            svg += &format!(
                "<line x1=\"{x:.1}\" y1=\"{y0:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#ddd\"/>\
                 <line x1=\"{x:.1}\" y1=\"{y1:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#333\"/>\
                 <text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\n",
                y1,
                y1 + 4.0,
                y1 + 15.0,
                label(t, x_step)
            );
        }
        let y_step = y_ticks.get(1).map_or(1.0, |t| t - y_ticks[0]);
        for &v in &y_ticks {
            let y = sy(v);
            svg += &format!(
                "<line x1=\"{x0:.1}\" y1=\"{y:.1}\" x2=\"{x1:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/>\
                 <line x1=\"{:.1}\" y1=\"{y:.1}\" x2=\"{x0:.1}\" y2=\"{y:.1}\" stroke=\"#333\"/>\
                 <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\n",
                x0 - 4.0,
                x0 - 6.0,
                y + 3.5,
                label(v, y_step)
            );
        }
        // Axes and axis labels.
        svg += &format!(
            "<rect x=\"{x0:.1}\" y=\"{y0:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"none\" stroke=\"#333\"/>\n\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\n\
             <text transform=\"translate({:.1},{:.1}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
            x1 - x0,
            y1 - y0,
            (x0 + x1) / 2.0,
            y1 + 30.0,
            escape(x_label),
            ox + 12.0,
            (y0 + y1) / 2.0,
            if s.unit.is_empty() { "[-]".to_string() } else { format!("[{}]", escape(s.unit)) }
        );
        // The curve: one polyline per finite stretch.
        let mut stretch = Vec::new();
        let flush = |stretch: &mut Vec<String>, svg: &mut String| {
            if stretch.len() > 1 {
                *svg += &format!(
                    "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"1.8\" stroke-linejoin=\"round\" points=\"{}\"/>\n",
                    stretch.join(" ")
                );
            }
            stretch.clear();
        };
        for (&t, &v) in time.iter().zip(s.values) {
            if v.is_finite() && t.is_finite() {
                stretch.push(format!("{:.1},{:.1}", sx(t), sy(v)));
            } else {
                flush(&mut stretch, &mut svg);
            }
        }
        flush(&mut stretch, &mut svg);
        // Legend: a swatch and the signal's name, top left of the panel.
        svg += &format!(
            "<line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"{color}\" stroke-width=\"3\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" font-weight=\"bold\">{}</text>\n</g>\n",
            x0,
            oy + 14.0,
            x0 + 18.0,
            oy + 14.0,
            x0 + 23.0,
            oy + 18.0,
            escape(s.name)
        );
    }
    svg += "</svg>";
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_reference_csv() {
        let (names, columns) = parse_csv("\"time\",\"w\"\n0.0,1\n0.5,2e-1\n").unwrap();
        assert_eq!(names, ["time", "w"]);
        assert_eq!(columns, [vec![0.0, 0.5], vec![1.0, 0.2]]);
        assert!(parse_csv("\"time\",\"w\"\n0.0\n").is_err());
        assert!(parse_csv("\"time\",\"w\"\n0.0,x\n").is_err());
    }

    #[test]
    fn ticks_are_round_and_cover_the_data() {
        let (lo, hi, t) = ticks(0.0, 2.0, 5);
        assert_eq!((lo, hi), (0.0, 2.0));
        assert_eq!(t, [0.0, 0.5, 1.0, 1.5, 2.0]);
        let (lo, hi, t) = ticks(-0.13, 0.77, 4);
        assert!(
            lo <= -0.13 && hi >= 0.77 && t.len() >= 3 && t.len() <= 7,
            "{lo} {hi} {t:?}"
        );
        // A constant signal, zero or not, still gets a proper axis.
        for c in [0.0, 3.0, -1e-7] {
            let (lo, hi, t) = ticks(c, c, 4);
            assert!(lo < c && hi > c && t.len() >= 2, "{c}: {lo} {hi} {t:?}");
        }
        assert_eq!(label(0.5, 0.5), "0.5");
        assert_eq!(label(20.0, 10.0), "20");
        assert_eq!(label(2e-5, 1e-5), "2e-5");
    }

    #[test]
    fn draws_a_panel_per_series_with_axes_and_legend() {
        let time: Vec<f64> = (0..=100).map(|i| i as f64 * 0.02).collect();
        let sine: Vec<f64> = time.iter().map(|t| (3.0 * t).sin()).collect();
        let mut constant = vec![4.0; time.len()];
        constant[50] = f64::NAN;
        let svg = figure(
            &time,
            &[
                Series {
                    name: "w_a",
                    unit: "rad/s",
                    values: &sine,
                },
                Series {
                    name: "tau<&>",
                    unit: "",
                    values: &constant,
                },
                Series {
                    name: "p",
                    unit: "W",
                    values: &sine,
                },
            ],
        );
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert_eq!(svg.matches("<g>").count(), 3);
        // The NaN splits the constant into two stretches.
        assert_eq!(svg.matches("<polyline").count(), 4);
        for needle in [
            "w_a",
            "[rad/s]",
            "[-]",
            "tau&lt;&amp;&gt;",
            "time [s]",
            ">1.5<",
            COLORS[2],
        ] {
            assert!(svg.contains(needle), "missing {needle}");
        }
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
        // Two columns, two rows.
        assert!(svg.contains(r#"viewBox="0 0 660 400""#));
    }
}
