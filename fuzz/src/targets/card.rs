//! The card reader and the linter on any bytes: [`Document::parse`] within the default
//! limits, the strict reader ([`AgentCard::from_slice`], [`AgentCard::from_json`]), the lenient
//! one, [`Profile::detect`], [`convert`] to every profile, and [`lint_document`] (default,
//! strict, lenient). A card the strict reader takes, rendered in any profile, reads back.

use a2a_card::AgentCard;
use a2a_card::lint::{LintOptions, lint, lint_document};
use a2a_card::wire::{Document, Profile, ReadLimits, RenderOptions, convert, from_value_lenient};

/// Bytes read as a card and linted.
pub fn card(data: &[u8]) {
    let strict = AgentCard::from_slice(data);
    crate::feedback(if strict.is_ok() { "card" } else { "no card" });
    let document = match Document::parse(data, ReadLimits::default()) {
        Ok(document) => document,
        Err(e) => {
            crate::feedback(&e.to_string());
            return;
        }
    };
    let value = &document.value;
    let profile = Profile::detect(value);
    crate::feedback(&format!("{profile:?}"));
    let (_lenient, issues) = from_value_lenient(value);
    crate::feedback(&issues.len().min(4).to_string());
    for options in [
        LintOptions::default(),
        LintOptions::default().strict(true),
        LintOptions::default().lenient(true),
    ] {
        for finding in lint_document(&document, &options) {
            crate::feedback(finding.rule.code());
        }
    }
    for to in Profile::ALL {
        match convert(value, &RenderOptions::new(to)) {
            Ok(done) => crate::feedback(&format!("converted {}", done.notes.len().min(4))),
            Err(e) => crate::feedback(&e.to_string().chars().take(40).collect::<String>()),
        }
    }
    if let Ok(card) = AgentCard::from_json(value) {
        for to in Profile::ALL {
            let rendered = card.to_json(to);
            if let Err(e) = AgentCard::from_json(&rendered) {
                panic!(
                    "a card read strictly, rendered as {to:?}, does not read back: {e}\n{rendered}"
                );
            }
            let _ = lint(&card, to);
        }
    }
}

/// The example agents' cards (Fight Club, the trip planner), in every profile.
pub fn seeds() -> Vec<Vec<u8>> {
    use a2a_card::server::Server;
    use examples::fight_club::agent::FightClub;
    use examples::trip_planner::agent::TripPlanner;
    let cards = [
        Server::new(FightClub).card(),
        Server::new(TripPlanner {
            pace: std::time::Duration::ZERO,
        })
        .card(),
    ];
    cards
        .into_iter()
        .flatten()
        .flat_map(|card| Profile::ALL.map(|p| card.to_json(p).to_string().into_bytes()))
        .collect()
}
