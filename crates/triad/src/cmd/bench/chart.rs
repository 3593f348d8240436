//! The chart of a report: move latency and throughput against concurrency.

use std::{collections::BTreeMap, path::Path};

use super::report::{Point, Series};

/// Move latency (p50 dashed, p99 solid) and games/s against concurrency, log-log, one
/// colour per series; repeats of a point are averaged.
pub(super) fn chart(series: &[Series], path: &Path) -> anyhow::Result<()> {
    use plotters::prelude::*;

    let mean_by_concurrency = |points: &[Point], f: &dyn Fn(&Point) -> Option<f64>| {
        let mut by: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
        for p in points {
            if let Some(v) = f(p) {
                by.entry(p.concurrency).or_default().push(v);
            }
        }
        #[allow(clippy::cast_precision_loss)]
        let means: Vec<(f64, f64)> = by
            .into_iter()
            .map(|(c, v)| (c as f64, v.iter().sum::<f64>() / v.len() as f64))
            .collect();
        means
    };
    let all: Vec<&Point> = series.iter().flat_map(|s| &s.points).collect();
    anyhow::ensure!(!all.is_empty(), "no points to draw");
    #[allow(clippy::cast_precision_loss)]
    let max_c = all.iter().map(|p| p.concurrency).max().unwrap_or(1) as f64 * 1.5;
    let lat_values: Vec<f64> = all
        .iter()
        .flat_map(|p| [p.move_latency_ms.p50, p.move_latency_ms.p99])
        .flatten()
        .filter(|v| *v > 0.0)
        .collect();
    let lat_min = lat_values.iter().copied().fold(f64::MAX, f64::min).min(1.0) * 0.5;
    let lat_max = lat_values.iter().copied().fold(0.0, f64::max).max(1.0) * 2.0;
    let thr_max = all
        .iter()
        .map(|p| p.games_per_s)
        .fold(0.0, f64::max)
        .max(1.0)
        * 2.0;
    let thr_min = all
        .iter()
        .map(|p| p.games_per_s)
        .filter(|v| *v > 0.0)
        .fold(f64::MAX, f64::min)
        .min(thr_max / 4.0)
        * 0.5;

    let root = SVGBackend::new(path, (1100, 450)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| anyhow::anyhow!("{e}"))?;
    let (left, right) = root.split_horizontally(550);
    let palette = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
    ];
    let err = |e: DrawingAreaErrorKind<_>| anyhow::anyhow!("cannot draw the chart: {e}");

    let mut lat = ChartBuilder::on(&left)
        .caption("Move latency (p99 solid, p50 dashed)", ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d((1f64..max_c).log_scale(), (lat_min..lat_max).log_scale())
        .map_err(err)?;
    lat.configure_mesh()
        .x_desc("concurrent games")
        .y_desc("ms")
        .draw()
        .map_err(err)?;
    for (i, s) in series.iter().enumerate() {
        let color = palette[i % palette.len()];
        let p99 = mean_by_concurrency(&s.points, &|p| p.move_latency_ms.p99);
        let p50 = mean_by_concurrency(&s.points, &|p| p.move_latency_ms.p50);
        lat.draw_series(LineSeries::new(p99.clone(), color.stroke_width(2)))
            .map_err(err)?
            .label(s.label.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        lat.draw_series(DashedLineSeries::new(p50, 6, 4, color.stroke_width(1)))
            .map_err(err)?;
        lat.draw_series(
            p99.iter()
                .map(|&(x, y)| Circle::new((x, y), 3, color.filled())),
        )
        .map_err(err)?;
    }
    lat.configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
        .map_err(err)?;

    let mut thr = ChartBuilder::on(&right)
        .caption("Throughput", ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d((1f64..max_c).log_scale(), (thr_min..thr_max).log_scale())
        .map_err(err)?;
    thr.configure_mesh()
        .x_desc("concurrent games")
        .y_desc("games/s")
        .draw()
        .map_err(err)?;
    for (i, s) in series.iter().enumerate() {
        let color = palette[i % palette.len()];
        let g = mean_by_concurrency(&s.points, &|p| Some(p.games_per_s));
        thr.draw_series(LineSeries::new(g.clone(), color.stroke_width(2)))
            .map_err(err)?
            .label(s.label.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        thr.draw_series(
            g.iter()
                .map(|&(x, y)| Circle::new((x, y), 3, color.filled())),
        )
        .map_err(err)?;
    }
    thr.configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::LowerRight)
        .draw()
        .map_err(err)?;
    root.present()
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    Ok(())
}
