//! Puzzle attempts: the line is checked against the solver, and a player's first decided
//! attempt at each puzzle is rated.

use triad_rules::Move;
use triad_solver::puzzles::{self, LineError, Progress, PuzzleId};

use crate::engine::{Batch, Engine};
use crate::{Address, EngineError, EventKind};

impl Engine {
    pub(in crate::engine) fn attempt_puzzle(
        &mut self,
        actor: Address,
        id: PuzzleId,
        line: &[Move],
        b: &mut Batch,
    ) -> Result<(), EngineError> {
        let puzzle = puzzles::find(&id).ok_or(EngineError::UnknownPuzzle)?;
        let solved = match puzzle.check(line) {
            Ok(Progress::Solved) => true,
            Ok(Progress::Failed { .. }) => false,
            Ok(Progress::Going { .. }) => return Err(EngineError::PuzzleUndecided),
            Err(e) => {
                let at = u8::try_from(LineError::at(e)).unwrap_or(u8::MAX);
                return Err(EngineError::InvalidPuzzleLine { at });
            }
        };
        // One rated attempt per player and puzzle, so neither rating can be farmed by
        // solving the same puzzle again; later attempts are checked and leave no trace.
        if self.rated_attempts.contains(&(actor, id)) {
            return Ok(());
        }
        self.emit(
            b,
            EventKind::PuzzleAttempted {
                puzzle: id,
                player: actor,
                solved,
            },
        );
        Ok(())
    }
}
