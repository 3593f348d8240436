//! A game's review: the solver's verdict on every move of a finished or unfinished game.
//!
//! For each move, the value of the position before it (for the player who made it), the
//! value of the move itself, the best moves there, and a [`Judgement`]:
//!
//! - a **mistake** throws away a result: the move's verdict is worse than the position's
//!   (a win becomes a draw or a loss, a draw becomes a loss);
//! - an **inaccuracy** keeps the result but not its distance: a win that takes longer (or a
//!   loss that comes sooner) than the best move's;
//! - every other move is **best**: it has the position's value exactly.
//!
//! A player's accuracy is the share of their moves that kept the position's value: its
//! verdict and its distance, so every best move and no inaccuracy or mistake. It is shown
//! one per side, as Lichess does.
//!
//! ```
//! use triad_rules::{GameKind, Move, Cell, Mark};
//! use triad_solver::{Judgement, Review, Verdict};
//!
//! // X takes a corner, O answers on an edge (a mistake: it loses), X wins.
//! let moves = [(0, Mark::X), (1, Mark::O), (4, Mark::X), (8, Mark::O), (6, Mark::X),
//!              (3, Mark::O), (2, Mark::X)];
//! let moves: Vec<Move> = moves.iter().map(|&(c, m)| Move::new(Cell::new(c).unwrap(), m)).collect();
//! let review = Review::of(GameKind::TicTacToe, &moves).unwrap();
//! assert_eq!(review.plies[1].judgement, Judgement::Mistake);
//! assert_eq!(review.plies[1].before.verdict, Verdict::Draw);
//! assert_eq!(review.plies[1].played.verdict, Verdict::Loss);
//! assert_eq!(review.accuracy(triad_rules::Player::Second), Some(2.0 / 3.0));
//! ```

use core::fmt;

use triad_rules::{AnyGame, GameKind, Move, MoveError, Moves, Player};

use crate::{Value, Verdict, table};

/// What a move did to the value of the position.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Judgement {
    /// The move has the position's value: no move was better.
    Best,
    /// The result is kept but not its distance: a win takes longer, or a loss comes sooner.
    Inaccuracy,
    /// The result is thrown away: a win becomes a draw or a loss, or a draw a loss.
    Mistake,
}

impl Judgement {
    /// Judges a move worth `played` (for its player) in a position worth `before`.
    #[must_use]
    pub fn of(before: Value, played: Value) -> Judgement {
        if played.verdict < before.verdict {
            Judgement::Mistake
        } else if played == before {
            Judgement::Best
        } else {
            Judgement::Inaccuracy
        }
    }

    /// The stable lower-case name: `best`, `inaccuracy` or `mistake`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Judgement::Best => "best",
            Judgement::Inaccuracy => "inaccuracy",
            Judgement::Mistake => "mistake",
        }
    }

    /// Whether the move kept the position's value, verdict and distance (counts toward
    /// accuracy): only a best move does.
    #[must_use]
    pub const fn kept_value(self) -> bool {
        matches!(self, Judgement::Best)
    }
}

impl fmt::Display for Judgement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One move of a reviewed game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ply {
    /// Who made it.
    pub player: Player,
    /// The move.
    pub mv: Move,
    /// The position before it, for its player: the best they could get.
    pub before: Value,
    /// What the move is worth to its player (counting the move itself).
    pub played: Value,
    /// Every optimal move of the position before it, in legal-move order.
    pub best: Moves,
    /// The verdict on the move.
    pub judgement: Judgement,
    /// The position after it.
    pub position: AnyGame,
}

/// A game's review (see the [module](self) documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Review {
    /// The game.
    pub kind: GameKind,
    /// The value of the empty board, for the first player.
    pub start: Value,
    /// Every move, in order.
    pub plies: Vec<Ply>,
}

/// A move of a reviewed game that the rules refuse.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct IllegalMove {
    /// Its index in the list, from 0.
    pub index: usize,
    /// Why the rules refuse it.
    pub error: MoveError,
}

impl fmt::Display for IllegalMove {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "move {} is not legal: {}", self.index + 1, self.error)
    }
}

impl std::error::Error for IllegalMove {}

impl Review {
    /// Reviews `moves`, played from the empty board of `kind` (each by the player whose turn
    /// it is). The moves are checked against the rules first; a game may be unfinished.
    ///
    /// # Errors
    /// The first move the rules refuse (a taken square, a mark the player may not place, a
    /// move after the game ended).
    pub fn of(kind: GameKind, moves: &[Move]) -> Result<Review, IllegalMove> {
        let table = table(kind);
        let mut position = AnyGame::new(kind);
        let start = table
            .value(&position)
            .expect("the empty board is reachable");
        let mut plies = Vec::with_capacity(moves.len());
        for (index, &mv) in moves.iter().enumerate() {
            let player = position.turn();
            let next = position
                .play(mv)
                .map_err(|error| IllegalMove { index, error })?;
            let before = table
                .value(&position)
                .expect("a played position is reachable");
            let played = table
                .value(&next)
                .expect("a legal move reaches a reachable position")
                .before_move();
            plies.push(Ply {
                player,
                mv,
                before,
                played,
                best: table.best_moves(&position),
                judgement: Judgement::of(before, played),
                position: next,
            });
            position = next;
        }
        Ok(Review { kind, start, plies })
    }

    /// The position after `ply` moves (0: the empty board).
    ///
    /// # Panics
    /// When `ply` is more than the number of moves.
    #[must_use]
    pub fn position(&self, ply: usize) -> AnyGame {
        match ply {
            0 => AnyGame::new(self.kind),
            n => self.plies[n - 1].position,
        }
    }

    /// The value of the position after `ply` moves, for the player to move there.
    ///
    /// # Panics
    /// When `ply` is more than the number of moves.
    #[must_use]
    pub fn value_after(&self, ply: usize) -> Value {
        match ply {
            0 => self.start,
            n => {
                let played = self.plies[n - 1].played;
                Value::new(played.verdict.flip(), played.plies - 1)
            }
        }
    }

    /// The share of `player`'s moves that kept the position's value (its best moves), from 0
    /// to 1; `None` when they made no move.
    #[must_use]
    pub fn accuracy(&self, player: Player) -> Option<f64> {
        let (kept, made) = self
            .plies
            .iter()
            .filter(|p| p.player == player)
            .fold((0u32, 0u32), |(kept, made), p| {
                (kept + u32::from(p.judgement.kept_value()), made + 1)
            });
        (made > 0).then(|| f64::from(kept) / f64::from(made))
    }

    /// How many of `player`'s moves got `judgement`.
    #[must_use]
    pub fn count(&self, player: Player, judgement: Judgement) -> usize {
        self.plies
            .iter()
            .filter(|p| p.player == player && p.judgement == judgement)
            .count()
    }
}

/// The verdict of `value` for the player to move, seen as who wins: the player to move, the
/// other, or nobody.
#[must_use]
pub fn winner_with_best_play(turn: Player, value: Value) -> Option<Player> {
    match value.verdict {
        Verdict::Win => Some(turn),
        Verdict::Loss => Some(turn.other()),
        Verdict::Draw => None,
    }
}

#[cfg(test)]
mod tests {
    use triad_rules::{Cell, Mark};

    use super::*;

    fn mv(cell: u8, mark: Mark) -> Move {
        Move::new(Cell::new(cell).unwrap(), mark)
    }

    /// Every reachable game of tic-tac-toe, each move judged against a brute-force minimax
    /// that shares nothing with the table: the judgements and values agree everywhere.
    #[test]
    fn every_tic_tac_toe_game_is_judged_as_minimax_judges_it() {
        fn minimax(game: AnyGame) -> Value {
            if game.is_over() {
                return if game.outcome().and_then(|o| o.winner()).is_some() {
                    Value::LOST
                } else {
                    Value::DRAWN
                };
            }
            game.legal_moves()
                .into_iter()
                .map(|m| minimax(game.play_unchecked(m)).before_move())
                .max()
                .unwrap()
        }
        let mut memo = std::collections::HashMap::new();
        let mut value = |g: AnyGame| {
            *memo
                .entry(g.position_number())
                .or_insert_with(|| minimax(g))
        };
        let mut games = 0u32;
        let mut stack = vec![(AnyGame::new(GameKind::TicTacToe), Vec::new())];
        while let Some((game, moves)) = stack.pop() {
            if game.is_over() {
                games += 1;
                let review = Review::of(GameKind::TicTacToe, &moves).unwrap();
                let mut position = AnyGame::new(GameKind::TicTacToe);
                for (ply, &m) in review.plies.iter().zip(&moves) {
                    let next = position.play_unchecked(m);
                    assert_eq!(ply.before, value(position));
                    assert_eq!(ply.played, value(next).before_move());
                    assert_eq!(ply.judgement, Judgement::of(ply.before, ply.played));
                    assert!(ply.best.contains(&m) == (ply.judgement == Judgement::Best));
                    position = next;
                }
                continue;
            }
            for m in game.legal_moves() {
                let mut line = moves.clone();
                line.push(m);
                stack.push((game.play_unchecked(m), line));
            }
        }
        assert_eq!(games, 255_168);
    }

    #[test]
    fn judgements_follow_their_definitions() {
        let win = |n| Value::new(Verdict::Win, n);
        let draw = |n| Value::new(Verdict::Draw, n);
        let loss = |n| Value::new(Verdict::Loss, n);
        assert_eq!(Judgement::of(win(3), win(3)), Judgement::Best);
        assert_eq!(Judgement::of(win(3), win(5)), Judgement::Inaccuracy);
        assert_eq!(Judgement::of(win(3), draw(8)), Judgement::Mistake);
        assert_eq!(Judgement::of(win(3), loss(4)), Judgement::Mistake);
        assert_eq!(Judgement::of(draw(8), draw(8)), Judgement::Best);
        assert_eq!(Judgement::of(draw(8), loss(2)), Judgement::Mistake);
        assert_eq!(Judgement::of(loss(6), loss(6)), Judgement::Best);
        assert_eq!(Judgement::of(loss(6), loss(2)), Judgement::Inaccuracy);
    }

    #[test]
    fn accuracy_counts_only_the_moves_that_kept_the_value() {
        // X1 O4 (a mistake) X2 O5 (an inaccuracy: the loss comes sooner than after O3) X3.
        let moves = [
            mv(0, Mark::X),
            mv(3, Mark::O),
            mv(1, Mark::X),
            mv(4, Mark::O),
            mv(2, Mark::X),
        ];
        let review = Review::of(GameKind::TicTacToe, &moves).unwrap();
        let judged: Vec<Judgement> = review.plies.iter().map(|p| p.judgement).collect();
        assert_eq!(
            judged,
            [
                Judgement::Best,
                Judgement::Mistake,
                Judgement::Best,
                Judgement::Inaccuracy,
                Judgement::Best
            ]
        );
        assert_eq!(review.accuracy(Player::First), Some(1.0));
        assert_eq!(review.accuracy(Player::Second), Some(0.0));
        assert_eq!(review.count(Player::Second, Judgement::Inaccuracy), 1);
    }

    #[test]
    fn an_illegal_move_is_named_by_its_place_in_the_list() {
        let err = Review::of(GameKind::TicTacToe, &[mv(4, Mark::X), mv(4, Mark::O)]).unwrap_err();
        assert_eq!(err.index, 1);
        assert_eq!(
            err.to_string(),
            format!("move 2 is not legal: {}", err.error)
        );
        // SOS has no X.
        assert_eq!(
            Review::of(GameKind::Sos, &[mv(0, Mark::X)])
                .unwrap_err()
                .index,
            0
        );
    }

    #[test]
    fn values_after_each_ply_are_those_of_the_table() {
        let moves = [mv(4, Mark::S), mv(0, Mark::O), mv(8, Mark::S)];
        let review = Review::of(GameKind::Sos, &moves).unwrap();
        for ply in 0..=moves.len() {
            assert_eq!(
                Some(review.value_after(ply)),
                table(GameKind::Sos).value(&review.position(ply))
            );
        }
        assert_eq!(review.accuracy(Player::First).map(|a| a <= 1.0), Some(true));
        assert_eq!(
            Review::of(GameKind::Sos, &[])
                .unwrap()
                .accuracy(Player::First),
            None
        );
    }
}
