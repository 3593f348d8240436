//! Game-theoretic values: who wins with best play, and how soon.

use core::{cmp::Ordering, fmt, str::FromStr};

/// The result of a position under optimal play, from the view of the player to move.
///
/// The derived order is worst first: `Loss < Draw < Win`.
///
/// ```
/// use triad_solver::Verdict;
/// assert!(Verdict::Loss < Verdict::Draw && Verdict::Draw < Verdict::Win);
/// assert_eq!(Verdict::Win.flip(), Verdict::Loss);
/// assert_eq!("draw".parse(), Ok(Verdict::Draw));
/// assert_eq!(Verdict::Loss.to_string(), "loss");
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verdict {
    /// The player to move loses, however they play.
    Loss,
    /// Neither player can force a win.
    Draw,
    /// The player to move can force a win.
    Win,
}

impl Verdict {
    /// All three verdicts, worst first.
    pub const ALL: [Verdict; 3] = [Verdict::Loss, Verdict::Draw, Verdict::Win];

    /// The same result seen by the other player.
    #[must_use]
    pub const fn flip(self) -> Verdict {
        match self {
            Verdict::Loss => Verdict::Win,
            Verdict::Draw => Verdict::Draw,
            Verdict::Win => Verdict::Loss,
        }
    }

    /// The stable lower-case name: `win`, `draw` or `loss`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Verdict::Loss => "loss",
            Verdict::Draw => "draw",
            Verdict::Win => "win",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The error for a word that is not `win`, `draw` or `loss`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct UnknownVerdict;

impl fmt::Display for UnknownVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("unknown verdict; use win, draw or loss")
    }
}

impl std::error::Error for UnknownVerdict {}

impl FromStr for Verdict {
    type Err = UnknownVerdict;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Verdict::ALL
            .into_iter()
            .find(|v| v.name() == s)
            .ok_or(UnknownVerdict)
    }
}

/// The exact value of a position for the player to move: the [`Verdict`] under optimal play,
/// and `plies`, the number of marks still to be placed before the game ends when both sides
/// play optimally (a winner wins as fast as possible, a loser holds out as long as possible).
/// A draw always fills the board, so its `plies` is the number of empty cells. An ended
/// game is worth zero plies: a [`Loss`](Verdict::Loss) for the player to move when the
/// opponent has just won, a [`Draw`](Verdict::Draw) when the board is full.
///
/// # Order
///
/// `Ord` is "better for the player to move": every win beats every draw, which beats every
/// loss; a quicker win beats a slower one; a slower loss beats a quicker one. Draws of
/// different lengths never compete (all draws from one position fill the same cells), so
/// their order is by convention: shorter first, like wins.
///
/// ```
/// use triad_solver::{Value, Verdict};
/// let quick_win = Value::new(Verdict::Win, 1);
/// let slow_win = Value::new(Verdict::Win, 5);
/// let draw = Value::new(Verdict::Draw, 8);
/// let quick_loss = Value::new(Verdict::Loss, 2);
/// let slow_loss = Value::new(Verdict::Loss, 6);
/// let mut values = [slow_loss, quick_win, draw, quick_loss, slow_win];
/// values.sort_unstable();
/// assert_eq!(values, [quick_loss, slow_loss, draw, slow_win, quick_win]);
///
/// // The player who moves into a position sees it the other way round, one ply longer.
/// assert_eq!(quick_loss.before_move(), Value::new(Verdict::Win, 3));
/// assert_eq!(quick_win.to_string(), "win in 1");
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Value {
    /// Who wins with best play, from the view of the player to move.
    pub verdict: Verdict,
    /// Marks still to be placed until the game ends with best play.
    pub plies: u8,
}

impl Value {
    /// A value.
    #[must_use]
    pub const fn new(verdict: Verdict, plies: u8) -> Value {
        Value { verdict, plies }
    }

    /// The value of an ended game for the player whose turn it would be: the opponent has
    /// just won.
    pub const LOST: Value = Value::new(Verdict::Loss, 0);

    /// The value of a full board with no line.
    pub const DRAWN: Value = Value::new(Verdict::Draw, 0);

    /// The value of a move for the player making it, given the value of the position it
    /// leads to (which is seen by the opponent, who moves next): the verdict flips and the
    /// move itself adds one ply.
    #[must_use]
    pub const fn before_move(self) -> Value {
        Value::new(self.verdict.flip(), self.plies + 1)
    }

    /// A sort key, higher is better for the player to move.
    const fn key(self) -> i16 {
        let plies = self.plies as i16;
        match self.verdict {
            // Wins rank above everything, quicker first; draws likewise; losses last,
            // slower first.
            Verdict::Win => 2 * 256 - plies,
            Verdict::Draw => 256 - plies,
            Verdict::Loss => plies,
        }
    }
}

impl Ord for Value {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key().cmp(&other.key())
    }
}

impl PartialOrd for Value {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Value {
    /// `win in 3`, `draw in 9`, `loss in 0`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} in {}", self.verdict, self.plies)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every value a 3x3 game can produce.
    fn all_values() -> impl Iterator<Item = Value> {
        Verdict::ALL
            .into_iter()
            .flat_map(|v| (0..=9).map(move |p| Value::new(v, p)))
    }

    #[test]
    fn order_is_total_and_agrees_with_equality() {
        for a in all_values() {
            for b in all_values() {
                assert_eq!(a.cmp(&b) == Ordering::Equal, a == b, "{a} vs {b}");
                assert_eq!(a.cmp(&b), b.cmp(&a).reverse(), "{a} vs {b}");
            }
        }
    }

    #[test]
    fn verdict_dominates_plies() {
        for a in all_values() {
            for b in all_values() {
                if a.verdict > b.verdict {
                    assert!(a > b, "{a} should beat {b}");
                }
            }
        }
    }

    #[test]
    fn before_move_is_an_involution_on_verdicts() {
        for v in all_values() {
            assert_eq!(v.before_move().before_move().verdict, v.verdict);
            assert_eq!(v.before_move().plies, v.plies + 1);
        }
    }

    #[test]
    fn verdict_names_round_trip() {
        for v in Verdict::ALL {
            assert_eq!(v.name().parse(), Ok(v));
        }
        assert_eq!("Win".parse::<Verdict>(), Err(UnknownVerdict));
    }
}
