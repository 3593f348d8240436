//! Display names: the one check of a name a player asks for ([`DisplayName::parse`]), and
//! its skeleton ([`skeleton`]), the form two names are compared in. Pure: no I/O.
//!
//! A name is 3-20 characters of ASCII letters, digits, `_` and `-`; it starts and ends with
//! a letter or a digit and has no two separators in a row. ASCII only, because the
//! confusables of Unicode (Cyrillic `а` for Latin `a`, full-width forms, combining marks,
//! zero-width and right-to-left characters) are too many to fold reliably, and a name is
//! shown beside money; no spaces, so no name differs from another by invisible padding;
//! and every allowed character is inert in HTML, URLs, logs and terminals. A name that
//! reads as an address (`0x` and hex digits, in any of its look-alikes) is refused, since
//! the address is the identity a name stands beside.
//!
//! Two names conflict when their skeletons are equal: the name case-folded, with each
//! character of a look-alike class ([`LOOK_ALIKES`]) replaced by its class's
//! representative and the look-alike pairs of letters (`rn` for `m`, `vv` for `w`) joined.
//! The store keeps the skeleton under a unique index, so of two players asking for names
//! that look alike, on any node, one gets it.

/// The fewest characters of a name.
pub const NAME_LEN_MIN: usize = 3;
/// The most characters of a name.
pub const NAME_LEN_MAX: usize = 20;

/// Single characters that look alike, each with the representative its class folds to
/// (after case folding: `I` is `i` by then, and so is `l`'s look-alike `1`'s).
pub const LOOK_ALIKES: &[(char, char)] = &[
    ('0', 'o'),
    ('1', 'l'),
    ('i', 'l'),
    ('5', 's'),
    ('2', 'z'),
    ('8', 'b'),
    ('3', 'e'),
    ('4', 'a'),
    ('7', 't'),
    ('-', '_'),
];

/// Pairs of letters that read as one, with the letter they fold to.
pub const LOOK_ALIKE_PAIRS: &[(&str, char)] = &[("rn", 'm'), ("vv", 'w')];

/// Names nobody may take, compared by skeleton: the server's own roles and words the app
/// shows in a player's place. A name whose skeleton contains `triad` or `admin` is
/// refused as well.
pub const RESERVED: &[&str] = &[
    "triad",
    "admin",
    "administrator",
    "owner",
    "computer",
    "system",
    "bot",
    "anonymous",
    "moderator",
    "staff",
    "support",
    "root",
    "server",
    "reserve",
    "null",
    "undefined",
    "nobody",
    "you",
];

/// Words no name may contain (by skeleton).
const RESERVED_PARTS: &[&str] = &["triad", "admin"];

/// Why a name was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// Too short or too long.
    #[error("a display name has 3 to 20 characters; this one has {0}")]
    Length(usize),
    /// A character outside the allowed set.
    #[error(
        "a display name uses only the letters A-Z and a-z, the digits 0-9, _ and -; {0:?} is not one of them"
    )]
    Character(char),
    /// Starts or ends with a separator, or has two in a row.
    #[error(
        "a display name starts and ends with a letter or a digit, with at most one _ or - in a row"
    )]
    Separator,
    /// Reads as an address.
    #[error("a display name may not look like an address (0x and hex digits)")]
    LooksLikeAddress,
    /// A reserved name, or one like it.
    #[error("{0:?} is reserved; choose another name")]
    Reserved(String),
}

/// A name that passed every check of [`DisplayName::parse`], with its skeleton.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DisplayName {
    text: String,
    skeleton: String,
}

impl DisplayName {
    /// Checks a name a player asks for, in this order: length, characters, separators,
    /// an address's look, the reserved names.
    ///
    /// # Errors
    /// The first check it fails, saying why.
    pub fn parse(text: &str) -> Result<DisplayName, NameError> {
        let len = text.chars().count();
        if !(NAME_LEN_MIN..=NAME_LEN_MAX).contains(&len) {
            return Err(NameError::Length(len));
        }
        if let Some(c) = text.chars().find(|&c| !is_allowed(c)) {
            return Err(NameError::Character(c));
        }
        let bytes = text.as_bytes();
        let separator = |b: &u8| *b == b'_' || *b == b'-';
        if bytes.first().is_some_and(separator)
            || bytes.last().is_some_and(separator)
            || bytes
                .windows(2)
                .any(|w| separator(&w[0]) && separator(&w[1]))
        {
            return Err(NameError::Separator);
        }
        let skeleton = skeleton(text);
        if looks_like_address(text) {
            return Err(NameError::LooksLikeAddress);
        }
        if RESERVED.iter().any(|r| skeleton == self::skeleton(r))
            || RESERVED_PARTS
                .iter()
                .any(|r| skeleton.contains(&self::skeleton(r)))
        {
            return Err(NameError::Reserved(text.to_owned()));
        }
        Ok(DisplayName {
            text: text.to_owned(),
            skeleton,
        })
    }

    /// The name as the player wrote it.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Its skeleton: equal for names that look alike.
    #[must_use]
    pub fn skeleton(&self) -> &str {
        &self.skeleton
    }
}

fn is_allowed(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// `0x` (or a look-alike: `Ox`, `oX`) followed only by hex digits.
fn looks_like_address(text: &str) -> bool {
    let mut chars = text.chars();
    let prefix = [chars.next(), chars.next()].map(|c| c.map(|c| c.to_ascii_lowercase()));
    matches!(prefix, [Some('0' | 'o'), Some('x')]) && chars.all(|c| c.is_ascii_hexdigit())
}

/// The skeleton of a name: lower case, each look-alike character its class's
/// representative ([`LOOK_ALIKES`]), each look-alike pair of letters one letter
/// ([`LOOK_ALIKE_PAIRS`]). Idempotent: a skeleton is its own skeleton.
#[must_use]
pub fn skeleton(text: &str) -> String {
    let folded: String = text
        .chars()
        .map(|c| {
            let c = c.to_ascii_lowercase();
            LOOK_ALIKES
                .iter()
                .find(|&&(from, _)| from == c)
                .map_or(c, |&(_, to)| to)
        })
        .collect();
    let mut out = String::with_capacity(folded.len());
    let mut rest = folded.as_str();
    'scan: while let Some(c) = rest.chars().next() {
        for &(pair, to) in LOOK_ALIKE_PAIRS {
            if let Some(after) = rest.strip_prefix(pair) {
                out.push(to);
                rest = after;
                continue 'scan;
            }
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Any name of the allowed characters and length (not necessarily valid).
    fn text() -> impl Strategy<Value = String> {
        "[A-Za-z0-9_-]{3,20}"
    }

    #[test]
    fn the_checks_come_in_order_and_say_why() {
        let cases: &[(&str, Result<&str, NameError>)] = &[
            ("ab", Err(NameError::Length(2))),
            ("abcdefghijklmnopqrstu", Err(NameError::Length(21))),
            ("Åsa", Err(NameError::Character('Å'))),
            ("a b", Err(NameError::Character(' '))),
            ("аlice", Err(NameError::Character('а'))), // Cyrillic a
            ("bob\u{200b}", Err(NameError::Character('\u{200b}'))),
            ("_bob", Err(NameError::Separator)),
            ("bob-", Err(NameError::Separator)),
            ("bo__b", Err(NameError::Separator)),
            ("bo-_b", Err(NameError::Separator)),
            ("0xdeadbeef", Err(NameError::LooksLikeAddress)),
            ("OX12ab", Err(NameError::LooksLikeAddress)),
            ("Triad", Err(NameError::Reserved("Triad".into()))),
            ("7r1ad", Err(NameError::Reserved("7r1ad".into()))),
            ("the_admin", Err(NameError::Reserved("the_admin".into()))),
            ("C0mputer", Err(NameError::Reserved("C0mputer".into()))),
            ("B0T", Err(NameError::Reserved("B0T".into()))),
            ("Oxford", Ok("Oxford")),
            ("abc", Ok("abc")),
            ("a-b_c", Ok("a-b_c")),
            ("abcdefghijklmnopqrst", Ok("abcdefghijklmnopqrst")),
            ("Player_1", Ok("Player_1")),
        ];
        for (text, want) in cases {
            let got = DisplayName::parse(text);
            match want {
                Ok(name) => assert_eq!(got.map(|n| n.text), Ok((*name).to_owned()), "{text}"),
                Err(e) => assert_eq!(got.as_ref().err(), Some(e), "{text}"),
            }
        }
    }

    #[test]
    fn every_look_alike_in_the_tables_conflicts() {
        for &(from, to) in LOOK_ALIKES {
            let a = format!("ab{from}cd");
            let b = format!("ab{to}cd");
            assert_eq!(skeleton(&a), skeleton(&b), "{a} and {b}");
        }
        for &(pair, to) in LOOK_ALIKE_PAIRS {
            let a = format!("a{pair}e");
            let b = format!("a{to}e");
            assert_eq!(skeleton(&a), skeleton(&b), "{a} and {b}");
        }
        // The classes named in the design, pair by pair.
        for (a, b) in [
            ("g0od", "good"),
            ("go0d", "gOOd"),
            ("pal1", "pall"),
            ("pali", "palI"),
            ("palI", "pal1"),
            ("pa5t", "past"),
            ("fi2z", "fizz"),
            ("8ob", "bob"),
            ("barn", "bam"),
            ("vvin", "win"),
            ("a-b", "a_b"),
            ("l33t", "leet"),
            ("4da", "ada"),
            ("7om", "tom"),
            ("MiXeD", "mixed"),
        ] {
            assert_eq!(skeleton(a), skeleton(b), "{a} and {b}");
        }
    }

    #[test]
    fn names_that_differ_otherwise_do_not_conflict() {
        for (a, b) in [
            ("alice", "alicf"),
            ("bob", "bab"),
            ("amy", "ann"),
            ("ab3", "ab9"),
        ] {
            assert_ne!(skeleton(a), skeleton(b), "{a} and {b}");
        }
    }

    proptest! {
        #[test]
        fn the_skeleton_is_idempotent(name in text()) {
            let once = skeleton(&name);
            prop_assert_eq!(skeleton(&once), once.clone());
        }

        #[test]
        fn a_name_conflicts_with_each_of_its_cases(name in text()) {
            prop_assert_eq!(skeleton(&name.to_ascii_uppercase()), skeleton(&name));
            prop_assert_eq!(skeleton(&name.to_ascii_lowercase()), skeleton(&name));
        }

        #[test]
        fn swapping_any_look_alike_keeps_the_skeleton(name in text(), at in any::<prop::sample::Index>()) {
            // Replace one character by another of its class (either way round).
            let chars: Vec<char> = name.chars().collect();
            let i = at.index(chars.len());
            let c = chars[i].to_ascii_lowercase();
            let swapped = LOOK_ALIKES.iter().find_map(|&(from, to)| {
                (from == c).then_some(to).or_else(|| (to == c).then_some(from))
            });
            if let Some(other) = swapped {
                let mut changed = chars.clone();
                changed[i] = other;
                let changed: String = changed.into_iter().collect();
                prop_assert_eq!(skeleton(&changed), skeleton(&name));
            }
        }

        #[test]
        fn a_valid_name_is_within_bounds_and_keeps_its_text(name in text()) {
            if let Ok(parsed) = DisplayName::parse(&name) {
                prop_assert_eq!(parsed.as_str(), name.as_str());
                prop_assert!((NAME_LEN_MIN..=NAME_LEN_MAX).contains(&name.len()));
                prop_assert_eq!(parsed.skeleton(), skeleton(&name));
                prop_assert!(name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'));
            }
        }

        #[test]
        fn nothing_outside_ascii_passes(name in "\\PC{3,20}") {
            if DisplayName::parse(&name).is_ok() {
                prop_assert!(name.chars().all(is_allowed));
            }
        }
    }
}
