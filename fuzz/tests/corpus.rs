//! Every target once over every file of its corpus (`fuzz/corpus/TARGET/`) and over every
//! input of `fuzz/crashes-fixed/` (crashes found and fixed, kept as regression inputs; each
//! goes to the target its name starts with, `TARGET-...`, or to every target), then the
//! agents still serve.

use std::path::{Path, PathBuf};

use a2a_card_fuzz::runner::{check_alive, run_one};
use a2a_card_fuzz::targets::TARGETS;

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file())
                .filter(|p| {
                    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or(".");
                    !name.starts_with('.') && !name.ends_with(".md")
                })
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

#[test]
fn every_target_takes_its_corpus_and_the_fixed_crashes() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let fixed = files(&here.join("crashes-fixed"));
    let mut failures = Vec::new();
    let mut ran = 0;
    for target in TARGETS {
        let corpus = files(&here.join("corpus").join(target.name));
        assert!(!corpus.is_empty(), "no corpus for target {}", target.name);
        let mine = fixed.iter().filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            match name.split_once('-') {
                Some((prefix, _)) if TARGETS.iter().any(|t| t.name == prefix) => {
                    prefix == target.name
                }
                _ => true,
            }
        });
        let mut inputs: Vec<(String, Vec<u8>)> = corpus
            .iter()
            .chain(mine)
            .map(|p| {
                (
                    p.display().to_string(),
                    std::fs::read(p).expect("a corpus file"),
                )
            })
            .collect();
        inputs.extend(
            (target.seeds)()
                .into_iter()
                .enumerate()
                .map(|(i, s)| (format!("{} built-in seed {i}", target.name), s)),
        );
        for (name, data) in inputs {
            ran += 1;
            if let Err(panicked) = run_one(target, &data) {
                failures.push(format!("{} on {name}: {panicked}", target.name));
            }
        }
        if let Err(panicked) = check_alive(target) {
            failures.push(format!("{} stopped serving: {panicked}", target.name));
        }
    }
    assert!(ran > 0);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
