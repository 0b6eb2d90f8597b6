//! A trip planner: the agent of `cargo run --example trip_planner`, deterministic (no model, no
//! network), showing what a skill can do besides answering once: it streams an itinerary day
//! by day, reports progress, asks for a missing date, takes an attached calendar, returns a
//! file, and can be cancelled mid-plan.

use std::time::Duration;

use a2a_card::{File, Schema, SkillContext, agent, skill};
use futures::Stream;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A trip to plan.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, Schema)]
#[serde(deny_unknown_fields)]
pub struct TripRequest {
    /// Where to go
    pub destination: String,
    /// How many days (1 to 14)
    #[schemars(range(min = 1, max = 14))]
    pub days: u8,
    /// The first day, as YYYY-MM-DD; asked for when missing
    #[serde(default)]
    pub start_date: Option<String>,
}

/// One day of an itinerary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Schema)]
#[serde(deny_unknown_fields)]
pub struct ItineraryDay {
    /// The day's number, from 1
    pub day: u8,
    /// The date, YYYY-MM-DD
    pub date: String,
    /// What to do that day
    pub plan: String,
}

/// A trip to export as a calendar.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, Schema)]
#[serde(deny_unknown_fields)]
pub struct CalendarRequest {
    /// Where the trip goes
    pub destination: String,
    /// The first day, as YYYY-MM-DD
    pub start_date: String,
    /// How many days (1 to 14)
    #[schemars(range(min = 1, max = 14))]
    pub days: u8,
}

/// The trip planner; `pace` is the time it takes to plan each day.
pub struct TripPlanner {
    pub pace: Duration,
}

/// Plans trips day by day: streams the itinerary as it is planned, asks for the start date when
/// it is missing, reads an attached calendar of busy days, and exports trips as iCalendar files.
#[agent(
    url(env = "TRIP_PLANNER_URL", default = "http://127.0.0.1:8081"),
    push_notifications
)]
impl TripPlanner {
    /// # Plan Trip
    /// Plans a trip day by day and streams the itinerary as each day is planned. Asks for the
    /// start date when the request has none; days marked busy in an attached calendar
    /// (`text/calendar`, one `DTSTART;VALUE=DATE:YYYYMMDD` per busy day) are kept free.
    #[skill(
        durable,
        tags("travel", "itinerary"),
        examples(r#"{"destination": "Lisbon", "days": 3, "start_date": "2026-12-01"}"#),
        input_modes("text/calendar")
    )]
    pub async fn plan_trip(
        &self,
        trip: TripRequest,
        calendar: Option<File>,
        ctx: SkillContext,
    ) -> impl Stream<Item = Result<ItineraryDay, String>> + Send {
        ctx.progress(format!(
            "Planning {} days in {}",
            trip.days, trip.destination
        ))
        .await;
        let start = match trip.start_date {
            Some(date) => Ok(date),
            None => match ctx.ask("Which day do you leave? (YYYY-MM-DD)").await {
                Ok(answer) => Ok(answer.text().trim().to_owned()),
                Err(e) => Err(e.to_string()),
            },
        };
        let start = start.and_then(|s| {
            parse_date(&s).ok_or_else(|| format!("`{s}` is not a date of the form YYYY-MM-DD"))
        });
        let busy = calendar.as_ref().map(busy_days).unwrap_or_default();
        if !busy.is_empty() {
            ctx.progress(format!("Keeping {} busy day(s) free", busy.len()))
                .await;
        }
        let (pace, destination, days) = (self.pace, trip.destination, trip.days);
        futures::stream::unfold(Some((1u8, start)), move |state| {
            let (destination, busy) = (destination.clone(), busy.clone());
            async move {
                let (day, start) = state?;
                let start = match start {
                    Ok(start) => start,
                    // The date was not usable: one failed item ends the plan (and fails the task).
                    Err(e) => return Some((Err(e), None)),
                };
                if day > days {
                    return None;
                }
                tokio::time::sleep(pace).await;
                let date = start + i64::from(day - 1);
                let plan = if busy.contains(&date) {
                    "Kept free: busy in your calendar".to_owned()
                } else {
                    activity(&destination, day)
                };
                let item = ItineraryDay {
                    day,
                    date: format_date(date),
                    plan,
                };
                // After day 255 (a `days` the schema does not allow) the plan ends.
                let next = day.checked_add(1).map(|next| (next, Ok(start)));
                Some((Ok(item), next))
            }
        })
    }

    /// Exports a trip as an iCalendar file (`text/calendar`), one all-day event per day.
    #[skill(
        tags("travel", "calendar"),
        examples(r#"{"destination": "Lisbon", "start_date": "2026-12-01", "days": 2}"#),
        output_modes("text/calendar")
    )]
    pub fn export_calendar(&self, trip: CalendarRequest) -> Result<File, String> {
        let start = parse_date(&trip.start_date)
            .ok_or_else(|| format!("`{}` is not a date of the form YYYY-MM-DD", trip.start_date))?;
        let mut ics = String::from(
            "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//a2a-card//trip-planner//EN\r\n",
        );
        for day in 0..i64::from(trip.days) {
            let date = format_date(start + day).replace('-', "");
            ics.push_str(&format!(
                "BEGIN:VEVENT\r\nUID:{date}-{n}@trip-planner\r\nDTSTART;VALUE=DATE:{date}\r\nSUMMARY:{} day {n}\r\nEND:VEVENT\r\n",
                trip.destination,
                n = day + 1
            ));
        }
        ics.push_str("END:VCALENDAR\r\n");
        Ok(File::from_bytes("text/calendar", ics.into_bytes()).with_name("trip.ics"))
    }
}

/// What to do on day `day` at `destination` (the same every time).
fn activity(destination: &str, day: u8) -> String {
    const IDEAS: [&str; 5] = [
        "Walk the old town and find lunch near the main square",
        "Visit the best-known museum, then a long dinner",
        "Take a day trip to the coast",
        "Markets in the morning, a park in the afternoon",
        "A slow day: cafés, a bookshop, and the view at sunset",
    ];
    format!(
        "{destination}: {}",
        IDEAS[usize::from(day - 1) % IDEAS.len()]
    )
}

/// The busy days of an iCalendar file: its `DTSTART;VALUE=DATE:YYYYMMDD` lines. A value that
/// is not eight ASCII digits (or not a date) is skipped: the file is the caller's, any text.
pub fn busy_days(file: &File) -> Vec<i64> {
    let text = String::from_utf8_lossy(file.bytes().unwrap_or_default());
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("DTSTART;VALUE=DATE:"))
        .filter_map(|d| {
            let d = d.trim();
            // Eight ASCII digits are eight bytes, so the slices below fall on characters.
            let digits = d.len() == 8 && d.bytes().all(|b| b.is_ascii_digit());
            digits.then(|| format!("{}-{}-{}", &d[..4], &d[4..6], &d[6..]))
        })
        .filter_map(|d| parse_date(&d))
        .collect()
}

/// `YYYY-MM-DD` as days since 1970-01-01.
pub fn parse_date(s: &str) -> Option<i64> {
    let mut it = s.trim().splitn(3, '-');
    let (y, m, d) = (it.next()?, it.next()?, it.next()?);
    if y.len() != 4 || m.len() != 2 || d.len() != 2 {
        return None;
    }
    let (y, m, d): (i64, i64, i64) = (y.parse().ok()?, m.parse().ok()?, d.parse().ok()?);
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let month_days = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if !(1..=12).contains(&m) || d < 1 || d > month_days[(m - 1) as usize] {
        return None;
    }
    // Days from civil (proleptic Gregorian), counting years from March.
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Some(era * 146_097 + doe - 719_468)
}

/// Days since 1970-01-01 as `YYYY-MM-DD`.
pub fn format_date(days: i64) -> String {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}
