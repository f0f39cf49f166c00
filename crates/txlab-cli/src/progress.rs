//! The progress bar of `txlab run` and `txlab compare`: rounds, points and the time left
//! (indicatif), shown only when stdout is a terminal.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use txlab_harness::sweep::Step;

/// A progress bar fed by the sweep's [`Step`]s.
#[derive(Debug)]
pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// A bar on a terminal, nothing otherwise.
    pub fn new() -> Self {
        Self { bar: None }
    }

    /// Shows where the sweep stands (creates the bar on the first step).
    pub fn step(&mut self, step: &Step<'_>) {
        if !std::io::stdout().is_terminal() {
            return;
        }
        let bar = self.bar.get_or_insert_with(|| {
            let bar = ProgressBar::new(step.total as u64);
            if let Ok(style) = ProgressStyle::with_template(
                "[{elapsed_precise}] {bar:30} {pos}/{len} points, {eta} left · {msg}",
            ) {
                bar.set_style(style);
            }
            bar
        });
        bar.set_position(step.done as u64);
        bar.set_message(format!(
            "round {}/{} · {}",
            step.point.repeat + 1,
            step.rounds,
            step.point.label()
        ));
    }

    /// Removes the bar (after success) or leaves it where it stopped (after an error).
    pub fn finish(self, ok: bool) {
        if let Some(bar) = self.bar {
            if ok {
                bar.finish_and_clear();
            } else {
                bar.abandon();
            }
        }
    }
}

impl Default for Progress {
    fn default() -> Self {
        Self::new()
    }
}
