//! How the game looks: the board, the players' names, hints and results, with or without
//! colour.

use std::fmt;

use anstyle::{AnsiColor, Style};
use triad_rules::{AnyGame, Cell, CellSet, GameKind, Mark, Move, Player};
use triad_solver::{Value, Verdict};

/// The styles used for output. The plain palette's styles print nothing, so the same code
/// writes both coloured and plain text.
#[derive(Copy, Clone, Debug)]
pub(super) struct Palette {
    x: Style,
    o: Style,
    s: Style,
    empty: Style,
    grid: Style,
    winning: Style,
    pub(super) error: Style,
    pub(super) result: Style,
}

impl Palette {
    /// No escape codes at all: for pipes, files and `NO_COLOR`.
    pub(super) fn plain() -> Palette {
        let none = Style::new();
        Palette {
            x: none,
            o: none,
            s: none,
            empty: none,
            grid: none,
            winning: none,
            error: none,
            result: none,
        }
    }

    /// ANSI colours for a terminal.
    pub(super) fn colour() -> Palette {
        let fg = |colour: AnsiColor| Style::new().fg_color(Some(colour.into()));
        Palette {
            x: fg(AnsiColor::Cyan).bold(),
            o: fg(AnsiColor::Magenta).bold(),
            s: fg(AnsiColor::Yellow).bold(),
            empty: Style::new().dimmed(),
            grid: Style::new().dimmed(),
            winning: fg(AnsiColor::Green).bold().invert(),
            error: fg(AnsiColor::Red),
            result: Style::new().bold(),
        }
    }

    fn mark(&self, mark: Mark) -> Style {
        match mark {
            Mark::X => self.x,
            Mark::O => self.o,
            Mark::S => self.s,
        }
    }
}

/// `text` in `style`, reset afterwards.
pub(super) fn styled(style: Style, text: impl fmt::Display) -> String {
    format!("{style}{text}{style:#}")
}

/// The board, indented, with the square number in each empty cell so the player knows what
/// to type. Cells in `winning` are bracketed (and highlighted in colour).
///
/// ```text
///    X | 2 |[O]
///   ---+---+---
///    4 |[O]| X
///   ---+---+---
///   [O]| 8 | X
/// ```
pub(super) fn board(game: &AnyGame, winning: CellSet, palette: &Palette) -> String {
    let board = game.board();
    let rows: Vec<String> = (0..3)
        .map(|row| {
            let cells: Vec<String> = Cell::ALL[row * 3..row * 3 + 3]
                .iter()
                .map(|&cell| match board.get(cell) {
                    Some(mark) if winning.contains(cell) => {
                        styled(palette.winning, format_args!("[{mark}]"))
                    }
                    Some(mark) => format!(" {} ", styled(palette.mark(mark), mark)),
                    None => format!(" {} ", styled(palette.empty, cell.square())),
                })
                .collect();
            let row = cells.join(&styled(palette.grid, "|"));
            format!("  {}\n", row.trim_end())
        })
        .collect();
    rows.join(&format!("  {}\n", styled(palette.grid, "---+---+---")))
}

/// The name of `player` in `kind`: X or O in tic-tac-toe, player 1 or player 2 in SOS.
pub(super) fn player_name(kind: GameKind, player: Player) -> &'static str {
    match (kind, player) {
        (GameKind::TicTacToe, Player::First) => "X",
        (GameKind::TicTacToe, Player::Second) => "O",
        (GameKind::Sos, Player::First) => "player 1",
        (GameKind::Sos, Player::Second) => "player 2",
    }
}

/// A move as the player types it: the square in tic-tac-toe (`5`), the letter and the
/// square in SOS (`S5`).
pub(super) fn move_name(kind: GameKind, mv: Move) -> String {
    match kind {
        GameKind::TicTacToe => mv.cell.square().to_string(),
        GameKind::Sos => format!("{}{}", mv.mark, mv.cell.square()),
    }
}

/// "squares 1, 5, 9" (or "square 5").
pub(super) fn squares(cells: CellSet) -> String {
    let list: Vec<String> = cells.iter().map(|c| c.square().to_string()).collect();
    let noun = if list.len() == 1 { "square" } else { "squares" };
    format!("{noun} {}", list.join(", "))
}

/// The hint: every legal move of an ongoing game grouped by its value for the player to
/// move, best first. `analysis` is [`Table::analyze`](triad_solver::Table::analyze)'s.
///
/// ```text
/// Hint: with best play you draw, 9 plies from now. Each move's result, counting the move:
///   draw in 9: 1, 2, 3, 4, 5, 6, 7, 8, 9
/// ```
pub(super) fn hint(kind: GameKind, mut analysis: Vec<(Move, Value)>) -> String {
    // Best first; moves of equal value stay in square order.
    analysis.sort_by(|(_, a), (_, b)| b.cmp(a));
    let mut groups: Vec<(Value, Vec<String>)> = Vec::new();
    for (mv, value) in analysis {
        match groups.last_mut() {
            Some((v, moves)) if *v == value => moves.push(move_name(kind, mv)),
            _ => groups.push((value, vec![move_name(kind, mv)])),
        }
    }
    let Some(&(best, _)) = groups.first() else {
        return "The game is over: there is nothing to hint.\n".to_owned();
    };
    let outlook = match best.verdict {
        Verdict::Win => "win",
        Verdict::Draw => "draw",
        Verdict::Loss => "lose",
    };
    let mut out = format!(
        "Hint: with best play you {outlook}, {} from now. Each move's result, counting the \
         move:\n",
        plies(best.plies)
    );
    let width = groups
        .iter()
        .map(|(v, _)| v.to_string().len())
        .max()
        .unwrap_or(0);
    for (value, moves) in groups {
        let label = format!("{value}:");
        out += &format!("  {label:<w$} {}\n", moves.join(", "), w = width + 1);
    }
    out
}

/// "1 ply" or "5 plies".
fn plies(n: u8) -> String {
    if n == 1 {
        "1 ply".to_owned()
    } else {
        format!("{n} plies")
    }
}

#[cfg(test)]
mod tests {
    use triad_solver::table;

    use super::*;

    #[test]
    fn plain_board_shows_squares_marks_and_winning_cells() {
        let game = AnyGame::parse(GameKind::TicTacToe, "XOO-X---X").unwrap();
        let winning = game.outcome().unwrap().cells();
        assert_eq!(
            board(&game, winning, &Palette::plain()),
            "  [X]| O | O\n  ---+---+---\n   4 |[X]| 6\n  ---+---+---\n   7 | 8 |[X]\n"
        );
    }

    #[test]
    fn colour_board_has_escape_codes_and_plain_has_none() {
        let game = AnyGame::parse(GameKind::Sos, "S-O------").unwrap();
        assert!(board(&game, CellSet::EMPTY, &Palette::colour()).contains('\u{1b}'));
        assert!(!board(&game, CellSet::EMPTY, &Palette::plain()).contains('\u{1b}'));
    }

    #[test]
    fn hint_groups_moves_by_value_best_first() {
        let kind = GameKind::TicTacToe;
        let game = AnyGame::parse(kind, "XX--O----").unwrap();
        let table = table(kind);
        let text = hint(kind, table.analyze(&game));
        assert_eq!(
            text,
            "Hint: with best play you draw, 6 plies from now. Each move's result, counting the move:\n  \
             draw in 6: 3\n  \
             loss in 2: 4, 6, 7, 8, 9\n"
        );
        assert!(hint(kind, Vec::new()).contains("nothing to hint"));
    }

    #[test]
    fn names() {
        assert_eq!(player_name(GameKind::Sos, Player::Second), "player 2");
        let mv = Move::new(Cell::ALL[4], Mark::S);
        assert_eq!(move_name(GameKind::Sos, mv), "S5");
        assert_eq!(move_name(GameKind::TicTacToe, mv), "5");
        assert_eq!(squares(CellSet::from_cells(&[0, 4, 8])), "squares 1, 5, 9");
        assert_eq!(squares(CellSet::from_cells(&[4])), "square 5");
    }
}
