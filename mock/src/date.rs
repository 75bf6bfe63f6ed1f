//! The mock's clock arithmetic: civil dates of Unix days, and HTTP dates
//! (RFC 9110 section 5.6.7) parsed and written, so the tile server's
//! `Last-Modified` and its answers to `If-Modified-Since` do not go through
//! the library under test.
//!
//! Written: IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the only form
//! senders may use and the one every client of the mock (the library's tile
//! cache, which sends back the `Last-Modified` it got; browsers) sends.
//! Read: that and the two obsolete forms recipients must still accept,
//! RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime
//! (`Sun Nov  6 08:49:37 1994`).

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];
const DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
const LONG_DAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

/// A calendar date (proleptic Gregorian): year, month 1-12, day 1-31.
pub(crate) type Civil = (i64, i64, i64);

/// The date `days` days after 1970-01-01 (H. Hinnant's `civil_from_days`).
pub(crate) fn civil_from_days(days: i64) -> Civil {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

/// Days from 1970-01-01 to `date` (H. Hinnant's `days_from_civil`).
fn days_from_civil((year, month, day): Civil) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The current year (UTC), by the system clock.
pub(crate) fn this_year() -> i64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    civil_from_days((now.as_secs() / 86_400) as i64).0
}

/// The IMF-fixdate of `seconds` since 1970-01-01 00:00:00 UTC.
pub(crate) fn http_date(seconds: i64) -> String {
    let days = seconds.div_euclid(86_400);
    let secs = seconds.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    // 1970-01-01 was a Thursday (index 3 from Monday).
    let weekday = DAYS[(days + 3).rem_euclid(7) as usize];
    format!(
        "{weekday}, {day:02} {} {year:04} {:02}:{:02}:{:02} GMT",
        MONTHS[month as usize - 1],
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// Seconds since 1970-01-01 00:00:00 UTC of an HTTP date in any of its
/// three forms; `None` when `text` is none of them. A two-digit RFC 850
/// year is read in the century that puts it at most 50 years after
/// `this_year` (RFC 9110: a date more than 50 years ahead is in the past).
pub(crate) fn parse_http_date(text: &str, this_year: i64) -> Option<i64> {
    let fields: Vec<&str> = text.split_whitespace().collect();
    let (weekday, date, time) = match fields.as_slice() {
        // IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`.
        [weekday, day, month, year, time, "GMT"] if weekday.ends_with(',') => {
            let weekday = DAYS.contains(&weekday.trim_end_matches(','));
            (weekday, fields_of(day, month, year, 4)?, *time)
        }
        // RFC 850: `Sunday, 06-Nov-94 08:49:37 GMT`.
        [weekday, date, time, "GMT"] if weekday.ends_with(',') => {
            let weekday = LONG_DAYS.contains(&weekday.trim_end_matches(','));
            let [day, month, year] = date.split('-').collect::<Vec<_>>()[..] else {
                return None;
            };
            let (yy, month, day) = fields_of(day, month, year, 2)?;
            let mut year = this_year - this_year.rem_euclid(100) + yy;
            if year > this_year + 50 {
                year -= 100;
            }
            (weekday, (year, month, day), *time)
        }
        // asctime: `Sun Nov  6 08:49:37 1994` (day space-padded).
        [weekday, month, day, time, year] => (
            DAYS.contains(weekday),
            fields_of(day, month, year, 4)?,
            *time,
        ),
        _ => return None,
    };
    let (h, m, s) = clock(time)?;
    let exists = date.2 <= month_length(date.0, date.1);
    (weekday && exists).then(|| days_from_civil(date) * 86_400 + h * 3600 + m * 60 + s)
}

/// The year, month and day of a day (1 to 31), month name and year of
/// `year_digits` digits.
fn fields_of(day: &str, month: &str, year: &str, year_digits: usize) -> Option<Civil> {
    let month = MONTHS.iter().position(|m| *m == month)? as i64 + 1;
    let day = digits(day, 1..=2).filter(|d| (1..=31).contains(d))?;
    Some((digits(year, year_digits..=year_digits)?, month, day))
}

/// The days of `month` in `year`.
fn month_length(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// `hh:mm:ss`, each of two digits (a leap second, `:60`, allowed).
fn clock(time: &str) -> Option<(i64, i64, i64)> {
    let [h, m, s] = time.split(':').collect::<Vec<_>>()[..] else {
        return None;
    };
    let (h, m, s) = (digits(h, 2..=2)?, digits(m, 2..=2)?, digits(s, 2..=2)?);
    (h <= 23 && m <= 59 && s <= 60).then_some((h, m, s))
}

/// The number written with a count of ASCII digits in `count`, nothing else.
fn digits(text: &str, count: std::ops::RangeInclusive<usize>) -> Option<i64> {
    let all = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    (all && count.contains(&text.len()))
        .then(|| text.parse().ok())
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 9110's example instant, in seconds since 1970 (GNU date:
    /// `date -u -d '1994-11-06 08:49:37' +%s`).
    const EXAMPLE: i64 = 784_111_777;

    #[test]
    fn the_three_forms_of_rfc_9110s_example_read_the_same() {
        for text in [
            "Sun, 06 Nov 1994 08:49:37 GMT",
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
        ] {
            assert_eq!(parse_http_date(text, 2026), Some(EXAMPLE), "{text}");
        }
        assert_eq!(http_date(EXAMPLE), "Sun, 06 Nov 1994 08:49:37 GMT");
    }

    /// Seconds from GNU date (`date -u -d '2000-02-29 00:00:00' +%s`).
    #[test]
    fn dates_are_written_and_read_back() {
        for (seconds, text) in [
            (0, "Thu, 01 Jan 1970 00:00:00 GMT"),
            (951_782_400, "Tue, 29 Feb 2000 00:00:00 GMT"),
            (4_102_444_799, "Thu, 31 Dec 2099 23:59:59 GMT"),
        ] {
            assert_eq!(http_date(seconds), text);
            assert_eq!(parse_http_date(text, 2026), Some(seconds));
        }
    }

    #[test]
    fn a_two_digit_year_is_at_most_50_years_ahead() {
        let year_of = |text: &str, this_year| {
            civil_from_days(parse_http_date(text, this_year).unwrap().div_euclid(86_400)).0
        };
        assert_eq!(year_of("Friday, 06-Nov-76 08:49:37 GMT", 2026), 2076);
        assert_eq!(year_of("Sunday, 06-Nov-77 08:49:37 GMT", 2026), 1977);
        assert_eq!(year_of("Friday, 06-Nov-26 08:49:37 GMT", 2026), 2026);
    }

    #[test]
    fn what_is_not_an_http_date_is_none() {
        for text in [
            "",
            "not a date",
            "Sun, 06 Nov 1994 08:49:37 UTC",
            "Sun, 31 Nov 1994 08:49:37 GMT",
            "Thu, 29 Feb 1900 08:49:37 GMT",
            "Saturday, 29-Feb-97 08:49:37 GMT",
            "Sun, 06 Nov 1994 24:00:00 GMT",
            "Sun, 06 Nov 94 08:49:37 GMT",
            "Sun, 06 Nov +994 08:49:37 GMT",
            "Sun, 6 Nov 1994 8:49:37 GMT",
            "Dim, 06 Nov 1994 08:49:37 GMT",
            "Sun, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 94",
            "1994-11-06T08:49:37Z",
        ] {
            assert_eq!(parse_http_date(text, 2026), None, "{text}");
        }
    }
}
