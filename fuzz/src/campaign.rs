//! The mutation loop ([`fuzz`]): from a target's corpus, inputs mutated and run, those with an
//! outcome not seen before kept, a panic's input written under `fuzz/crashes/`.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::mutate::{Rng, dictionary, mutate};
use crate::runner::{Panicked, check_alive, fnv1a, run_one};
use crate::targets::Target;

/// The crate's folder (the corpus and the crashes are under it).
pub const HERE: &str = env!("CARGO_MANIFEST_DIR");

/// How often progress is printed.
pub const PROGRESS_EVERY: Duration = Duration::from_secs(5);

/// How many inputs between two checks that the agent still serves.
pub const ALIVE_EVERY: u64 = 2_000;

/// The most inputs kept in memory.
pub const MAX_CORPUS: usize = 4_096;

/// What a run of one target did.
pub struct Summary {
    /// The target.
    pub target: &'static str,
    /// Inputs run.
    pub execs: u64,
    /// Seconds taken.
    pub seconds: f64,
    /// Inputs kept.
    pub corpus: usize,
    /// Outcomes seen.
    pub outcomes: usize,
    /// The crash's input, if one was found.
    pub crash: Option<PathBuf>,
}

/// The seed inputs of `target`: its corpus folder's files and its own.
pub fn seeds(target: &Target) -> Vec<Vec<u8>> {
    let dir = Path::new(HERE).join("corpus").join(target.name);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.sort();
    let mut seeds: Vec<Vec<u8>> = files.iter().filter_map(|f| std::fs::read(f).ok()).collect();
    seeds.extend((target.seeds)());
    if seeds.is_empty() {
        seeds.push(b"{}".to_vec());
    }
    seeds
}

/// Writes a crash's input (and what it did) under `fuzz/crashes/`, and says how to reproduce.
pub fn save_crash(target: &Target, data: &[u8], previous: &[u8], panicked: &Panicked) -> PathBuf {
    let dir = Path::new(HERE).join("crashes");
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(format!("{}-{:016x}", target.name, fnv1a(data)));
    let written = std::fs::write(&path, data)
        .and_then(|()| std::fs::write(path.with_extension("panic"), panicked.to_string()))
        .and_then(|()| std::fs::write(path.with_extension("previous"), previous));
    if let Err(e) = written {
        eprintln!("the crash could not be written to {}: {e}", path.display());
    }
    eprintln!(
        "\nCRASH in {}: {}\n\ninput: {} ({} bytes; the input run before it: .previous)\n\
         reproduce: cargo run -p a2a-card-fuzz --release --bin fuzz -- {} --run {}",
        target.name,
        panicked,
        path.display(),
        data.len(),
        target.name,
        path.display(),
    );
    path
}

/// The mutation loop on `target` for `time`.
pub fn fuzz(target: &'static Target, time: Duration, seed: u64) -> Summary {
    let mut rng = Rng::new(seed ^ fnv1a(target.name.as_bytes()));
    let mut corpus = seeds(target);
    let pinned = corpus.len();
    let words = dictionary(&corpus);
    // Every feature seen (see `a2a_card_fuzz::feedback`).
    let mut outcomes: HashSet<u64> = HashSet::new();
    let mut execs = 0u64;
    let started = Instant::now();
    let summary = |execs: u64, corpus: usize, outcomes: usize, crash| Summary {
        target: target.name,
        execs,
        seconds: started.elapsed().as_secs_f64(),
        corpus,
        outcomes,
        crash,
    };
    println!(
        "{}: {} seed input(s), {} dictionary word(s), {} s",
        target.name,
        corpus.len(),
        words.len(),
        time.as_secs()
    );
    // The seeds first, as they are.
    let mut previous: Vec<u8> = Vec::new();
    for input in corpus.clone() {
        execs += 1;
        match run_one(target, &input) {
            Ok(features) => outcomes.extend(features),
            Err(panicked) => {
                let path = save_crash(target, &input, &previous, &panicked);
                return summary(execs, corpus.len(), outcomes.len(), Some(path));
            }
        }
        previous = input;
    }
    let mut last_report = Instant::now();
    while started.elapsed() < time {
        let mut input = corpus[rng.below(corpus.len())].clone();
        mutate(&mut rng, &mut input, &corpus, &words);
        execs += 1;
        match run_one(target, &input) {
            Ok(features) => {
                let mut new = false;
                for feature in features {
                    new |= outcomes.insert(feature);
                }
                if new {
                    if corpus.len() < MAX_CORPUS {
                        corpus.push(input.clone());
                    } else {
                        let i = pinned + rng.below(corpus.len() - pinned);
                        corpus[i] = input.clone();
                    }
                }
            }
            Err(panicked) => {
                let path = save_crash(target, &input, &previous, &panicked);
                return summary(execs, corpus.len(), outcomes.len(), Some(path));
            }
        }
        previous = input;
        if execs.is_multiple_of(ALIVE_EVERY)
            && let Err(panicked) = check_alive(target)
        {
            eprintln!("the agent stopped serving after the input in .previous");
            let path = save_crash(target, b"", &previous, &panicked);
            return summary(execs, corpus.len(), outcomes.len(), Some(path));
        }
        if last_report.elapsed() >= PROGRESS_EVERY {
            last_report = Instant::now();
            let secs = started.elapsed().as_secs_f64();
            println!(
                "{}: {:>4.0} s  execs {execs}  execs/s {:.0}  corpus {}  features {}",
                target.name,
                secs,
                execs as f64 / secs,
                corpus.len(),
                outcomes.len()
            );
        }
    }
    if let Err(panicked) = check_alive(target) {
        eprintln!("the agent stopped serving after the last input (in .previous)");
        let path = save_crash(target, b"", &previous, &panicked);
        return summary(execs, corpus.len(), outcomes.len(), Some(path));
    }
    let n = corpus.len();
    summary(execs, n, outcomes.len(), None)
}
