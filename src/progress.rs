//! Progress of long CLI work (`import`, `seed`) on stderr: a bar when stderr is a terminal,
//! else one plain line per step, each ending with its newline, so a log file reads line by
//! line and no message runs into the next.

use std::io::IsTerminal;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};

pub struct Progress {
    bar: Option<ProgressBar>,
    what: &'static str,
    total: Option<u64>,
    /// A plain line every `step` units.
    step: u64,
    next: u64,
    started: Instant,
}

impl Progress {
    /// Progress of `total` units (unknown: `None`) called `what` ("orders written").
    pub fn new(what: &'static str, total: Option<u64>, step: u64) -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = match total {
                Some(total) => ProgressBar::new(total),
                None => ProgressBar::new_spinner(),
            };
            let template = match total {
                Some(_) => "orderbridge: [{elapsed_precise}] {wide_bar} {human_pos}/{human_len} {msg} ({per_sec}, {eta} left)",
                None => "orderbridge: [{elapsed_precise}] {spinner} {human_pos} {msg} ({per_sec})",
            };
            if let Ok(style) = ProgressStyle::with_template(template) {
                bar.set_style(style);
            }
            bar.set_message(what);
            bar
        });
        Progress { bar, what, total, step: step.max(1), next: step.max(1), started: Instant::now() }
    }

    /// `done` units so far.
    pub fn set(&mut self, done: u64) {
        match &self.bar {
            Some(bar) => bar.set_position(done),
            None if done >= self.next => {
                eprintln!("orderbridge: {} ({:.1?})", self.count(done), self.started.elapsed());
                self.next = (done / self.step + 1) * self.step;
            }
            None => {}
        }
    }

    fn count(&self, done: u64) -> String {
        match self.total {
            Some(total) => format!("{done}/{total} {}", self.what),
            None => format!("{done} {}", self.what),
        }
    }

    /// Ends the bar (or the lines) with one closing line.
    pub fn finish(self, message: &str) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        eprintln!("orderbridge: {message} in {:.1?}", self.started.elapsed());
    }
}
