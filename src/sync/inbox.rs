//! A warehouse's inbox read piece by piece, the same for its shipments (step 3) and its stock
//! (step 5): each piece the step could use is taken (a file moves to `processed/`); one with
//! a bad line is refused (a file moves to `failed/` beside the list of its bad lines), named
//! in the run, and fails the step once every other piece was read.

use crate::platforms::warehouse::{BadLine, Inbox, Since, Taken, WarehouseClient};

use super::context::Context;
use super::problems::ProblemKind;
use super::runs::Step;
use super::step::StepError;

/// Pieces (files, or pages) one step reads at most; the next pass goes on.
pub(super) const MAX_PIECES: usize = 100_000;

/// One inbox being read.
pub(super) struct Reading<'w> {
    pub(super) warehouse: &'w mut dyn WarehouseClient,
    inbox: Inbox,
    /// The pieces refused so far, by name.
    failed: Vec<String>,
}

impl<'w> Reading<'w> {
    /// Opens `inbox` of `warehouse` from `since`.
    pub(super) async fn open(
        warehouse: &'w mut dyn WarehouseClient,
        inbox: Inbox,
        since: Since,
    ) -> Result<Reading<'w>, StepError> {
        warehouse.open_inbox(inbox, since).await?;
        Ok(Reading { warehouse, inbox, failed: Vec::new() })
    }

    /// Tells the warehouse what became of the piece `name`: taken, or refused for its bad
    /// lines, which the run names.
    pub(super) async fn settle(
        &mut self,
        ctx: &Context<'_>,
        name: String,
        used: Result<(), Vec<BadLine>>,
    ) -> Result<(), StepError> {
        let bad = match used {
            Ok(()) => return Ok(self.warehouse.taken(Taken::Imported).await?),
            Err(bad) => bad,
        };
        self.warehouse.taken(Taken::Refused(&bad)).await?;
        let (step, what, done) = self.words();
        let place = self.warehouse.failed_place(self.inbox);
        let message =
            format!("The {what} file {name} could not be {done} and was moved to {place}: {}.", lines(&bad));
        ctx.note(step, ProblemKind::File, name.clone(), message).await?;
        self.failed.push(name);
        Ok(())
    }

    /// Whether every piece read could be used: else the error the step ends with.
    pub(super) fn finish(&self) -> Result<(), StepError> {
        if self.failed.is_empty() || !self.warehouse.refusal_fails_the_step() {
            return Ok(());
        }
        let (_, what, done) = self.words();
        Err(StepError::BadFile(format!(
            "The warehouse's {what} file {} could not be {done}; see {} for the lines at fault.",
            self.failed.join(", "),
            self.warehouse.failed_place(self.inbox)
        )))
    }

    /// The step, what its files hold and what could not be done with a bad one.
    fn words(&self) -> (Step, &'static str, &'static str) {
        match self.inbox {
            Inbox::Shipments => (Step::PullShipments, "shipment", "imported"),
            Inbox::Stock => (Step::Stock, "stock", "read"),
        }
    }
}

/// Bad lines as one phrase: "line 3: has no tracking_number; line 5: …" (the first ten).
pub(super) fn lines(bad: &[BadLine]) -> String {
    let mut text: Vec<String> = bad.iter().take(10).map(line).collect();
    if bad.len() > 10 {
        text.push(format!("and {} more", bad.len() - 10));
    }
    text.join("; ")
}

/// One bad line as a person reads it: "line 3: has no tracking_number", or a problem that
/// names its own place.
pub(super) fn line(bad: &BadLine) -> String {
    match bad.line {
        0 => bad.problem.clone(),
        n => format!("line {n}: {}", bad.problem),
    }
}
