//! A batch's announcement to the other nodes of a cluster: `pg_notify` on
//! [`EVENTS_CHANNEL`](super::EVENTS_CHANNEL), sent in the batch's own statement and so
//! delivered at its commit, in commit order. It carries the batch's last sequence number
//! and, when they fit in one notification, its events with the topics they were published
//! on. A node that has every event before them applies them as heard and publishes them to
//! its own subscribers, without reading the log back (three queries: the events, their
//! topics, the inboxes derived from the matches' players). A node that missed an
//! announcement (its listener reconnected), or heard one without events, reads the log
//! from its last event, as before.
//!
//! The payload is text: the last sequence number, then one line per event: the event's
//! JSON (its row's `body`, in which every control character is escaped), and each of its
//! topics after a tab. PostgreSQL refuses a payload of 8,000 bytes or more, so a batch
//! whose lines would pass [`MAX_BYTES`] announces its last sequence number alone.

use triad_engine::Event;

use super::{Encoded, StoreError};

/// The longest payload with events; a longer one is the last sequence number alone.
pub(super) const MAX_BYTES: usize = 7_900;

/// The announcement of the batch `events` (in log order).
#[must_use]
pub(super) fn announcement(events: &[Encoded<'_>]) -> String {
    let last = events.last().map_or(0, |e| e.event.seq).to_string();
    let mut text = last.clone();
    for e in events {
        let plain = |s: &str| !s.contains(['\t', '\n']);
        if !plain(&e.json) || !e.topics.iter().all(|t| plain(t)) {
            return last;
        }
        text.push('\n');
        text.push_str(&e.json);
        for topic in &e.topics {
            text.push('\t');
            text.push_str(topic);
        }
        if text.len() > MAX_BYTES {
            return last;
        }
    }
    text
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

    use super::{Announcement, MAX_BYTES, announcement};
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
        let heard = Announcement::parse(&announcement(&encoded(&events, &topics))).unwrap();
        assert_eq!(heard.last, 3);
        let expected: Vec<_> = events
            .iter()
            .map(|e| (e.clone(), topics.map(str::to_owned).to_vec()))
            .collect();
        assert_eq!(heard.events, expected);
        // An event on no topic keeps its line.
        let heard = Announcement::parse(&announcement(&encoded(&events, &[]))).unwrap();
        assert!(heard.events.iter().all(|(_, t)| t.is_empty()));
        assert_eq!(heard.events.len(), 3);
    }

    #[test]
    fn a_batch_too_large_for_a_notification_announces_its_last_number_alone() {
        let events = events(200);
        let payload = announcement(&encoded(&events, &["ledger:0x01"]));
        assert_eq!(payload, "200");
        let heard = Announcement::parse(&payload).unwrap();
        assert_eq!((heard.last, heard.events.len()), (200, 0));
        // The largest that fits stays under PostgreSQL's limit of 8,000 bytes.
        let fits = (1..200)
            .map(|n| announcement(&encoded(&events[..n], &["ledger:0x01"])))
            .filter(|p| p.contains('\n'))
            .map(|p| p.len())
            .max()
            .unwrap();
        assert!(fits <= MAX_BYTES && MAX_BYTES < 8_000, "{fits}");
        // A topic that would break the format sends the number alone too.
        assert_eq!(announcement(&encoded(&events[..2], &["a\tb"])), "2");
    }

    #[test]
    fn a_payload_that_is_not_an_announcement_is_refused() {
        let events = events(3);
        let good = announcement(&encoded(&events, &[]));
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
