//! Applying one event: the only way the state changes, live and on replay.

use arrayvec::ArrayVec;
use triad_rules::{AnyGame, CellSet, GameKind, Player};

use crate::{
    Address, Applied, Challenge, EndReason, Event, EventKind, Match, MatchId, MatchResult, Origin,
    Phase, RatingChange, Seat, stats::rate,
};

use super::index::{clock_deadline, reindex, reindex_challenge};
use super::{Engine, IdempotencyEntry, Key};
use crate::tournament::pairing::Pairing;
use crate::tournament::{EntrantStatus, Tournament, TournamentId, TournamentPhase};

impl Engine {
    /// Applies one event: the only way the state changes. [`execute`](Engine::execute)
    /// calls it for the events it emits; [`replay`](Engine::replay) for a stored log.
    ///
    /// # Panics
    /// When the event does not follow from the state (a gap in the sequence numbers, time
    /// going backwards, a transfer that would overdraw an account, a move that breaks the
    /// rules): the log is corrupt.
    pub fn apply(&mut self, event: &Event) {
        assert_eq!(
            event.seq, self.next_seq,
            "events apply in sequence, without gaps"
        );
        self.move_key_times(event);
        // Match ids are given in order within their stripes: an id not given yet is new,
        // and only the events that say they create a match bring one.
        assert_eq!(
            event.creates_match(),
            event.match_id().filter(|&id| self.is_new_match_id(id)),
            "an event creates a match exactly when it names a new one"
        );
        let now = event.at_ms;
        // The match the event concerns is the only one whose clock deadline or open
        // challenge can change (a rematch also marks the finished match it follows, which
        // has neither); a transfer changes no match, and a move, the commonest event,
        // updates the deadline index itself (a moving match is no open challenge).
        let touched = match event.kind {
            EventKind::Transferred { .. } | EventKind::Moved { .. } => None,
            _ => event.match_id(),
        };
        let deadline_before = touched.and_then(|id| self.indexed_deadline(id));
        let challenge_before = touched.and_then(|id| self.indexed_challenge(id));
        match &event.kind {
            &EventKind::ChallengeIssued {
                match_id,
                challenger,
                opponent,
                game,
                stake,
                first,
                expires_at_ms,
            } => {
                self.create(match_id, game, stake, challenger, Origin::Challenge, now);
                let m = self.matches.get_mut(&match_id).expect("just created");
                m.challenge = Some(Challenge {
                    challenger,
                    opponent,
                    first,
                    expires_at_ms,
                });
            }
            EventKind::ChallengeAccepted { match_id }
            | EventKind::ChallengeDeclined { match_id }
            | EventKind::ChallengeExpired { match_id } => {
                assert_eq!(self.matches[match_id].phase, Phase::Waiting);
            }
            &EventKind::Queued {
                match_id,
                player,
                game,
                stake,
            } => {
                self.create(match_id, game, stake, player, Origin::Queue, now);
                self.queue
                    .entry((game, stake))
                    .or_default()
                    .push_back(match_id);
            }
            &EventKind::GameStarted {
                match_id,
                game,
                stake,
                seats,
                origin,
            } => {
                if let Origin::Computer | Origin::Rematch { .. } | Origin::Tournament { .. } =
                    origin
                {
                    let host = seats.iter().find_map(Seat::address).expect("a human plays");
                    self.create(match_id, game, stake, host, origin, now);
                }
                if let Origin::Rematch { of } = origin {
                    let previous = self.matches.get_mut(&of).expect("rematch of a known match");
                    previous.rematch = Some(match_id);
                    previous.rematch_offer = None;
                }
                if origin == Origin::Queue {
                    let queue = self.queue.get_mut(&(game, stake)).expect("queued");
                    assert_eq!(
                        queue.pop_front(),
                        Some(match_id),
                        "the earliest joiner is matched"
                    );
                    if queue.is_empty() {
                        self.queue.remove(&(game, stake));
                    }
                }
                let m = self.matches.get_mut(&match_id).expect("the match exists");
                assert_eq!(m.phase, Phase::Waiting, "a match starts once");
                assert_eq!((m.game(), m.stake), (game, stake));
                m.seats = Some(seats);
                m.phase = Phase::Ready;
                m.last_activity_ms = now;
                for address in seats.iter().filter_map(Seat::address) {
                    let previous = self.active.insert(address, match_id);
                    assert!(
                        previous.is_none() || previous == Some(match_id),
                        "one active match per address"
                    );
                }
                if let Origin::Tournament { tournament, .. } = origin {
                    let t = self
                        .tournaments
                        .get_mut(&tournament)
                        .expect("a known tournament");
                    assert_eq!(
                        t.phase,
                        TournamentPhase::Running,
                        "a running tournament pairs"
                    );
                    let [first, second] = seats.map(|s| {
                        let address = s.address().expect("tournament seats are people's");
                        t.entrant(address).expect("an entrant plays")
                    });
                    t.playing.insert(match_id, Pairing { first, second });
                }
            }
            &EventKind::Moved {
                match_id,
                seq,
                player,
                by,
                cell,
                mark,
                ..
            } => {
                let m = self.matches.get_mut(&match_id).expect("the match exists");
                assert!(matches!(m.phase, Phase::Ready | Phase::InProgress));
                let deadline_before = clock_deadline(&self.config, m).map(|d| d.at_ms);
                assert_eq!(seq, m.seq() + 1);
                assert_eq!(m.seat(player), Some(by));
                let (position, mv) = m
                    .position
                    .play_as(player, cell.index(), mark)
                    .expect("a logged move is legal");
                m.position = position;
                m.moves.push(mv);
                m.phase = Phase::InProgress;
                m.last_activity_ms = now;
                let deadline_after = clock_deadline(&self.config, m).map(|d| d.at_ms);
                reindex(
                    &mut self.deadlines,
                    match_id,
                    deadline_before,
                    deadline_after,
                );
            }
            &EventKind::GameEnded {
                match_id,
                reason,
                winner,
                cells,
            } => self.end(match_id, reason, winner, cells, now),
            &EventKind::MatchAborted { match_id, by } => {
                let m = &self.matches[&match_id];
                assert!(matches!(m.phase, Phase::Ready | Phase::InProgress));
                assert_eq!(m.stake, 0, "only a free match is aborted");
                assert!(m.seat(by).is_some_and(|s| s.address().is_some()));
            }
            &EventKind::RematchOffered { match_id, by } => {
                let m = self.matches.get_mut(&match_id).expect("the match exists");
                assert_eq!(m.phase, Phase::Finished);
                m.rematch_offer = Some(by);
            }
            EventKind::Transferred { transfer, .. } => self.ledger.apply(transfer),
            &EventKind::PuzzleAttempted {
                puzzle,
                player,
                solved,
            } => {
                assert!(
                    self.rated_attempts.insert((player, puzzle)),
                    "one rated attempt per player and puzzle"
                );
                let mut by = self.puzzle_record_of_player(player);
                let mut of = self.puzzle_record(puzzle);
                // The player against the puzzle: solving it is the player's win.
                (by.rating, of.rating) = rate(by.rating, of.rating, Some(solved));
                by.count(solved);
                of.count(solved);
                self.puzzlers.insert(player, by);
                self.puzzles.insert(puzzle, of);
            }
            EventKind::TournamentCreated {
                tournament,
                organizer,
                spec,
            } => {
                assert_eq!(
                    tournament.0, self.next_tournament,
                    "tournament ids in order"
                );
                self.next_tournament += 1;
                let t = Tournament::new(*tournament, spec.clone(), *organizer, now);
                self.tournaments.insert(*tournament, t);
                self.open_tournaments.insert(*tournament);
            }
            &EventKind::TournamentJoined {
                tournament,
                player,
                bot,
            } => {
                let rating = self.stats(player).rating.rating;
                #[expect(
                    clippy::cast_possible_truncation,
                    clippy::cast_sign_loss,
                    reason = "a rating is a few thousand points, rounded and clamped"
                )]
                let rating = rating.round().clamp(0.0, f64::from(u32::MAX)) as u32;
                let t = self.open_tournament(tournament);
                t.join(player, bot, rating);
            }
            &EventKind::TournamentLeft { tournament, player } => {
                let t = self.open_tournament(tournament);
                let status = if t.phase == TournamentPhase::Upcoming {
                    EntrantStatus::Refunded
                } else {
                    EntrantStatus::Withdrawn
                };
                t.set_status(player, status);
            }
            &EventKind::TournamentPaused {
                tournament,
                player,
                paused,
            } => {
                let t = self.open_tournament(tournament);
                let status = if paused {
                    EntrantStatus::Paused
                } else {
                    EntrantStatus::Active
                };
                t.set_status(player, status);
            }
            &EventKind::TournamentStarted { tournament } => {
                let t = self.open_tournament(tournament);
                assert_eq!(
                    t.phase,
                    TournamentPhase::Upcoming,
                    "a tournament starts once"
                );
                t.phase = TournamentPhase::Running;
                t.started_ms = Some(now);
                t.last_change_ms = now;
            }
            &EventKind::TournamentRound {
                tournament,
                round,
                bye,
            } => {
                let t = self.open_tournament(tournament);
                assert_eq!(t.phase, TournamentPhase::Running);
                assert_eq!(round, t.round + 1, "rounds in order");
                t.round = round;
                t.last_change_ms = now;
                t.last_round_ms = now;
                if let Some(player) = bye {
                    let e = t.entrant(player).expect("an entrant has the bye");
                    t.records[e as usize].byes += 1;
                }
            }
            &EventKind::TournamentFinished { tournament, winner } => {
                let t = self.open_tournament(tournament);
                assert_eq!(
                    t.phase,
                    TournamentPhase::Running,
                    "a running tournament finishes"
                );
                t.playing.clear();
                t.prizes = t.prizes_now();
                let first = t.standings().first().map(|s| t.info(s.entrant).address);
                assert_eq!(winner, first, "the winner ranks first");
                t.phase = TournamentPhase::Finished;
                t.ended_ms = Some(now);
                self.open_tournaments.remove(&tournament);
                self.tournament_ended(event.seq, tournament, now);
                if let Some(w) = winner {
                    let mut stats = self.stats(w);
                    stats.tournament_wins = stats.tournament_wins.saturating_add(1);
                    self.stats.insert(w, stats);
                }
            }
            &EventKind::TournamentCancelled { tournament } => {
                let t = self.open_tournament(tournament);
                t.playing.clear();
                t.phase = TournamentPhase::Cancelled;
                t.ended_ms = Some(now);
                self.open_tournaments.remove(&tournament);
                self.tournament_ended(event.seq, tournament, now);
            }
            &EventKind::ClocksResumed {
                down_since_ms,
                resumed_ms,
            } => self.resume(down_since_ms, resumed_ms, now),
            &EventKind::Forgotten { before_ms } => {
                assert!(
                    before_ms <= now,
                    "memory is swept to the event's time at most"
                );
                self.forget_before(before_ms);
            }
        }
        if let Some(id) = touched {
            let deadline_after = self.indexed_deadline(id);
            reindex(&mut self.deadlines, id, deadline_before, deadline_after);
            let challenge_after = self.indexed_challenge(id);
            reindex_challenge(
                &mut self.challenges_to,
                id,
                challenge_before,
                challenge_after,
            );
        }
        self.next_seq += 1;
        self.clock_ms = self.clock_ms.max(now);
        if let Some(applied) = &event.applied {
            self.remember(event.seq, now, event.match_id(), applied);
        }
        if event.seq < self.config.swept_by_clock_from_seq {
            // Written before the clock swept memory: every event swept it, as of its time.
            self.forget_before(now);
        }
        if let Some(log) = &mut self.log.0 {
            log.push(event.clone());
        }
    }

    /// Moves the times of `event`'s keys to its own, checking that time does not go
    /// backwards under any of them (an event's keys are a part of its command's, whose
    /// time was raised to theirs). An event under [`Key::All`] is the floor of every key's
    /// time from here on, which makes their own times redundant.
    fn move_key_times(&mut self, event: &Event) {
        let at = event.at_ms;
        let keys = self.event_keys(event);
        let backwards = |ms: u64| -> ! {
            panic!(
                "time does not go backwards under a key: {} at {at}, after {ms} under {keys:?}",
                event.kind.name()
            )
        };
        if at < self.floor_ms {
            backwards(self.floor_ms);
        }
        if keys.contains(&Key::All) {
            if at < self.clock_ms {
                backwards(self.clock_ms);
            }
            self.floor_ms = at;
            self.key_ms.clear();
        } else {
            for &key in &keys {
                let ms = self.key_ms.entry(key).or_insert(at);
                if at < *ms {
                    backwards(*ms);
                }
                *ms = at;
            }
        }
    }

    /// Gives an outage back: every live match's clock and every running tournament's
    /// moves later by its length, the deadline index with them.
    fn resume(&mut self, down_since_ms: u64, resumed_ms: u64, now: u64) {
        assert_eq!(resumed_ms, now, "the clocks resume at the event's time");
        assert!(
            self.clock_ms <= down_since_ms && down_since_ms < resumed_ms,
            "an outage begins after the last event and ends at this one"
        );
        let outage_ms = resumed_ms - down_since_ms;
        let live: Vec<MatchId> = self.live.iter().copied().collect();
        for id in live {
            let before = self.indexed_deadline(id);
            let m = self.matches.get_mut(&id).expect("a live match is kept");
            m.give_back(outage_ms);
            let after = self.indexed_deadline(id);
            reindex(&mut self.deadlines, id, before, after);
        }
        for id in &self.open_tournaments {
            let t = self
                .tournaments
                .get_mut(id)
                .expect("an open tournament is kept");
            t.give_back(outage_ms);
        }
        self.last_resumed_ms = resumed_ms;
    }

    /// An upcoming or running tournament, for an event about it.
    fn open_tournament(&mut self, id: TournamentId) -> &mut Tournament {
        let t = self.tournaments.get_mut(&id).expect("a known tournament");
        assert!(t.phase.is_open(), "tournament {id} is open");
        t
    }

    fn create(
        &mut self,
        id: MatchId,
        game: GameKind,
        stake: u128,
        host: Address,
        origin: Origin,
        now: u64,
    ) {
        let (stripe, count) = self.match_id_place(id);
        assert_eq!(
            count,
            self.next_match[usize::from(stripe)],
            "match ids are given in order within their stripe"
        );
        self.next_match[usize::from(stripe)] += 1;
        let m = Match {
            id,
            origin,
            stake,
            phase: Phase::Waiting,
            host,
            challenge: None,
            seats: None,
            position: AnyGame::new(game),
            moves: ArrayVec::new(),
            created_ms: now,
            last_activity_ms: now,
            rematch_offer: None,
            rematch: None,
            result: None,
        };
        self.matches.insert(id, m);
        self.live.insert(id);
        if origin != Origin::Computer && !matches!(origin, Origin::Rematch { .. }) {
            let previous = self.active.insert(host, id);
            assert!(previous.is_none(), "one active match per address");
        }
    }

    fn end(
        &mut self,
        id: MatchId,
        reason: EndReason,
        winner: Option<Player>,
        cells: CellSet,
        now: u64,
    ) {
        let m = self.matches.get_mut(&id).expect("the match exists");
        assert_ne!(m.phase, Phase::Finished, "a match ends once");
        if m.phase == Phase::Waiting {
            let queued = self.queue.get_mut(&(m.position.kind(), m.stake));
            if let Some(queue) = queued {
                queue.retain(|q| *q != id);
                if queue.is_empty() {
                    self.queue.remove(&(m.position.kind(), m.stake));
                }
            }
        }
        m.phase = Phase::Finished;
        m.result = Some(MatchResult {
            reason,
            winner,
            cells,
            ended_ms: now,
            ratings: None,
        });
        for address in m.participants() {
            let removed = self.active.remove(&address);
            assert_eq!(removed, Some(id), "the ending frees every participant");
        }
        self.live.remove(&id);
        self.finished_order.insert((now, id));
        let m = &self.matches[&id];
        if let Origin::Tournament { tournament, .. } = m.origin {
            assert!(reason.was_played(), "a tournament game is played out");
            // A game that ends after its tournament (an arena's time was up) counts for
            // nothing there: `record` knows only the games still being played. So it does
            // not matter that the tournament may be forgotten by then (a game can outlast
            // the retention window after its arena's end), as it is to every command.
            if let Some(t) = self.tournaments.get_mut(&tournament) {
                t.record(id, winner.map(|w| w == Player::First), now);
            } else {
                assert!(
                    tournament.0 < self.next_tournament,
                    "a game's tournament was made"
                );
            }
        }
        // The hall of fame and the ratings count played games between two people.
        if let (true, Some([Seat::Human(a), Seat::Human(b)])) = (reason.was_played(), m.seats) {
            let (mut sa, mut sb) = (self.stats(a), self.stats(b));
            let first_won = winner.map(|w| w == Player::First);
            sa.count(first_won == Some(true), first_won.is_none());
            sb.count(first_won == Some(false), first_won.is_none());
            let before = (sa.rating.rating, sb.rating.rating);
            (sa.rating, sb.rating) = rate(sa.rating, sb.rating, first_won);
            let ratings = [
                RatingChange::new(before.0, sa.rating.rating),
                RatingChange::new(before.1, sb.rating.rating),
            ];
            self.stats.insert(a, sa);
            self.stats.insert(b, sb);
            if let Some(result) = self.matches.get_mut(&id).and_then(|m| m.result.as_mut()) {
                result.ratings = Some(ratings);
            }
        }
    }

    /// Remembers a keyed command by its last event (at `last_seq`, of `match_id`): every
    /// command's last event belongs to the match it concerned (a challenge's escrow or
    /// issue, a start's last escrow or the computer's reply, a move's ending), or to none
    /// for money that is no match's.
    pub(super) fn remember(
        &mut self,
        last_seq: u64,
        at_ms: u64,
        match_id: Option<MatchId>,
        applied: &Applied,
    ) {
        let first_seq = last_seq + 1 - u64::from(applied.batch_len);
        self.idempotency.insert(
            (applied.actor, applied.key),
            IdempotencyEntry {
                command: applied.command.clone(),
                first_seq,
                last_seq,
                at_ms,
                match_id,
            },
        );
        self.idempotency_order
            .insert((at_ms, applied.actor, applied.key));
    }

    /// Whether a match that ended at `ended_ms` is past the retention window at `now`.
    /// Strictly past: a match ended by the current command stays while the command
    /// settles it.
    fn past_retention_since(&self, ended_ms: u64, now: u64) -> bool {
        ended_ms.saturating_add(self.config.finished_retention_ms) < now
    }

    /// Whether `m` has ended and is past the retention window at `now` (dropped at the
    /// first event at or after `now`, if it is still in memory).
    pub(super) fn past_retention(&self, m: &Match, now: u64) -> bool {
        m.result
            .is_some_and(|r| self.past_retention_since(r.ended_ms, now))
    }

    /// Sweeps memory as of `now`: the idempotency keys past their window and the finished
    /// matches past their retention.
    fn forget_before(&mut self, now: u64) {
        self.forget_old_keys(now);
        self.forget_old_matches(now);
        self.forget_old_tournaments(now);
    }

    /// Notes that `tournament` ended (finished or was cancelled) at `now`, by event `seq`:
    /// forgotten after the retention window when the store's archive holds it, which is
    /// from [`Config::tournaments_archived_from_seq`] on.
    fn tournament_ended(&mut self, seq: u64, tournament: TournamentId, now: u64) {
        if seq >= self.config.tournaments_archived_from_seq {
            self.ended_tournaments.insert((now, tournament));
        }
    }

    /// Whether `t` ended, is archived, and is past the retention window at `now`: so it
    /// is forgotten at the clock's next sweep, if it is still in memory.
    pub(super) fn tournament_past_retention(&self, t: &Tournament, now: u64) -> bool {
        t.ended_ms.is_some_and(|ended_ms| {
            self.past_retention_since(ended_ms, now)
                && self.ended_tournaments.contains(&(ended_ms, t.id))
        })
    }

    /// Drops the tournaments that ended before the retention window: the store's archive
    /// holds them (`tournaments`), and the API reads them there.
    fn forget_old_tournaments(&mut self, now: u64) {
        while let Some(&(ended_ms, id)) = self.ended_tournaments.first() {
            if !self.past_retention_since(ended_ms, now) {
                break;
            }
            self.ended_tournaments.pop_first();
            let removed = self.tournaments.remove(&id);
            assert!(
                removed.is_some_and(|t| !t.phase.is_open()),
                "only tournaments that ended are forgotten"
            );
        }
    }

    /// Drops finished matches older than the retention window.
    fn forget_old_matches(&mut self, now: u64) {
        while let Some(&(ended_ms, id)) = self.finished_order.first() {
            if !self.past_retention_since(ended_ms, now) {
                break;
            }
            self.finished_order.pop_first();
            let removed = self.matches.remove(&id);
            assert!(
                removed.is_some_and(|m| m.phase == Phase::Finished),
                "only finished matches are forgotten"
            );
        }
    }

    fn forget_old_keys(&mut self, now: u64) {
        while let Some(&(at_ms, actor, key)) = self.idempotency_order.first() {
            if at_ms.saturating_add(self.config.idempotency_window_ms) > now {
                break;
            }
            self.idempotency_order.pop_first();
            if self
                .idempotency
                .get(&(actor, key))
                .is_some_and(|e| e.at_ms == at_ms)
            {
                self.idempotency.remove(&(actor, key));
            }
        }
    }
}
