//! The mutations: byte-level (bit flips, byte insertion and deletion, interesting values,
//! truncation, splicing two inputs) and JSON-aware (a value replaced by one of another type, a
//! key removed or added, an array item duplicated, a string stretched), driven by a small
//! seeded generator so that a run with the same seed makes the same inputs.

use serde_json::{Map, Value};

/// The largest input made.
pub const MAX_LEN: usize = 64 * 1024;

/// A small, fast, seeded generator (SplitMix64).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }

    /// True one time in `n`.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    /// Some item of `items` (none when empty).
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        items.get(self.below(items.len()))
    }
}

/// Bytes that often matter to a JSON or HTTP decoder.
const INTERESTING_BYTES: &[u8] = b"\0\x01\x7f\x80\xff\"\\{}[],:-+.eE0123456789 \t\r\n/ntfu";

/// Tokens worth inserting anywhere.
const TOKENS: &[&str] = &[
    "null",
    "true",
    "false",
    "0",
    "-0",
    "-1",
    "1e309",
    "-1e309",
    "1.5",
    "18446744073709551616",
    "-9223372036854775809",
    "9007199254740993",
    "\"\"",
    "{}",
    "[]",
    "\"\\u0000\"",
    "\"\\ud800\"",
    "\"\\udfff\\ud800\"",
    "\u{feff}",
    "\u{10ffff}",
    "\"\u{202e}\"",
    "\"%00\"",
    "\"../../\"",
    "\"data:text/plain;base64,AAAA\"",
    "\"http://127.0.0.1:1/\"",
    "\"https://[::1]/\"",
    "\"file:///etc/passwd\"",
    "\"application/json;schema=\"",
    "\"TASK_STATE_WORKING\"",
    "\"ROLE_USER\"",
    "\"2026-12-01\"",
];

/// Keys of the protocol's objects, for JSON-aware insertions.
const KEYS: &[&str] = &[
    "jsonrpc",
    "id",
    "method",
    "params",
    "message",
    "messageId",
    "role",
    "parts",
    "text",
    "data",
    "raw",
    "url",
    "file",
    "mediaType",
    "filename",
    "metadata",
    "extensions",
    "taskId",
    "contextId",
    "referenceTaskIds",
    "configuration",
    "blocking",
    "returnImmediately",
    "historyLength",
    "acceptedOutputModes",
    "pushNotificationConfig",
    "taskPushNotificationConfig",
    "authentication",
    "scheme",
    "schemes",
    "credentials",
    "token",
    "tenant",
    "pageSize",
    "pageToken",
    "status",
    "state",
    "kind",
    "bytes",
    "uri",
    "mimeType",
    "name",
    "arguments",
    "protocolVersion",
    "capabilities",
    "clientInfo",
    "skills",
    "supportedInterfaces",
    "securitySchemes",
    "securityRequirements",
    "signatures",
    "protected",
    "signature",
    "header",
    "schemas",
    "begin",
    "step",
    "started",
    "sleep",
    "answer",
    "patched",
    "call",
    "returned",
    "value",
    "journal",
    "events",
    "task",
];

/// Mutates `data` in place with one to four stacked mutations; `others` are the corpus's
/// inputs (for splicing) and `words` the strings found in them (a dictionary).
pub fn mutate(rng: &mut Rng, data: &mut Vec<u8>, others: &[Vec<u8>], words: &[String]) {
    let rounds = 1 + rng.below(4);
    // Half the inputs change by JSON-aware mutations only, so that they stay JSON and reach
    // past the parser.
    let json_only = rng.one_in(2);
    for _ in 0..rounds {
        match if json_only { 0 } else { rng.below(16) } {
            0..=4 => json_mutation(rng, data, words),
            5 => flip_bit(rng, data),
            6 => set_byte(rng, data),
            7 => insert_bytes(rng, data),
            8 => delete_range(rng, data),
            9 => duplicate_range(rng, data),
            10 => insert_token(rng, data, words),
            11 => truncate(rng, data),
            12 => splice(rng, data, others),
            13 => arithmetic(rng, data),
            14 => overwrite_token(rng, data, words),
            _ => swap_ranges(rng, data),
        }
    }
    data.truncate(MAX_LEN);
}

fn flip_bit(rng: &mut Rng, data: &mut [u8]) {
    if !data.is_empty() {
        let i = rng.below(data.len());
        data[i] ^= 1 << rng.below(8);
    }
}

fn set_byte(rng: &mut Rng, data: &mut [u8]) {
    if !data.is_empty() {
        let i = rng.below(data.len());
        data[i] = if rng.one_in(2) {
            INTERESTING_BYTES[rng.below(INTERESTING_BYTES.len())]
        } else {
            rng.next_u64() as u8
        };
    }
}

fn insert_bytes(rng: &mut Rng, data: &mut Vec<u8>) {
    let at = rng.below(data.len() + 1);
    let n = 1 + rng.below(8);
    let byte = INTERESTING_BYTES[rng.below(INTERESTING_BYTES.len())];
    let fill: Vec<u8> = if rng.one_in(2) {
        vec![byte; n]
    } else {
        (0..n).map(|_| rng.next_u64() as u8).collect()
    };
    data.splice(at..at, fill);
}

fn delete_range(rng: &mut Rng, data: &mut Vec<u8>) {
    if data.is_empty() {
        return;
    }
    let at = rng.below(data.len());
    let n = 1 + rng.below((data.len() - at).min(32));
    data.drain(at..at + n);
}

fn duplicate_range(rng: &mut Rng, data: &mut Vec<u8>) {
    if data.is_empty() {
        return;
    }
    let at = rng.below(data.len());
    let n = 1 + rng.below((data.len() - at).min(64));
    let copy = data[at..at + n].to_vec();
    let to = rng.below(data.len() + 1);
    let times = if rng.one_in(8) { 1 + rng.below(64) } else { 1 };
    for _ in 0..times {
        if data.len() + copy.len() > MAX_LEN {
            break;
        }
        data.splice(to..to, copy.iter().copied());
    }
}

/// A token, or a word of the dictionary quoted.
fn token(rng: &mut Rng, words: &[String]) -> String {
    match rng.pick(words) {
        Some(word) if rng.one_in(2) => Value::String(word.clone()).to_string(),
        _ => TOKENS[rng.below(TOKENS.len())].to_owned(),
    }
}

fn insert_token(rng: &mut Rng, data: &mut Vec<u8>, words: &[String]) {
    let at = rng.below(data.len() + 1);
    let token = token(rng, words);
    data.splice(at..at, token.into_bytes());
}

fn overwrite_token(rng: &mut Rng, data: &mut Vec<u8>, words: &[String]) {
    if data.is_empty() {
        return;
    }
    let at = rng.below(data.len());
    let token = token(rng, words).into_bytes();
    let end = (at + token.len()).min(data.len());
    data.splice(at..end, token);
}

fn truncate(rng: &mut Rng, data: &mut Vec<u8>) {
    let n = rng.below(data.len() + 1);
    data.truncate(n);
}

fn splice(rng: &mut Rng, data: &mut Vec<u8>, others: &[Vec<u8>]) {
    let Some(other) = rng.pick(others) else {
        return;
    };
    let cut = rng.below(data.len() + 1);
    let from = rng.below(other.len() + 1);
    data.truncate(cut);
    data.extend_from_slice(&other[from..]);
}

fn arithmetic(rng: &mut Rng, data: &mut [u8]) {
    // A digit run changed by a small amount, or to an edge.
    let digits: Vec<usize> = (0..data.len())
        .filter(|i| data[*i].is_ascii_digit())
        .collect();
    if let Some(&i) = rng.pick(&digits) {
        data[i] = b'0' + rng.below(10) as u8;
    }
}

fn swap_ranges(rng: &mut Rng, data: &mut [u8]) {
    if data.len() < 2 {
        return;
    }
    let a = rng.below(data.len());
    let b = rng.below(data.len());
    data.swap(a, b);
}

/// A JSON-aware mutation of `data` when it is JSON (one value replaced, removed, added or
/// stretched), a byte-level one otherwise.
fn json_mutation(rng: &mut Rng, data: &mut Vec<u8>, words: &[String]) {
    // The first line may be a header (a route): the JSON is what follows it, when it is JSON.
    let (head, body) = match serde_json::from_slice::<Value>(data) {
        Ok(value) => (Vec::new(), value),
        Err(_) => {
            let Some(nl) = data.iter().position(|b| *b == b'\n') else {
                return insert_token(rng, data, words);
            };
            match serde_json::from_slice::<Value>(&data[nl + 1..]) {
                Ok(value) => (data[..=nl].to_vec(), value),
                Err(_) => return insert_token(rng, data, words),
            }
        }
    };
    let mut value = body;
    let mut count = 0;
    count_nodes(&value, &mut count);
    let target = rng.below(count);
    let mut seen = 0;
    mutate_node(rng, &mut value, target, &mut seen, words);
    let mut out = head;
    let written = if rng.one_in(4) {
        serde_json::to_vec_pretty(&value)
    } else {
        serde_json::to_vec(&value)
    };
    if let Ok(bytes) = written {
        out.extend_from_slice(&bytes);
        *data = out;
    }
}

fn count_nodes(value: &Value, count: &mut usize) {
    *count += 1;
    match value {
        Value::Array(items) => items.iter().for_each(|v| count_nodes(v, count)),
        Value::Object(map) => map.values().for_each(|v| count_nodes(v, count)),
        _ => {}
    }
}

/// Mutates the `target`-th node (pre-order) of `value`.
fn mutate_node(
    rng: &mut Rng,
    value: &mut Value,
    target: usize,
    seen: &mut usize,
    words: &[String],
) {
    if *seen == target {
        *seen += 1;
        change(rng, value, words);
        return;
    }
    *seen += 1;
    match value {
        Value::Array(items) => {
            for item in items {
                if *seen > target {
                    return;
                }
                mutate_node(rng, item, target, seen, words);
            }
        }
        Value::Object(map) => {
            for (_, item) in map.iter_mut() {
                if *seen > target {
                    return;
                }
                mutate_node(rng, item, target, seen, words);
            }
        }
        _ => {}
    }
}

/// Any JSON value, small, made of the dictionary's words and edge values.
pub fn any_value(rng: &mut Rng, words: &[String], depth: usize) -> Value {
    let kinds = if depth == 0 { 6 } else { 8 };
    match rng.below(kinds) {
        0 => Value::Null,
        1 => Value::Bool(rng.one_in(2)),
        2 => {
            let edges = [
                0i64,
                -1,
                1,
                i64::MAX,
                i64::MIN,
                255,
                256,
                65_536,
                u32::MAX as i64,
            ];
            Value::from(edges[rng.below(edges.len())])
        }
        3 => match rng.below(3) {
            0 => Value::from(u64::MAX),
            1 => Value::from(0.5f64),
            _ => Value::from(-1e300f64),
        },
        4 => Value::String(match rng.pick(words) {
            Some(w) if rng.one_in(2) => w.clone(),
            _ => {
                let n = rng.below(12);
                (0..n)
                    .map(|_| char::from_u32(rng.below(0x3000) as u32).unwrap_or('?'))
                    .collect()
            }
        }),
        5 => Value::String("x".repeat(rng.below(4096))),
        6 => Value::Array(
            (0..rng.below(4))
                .map(|_| any_value(rng, words, depth - 1))
                .collect(),
        ),
        _ => {
            let mut map = Map::new();
            for _ in 0..rng.below(4) {
                let key = KEYS[rng.below(KEYS.len())].to_owned();
                map.insert(key, any_value(rng, words, depth - 1));
            }
            Value::Object(map)
        }
    }
}

/// One change to `value` itself.
fn change(rng: &mut Rng, value: &mut Value, words: &[String]) {
    match value {
        Value::Object(map) if !map.is_empty() && rng.one_in(3) => {
            let i = rng.below(map.len());
            let Some(key) = map.keys().nth(i).cloned() else {
                return;
            };
            if rng.one_in(2) {
                map.remove(&key);
            } else if let Some(v) = map.get(&key).cloned() {
                // The same value under another key (a key of the protocol, or a case change).
                let other = if rng.one_in(2) {
                    KEYS[rng.below(KEYS.len())].to_owned()
                } else {
                    key.to_uppercase()
                };
                map.insert(other, v);
            }
        }
        Value::Object(map) if rng.one_in(2) => {
            let key = KEYS[rng.below(KEYS.len())].to_owned();
            map.insert(key, any_value(rng, words, 2));
        }
        Value::Array(items) if !items.is_empty() && rng.one_in(2) => {
            let i = rng.below(items.len());
            if rng.one_in(2) {
                items.remove(i);
            } else {
                let copy = items[i].clone();
                let times = if rng.one_in(8) { 100 } else { 1 };
                for _ in 0..times {
                    items.push(copy.clone());
                }
            }
        }
        Value::String(s) if rng.one_in(2) => match rng.below(4) {
            0 => s.push_str(&s.clone()),
            1 => s.clear(),
            2 => {
                let cut = s.char_indices().nth(rng.below(s.chars().count() + 1));
                if let Some((at, _)) = cut {
                    s.truncate(at);
                }
            }
            _ => s.push(char::from_u32(rng.below(0x11_0000) as u32).unwrap_or('\u{fffd}')),
        },
        Value::Number(_) if rng.one_in(2) => {
            *value = any_value(rng, words, 0);
        }
        _ => {
            // A value of another type (or a wrapped one).
            *value = if rng.one_in(4) {
                Value::Array(vec![value.take()])
            } else {
                any_value(rng, words, 2)
            };
        }
    }
}

/// The strings of a corpus (its JSON keys and string values), for the dictionary.
pub fn dictionary(corpus: &[Vec<u8>]) -> Vec<String> {
    let mut words = std::collections::BTreeSet::new();
    for input in corpus {
        let json = serde_json::from_slice::<Value>(input).ok().or_else(|| {
            let nl = input.iter().position(|b| *b == b'\n')?;
            serde_json::from_slice(&input[nl + 1..]).ok()
        });
        if let Some(value) = json {
            collect(&value, &mut words);
        }
    }
    words.into_iter().filter(|w| w.len() <= 256).collect()
}

fn collect(value: &Value, words: &mut std::collections::BTreeSet<String>) {
    match value {
        Value::String(s) => {
            words.insert(s.clone());
        }
        Value::Array(items) => items.iter().for_each(|v| collect(v, words)),
        Value::Object(map) => {
            for (k, v) in map {
                words.insert(k.clone());
                collect(v, words);
            }
        }
        _ => {}
    }
}
