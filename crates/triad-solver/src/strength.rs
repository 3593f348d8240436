//! Computer players of three strengths, all driven by the solved table and a caller's RNG.

use core::{fmt, str::FromStr};

use rand::{Rng, RngExt, seq::IndexedRandom};
use triad_rules::{AnyGame, Move, Moves};

use crate::{Table, Verdict};

/// How often a [`Casual`](Strength::Casual) player slips: the chance, at each move, that it
/// plays any non-losing move instead of an optimal one.
pub const CASUAL_SLIP_PROBABILITY: f64 = 0.25;

/// How well a computer player plays.
///
/// Written `perfect`, `casual` or `random` (the [`FromStr`] and [`Display`](fmt::Display)
/// forms):
///
/// ```
/// use triad_solver::Strength;
/// assert_eq!("casual".parse(), Ok(Strength::Casual));
/// assert_eq!(Strength::Perfect.to_string(), "perfect");
/// assert!("expert".parse::<Strength>().is_err());
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Strength {
    /// Always an optimal move ([`Table::best_moves`]): wins as fast as possible, draws when
    /// it cannot win, and loses as slowly as possible. Ties are broken uniformly at random,
    /// so games vary but never get worse.
    Perfect,
    /// Usually optimal, sometimes merely safe: with probability [`CASUAL_SLIP_PROBABILITY`]
    /// it picks uniformly among all moves that do not lose (which may let a win slip to a
    /// draw, or a quick win become a slow one), otherwise it plays like
    /// [`Perfect`](Strength::Perfect). It never plays a losing move while a non-losing one
    /// exists, so it never throws away a drawn position.
    Casual,
    /// A uniformly random legal move, like the HTML5 canvas game's `RandomPlayer`.
    Random,
}

impl Strength {
    /// All three strengths, strongest first.
    pub const ALL: [Strength; 3] = [Strength::Perfect, Strength::Casual, Strength::Random];

    /// The stable lower-case name: `perfect`, `casual` or `random`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Strength::Perfect => "perfect",
            Strength::Casual => "casual",
            Strength::Random => "random",
        }
    }
}

impl fmt::Display for Strength {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The error for a word that is not `perfect`, `casual` or `random`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct UnknownStrength;

impl fmt::Display for UnknownStrength {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("unknown strength; use perfect, casual or random")
    }
}

impl std::error::Error for UnknownStrength {}

impl FromStr for Strength {
    type Err = UnknownStrength;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Strength::ALL
            .into_iter()
            .find(|st| st.name() == s)
            .ok_or(UnknownStrength)
    }
}

impl Table {
    /// A move for the player to move in `game`, chosen at `strength` with randomness drawn
    /// only from `rng`: the same RNG state and position always give the same move, so a
    /// seeded RNG (such as `rand_chacha::ChaCha8Rng`) replays a game exactly. `None` when
    /// the game has ended; then `rng` is left untouched.
    ///
    /// # Panics
    /// When `game` is not of this table's game.
    ///
    /// ```
    /// use rand::SeedableRng;
    /// use rand_chacha::ChaCha8Rng;
    /// use triad_rules::{AnyGame, GameKind};
    /// use triad_solver::{table, Strength};
    ///
    /// let table = table(GameKind::TicTacToe);
    /// // O to move must block X's top row in cell 2; a perfect player always does.
    /// let game = AnyGame::parse(GameKind::TicTacToe, "XX--O----").unwrap();
    /// let mut rng = ChaCha8Rng::seed_from_u64(7);
    /// let mv = table.choose(&game, Strength::Perfect, &mut rng).unwrap();
    /// assert_eq!(mv.cell.index(), 2);
    ///
    /// // The same seed replays the same choices.
    /// let empty = AnyGame::new(GameKind::TicTacToe);
    /// let picks = |seed| {
    ///     let mut rng = ChaCha8Rng::seed_from_u64(seed);
    ///     (0..10).map(|_| table.choose(&empty, Strength::Random, &mut rng)).collect::<Vec<_>>()
    /// };
    /// assert_eq!(picks(1), picks(1));
    /// ```
    pub fn choose<R: Rng + ?Sized>(
        &self,
        game: &AnyGame,
        strength: Strength,
        rng: &mut R,
    ) -> Option<Move> {
        if game.is_over() {
            return None;
        }
        let candidates = match strength {
            Strength::Random => game.legal_moves(),
            Strength::Perfect => self.best_moves(game),
            Strength::Casual if rng.random_bool(CASUAL_SLIP_PROBABILITY) => {
                let analysis = self.analyze(game);
                let safe: Moves = analysis
                    .iter()
                    .filter(|(_, value)| value.verdict != Verdict::Loss)
                    .map(|&(mv, _)| mv)
                    .collect();
                if safe.is_empty() {
                    analysis.into_iter().map(|(mv, _)| mv).collect()
                } else {
                    safe
                }
            }
            Strength::Casual => self.best_moves(game),
        };
        candidates.choose(rng).copied()
    }
}
