//! A batch's announcement to the other nodes of a cluster: `pg_notify` on
//! [`EVENTS_CHANNEL`](super::EVENTS_CHANNEL), sent in the batch's own statement and so
//! delivered at its commit, in commit order. It carries the batch's events with the topics
//! they were published on, in one notification or, when they do not fit in one, in several
//! in a row, each an announcement of its own: its last sequence number and its events. A
//! node that has every event before an announcement's applies them as heard and publishes
//! them to its own subscribers, without reading the log back. A node that missed an
//! announcement (its listener reconnected), or heard one without events, reads the log from
//! its last event.
//!
//! A payload is text: the last sequence number, then one line per event: the event's JSON
//! (its row's `body`, in which every control character is escaped), and each of its topics
//! after a tab. PostgreSQL refuses a payload of 8,000 bytes or more, so a payload's lines
//! stay under [`MAX_BYTES`]; an event whose line alone would not (or that a tab or a
//! newline would break) is announced by its sequence number alone.

use triad_engine::Event;

use super::{Encoded, StoreError};

/// The longest payload; an event whose line does not fit alone is announced by its number.
pub(super) const MAX_BYTES: usize = 7_900;

/// The announcements of the batch `events` (in log order): as few payloads as carry them
/// under [`MAX_BYTES`] each, in order.
#[must_use]
pub(super) fn announcements(events: &[Encoded<'_>]) -> Vec<String> {
    let mut payloads = Vec::new();
    // The payload being filled: its events' lines, and its last event's number.
    let mut lines = String::new();
    let mut last = None;
    let flush = |payloads: &mut Vec<String>, lines: &mut String, last: &mut Option<u64>| {
        if let Some(last) = last.take() {
            payloads.push(format!("{last}{lines}"));
            lines.clear();
        }
    };
    for e in events {
        let seq = e.event.seq;
        let line = line(e).filter(|line| digits(seq) + line.len() <= MAX_BYTES);
        let Some(line) = line else {
            // Announced by its number: the log has it.
            flush(&mut payloads, &mut lines, &mut last);
            payloads.push(seq.to_string());
            continue;
        };
        if last.is_some() && digits(seq) + lines.len() + line.len() > MAX_BYTES {
            flush(&mut payloads, &mut lines, &mut last);
        }
        lines.push_str(&line);
        last = Some(seq);
    }
    flush(&mut payloads, &mut lines, &mut last);
    payloads
}

/// An event's line, with its leading newline: `None` when a tab or a newline in it would
/// break the format.
fn line(e: &Encoded<'_>) -> Option<String> {
    let plain = |s: &str| !s.contains(['\t', '\n']);
    if !plain(&e.json) || !e.topics.iter().all(|t| plain(t)) {
        return None;
    }
    let mut line = String::with_capacity(
        1 + e.json.len() + e.topics.iter().map(|t| t.len() + 1).sum::<usize>(),
    );
    line.push('\n');
    line.push_str(&e.json);
    for topic in &e.topics {
        line.push('\t');
        line.push_str(topic);
    }
    Some(line)
}

/// The length of `n` in decimal.
fn digits(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// An announcement as heard.
#[derive(Debug, PartialEq)]
pub struct Announcement {
    /// The batch's last sequence number.
    pub last: u64,
    /// Its events with their topics, in order, ending at `last`; empty when they did not
    /// fit (then the log has them).
    pub events: Vec<(Event, Vec<String>)>,
}

impl Announcement {
    /// Reads a payload written by [`announcement`].
    ///
    /// # Errors
    /// [`StoreError::Corrupt`] for a payload that is not one: a bad number or event, or
    /// events that are not consecutive or do not end at the last sequence number.
    pub fn parse(payload: &str) -> Result<Announcement, StoreError> {
        let corrupt = |why: String| StoreError::Corrupt(format!("an announcement {why}"));
        let mut lines = payload.split('\n');
        let head = lines.next().unwrap_or_default();
        let last: u64 = head
            .parse()
            .map_err(|_| corrupt(format!("begins with {head:?}, not a sequence number")))?;
        let mut events: Vec<(Event, Vec<String>)> = Vec::new();
        for line in lines {
            let mut fields = line.split('\t');
            let json = fields.next().unwrap_or_default();
            let event: Event = serde_json::from_str(json)
                .map_err(|e| corrupt(format!("has an event that does not decode: {e}")))?;
            if let Some((before, _)) = events.last()
                && event.seq != before.seq + 1
            {
                return Err(corrupt(format!(
                    "has event {} after {}",
                    event.seq, before.seq
                )));
            }
            events.push((event, fields.map(str::to_owned).collect()));
        }
        if let Some((end, _)) = events.last()
            && end.seq != last
        {
            return Err(corrupt(format!("ends at {}, not at {last}", end.seq)));
        }
        Ok(Announcement { last, events })
    }
}

#[cfg(test)]
mod tests {
    use triad_engine::{Address, Command, Config, Engine, Envelope};

    use super::{Announcement, MAX_BYTES, announcements};
    use crate::store::Encoded;

    /// The events of `count` deposits, numbered from 1.
    fn events(count: u64) -> Vec<triad_engine::Event> {
        let owner = Address::from_bytes([9; 32]);
        let mut engine = Engine::new(Config::new(owner));
        (0..count)
            .flat_map(|i| {
                let to = Address::from_bytes([1; 32]);
                let deposit = Command::Deposit { to, amount: 5 };
                engine
                    .execute(&Envelope::new(owner, i, deposit))
                    .unwrap()
                    .events
            })
            .collect()
    }

    fn encoded<'a>(events: &'a [triad_engine::Event], topics: &[&str]) -> Vec<Encoded<'a>> {
        events
            .iter()
            .map(|e| Encoded::new(e, topics.iter().map(|t| (*t).to_owned()).collect()).unwrap())
            .collect()
    }

    #[test]
    fn a_batch_is_heard_as_it_was_committed() {
        let events = events(3);
        let topics = ["ledger:0x01", "inbox:0x01"];
        let payloads = announcements(&encoded(&events, &topics));
        assert_eq!(payloads.len(), 1);
        let heard = Announcement::parse(&payloads[0]).unwrap();
        assert_eq!(heard.last, 3);
        let expected: Vec<_> = events
            .iter()
            .map(|e| (e.clone(), topics.map(str::to_owned).to_vec()))
            .collect();
        assert_eq!(heard.events, expected);
        // An event on no topic keeps its line.
        let heard = Announcement::parse(&announcements(&encoded(&events, &[]))[0]).unwrap();
        assert!(heard.events.iter().all(|(_, t)| t.is_empty()));
        assert_eq!(heard.events.len(), 3);
    }

    #[test]
    fn a_batch_too_large_for_one_notification_is_announced_in_several_in_order() {
        let events = events(200);
        let payloads = announcements(&encoded(&events, &["ledger:0x01"]));
        assert!(payloads.len() > 1, "{}", payloads.len());
        // Each under PostgreSQL's limit of 8,000 bytes, and together the batch, in order.
        const { assert!(MAX_BYTES < 8_000) };
        let mut heard = Vec::new();
        for payload in &payloads {
            assert!(payload.len() <= MAX_BYTES, "{}", payload.len());
            let announced = Announcement::parse(payload).unwrap();
            assert_eq!(announced.last, announced.events.last().unwrap().0.seq);
            heard.extend(announced.events);
        }
        let expected: Vec<_> = events
            .iter()
            .map(|e| (e.clone(), vec!["ledger:0x01".to_owned()]))
            .collect();
        assert_eq!(heard, expected);
        // Filled: no two payloads in a row would have fitted in one.
        for pair in payloads.windows(2) {
            assert!(pair[0].len() + pair[1].len() > MAX_BYTES);
        }
    }

    #[test]
    fn an_event_that_does_not_fit_or_would_break_the_format_is_announced_by_its_number() {
        let events = events(6);
        let mut batch = encoded(&events, &["ledger:0x01"]);
        batch[2].topics = vec!["x".repeat(MAX_BYTES)];
        batch[4].topics = vec!["a\tb".to_owned()];
        let heard: Vec<Announcement> = announcements(&batch)
            .iter()
            .map(|p| Announcement::parse(p).unwrap())
            .collect();
        let shape: Vec<(u64, Vec<u64>)> = heard
            .iter()
            .map(|a| (a.last, a.events.iter().map(|(e, _)| e.seq).collect()))
            .collect();
        assert_eq!(
            shape,
            [
                (2, vec![1, 2]),
                (3, vec![]),
                (4, vec![4]),
                (5, vec![]),
                (6, vec![6])
            ]
        );
    }

    #[test]
    fn a_payload_that_is_not_an_announcement_is_refused() {
        let events = events(3);
        let good = announcements(&encoded(&events, &[])).remove(0);
        let lines: Vec<&str> = good.split('\n').collect();
        for bad in [
            String::new(),
            "x".to_owned(),
            "3\n{".to_owned(),
            // Not consecutive.
            format!("3\n{}\n{}", lines[1], lines[3]),
            // Not ending at the number.
            format!("4\n{}\n{}\n{}", lines[1], lines[2], lines[3]),
        ] {
            assert!(Announcement::parse(&bad).is_err(), "{bad:?}");
        }
        // The payload of a node that announced the number alone.
        assert_eq!(
            Announcement::parse("17").unwrap(),
            Announcement {
                last: 17,
                events: Vec::new()
            }
        );
    }
}
