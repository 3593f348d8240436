//! The hall of fame (as in the SOS contract) and Glicko-2 ratings (as Lichess uses).

use serde::{Deserialize, Serialize};
use skillratings::{
    Outcomes,
    glicko2::{Glicko2Config, Glicko2Rating, glicko2},
};

/// A Glicko-2 rating.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rating {
    /// The rating, 1500 to start.
    pub rating: f64,
    /// The rating deviation, 350 to start.
    pub deviation: f64,
    /// The volatility, 0.06 to start.
    pub volatility: f64,
}

impl Default for Rating {
    fn default() -> Self {
        let r = Glicko2Rating::new();
        Rating {
            rating: r.rating,
            deviation: r.deviation,
            volatility: r.volatility,
        }
    }
}

impl From<Rating> for Glicko2Rating {
    fn from(r: Rating) -> Self {
        Glicko2Rating {
            rating: r.rating,
            deviation: r.deviation,
            volatility: r.volatility,
        }
    }
}

impl From<Glicko2Rating> for Rating {
    fn from(r: Glicko2Rating) -> Self {
        Rating {
            rating: r.rating,
            deviation: r.deviation,
            volatility: r.volatility,
        }
    }
}

/// Lichess's system constant.
const TAU: f64 = 0.75;

/// Updates two ratings after one game; `first_score` is 1 for a win by the first, 0.5 for
/// a draw, 0 for a loss.
pub(crate) fn rate(first: Rating, second: Rating, winner_first: Option<bool>) -> (Rating, Rating) {
    let outcome = match winner_first {
        Some(true) => Outcomes::WIN,
        Some(false) => Outcomes::LOSS,
        None => Outcomes::DRAW,
    };
    let config = Glicko2Config {
        tau: TAU,
        ..Glicko2Config::new()
    };
    let (a, b) = glicko2(&first.into(), &second.into(), &outcome, &config);
    (a.into(), b.into())
}

/// The puzzle record of a player or of a puzzle: its Glicko-2 puzzle rating and its rated
/// attempts. Each rated attempt is one game between the player and the puzzle: solved, the
/// player wins; failed, the puzzle does.
#[derive(Copy, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PuzzleRecord {
    /// The puzzle rating, apart from the rating of played games.
    pub rating: Rating,
    /// Rated attempts (a player's first at each puzzle).
    pub attempts: u32,
    /// Those that solved the puzzle.
    pub solved: u32,
}

impl PuzzleRecord {
    /// Counts one more rated attempt. Saturating, like [`PlayerStats::count`].
    pub(crate) fn count(&mut self, solved: bool) {
        self.attempts = self.attempts.saturating_add(1);
        if solved {
            self.solved = self.solved.saturating_add(1);
        }
    }
}

/// One address's record.
#[derive(Copy, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PlayerStats {
    /// Games won (the SOS contract's hall of fame).
    pub wins: u32,
    /// Games played: wins, losses and draws (cancelled, declined, expired and aborted
    /// matches do not count).
    pub games: u32,
    /// Games drawn.
    pub draws: u32,
    /// The Glicko-2 rating.
    pub rating: Rating,
    /// Tournaments won (ranked first at the end).
    #[serde(default)]
    pub tournament_wins: u32,
}

impl PlayerStats {
    /// Counts one more game. Saturating arithmetic: a counter never wraps; at `u32::MAX`
    /// it stays there.
    pub(crate) fn count(&mut self, won: bool, drew: bool) {
        self.games = self.games.saturating_add(1);
        if won {
            self.wins = self.wins.saturating_add(1);
        }
        if drew {
            self.draws = self.draws.saturating_add(1);
        }
    }
}
