//! Milliseconds since the Unix epoch as fixed-width RFC 3339 UTC text.
//!
//! Exactly one spelling is produced and accepted: `YYYY-MM-DDTHH:MM:SS.sssZ`, always
//! 24 characters, always three fractional digits and `Z`. It is what JavaScript's
//! `Date.prototype.toISOString` produces, so a browser client can render and
//! compare timestamps without a library. Being a single spelling, every valid
//! timestamp text round-trips through [`parse_timestamp`] and [`format_timestamp`].
//!
//! The civil-date arithmetic is Howard Hinnant's `days_from_civil` /
//! `civil_from_days`, restricted to 1970-01-01 through 9999-12-31.

use crate::AuthError;

const MS_PER_DAY: u64 = 86_400_000;

/// The last representable instant, `9999-12-31T23:59:59.999Z`, in milliseconds
/// since the Unix epoch.
pub const MAX_TIMESTAMP_MS: u64 = 253_402_300_799_999;

/// The length of every formatted timestamp.
const TIMESTAMP_LEN: usize = 24;

/// Formats milliseconds since the Unix epoch as `YYYY-MM-DDTHH:MM:SS.sssZ`.
///
/// # Errors
///
/// [`AuthError::InvalidTimestamp`] after [`MAX_TIMESTAMP_MS`], where a four-digit
/// year no longer suffices.
///
/// ```
/// use triad_identity::format_timestamp;
///
/// assert_eq!(format_timestamp(0).unwrap(), "1970-01-01T00:00:00.000Z");
/// assert_eq!(format_timestamp(951_782_400_123).unwrap(), "2000-02-29T00:00:00.123Z");
/// ```
pub fn format_timestamp(ms: u64) -> Result<String, AuthError> {
    if ms > MAX_TIMESTAMP_MS {
        return Err(AuthError::timestamp(format!(
            "{ms} ms is after 9999-12-31T23:59:59.999Z"
        )));
    }
    let (year, month, day) = civil_from_days(ms / MS_PER_DAY);
    let ms_of_day = ms % MS_PER_DAY;
    let hour = ms_of_day / 3_600_000;
    let minute = ms_of_day / 60_000 % 60;
    let second = ms_of_day / 1_000 % 60;
    let milli = ms_of_day % 1_000;
    Ok(format!(
        "{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.{milli:03}Z"
    ))
}

/// Parses `YYYY-MM-DDTHH:MM:SS.sssZ` (exactly that form, UTC, 1970 to 9999) into
/// milliseconds since the Unix epoch.
///
/// # Errors
///
/// [`AuthError::InvalidTimestamp`] for any other spelling or an impossible date
/// such as `2023-02-29`. Leap seconds (`:60`) are refused, as in most systems.
pub fn parse_timestamp(text: &str) -> Result<u64, AuthError> {
    let invalid = || {
        AuthError::timestamp(format!(
            "{text:?} is not a UTC time written as YYYY-MM-DDTHH:MM:SS.sssZ"
        ))
    };
    let bytes = text.as_bytes();
    if bytes.len() != TIMESTAMP_LEN {
        return Err(invalid());
    }
    for (index, &byte) in bytes.iter().enumerate() {
        let expected_separator = match index {
            4 | 7 => Some(b'-'),
            10 => Some(b'T'),
            13 | 16 => Some(b':'),
            19 => Some(b'.'),
            23 => Some(b'Z'),
            _ => None,
        };
        let ok = match expected_separator {
            Some(separator) => byte == separator,
            None => byte.is_ascii_digit(),
        };
        if !ok {
            return Err(invalid());
        }
    }
    let number = |range: std::ops::Range<usize>| {
        bytes[range]
            .iter()
            .fold(0_u64, |acc, &digit| acc * 10 + u64::from(digit - b'0'))
    };
    let (year, month, day) = (number(0..4), number(5..7), number(8..10));
    let (hour, minute, second, milli) = (
        number(11..13),
        number(14..16),
        number(17..19),
        number(20..23),
    );
    if year < 1970 {
        return Err(AuthError::timestamp(format!(
            "{text:?} is before 1970-01-01T00:00:00.000Z"
        )));
    }
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return Err(AuthError::timestamp(format!(
            "{text:?} is not a calendar date"
        )));
    }
    if hour > 23 || minute > 59 || second > 59 {
        return Err(AuthError::timestamp(format!(
            "{text:?} is not a time of day"
        )));
    }
    let days = days_from_civil(year, month, day);
    Ok(days * MS_PER_DAY + hour * 3_600_000 + minute * 60_000 + second * 1_000 + milli)
}

fn is_leap_year(year: u64) -> bool {
    year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400))
}

fn days_in_month(year: u64, month: u64) -> u64 {
    match month {
        2 if is_leap_year(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a date in 1970..=9999 (month 1..=12, day valid).
fn days_from_civil(year: u64, month: u64, day: u64) -> u64 {
    // Count years from March, so that the leap day is the last day of the year.
    let year = if month <= 2 { year - 1 } else { year };
    let era = year / 400;
    let year_of_era = year % 400;
    let month_from_march = (month + 9) % 12;
    let day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    // 719_468 days separate 0000-03-01 from 1970-01-01.
    era * 146_097 + day_of_era - 719_468
}

/// The date `days` after 1970-01-01, as (year, month, day).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let days = days + 719_468;
    let era = days / 146_097;
    let day_of_era = days % 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = era * 400 + year_of_era + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_instants() {
        for (ms, text) in [
            (0, "1970-01-01T00:00:00.000Z"),
            (1, "1970-01-01T00:00:00.001Z"),
            (86_399_999, "1970-01-01T23:59:59.999Z"),
            (951_782_400_000, "2000-02-29T00:00:00.000Z"),
            (1_709_164_800_000, "2024-02-29T00:00:00.000Z"),
            (4_107_542_400_000, "2100-03-01T00:00:00.000Z"),
            (MAX_TIMESTAMP_MS, "9999-12-31T23:59:59.999Z"),
        ] {
            assert_eq!(format_timestamp(ms).unwrap(), text);
            assert_eq!(parse_timestamp(text), Ok(ms), "{text}");
        }
    }

    #[test]
    fn every_day_of_four_centuries_round_trips() {
        // 1970-01-01 plus 146_097 days covers every case of the leap-year rule.
        let mut previous = None;
        for day in 0..146_097 + 400 {
            let (year, month, date) = civil_from_days(day);
            assert_eq!(days_from_civil(year, month, date), day);
            assert!(date >= 1 && date <= days_in_month(year, month));
            if let Some((py, pm, pd)) = previous {
                assert!((year, month, date) > (py, pm, pd), "dates must increase");
            }
            previous = Some((year, month, date));
        }
    }

    #[test]
    fn only_the_one_spelling_is_accepted() {
        for text in [
            "",
            "1970-01-01T00:00:00Z",
            "1970-01-01T00:00:00.0Z",
            "1970-01-01T00:00:00.000+00:00",
            "1970-01-01t00:00:00.000Z",
            "1970-01-01 00:00:00.000Z",
            "1970-01-01T00:00:00.000z",
            "+1970-01-01T00:00:00.00Z",
            "1970-1-01T00:00:00.0000Z",
            "1969-12-31T23:59:59.999Z",
            "1970-00-01T00:00:00.000Z",
            "1970-13-01T00:00:00.000Z",
            "1970-01-00T00:00:00.000Z",
            "1970-01-32T00:00:00.000Z",
            "2023-02-29T00:00:00.000Z",
            "2100-02-29T00:00:00.000Z",
            "1970-04-31T00:00:00.000Z",
            "1970-01-01T24:00:00.000Z",
            "1970-01-01T00:60:00.000Z",
            "1970-01-01T00:00:60.000Z",
            "1970-01-01T00:00:00.00éZ",
        ] {
            let err = parse_timestamp(text).unwrap_err();
            assert_eq!(err.code(), "invalid_timestamp", "{text:?}");
        }
        assert!(parse_timestamp("2000-02-29T00:00:00.000Z").is_ok());
    }

    #[test]
    fn formatting_refuses_five_digit_years() {
        assert!(format_timestamp(MAX_TIMESTAMP_MS + 1).is_err());
        assert!(format_timestamp(u64::MAX).is_err());
    }
}
