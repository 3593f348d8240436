//! A board as a picture, for link previews (Open Graph) and anyone who wants one.
//!
//! The board is laid out once, as a short list of [`Shape`]s in a 1200 × 630 frame (the
//! size link previews show), and that one layout is drawn twice: as SVG text ([`svg`]) and
//! as PNG pixels through tiny-skia ([`png`]), so the two never disagree. No text is drawn,
//! so no font is needed and the picture is the same everywhere. Pure: a position in, bytes
//! out.

use std::fmt::Write as _;

use tiny_skia::{FillRule, Paint, PathBuilder, Pixmap, Stroke, Transform};
use triad_rules::{AnyGame, Cell, GameKind, Mark};

/// The picture's width, in pixels.
pub const WIDTH: u32 = 1200;
/// The picture's height, in pixels.
pub const HEIGHT: u32 = 630;

const BACKGROUND: Rgb = Rgb(0x0a, 0x0e, 0x1a);
const PANEL: Rgb = Rgb(0x12, 0x18, 0x29);
const TILE: Rgb = Rgb(0x23, 0x2c, 0x45);
const WIN_TILE: Rgb = Rgb(0xe1, 0x1d, 0x48);
const FIRST: Rgb = Rgb(0x81, 0x8c, 0xf8);
const SECOND: Rgb = Rgb(0x2d, 0xd4, 0xbf);
const LETTER: Rgb = Rgb(0xe8, 0xeb, 0xf5);
const ON_WIN: Rgb = Rgb(0xff, 0xff, 0xff);
const LAST: Rgb = Rgb(0xf5, 0x9e, 0x0b);
const LOGO: Rgb = Rgb(0x8b, 0x5c, 0xf6);

/// The letter S as one stroke in a 100 × 100 box: the start point, then cubic segments
/// (two control points and an end point each).
const S_START: (f32, f32) = (71.0, 28.0);
const S_CURVES: [[(f32, f32); 3]; 5] = [
    [(66.0, 18.0), (58.0, 14.0), (49.0, 14.0)],
    [(36.0, 14.0), (27.0, 21.0), (27.0, 32.0)],
    [(27.0, 45.0), (39.0, 48.0), (50.0, 51.0)],
    [(63.0, 54.0), (75.0, 58.0), (75.0, 70.0)],
    [(75.0, 81.0), (65.0, 88.0), (51.0, 88.0)],
];
const S_END: [(f32, f32); 3] = [(40.0, 88.0), (31.0, 83.0), (26.0, 73.0)];

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Rgb(u8, u8, u8);

/// A pen stroke: a start point and cubic segments (two control points and an end point
/// each; a straight segment has its control points at its ends).
#[derive(Clone, Debug, PartialEq)]
struct Subpath {
    start: (f32, f32),
    curves: Vec<[(f32, f32); 3]>,
}

/// One thing to draw, in the frame's pixels.
#[derive(Clone, Debug, PartialEq)]
enum Shape {
    /// A filled rounded rectangle.
    Tile {
        x: f32,
        y: f32,
        size: f32,
        radius: f32,
        fill: Rgb,
    },
    /// A filled circle.
    Dot { cx: f32, cy: f32, r: f32, fill: Rgb },
    /// Stroked paths (round caps and joins).
    Stroke {
        subpaths: Vec<Subpath>,
        width: f32,
        color: Rgb,
    },
    /// A stroked circle.
    Ring {
        cx: f32,
        cy: f32,
        r: f32,
        width: f32,
        color: Rgb,
    },
}

/// The board's layout: where each square is and what is drawn on it. `last` is the cell of
/// the last move, marked with a dot.
fn layout(game: &AnyGame, last: Option<Cell>) -> Vec<Shape> {
    let board_size = 540.0_f32;
    let gap = 14.0_f32;
    let tile = (board_size - 2.0 * gap) / 3.0;
    let left = (WIDTH as f32 - board_size) / 2.0;
    let top = (HEIGHT as f32 - board_size) / 2.0;
    let win = game.outcome().map(|o| o.cells()).unwrap_or_default();
    let board = game.board();

    let mut shapes = vec![Shape::Tile {
        x: left - 24.0,
        y: top - 24.0,
        size: board_size + 48.0,
        radius: 36.0,
        fill: PANEL,
    }];
    // Triad's mark, top left: the favicon's diagonal.
    for i in 0..3u8 {
        let step = f32::from(i) * 22.0;
        shapes.push(Shape::Tile {
            x: 40.0 + step,
            y: 40.0 + step,
            size: 18.0,
            radius: 5.0,
            fill: LOGO,
        });
    }
    for cell in Cell::ALL {
        let (row, col) = (f32::from(cell.index() / 3), f32::from(cell.index() % 3));
        let x = left + col * (tile + gap);
        let y = top + row * (tile + gap);
        let won = win.contains(cell);
        shapes.push(Shape::Tile {
            x,
            y,
            size: tile,
            radius: 22.0,
            fill: if won { WIN_TILE } else { TILE },
        });
        if let Some(mark) = board.get(cell) {
            let color = match (won, game.kind(), mark) {
                (true, _, _) => ON_WIN,
                (false, GameKind::TicTacToe, Mark::X) => FIRST,
                (false, GameKind::TicTacToe, _) => SECOND,
                (false, GameKind::Sos, _) => LETTER,
            };
            shapes.push(mark_shape(mark, x, y, tile, color));
        }
        if last == Some(cell) {
            shapes.push(Shape::Dot {
                cx: x + tile - 18.0,
                cy: y + 18.0,
                r: 7.0,
                fill: LAST,
            });
        }
    }
    shapes
}

/// A mark drawn in the square at (`x`, `y`) of side `size`.
fn mark_shape(mark: Mark, x: f32, y: f32, size: f32, color: Rgb) -> Shape {
    let at = |(u, v): (f32, f32)| (x + u * size / 100.0, y + v * size / 100.0);
    let width = size * 0.11;
    match mark {
        Mark::X => Shape::Stroke {
            subpaths: vec![
                Subpath {
                    start: at((28.0, 28.0)),
                    curves: vec![line(at((28.0, 28.0)), at((72.0, 72.0)))],
                },
                Subpath {
                    start: at((72.0, 28.0)),
                    curves: vec![line(at((72.0, 28.0)), at((28.0, 72.0)))],
                },
            ],
            width,
            color,
        },
        Mark::O => Shape::Ring {
            cx: x + size / 2.0,
            cy: y + size / 2.0,
            r: size * 0.25,
            width,
            color,
        },
        Mark::S => {
            let mut curves: Vec<[(f32, f32); 3]> = S_CURVES
                .iter()
                .map(|seg| [at(seg[0]), at(seg[1]), at(seg[2])])
                .collect();
            curves.push([at(S_END[0]), at(S_END[1]), at(S_END[2])]);
            Shape::Stroke {
                subpaths: vec![Subpath {
                    start: at(S_START),
                    curves,
                }],
                width,
                color,
            }
        }
    }
}

/// A straight segment from `a` to `b`, as a cubic.
fn line(a: (f32, f32), b: (f32, f32)) -> [(f32, f32); 3] {
    [a, b, b]
}

/// The SVG text of `layout`.
fn to_svg(shapes: &[Shape]) -> String {
    let mut out = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}"><rect width="{WIDTH}" height="{HEIGHT}" fill="{}"/>"#,
        hex(BACKGROUND)
    );
    for shape in shapes {
        // Writing to a String cannot fail.
        let _ = match shape {
            Shape::Tile {
                x,
                y,
                size,
                radius,
                fill,
            } => write!(
                out,
                r#"<rect x="{x:.1}" y="{y:.1}" width="{size:.1}" height="{size:.1}" rx="{radius:.1}" fill="{}"/>"#,
                hex(*fill)
            ),
            Shape::Dot { cx, cy, r, fill } => {
                write!(
                    out,
                    r#"<circle cx="{cx:.1}" cy="{cy:.1}" r="{r:.1}" fill="{}"/>"#,
                    hex(*fill)
                )
            }
            Shape::Ring {
                cx,
                cy,
                r,
                width,
                color,
            } => write!(
                out,
                r#"<circle cx="{cx:.1}" cy="{cy:.1}" r="{r:.1}" fill="none" stroke="{}" stroke-width="{width:.1}"/>"#,
                hex(*color)
            ),
            Shape::Stroke {
                subpaths,
                width,
                color,
            } => {
                let mut d = String::new();
                for Subpath { start, curves } in subpaths {
                    let _ = write!(d, "M{:.1} {:.1}", start.0, start.1);
                    for [c1, c2, end] in curves {
                        let _ = write!(
                            d,
                            "C{:.1} {:.1} {:.1} {:.1} {:.1} {:.1}",
                            c1.0, c1.1, c2.0, c2.1, end.0, end.1
                        );
                    }
                }
                write!(
                    out,
                    r#"<path d="{d}" fill="none" stroke="{}" stroke-width="{width:.1}" stroke-linecap="round" stroke-linejoin="round"/>"#,
                    hex(*color)
                )
            }
        };
    }
    out.push_str("</svg>");
    out
}

fn hex(Rgb(r, g, b): Rgb) -> String {
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// The PNG bytes of `layout`.
fn to_png(shapes: &[Shape]) -> Vec<u8> {
    let mut pixmap = Pixmap::new(WIDTH, HEIGHT).expect("the frame has a size");
    pixmap.fill(color(BACKGROUND));
    let paint = |c: Rgb| {
        let mut paint = Paint::default();
        paint.set_color(color(c));
        paint.anti_alias = true;
        paint
    };
    let stroke = |width: f32| Stroke {
        width,
        line_cap: tiny_skia::LineCap::Round,
        line_join: tiny_skia::LineJoin::Round,
        ..Stroke::default()
    };
    for shape in shapes {
        match shape {
            Shape::Tile {
                x,
                y,
                size,
                radius,
                fill,
            } => {
                if let Some(path) = rounded_square(*x, *y, *size, *radius) {
                    pixmap.fill_path(
                        &path,
                        &paint(*fill),
                        FillRule::Winding,
                        Transform::identity(),
                        None,
                    );
                }
            }
            Shape::Dot { cx, cy, r, fill } => {
                if let Some(path) = PathBuilder::from_circle(*cx, *cy, *r) {
                    pixmap.fill_path(
                        &path,
                        &paint(*fill),
                        FillRule::Winding,
                        Transform::identity(),
                        None,
                    );
                }
            }
            Shape::Ring {
                cx,
                cy,
                r,
                width,
                color,
            } => {
                if let Some(path) = PathBuilder::from_circle(*cx, *cy, *r) {
                    pixmap.stroke_path(
                        &path,
                        &paint(*color),
                        &stroke(*width),
                        Transform::identity(),
                        None,
                    );
                }
            }
            Shape::Stroke {
                subpaths,
                width,
                color,
            } => {
                let mut pb = PathBuilder::new();
                for Subpath { start, curves } in subpaths {
                    pb.move_to(start.0, start.1);
                    for [c1, c2, end] in curves {
                        pb.cubic_to(c1.0, c1.1, c2.0, c2.1, end.0, end.1);
                    }
                }
                if let Some(path) = pb.finish() {
                    pixmap.stroke_path(
                        &path,
                        &paint(*color),
                        &stroke(*width),
                        Transform::identity(),
                        None,
                    );
                }
            }
        }
    }
    pixmap
        .encode_png()
        .expect("encoding a pixmap in memory cannot fail")
}

fn color(Rgb(r, g, b): Rgb) -> tiny_skia::Color {
    tiny_skia::Color::from_rgba8(r, g, b, 255)
}

/// A square with rounded corners (cubic corners, as SVG's `rx` draws them closely enough).
fn rounded_square(x: f32, y: f32, size: f32, r: f32) -> Option<tiny_skia::Path> {
    // The cubic's handle length for a quarter circle.
    const K: f32 = 0.552_284_8;
    let (x1, y1) = (x + size, y + size);
    let k = r * K;
    let mut pb = PathBuilder::new();
    pb.move_to(x + r, y);
    pb.line_to(x1 - r, y);
    pb.cubic_to(x1 - r + k, y, x1, y + r - k, x1, y + r);
    pb.line_to(x1, y1 - r);
    pb.cubic_to(x1, y1 - r + k, x1 - r + k, y1, x1 - r, y1);
    pb.line_to(x + r, y1);
    pb.cubic_to(x + r - k, y1, x, y1 - r + k, x, y1 - r);
    pb.line_to(x, y + r);
    pb.cubic_to(x, y + r - k, x + r - k, y, x + r, y);
    pb.close();
    pb.finish()
}

/// The position as SVG text, with the last move's square marked when given.
#[must_use]
pub fn svg(game: &AnyGame, last: Option<Cell>) -> String {
    to_svg(&layout(game, last))
}

/// The position as PNG bytes, the same picture as [`svg`].
#[must_use]
pub fn png(game: &AnyGame, last: Option<Cell>) -> Vec<u8> {
    to_png(&layout(game, last))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pixel(png_bytes: &[u8], x: u32, y: u32) -> [u8; 4] {
        let pixmap = Pixmap::decode_png(png_bytes).unwrap();
        let p = pixmap.pixel(x, y).unwrap();
        [p.red(), p.green(), p.blue(), p.alpha()]
    }

    /// The centre of a square's tile, in the frame.
    fn centre(cell: u8) -> (u32, u32) {
        let tile = (540.0 - 28.0) / 3.0;
        let (row, col) = (f32::from(cell / 3), f32::from(cell % 3));
        let x = 330.0 + col * (tile + 14.0) + tile / 2.0;
        let y = 45.0 + row * (tile + 14.0) + tile / 2.0;
        (x as u32, y as u32)
    }

    #[test]
    fn the_png_is_the_frame_and_shows_marks_and_the_winning_line() {
        let won = AnyGame::parse(GameKind::TicTacToe, "XXXOO----").unwrap();
        let bytes = png(&won, Cell::new(2));
        assert_eq!(&bytes[1..4], b"PNG");
        let pixmap = Pixmap::decode_png(&bytes).unwrap();
        assert_eq!((pixmap.width(), pixmap.height()), (WIDTH, HEIGHT));
        // The middle of an X is ink; the middle of an O is the tile; a won tile is red.
        let (x, y) = centre(0);
        assert_eq!(pixel(&bytes, x, y), [0xff, 0xff, 0xff, 0xff]);
        let (x, y) = centre(3);
        assert_eq!(pixel(&bytes, x, y), [TILE.0, TILE.1, TILE.2, 0xff]);
        let (x, y) = centre(1);
        assert_eq!(
            pixel(&bytes, x + 60, y),
            [WIN_TILE.0, WIN_TILE.1, WIN_TILE.2, 0xff]
        );
        // An empty square is an empty tile.
        let (x, y) = centre(8);
        assert_eq!(pixel(&bytes, x, y), [TILE.0, TILE.1, TILE.2, 0xff]);
    }

    #[test]
    fn the_svg_draws_each_mark_once() {
        let game = AnyGame::parse(GameKind::Sos, "SO-S-O--S").unwrap();
        let text = svg(&game, Cell::new(8));
        assert!(text.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(text.ends_with("</svg>"));
        // Three S strokes, two O rings, the last move's dot.
        assert_eq!(text.matches("<path").count(), 3);
        assert_eq!(text.matches("fill=\"none\" stroke=").count(), 5);
        assert_eq!(text.matches(&hex(LAST)).count(), 1);
        let empty = svg(&AnyGame::new(GameKind::TicTacToe), None);
        assert_eq!(empty.matches("<path").count(), 0);
    }
}
